package io.ringstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.ringstore.builder.BackendList;
import io.ringstore.builder.BuildResult;
import io.ringstore.builder.RingBuilder;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;
import net.openhft.chronicle.testframework.process.JavaProcessBuilder;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Many router processes on one host share one copy of the ring: four JVMs map the same file, answer
 * the same keys identically, and each accounts for only a share of the pages it touched
 * ({@code /proc/self/smaps}: Pss, the proportional set size, is Rss divided among the processes
 * mapping each page).
 */
@Tag("process")
class MultiProcessTest {
    private static final int PROCESSES = 4;
    private static final int BACKENDS = 2048;
    private static final int KEYS = 100_000;

    @TempDir
    Path dir;

    @Test
    void processesMappingOneFileAnswerAlikeAndShareItsPages() throws Exception {
        assumeTrue(Files.isReadable(Path.of("/proc/self/smaps")), "Linux only: needs /proc/self/smaps");
        Path ring = dir.resolve("shared.ring");
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < BACKENDS; i++) {
            text.append("server 127.0.")
                    .append(i / 250)
                    .append('.')
                    .append(1 + i % 250)
                    .append(":8080\n");
        }
        BuildResult built =
                RingBuilder.of(BackendList.parse("generated", text.toString())).build(ring);
        long fileKb = Files.size(ring) / 1024;
        assertTrue(fileKb > 1024, "a ring of a few MB: " + fileKb + " kB");
        String expectedChecksum;
        try (RingStore store = RingStore.open(ring)) {
            expectedChecksum = Child.checksum(store);
        } // unmapped again: only the children map it while they measure

        assertTimeoutPreemptively(Duration.ofSeconds(120), () -> {
            List<ChildJvm> children = new ArrayList<>();
            try {
                for (int i = 0; i < PROCESSES; i++) {
                    children.add(ChildJvm.start(
                            Child.class,
                            List.of("-XX:TieredStopAtLevel=1"),
                            ring.toRealPath().toString()));
                }
                List<String> checksums = new ArrayList<>();
                for (ChildJvm c : children) {
                    checksums.add(c.expectLine("CHECKSUM "));
                    c.expectLine("READY");
                }
                // All four hold the mapping with every page touched; now each measures.
                List<long[]> measured = new ArrayList<>();
                for (ChildJvm c : children) {
                    c.send("MEASURE");
                    String[] f = c.expectLine("SMAPS ").split(" ");
                    measured.add(new long[] {Long.parseLong(f[0]), Long.parseLong(f[1]), Long.parseLong(f[2])});
                }
                for (ChildJvm c : children) {
                    c.send("EXIT");
                    assertEquals(0, c.waitFor(), () -> "child failed; stderr:\n" + c.stderr());
                }
                System.out.printf(
                        "ring of %d kB (%d points) mapped by %d processes; per process size/Rss/Pss kB:%n",
                        fileKb, built.points(), PROCESSES);
                for (int i = 0; i < PROCESSES; i++) {
                    long[] m = measured.get(i);
                    System.out.printf(
                            "  process %d: size %d, Rss %d, Pss %d, checksum %s%n",
                            i, m[0], m[1], m[2], checksums.get(i));
                }
                for (int i = 0; i < PROCESSES; i++) {
                    assertEquals(expectedChecksum, checksums.get(i), "process " + i + " answered differently");
                    long size = measured.get(i)[0];
                    long rss = measured.get(i)[1];
                    long pss = measured.get(i)[2];
                    assertTrue(size >= fileKb, "process " + i + " maps the whole file: " + size + " kB");
                    assertTrue(
                            rss >= fileKb * 9 / 10,
                            "process " + i + " touched every page: Rss " + rss + " kB of " + fileKb);
                    assertTrue(
                            pss <= rss / 2,
                            "process " + i + ": Pss " + pss + " kB must be well under Rss " + rss + " kB when "
                                    + PROCESSES + " processes share the pages");
                }
            } finally {
                for (ChildJvm c : children) {
                    c.process.destroyForcibly();
                }
            }
        });
    }

    /**
     * One process: maps the ring, answers {@value #KEYS} keys, touches every point, then on "MEASURE"
     * reports the mapping's size, Rss and Pss in kB from /proc/self/smaps, and exits on "EXIT".
     */
    static final class Child {
        public static void main(String[] args) throws Exception {
            Path ring = Path.of(args[0]);
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
            try (RingStore store = RingStore.open(ring)) {
                System.out.println("CHECKSUM " + checksum(store));
                long sum = 0;
                for (Ring r : store.rings()) {
                    for (int i = 0; i < r.pointCount(); i++) {
                        sum += r.pointHash(i);
                    }
                }
                System.out.println("READY " + sum);
                System.out.flush();
                expect(in, "MEASURE");
                System.out.println("SMAPS " + smaps(ring));
                System.out.flush();
                expect(in, "EXIT");
            }
        }

        private static void expect(BufferedReader in, String command) throws IOException {
            String line = in.readLine();
            if (!command.equals(line)) {
                throw new IllegalStateException("expected " + command + ", got " + line);
            }
        }

        /** CRC-32 over every key's answer (the address text), in key order. */
        static String checksum(RingStore store) {
            Ring ring = store.ring(Set.of());
            CRC32 crc = new CRC32();
            for (int k = 0; k < KEYS; k++) {
                int b = ring.lookup(("/shared/" + k).getBytes(StandardCharsets.US_ASCII));
                crc.update(store.backend(b).address().getBytes(StandardCharsets.US_ASCII));
                crc.update('\n');
            }
            return Long.toHexString(crc.getValue());
        }

        /** "SIZE RSS PSS" in kB, summed over the mappings of {@code file}. */
        static String smaps(Path file) throws IOException {
            long size = 0;
            long rss = 0;
            long pss = 0;
            boolean inFile = false;
            int mappings = 0;
            for (String line : Files.readAllLines(Path.of("/proc/self/smaps"))) {
                if (line.matches("^[0-9a-f]+-[0-9a-f]+ .*")) {
                    inFile = line.endsWith(" " + file);
                    if (inFile) {
                        mappings++;
                    }
                } else if (inFile) {
                    String[] f = line.split("\\s+");
                    switch (f[0]) {
                        case "Size:" -> size += Long.parseLong(f[1]);
                        case "Rss:" -> rss += Long.parseLong(f[1]);
                        case "Pss:" -> pss += Long.parseLong(f[1]);
                        default -> {}
                    }
                }
            }
            if (mappings == 0) {
                throw new IllegalStateException("no mapping of " + file + " in /proc/self/smaps");
            }
            return size + " " + rss + " " + pss;
        }
    }

    /**
     * A JVM started with Chronicle Test Framework's {@link JavaProcessBuilder} (this JVM's java, class
     * path and arguments): lines from its stdout, commands to its stdin, stderr collected.
     */
    static final class ChildJvm {
        final Process process;
        private final BufferedReader out;
        private final PrintStream in;
        private final ByteArrayOutputStream err = new ByteArrayOutputStream();
        private final Thread errDrain;

        private ChildJvm(Process process) {
            this.process = process;
            this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
            this.in = new PrintStream(process.getOutputStream(), true, StandardCharsets.US_ASCII);
            this.errDrain = new Thread(() -> copy(process.getErrorStream()), "stderr of " + process.pid());
            errDrain.setDaemon(true);
            errDrain.start();
        }

        /** Starts {@code main} with a small heap, {@code jvmArgs} and {@code args}. */
        static ChildJvm start(Class<?> main, List<String> jvmArgs, String... args) {
            List<String> jvm = new ArrayList<>(List.of("-Xmx64m", "-XX:+UseSerialGC"));
            jvm.addAll(jvmArgs);
            return new ChildJvm(JavaProcessBuilder.create(main)
                    .withJvmArguments(jvm.toArray(String[]::new))
                    .withProgramArguments(args)
                    .start());
        }

        private void copy(InputStream s) {
            try {
                byte[] buf = new byte[4096];
                int n;
                while ((n = s.read(buf)) > 0) {
                    synchronized (err) {
                        err.write(buf, 0, n);
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        /** The next stdout line, which must start with {@code prefix}; returns the rest. */
        String expectLine(String prefix) throws IOException {
            String line = out.readLine();
            if (line == null || !line.startsWith(prefix)) {
                throw new AssertionError("child " + process.pid() + ": expected a line starting '" + prefix + "', got "
                        + (line == null ? "end of output" : "'" + line + "'") + "; stderr:\n" + stderr());
            }
            return line.substring(prefix.length());
        }

        /** Every remaining stdout line, until the child closes it. */
        List<String> remainingLines() throws IOException {
            List<String> lines = new ArrayList<>();
            for (String line; (line = out.readLine()) != null; ) {
                lines.add(line);
            }
            return lines;
        }

        void send(String line) {
            in.println(line);
        }

        int waitFor() throws InterruptedException {
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new AssertionError("child " + process.pid() + " did not exit; stderr:\n" + stderr());
            }
            try {
                errDrain.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return process.exitValue();
        }

        String stderr() {
            synchronized (err) {
                return err.toString(StandardCharsets.UTF_8);
            }
        }
    }
}
