package io.ringstore.builder;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Mutated twemproxy and libketama configurations (twemproxy's and libketama's own files, configs/README.md):
 * every input either parses or is refused with a {@link BackendsFileException} naming the source and a
 * line of the input (0 for the whole file) in one line; nothing else is thrown. Seeded: the failing input
 * is printed with the seed's iteration.
 */
class ConfigFuzzTest {
    private static final long SEED = 0xC0F1_6F22L;
    private static final int INPUTS = 5_000;
    private static final String[] NASTY = {
        "\t",
        "\n",
        "\r",
        "\r\n",
        " ",
        "  ",
        ":",
        "-",
        "- ",
        "#",
        " #",
        "'",
        "\"",
        "\\",
        "\\x",
        "\\u",
        "[",
        "{",
        "&",
        "*",
        "!",
        "|",
        "%",
        "---",
        "0",
        "1",
        "9",
        "65536",
        "/",
        "[::1]",
        "::",
        ".",
        "é",
        "\uFEFF",
        "\u0000",
        "servers:",
        "hash: md5",
        "weight",
        "2147483648"
    };

    @Test
    void mutatedTwemproxyConfigsParseOrAreRefusedWithALine() throws Exception {
        List<String> seeds = List.of(
                Files.readString(TwemproxyConfigTest.CONF.resolve("nutcracker.yml")),
                Files.readString(TwemproxyConfigTest.CONF.resolve("nutcracker.leaf.yml")),
                "p:\n  listen: 127.0.0.1:22121\n  hash: 'md5'\n  servers:\n  - \"10.0.0.1:11211:1 a\"\n  - ::1:11212:2\n");
        SplittableRandom random = new SplittableRandom(SEED);
        for (int i = 0; i < INPUTS; i++) {
            String text = mutate(seeds.get(random.nextInt(seeds.size())), random);
            String pool = random.nextInt(4) == 0
                    ? null
                    : List.of("alpha", "beta", "omega", "leaf", "p").get(random.nextInt(5));
            try {
                TwemproxyConfig c = TwemproxyConfig.parse("fuzz.yml", text, pool);
                assertFalse(c.backends().backends().isEmpty(), text);
            } catch (BackendsFileException e) {
                check(e, "fuzz.yml", text, i);
            } catch (RuntimeException e) {
                fail("input " + i + " threw " + e + ":\n" + text, e);
            }
        }
    }

    @Test
    void mutatedLibketamaFilesParseOrAreRefusedWithALine() throws Exception {
        List<String> seeds = List.of(
                new String(
                        Files.readAllBytes(LibketamaServersTest.CONF.resolve("ketama.servers")),
                        StandardCharsets.ISO_8859_1),
                new String(
                        Files.readAllBytes(LibketamaServersTest.CONF.resolve("ketama.two.servers")),
                        StandardCharsets.ISO_8859_1));
        SplittableRandom random = new SplittableRandom(SEED + 1);
        for (int i = 0; i < INPUTS; i++) {
            String text = mutate(seeds.get(random.nextInt(seeds.size())), random);
            byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
            try {
                assertFalse(
                        LibketamaServers.parse("fuzz.servers", bytes).backends().isEmpty(), text);
            } catch (BackendsFileException e) {
                check(e, "fuzz.servers", new String(bytes, StandardCharsets.ISO_8859_1), i);
            } catch (RuntimeException e) {
                fail("input " + i + " threw " + e + ":\n" + text, e);
            }
        }
    }

    /** One to four insertions, deletions or replacements of a nasty token at random places. */
    private static String mutate(String text, SplittableRandom random) {
        StringBuilder sb = new StringBuilder(text);
        for (int m = 1 + random.nextInt(4); m > 0; m--) {
            int at = random.nextInt(sb.length() + 1);
            String nasty = NASTY[random.nextInt(NASTY.length)];
            switch (random.nextInt(3)) {
                case 0 -> sb.insert(at, nasty);
                case 1 -> sb.delete(at, Math.min(sb.length(), at + 1 + random.nextInt(6)));
                default -> sb.replace(at, Math.min(sb.length(), at + nasty.length()), nasty);
            }
        }
        return sb.toString();
    }

    private static void check(BackendsFileException e, String source, String text, int input) {
        long lines = text.split("\r\n|\r|\n", -1).length;
        assertEquals(source, e.source(), () -> "input " + input);
        assertTrue(
                e.line() >= 0 && e.line() <= lines,
                () -> "input " + input + ": line " + e.line() + " of " + lines + ": " + e.getMessage() + "\n" + text);
        assertEquals(1, e.getMessage().lines().count(), () -> "input " + input + ": " + e.getMessage());
        assertFalse(e.reason().isBlank(), () -> "input " + input);
    }
}
