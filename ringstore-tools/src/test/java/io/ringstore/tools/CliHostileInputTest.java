package io.ringstore.tools;

import static io.ringstore.tools.CliRun.backends;
import static io.ringstore.tools.CliRun.build;
import static io.ringstore.tools.CliRun.run;
import static io.ringstore.tools.CliRun.runWithInput;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.internal.format.RingFileDescriptor;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Input an attacker (or an accident) would give the reading commands: lines without end, FIFOs and
 * devices where a ring file should be. Each gets one line on stderr and exit 1, with memory bounded
 * and nothing blocking.
 */
class CliHostileInputTest {
    @TempDir
    static Path dir;

    private static Path ring;

    @BeforeAll
    static void buildFile() throws Exception {
        ring = dir.resolve("fleet.ring");
        build(backends(dir, "fleet.conf", "server 127.0.0.1:80\nserver 127.0.0.2:80\n"), ring);
    }

    // ---- keys on stdin ----

    /**
     * Four times the limit of zeros without a line end, as {@code < /dev/zero} gives: refused naming
     * the line, after reading no more than the limit and one read buffer (the stream counts what was
     * taken from it).
     */
    @Test
    void aLineWithoutEndIsRefusedAtTheKeyLimitWithItsLineNumber() {
        byte[] head = "/first\n/second\n".getBytes(StandardCharsets.US_ASCII);
        CountingZeros in = new CountingZeros(head, 4L * LookupCommand.MAX_KEY_LENGTH);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = Main.run(
                new String[] {"lookup", ring.toString()},
                in,
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        CliRun r = new CliRun(exit, out.toByteArray(), err.toString(StandardCharsets.UTF_8));
        String error = r.assertError(Main.FAILED, "lookup");
        assertTrue(error.startsWith("stdin line 3: key longer than " + LookupCommand.MAX_KEY_LENGTH + " bytes"), error);
        assertEquals(2, r.outLines().size(), "the keys before the long line are answered: " + r.out());
        assertTrue(
                in.taken <= head.length + LookupCommand.MAX_KEY_LENGTH + (1 << 16) + 1,
                "read " + in.taken + " bytes: more than the limit and one buffer");
    }

    @Test
    void aKeyOfExactlyTheLimitIsAnsweredAndOneByteMoreIsNot() {
        byte[] key = new byte[LookupCommand.MAX_KEY_LENGTH];
        Arrays.fill(key, (byte) 'k');
        byte[] line = Arrays.copyOf(key, key.length + 2);
        line[key.length] = '\r';
        line[key.length + 1] = '\n';
        CliRun ok = runWithInput(line, "lookup", ring.toString()).assertOk();
        assertEquals(1, ok.outLines().size());
        assertTrue(ok.out().startsWith(new String(key, StandardCharsets.US_ASCII) + "\t"));

        byte[] longer = Arrays.copyOf(key, key.length + 2);
        longer[key.length] = 'k';
        longer[key.length + 1] = '\n';
        String error = runWithInput(longer, "lookup", ring.toString()).assertError(Main.FAILED, "lookup");
        assertTrue(error.startsWith("stdin line 1: key longer than"), error);
        // without a line end too
        String unterminated = runWithInput(Arrays.copyOf(longer, longer.length - 1), "lookup", ring.toString())
                .assertError(Main.FAILED, "lookup");
        assertTrue(unterminated.startsWith("stdin line 1: key longer than"), unterminated);
    }

    @Test
    void aKeyArgumentLongerThanTheLimitIsRefused() {
        String key = "k".repeat(LookupCommand.MAX_KEY_LENGTH + 1);
        String error = run("lookup", ring.toString(), "/a", key).assertError(Main.FAILED, "lookup");
        assertTrue(error.startsWith("argument 3: key longer than"), error);
    }

    /** Zeros after a head, counting what was read. */
    private static final class CountingZeros extends InputStream {
        private final byte[] head;
        private final long zeros;
        long taken;

        CountingZeros(byte[] head, long zeros) {
            this.head = head;
            this.zeros = zeros;
        }

        @Override
        public int read() {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0];
        }

        @Override
        public int read(byte[] b, int off, int len) {
            if (taken >= head.length + zeros) {
                return -1;
            }
            int n = (int) Math.min(len, head.length + zeros - taken);
            for (int i = 0; i < n; i++) {
                long at = taken + i;
                b[off + i] = at < head.length ? head[(int) at] : 0;
            }
            taken += n;
            return n;
        }
    }

    // ---- files that open but that dump could not show ----

    /**
     * Weights raised to the most a backend can have and the point multiple to the most a u32 field can
     * say, metadata CRC fixed: weight × multiple summed over three backends overflows a long. The
     * builder refuses such weights; open now does too, so verify and dump give one line.
     */
    @Test
    void weightTimesPointMultiplePastTheLimitIsRefusedByVerifyAndDump() throws Exception {
        Path source = dir.resolve("three.ring");
        build(
                backends(dir, "three.conf", "server 127.0.0.1:80\nserver 127.0.0.2:80\nserver 127.0.0.3:80\n"),
                source,
                "--algorithm",
                "v2",
                "--point-multiple",
                "1");
        RingPatch patch = RingPatch.of(source);
        for (int b = 0; b < 3; b++) {
            patch.backendWeight(b, RingFileDescriptor.MAX_WEIGHT);
        }
        patch.pointMultiple(0, Integer.MAX_VALUE);
        Path bad = patch.write(dir.resolve("overflow.ring"));
        for (String command : new String[] {"verify", "dump"}) {
            String error = run(command, bad.toString()).assertError(Main.FAILED, command);
            assertTrue(error.contains("more than a ring can hold"), error);
        }
        assertNoTraceFromDumpJson(bad);
    }

    /**
     * The only backend having feature {@code a} loses it (its mask cleared, metadata CRC fixed): ring
     * {@code a} keeps its points but has no member left, where dump's shares threw
     * IllegalArgumentException.
     */
    @Test
    void aNonEmptyRingWithoutMemberBackendsIsRefusedByVerifyAndDump() throws Exception {
        Path source = dir.resolve("featured.ring");
        build(backends(dir, "featured.conf", "server 127.0.0.1:80 features=a\nserver 127.0.0.2:80\n"), source);
        Path bad = RingPatch.of(source).backendMask(0, 0).write(dir.resolve("no-member.ring"));
        for (String command : new String[] {"verify", "dump"}) {
            String error = run(command, bad.toString()).assertError(Main.FAILED, command);
            assertTrue(error.contains("no backend has all its features"), error);
        }
        assertNoTraceFromDumpJson(bad);
    }

    private static void assertNoTraceFromDumpJson(Path file) {
        run("dump", file.toString(), "--json", "--points", "3").assertNoStackTrace();
    }

    // ---- what is not a regular file ----

    @Test
    void aFifoIsRefusedByEveryReadingCommandWithoutBlocking() throws Exception {
        Path fifo = mkfifo(dir.resolve("fleet.fifo"));
        for (String[] args : new String[][] {
            {"verify", fifo.toString()},
            {"lookup", fifo.toString(), "/k"},
            {"dump", fifo.toString()},
            {"diff", ring.toString(), fifo.toString()}
        }) {
            CliRun r = assertTimeoutPreemptively(Duration.ofSeconds(10), () -> run(args));
            String error = r.assertError(Main.FAILED, args[0]);
            assertTrue(error.contains("not a regular file"), error);
        }
    }

    @Test
    void aDeviceIsRefused() {
        Assumptions.assumeTrue(Path.of("/dev/zero").toFile().exists());
        String error = run("verify", "/dev/zero").assertError(Main.FAILED, "verify");
        assertTrue(error.contains("not a regular file"), error);
    }

    /** Makes a FIFO with mkfifo(1); skips the test where there is none. */
    static Path mkfifo(Path path) throws IOException, InterruptedException {
        Process p;
        try {
            p = new ProcessBuilder("mkfifo", path.toString())
                    .redirectErrorStream(true)
                    .start();
        } catch (IOException e) {
            Assumptions.abort("no mkfifo: " + e.getMessage());
            throw e;
        }
        Assumptions.assumeTrue(p.waitFor() == 0, "mkfifo failed");
        return path;
    }
}
