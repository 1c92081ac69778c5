package io.ringstore.tools;

import static io.ringstore.tools.CliRun.backends;
import static io.ringstore.tools.CliRun.build;
import static io.ringstore.tools.CliRun.runWithInput;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.Ring;
import io.ringstore.RingStore;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Keys given as arguments are hashed as the bytes the shell passed, as stdin keys are, whatever the
 * locale the JVM decodes argv with: {@code /café} under POSIX (where the JVM decodes it as
 * {@code /caf??}) and under C.UTF-8, and bytes that are not UTF-8 at all (U+FFFD to the JVM under
 * either). Each answer line must echo the key byte for byte and name the backend stdin gives it.
 */
@Tag("process")
class CliArgumentBytesTest {
    /** /café in UTF-8, and bytes that are not UTF-8, as printf(1) octal escapes (ASCII for this JVM to pass). */
    private static final String CAFE = "/caf\\303\\251";

    private static final String INVALID = "\\377\\376/x\\200";
    private static final byte[][] KEYS = {
        {'/', 'c', 'a', 'f', (byte) 0xC3, (byte) 0xA9},
        {(byte) 0xFF, (byte) 0xFE, '/', 'x', (byte) 0x80},
    };

    @TempDir
    static Path dir;

    private static Path ring;

    @BeforeAll
    static void buildFile() throws Exception {
        StringBuilder text = new StringBuilder();
        for (int i = 1; i <= 32; i++) {
            text.append("server 127.0.0.").append(i).append(":80\n");
        }
        ring = dir.resolve("fleet.ring");
        build(backends(dir, "fleet.conf", text.toString()), ring);
    }

    @ParameterizedTest
    @ValueSource(strings = {"POSIX", "C", "C.UTF-8"})
    void keyArgumentsAreTheShellsBytesUnderAnyLocale(String locale) throws Exception {
        byte[] expected = expectedAnswers(KEYS);
        try (ChildCli child = ChildCli.start(
                locale,
                "lookup \"$1\" \"$(printf '" + CAFE + "')\" \"$(printf '" + INVALID + "')\"",
                ring.toString())) {
            assertAnswers(child, KEYS.length, expected, locale);
        }
    }

    /**
     * Seeded random keys of any bytes an argument can hold (all but NUL; and no line feed, which
     * {@code $(...)} would strip), after {@code --} so that a leading '-' is a key: the fuzzer of
     * arguments under each locale.
     */
    @ParameterizedTest
    @ValueSource(strings = {"POSIX", "C.UTF-8"})
    void randomByteKeysAsArgumentsAreTheShellsBytes(String locale) throws Exception {
        SplittableRandom r = new SplittableRandom(0xA7C5_2026L);
        byte[][] keys = new byte[200][];
        StringBuilder shell = new StringBuilder("lookup \"$1\" --");
        for (int k = 0; k < keys.length; k++) {
            keys[k] = new byte[1 + r.nextInt(24)];
            shell.append(" \"$(printf '");
            for (int i = 0; i < keys[k].length; i++) {
                int b;
                do {
                    b = r.nextInt(256);
                } while (b == 0 || b == '\n');
                keys[k][i] = (byte) b;
                shell.append(String.format("\\%03o", b));
            }
            shell.append("')\"");
        }
        try (ChildCli child = ChildCli.start(locale, shell.toString(), ring.toString())) {
            assertAnswers(child, keys.length, expectedAnswers(keys), locale);
        }
    }

    /** Reads {@code count} answer lines, then the exit: 0, and the answers byte for byte. */
    private static void assertAnswers(ChildCli child, int count, byte[] expected, String locale) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int i = 0; i < count; i++) {
            byte[] line = child.nextLine(30_000);
            assertTrue(line != null, () -> "no answer; stderr:\n" + child.stderr());
            out.writeBytes(line);
            out.write('\n');
        }
        assertEquals(Main.OK, child.exit(), child::stderr);
        assertNull(child.nextLine(0), "one answer per key");
        assertArrayEquals(
                expected,
                out.toByteArray(),
                () -> "under LC_ALL=" + locale + ", got:\n" + out.toString(StandardCharsets.ISO_8859_1)
                        + "\nexpected:\n" + new String(expected, StandardCharsets.ISO_8859_1));
    }

    /** In process, the same bytes on stdin get the library's answers: what the arguments must match. */
    @Test
    void theSameBytesOnStdinGetTheLibrarysAnswers() throws Exception {
        ByteArrayOutputStream stdin = new ByteArrayOutputStream();
        for (byte[] key : KEYS) {
            stdin.writeBytes(key);
            stdin.write('\n');
        }
        assertArrayEquals(
                expectedAnswers(KEYS),
                runWithInput(stdin.toByteArray(), "lookup", ring.toString())
                        .assertOk()
                        .stdout());
    }

    /** In process, arguments given as bytes ({@link Main#run(String[], byte[][], ...)}) are the keys, whatever the strings say. */
    @Test
    void inProcessCallersCanPassTheRawBytes() throws Exception {
        String[] args = {"lookup", ring.toString(), "/caf??", "??/x?"};
        byte[][] raw = {
            args[0].getBytes(StandardCharsets.US_ASCII), args[1].getBytes(StandardCharsets.UTF_8), KEYS[0], KEYS[1]
        };
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = Main.run(
                args,
                raw,
                new ByteArrayInputStream(new byte[0]),
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        assertEquals(Main.OK, exit, err.toString(StandardCharsets.UTF_8));
        assertArrayEquals(expectedAnswers(KEYS), out.toByteArray());
    }

    /** KEY<TAB>ADDRESS lines for {@code keys}, from the library. */
    private static byte[] expectedAnswers(byte[]... keys) throws Exception {
        ByteArrayOutputStream expected = new ByteArrayOutputStream();
        try (RingStore store = RingStore.open(ring)) {
            Ring r = store.ring(Set.of());
            for (byte[] key : keys) {
                expected.writeBytes(key);
                expected.write('\t');
                expected.writeBytes(
                        store.backend(r.lookup(key)).upstreamAddress().getBytes(StandardCharsets.US_ASCII));
                expected.write('\n');
            }
        }
        return expected.toByteArray();
    }
}
