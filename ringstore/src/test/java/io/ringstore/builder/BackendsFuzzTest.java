package io.ringstore.builder;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.Backend;
import io.ringstore.MemoryTempDir;
import io.ringstore.RingFileException;
import io.ringstore.RingStore;
import io.ringstore.family.RingVersion;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Mutated backends files: every input either parses or is refused with a {@link BackendsFileException}
 * that names the source and a line (0 for the whole file, else a line of the input) in a message of
 * one line. A sample of what parses is built over the ring built before and read back: the ring file
 * must open, verify and hold the same addresses, or the build is refused the same way and the ring
 * before stays as it was. Mutations include what found issue 10's defects: very long tokens and
 * lines, leading zeros, byte order marks, {@code unix:} and other odd address forms, scope ids with v1.
 *
 * <p>System properties: {@code ringstore.fuzz.seed}, {@code ringstore.fuzz.inputs} (default
 * {@value #DEFAULT_INPUTS}). The run is that fixed number of inputs whatever the machine's speed, with no
 * time bound: a slow machine takes longer, it does not fail.
 */
@Tag("slow")
class BackendsFuzzTest {
    private static final long DEFAULT_SEED = 0xBAC_CE1DL;
    private static final int DEFAULT_INPUTS = 50_000;
    private static final String SOURCE = "fuzz/backends.conf";
    /** Round trips through a ring file: every parse with unusual characters, and one in this many others. */
    private static final int BUILD_EVERY = 40;

    private static final String[] SEEDS = {
        """
            # a pool
            upstream pool {
                hash $request_uri consistent;
                server 127.0.0.1:8080 weight=2 features=ssd,eu;
                server [::1]:8081 features=eu
                server 127.0.0.3
                server [fe80::1%3]:443 weight=10
            }
            """,
        "server 127.0.0.1:1\r\nserver 127.0.0.2:2 features=a\r\nserver [::ffff:127.0.0.1]:3 weight=3\r\n",
        "server 127.0.0.1\n",
        """
            upstream u{
            server 127.0.0.1:80 features=a,b,c,d
            server 127.0.0.2:80 features=e.f,g-h,i_j
            server [0:0:0:0:0:0:0:1]:65535;
            }
            """,
        "server [::1] weight=2147483647\nserver 127.0.0.9 weight=1 features=x # comment\n\n# end\n",
        """
            upstream pasted { zone pasted 64k; hash $request_uri consistent;
                keepalive 16; keepalive_requests 100; keepalive_time 1h; keepalive_timeout 60s;
                server 127.0.0.1:80 weight=2 max_fails=3 fail_timeout=1m30s;  # ringstore: features=a,b
                server 127.0.0.2:80 down; server 127.0.0.3:80 max_conns=5;
                server [::1]:80;# ringstore: features=b
            }
            """,
    };

    /** Characters that have broken parsers before: separators, controls, Unicode spaces, line breaks and digits, surrogates. */
    private static final String[] NASTY = {
        "\u0000",
        "\t",
        "\n",
        "\r",
        "\r\n",
        "\u000b",
        "\f",
        " ",
        ";",
        "{",
        "}",
        "#",
        "[",
        "]",
        ":",
        "%",
        "=",
        ",",
        ".",
        "-",
        "_",
        "/",
        "\\",
        "\"",
        "'",
        "$",
        "0",
        "1",
        "9",
        "f",
        "x",
        "A",
        "\u001b",
        "\u007f",
        "\u0085",
        "\u00a0",
        "\u2003",
        "\u2028",
        "\u2029",
        "\u200b",
        "\ufeff",
        "\u0661",
        "\uff11",
        "\uff41",
        "\u0967",
        "\ud800",
        "\udc00",
        "\ud83d\ude00",
        "\u00e9",
        "\u0130",
        "\u017f",
        "\uffff"
    };

    private static final String[] TOKENS = {
        "server",
        "upstream",
        "hash",
        "consistent",
        "weight=",
        "features=",
        "{",
        "}",
        ";",
        "upstream p {",
        "hash $k consistent;",
        "weight=0",
        "weight=-1",
        "features=,",
        "features=a,a",
        "features="
                + "abcdefghijklmnopq"
                        .chars()
                        .mapToObj(c -> String.valueOf((char) c))
                        .reduce((a, b) -> a + "," + b)
                        .orElseThrow(),
        "[::1]",
        "[::1]:",
        "[::]:0",
        "127.0.0.1:",
        "0.0.0.0",
        "255.255.255.255:65535",
        "[::1%]",
        "[%1]",
        "x".repeat(300),
        "# ringstore: features=a",
        "#ringstore:",
        "# ringstore: features=",
        "# ringstore: weight=2",
        "zone z 64k;",
        "zone",
        "keepalive 0;",
        "keepalive",
        "keepalive_timeout 500ms;",
        "keepalive_time 1M",
        "least_conn;",
        "500ms",
        "32k",
        "1g",
        "down",
        "max_fails=",
        "fail_timeout=10s5",
        "\"",
        "'",
        "; server 127.0.0.5;"
    };
    private static final String[] NUMBERS = {
        "0",
        "00",
        "1",
        "-1",
        "65535",
        "65536",
        "255",
        "256",
        "2147483647",
        "2147483648",
        "4294967295",
        "4294967296",
        "9223372036854775807",
        "9223372036854775808",
        "99999999999999999999999999",
        "0000000000000000080",
        "1e3",
        "0x10",
        "+5",
        "\u0661\u0662",
        "00000000001",
        "0002147483647",
        "0002147483648"
    };
    /** Address forms that were taken wrongly before (issue 10): sockets, scopes (refused for v1), long and zero-padded spellings. */
    private static final String[] ODD_ADDRESSES = {
        "unix:/x.sock",
        "unix:",
        "[fe80::1%3]",
        "[fe80::1%03]:80",
        "[fe80::1%0]",
        "[fe80::1%eth0]",
        "[::ffff:1.2.3.4]:80",
        "[::ffff:001.002.003.004]",
        "1.2.3.4:0080",
        "[::1]:080",
        "localhost:80",
        "0".repeat(300) + "10.0.0.1:80",
        "[" + "0:".repeat(7) + "1]",
        "10.0.0.1:" + "0".repeat(400) + "80"
    };

    @TempDir(factory = MemoryTempDir.class)
    Path dir;
    /** Builds published so far: the generation of the ring file at the fuzzer's path. */
    private long published;

    @Test
    void mutatedBackendsFilesParseOrAreRefusedWithBackendsFileExceptionOnly() throws Exception {
        long seed = Long.getLong("ringstore.fuzz.seed", DEFAULT_SEED);
        long inputs = Long.getLong("ringstore.fuzz.inputs", DEFAULT_INPUTS);
        long start = System.nanoTime();
        long parsed = 0;
        long built = 0;
        long viaFile = 0;
        Map<String, Long> reasons = new HashMap<>();
        Path ring = dir.resolve("fuzz.ring");
        Path file = dir.resolve("backends.conf");
        long n = 0;
        for (; n < inputs; n++) {
            SplittableRandom random = new SplittableRandom(seed ^ (n * 0x9E37_79B9_7F4A_7C15L));
            StringBuilder what = new StringBuilder();
            String text = SEEDS[random.nextInt(SEEDS.length)];
            int mutations = 1 + random.nextInt(random.nextInt(4) == 0 ? 12 : 3);
            for (int m = 0; m < mutations; m++) {
                text = mutate(text, random, what);
            }
            boolean fromFile = random.nextInt(50) == 0;
            String source = SOURCE;
            String input = text;
            long number = n;
            Supplier<String> context = () -> "seed " + seed + " input " + number + what + ": "
                    + escape(input); // only when failing: inputs can be long
            try {
                BackendList list;
                if (fromFile) {
                    viaFile++;
                    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
                    if (random.nextBoolean() && bytes.length > 0) {
                        bytes[random.nextInt(bytes.length)] =
                                (byte) (0x80 | random.nextInt(0x80)); // maybe not UTF-8 any more
                    }
                    Files.write(file, bytes);
                    source = file.toString();
                    list = BackendList.parse(file);
                } else {
                    list = BackendList.parse(SOURCE, text);
                }
                parsed++;
                checkParsed(list, source, text);
                boolean unusual =
                        !text.chars().skip(text.startsWith("\uFEFF") ? 1 : 0).allMatch(c -> c < 0x7f);
                if (unusual || parsed % BUILD_EVERY == 0) {
                    if (list.backends().stream()
                            .anyMatch(b -> !b.address().chars().allMatch(c -> c < 0x80))) {
                        // Addresses are stored as ASCII: the parser must refuse anything else.
                        throw new AssertionError(context.get() + ": a non-ASCII address was accepted: " + escape(text));
                    } else if (roundTrip(list, ring, random.nextInt(4) != 0)) {
                        built++;
                    }
                }
            } catch (BackendsFileException e) {
                checkRefusal(e, source, text, context);
                reasons.merge(e.reason().replaceAll("'[^']*'", "'…'").replaceAll("[0-9]+", "#"), 1L, Long::sum);
            } catch (AssertionError e) {
                throw new AssertionError(context.get() + ": " + e.getMessage(), e);
            } catch (Throwable t) {
                throw new AssertionError(
                        context.get() + ": threw " + t + " (only BackendsFileException is allowed)", t);
            }
        }
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        System.out.printf(
                "backends fuzz, seed %d: %d inputs in %d ms (%d through a file); %d parsed, %d built and read back%n",
                seed, n, millis, viaFile, parsed, built);
        reasons.entrySet().stream()
                .sorted(Map.Entry.<String, Long>comparingByValue(Comparator.reverseOrder()))
                .limit(15)
                .forEach(e -> System.out.printf("  %6d  %s%n", e.getValue(), e.getKey()));
        System.out.println("  ... " + reasons.size() + " distinct reasons");
        assertTrue(
                parsed > n / 20 && parsed < n * 19 / 20,
                "mutations should neither always nor never break the text: " + parsed);
        assertTrue(built > 50, "round trips: " + built);
        assertTrue(reasons.size() >= 30, "refusals should come from many checks: " + reasons.keySet());
    }

    private static void checkParsed(BackendList list, String source, String text) {
        int lines = lineCount(text);
        if (!list.source().equals(source)
                || list.size() < 1
                || list.size() > BackendList.MAX_BACKENDS
                || list.features().size() > BackendList.MAX_FEATURES) {
            throw new AssertionError("parsed into " + list.size() + " backends, "
                    + list.features().size() + " features from " + list.source());
        }
        for (Backend b : list.backends()) {
            if (b.weight() < 1
                    || b.weight() > BackendList.MAX_WEIGHT
                    || b.line() < 1
                    || b.line() > lines
                    || !list.features().containsAll(b.features())) {
                throw new AssertionError("parsed an impossible backend: " + b + " line " + b.line() + " of " + lines);
            }
        }
    }

    /**
     * Builds a small enough list (v1 and v2:2, or v2:2 alone) over the ring built before and reads it
     * back; false when it is too big to build quickly. A refusal must leave the ring built before
     * exactly as it was: it still opens, verifies and has its generation.
     */
    private boolean roundTrip(BackendList list, Path ring, boolean withV1) throws Exception {
        long points = list.backends().stream().mapToLong(Backend::weight).sum() * RingVersion.V1.pointMultiple();
        if (points > 200_000 || list.features().size() > 6) {
            return false;
        }
        RingBuilder builder = RingBuilder.of(list);
        if (withV1) {
            builder.version(RingVersion.V1);
        }
        try {
            builder.version(RingVersion.v2(2)).build(ring);
            published++;
        } catch (BackendsFileException e) {
            if (published > 0) {
                try (RingStore old = RingStore.open(ring)) {
                    old.verify();
                    if (old.generation() != published) {
                        throw new AssertionError("a refused build changed the old ring: generation " + old.generation()
                                + ", expected " + published);
                    }
                } catch (RingFileException damaged) {
                    throw new AssertionError("a refused build damaged the old ring: " + damaged.getMessage(), damaged);
                }
            }
            throw e;
        }
        try (RingStore store = RingStore.open(ring)) {
            store.verify();
            List<String> want = list.backends().stream().map(Backend::address).toList();
            List<String> got = store.backends().stream().map(Backend::address).toList();
            if (!want.equals(got) || !store.features().equals(list.features()) || store.generation() != published) {
                throw new AssertionError("read back " + got + " " + store.features() + " generation "
                        + store.generation() + ", built " + want + " " + list.features() + " generation " + published);
            }
        } catch (RingFileException e) {
            throw new AssertionError("a parsed list built an unreadable ring file: " + e.getMessage(), e);
        }
        return true;
    }

    /** Checks the refusal: source, line in range, a reason, and one line by any definition. */
    private static void checkRefusal(BackendsFileException e, String source, String text, Supplier<String> context) {
        String message = e.getMessage();
        int line = e.line();
        if (!source.equals(e.source())) {
            throw new AssertionError(context.get() + ": source " + e.source() + ", expected " + source);
        }
        if (line < 0 || line > lineCount(text)) {
            throw new AssertionError(
                    context.get() + ": line " + line + " outside 0-" + lineCount(text) + ": " + message);
        }
        String prefix = source + (line > 0 ? ":" + line : "") + ": ";
        if (!message.startsWith(prefix) || message.length() == prefix.length()) {
            throw new AssertionError(context.get() + ": message must start '" + prefix + "' and say why: " + message);
        }
        for (int i = 0; i < message.length(); i++) {
            char c = message.charAt(i);
            if (c < 0x20 || c == 0x7f) {
                throw new AssertionError(context.get() + ": message has character U+" + String.format("%04X", (int) c)
                        + " at " + i + ": " + escape(message));
            }
            // One line by Unicode's definition (\R) too: no C1 control (U+0085 NEL), no U+2028/U+2029.
            if (Character.isISOControl(c) || c == '\u2028' || c == '\u2029') {
                throw new AssertionError(context.get() + ": message has line break U+" + String.format("%04X", (int) c)
                        + " at " + i + ": " + escape(message));
            }
        }
    }

    /** Lines as the parser counts them: split at \n or \r\n, a last line without a line end included. */
    private static int lineCount(String text) {
        return text.split("\r?\n", -1).length;
    }

    private static String mutate(String text, SplittableRandom r, StringBuilder what) {
        int length = text.length();
        int at = r.nextInt(length + 1);
        switch (r.nextInt(13)) {
            case 0, 1 -> { // insert nasty characters
                String s = NASTY[r.nextInt(NASTY.length)].repeat(r.nextInt(8) == 0 ? 1 + r.nextInt(4) : 1);
                what.append(" ins@").append(at);
                return text.substring(0, at) + s + text.substring(at);
            }
            case 2 -> { // delete a character or a range
                if (length == 0) {
                    return text;
                }
                int end = Math.min(length, at + 1 + (r.nextBoolean() ? 0 : r.nextInt(20)));
                what.append(" del@").append(at).append('-').append(end);
                return text.substring(0, Math.min(at, length)) + text.substring(end);
            }
            case 3 -> { // replace a character
                if (at >= length) {
                    return text;
                }
                what.append(" rep@").append(at);
                return text.substring(0, at) + NASTY[r.nextInt(NASTY.length)] + text.substring(at + 1);
            }
            case 4 -> { // swap two whitespace-separated tokens
                String[] parts = text.split("(?<=\\s)|(?=\\s)", -1);
                if (parts.length < 2) {
                    return text;
                }
                int i = r.nextInt(parts.length);
                int j = r.nextInt(parts.length);
                String t = parts[i];
                parts[i] = parts[j];
                parts[j] = t;
                what.append(" swap ").append(i).append(',').append(j);
                return String.join("", parts);
            }
            case 5 -> { // a digit run replaced by a huge, negative or odd number
                List<int[]> runs = new ArrayList<>();
                for (int i = 0; i < length; ) {
                    if (Character.isDigit(text.charAt(i))) {
                        int j = i;
                        while (j < length && Character.isDigit(text.charAt(j))) {
                            j++;
                        }
                        runs.add(new int[] {i, j});
                        i = j;
                    } else {
                        i++;
                    }
                }
                if (runs.isEmpty()) {
                    return text;
                }
                int[] run = runs.get(r.nextInt(runs.size()));
                String number = NUMBERS[r.nextInt(NUMBERS.length)];
                what.append(" num@").append(run[0]).append('=').append(escape(number));
                return text.substring(0, run[0]) + number + text.substring(run[1]);
            }
            case 6 -> { // a keyword or whole token inserted
                String token = TOKENS[r.nextInt(TOKENS.length)];
                String sep = r.nextBoolean() ? " " : "";
                what.append(" tok@").append(at);
                return text.substring(0, at) + sep + token + sep + text.substring(at);
            }
            case 7 -> { // lines duplicated, dropped or swapped
                List<String> lines = new ArrayList<>(Arrays.asList(text.split("\n", -1)));
                int i = r.nextInt(lines.size());
                int j = r.nextInt(lines.size());
                switch (r.nextInt(3)) {
                    case 0 -> lines.add(j, lines.get(i));
                    case 1 -> lines.remove(i);
                    default -> {
                        String t = lines.get(i);
                        lines.set(i, lines.get(j));
                        lines.set(j, t);
                    }
                }
                what.append(" lines ").append(i).append(',').append(j);
                return String.join("\n", lines);
            }
            case 8 -> { // line ends changed
                String[] ends = {"\r\n", "\r", "\n\n", "\u2028", "\u0085", ""};
                String end = ends[r.nextInt(ends.length)];
                what.append(" ends=").append(escape(end));
                return text.replace("\n", end);
            }
            case 10 -> { // a very long token: quoted input must be cut; rarely a line over the line limit
                int n = r.nextInt(100) == 0
                        ? BackendList.MAX_LINE_CHARS + r.nextInt(100)
                        : 200 + r.nextInt(r.nextBoolean() ? 200 : 2000);
                String s = (r.nextBoolean() ? "0" : NASTY[r.nextInt(NASTY.length)]).repeat(n);
                what.append(" long@").append(at).append('x').append(n);
                return text.substring(0, at) + s + text.substring(at);
            }
            case 11 -> { // leading zeros before a number, or a byte order mark at the start
                if (r.nextInt(4) == 0) {
                    what.append(" bom");
                    return "\uFEFF" + text;
                }
                int digit = text.indexOf(Character.forDigit(r.nextInt(10), 10), at);
                if (digit < 0) {
                    return text;
                }
                what.append(" zeros@").append(digit);
                return text.substring(0, digit)
                        + "0".repeat(1 + r.nextInt(r.nextInt(10) == 0 ? 400 : 12))
                        + text.substring(digit);
            }
            case 12 -> { // an odd address form in place of one
                int server = text.indexOf("server ", at);
                if (server < 0) {
                    return text;
                }
                int from = server + "server ".length();
                int to = from;
                while (to < text.length() && !Character.isWhitespace(text.charAt(to)) && text.charAt(to) != ';') {
                    to++;
                }
                String address = ODD_ADDRESSES[r.nextInt(ODD_ADDRESSES.length)];
                what.append(" addr@")
                        .append(from)
                        .append('=')
                        .append(escape(address.length() > 40 ? address.substring(0, 40) + "..." : address));
                return text.substring(0, from) + address + text.substring(to);
            }
            default -> { // many copies of one line: duplicate endpoints, too many features
                String[] lines = text.split("\n");
                if (lines.length == 0) {
                    return text;
                }
                String line = lines[r.nextInt(lines.length)];
                int copies = 2 + r.nextInt(r.nextInt(10) == 0 ? 200 : 5);
                StringBuilder sb = new StringBuilder(text);
                for (int c = 0; c < copies; c++) {
                    sb.append('\n').append(line.replace("127.0.0.", "127.0." + (c % 250) + "."));
                }
                what.append(" copies=").append(copies);
                return sb.toString();
            }
        }
    }

    /** Java-style escapes for anything outside printable ASCII, so a failing input can be pasted back. */
    private static String escape(String s) {
        StringBuilder sb = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c >= 0x20 && c < 0x7f && c != '\\') {
                sb.append(c);
            } else {
                sb.append(String.format("\\u%04x", (int) c));
            }
        }
        return sb.toString();
    }
}
