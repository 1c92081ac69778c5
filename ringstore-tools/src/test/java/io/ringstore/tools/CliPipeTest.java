package io.ringstore.tools;

import static io.ringstore.tools.CliRun.backends;
import static io.ringstore.tools.CliRun.build;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.RingStore;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A reader that closes the pipe early ({@code ringstore dump f | head -1}) is a normal end of the output:
 * no message, exit 0, as for {@code cat}; a full disk ({@code > /dev/full}) stays an error. Each command
 * runs in a child JVM whose stdout is a real pipe, and writes more than the pipe and the CLI's buffer
 * hold (64 KiB each), so that its later writes meet the closed end (EPIPE).
 */
@Tag("process")
class CliPipeTest {
    @TempDir
    static Path dir;

    private static Path fleet;
    private static Path ring;
    private static Path other;

    @BeforeAll
    static void files() throws Exception {
        // 3,000 backends: diff prints a row each (over 300 KB); dump --points prints 100,000 points.
        String text = IntStream.range(0, 3000)
                .mapToObj(i -> "server 10.1." + i / 250 + "." + i % 250 + ":80\n")
                .collect(Collectors.joining());
        fleet = backends(dir, "fleet.conf", text);
        ring = dir.resolve("fleet.ring");
        build(fleet, ring, "--quiet");
        other = dir.resolve("other.ring");
        build(backends(dir, "other.conf", text.replace("10.1.", "10.2.")), other, "--quiet");
    }

    /** What a child run left: its exit code and stderr. */
    private record Ended(int exit, String stderr) {}

    private static ProcessBuilder cli(String... args) {
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m",
                "-XX:+UseSerialGC",
                "-cp",
                System.getProperty("java.class.path"),
                Main.class.getName()));
        command.addAll(List.of(args));
        return new ProcessBuilder(command);
    }

    /** Runs the command with stdout a pipe that this reader closes after {@code lines} lines. */
    private static Ended readThenClose(int lines, String... args) throws Exception {
        Path err = Files.createTempFile(dir, "stderr", ".txt");
        Process p = cli(args).redirectError(err.toFile()).start();
        p.getOutputStream().close();
        try (BufferedReader out =
                new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            for (int i = 0; i < lines; i++) {
                assertTrue(out.readLine() != null, "a first line from " + List.of(args));
            }
        }
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "ended: " + List.of(args));
        return new Ended(p.exitValue(), Files.readString(err));
    }

    /**
     * A line from ThrottledProgress (the command's prefix, the phase, the time since the start): on a
     * slow machine a job passes a second and prints some, on a fast one none.
     */
    private static final Pattern PROGRESS = Pattern.compile("ringstore [a-z]+: .+ \\(\\d+\\.\\d s\\)");

    private static void assertSilentOk(Ended e, String what) {
        assertTrue(
                e.stderr().lines().allMatch(l -> PROGRESS.matcher(l).matches()),
                what + ": a closed pipe is a normal end, no message but progress: " + e.stderr());
        assertEquals(Main.OK, e.exit(), what);
    }

    @Test
    void dumpToAClosedPipe() throws Exception {
        assertSilentOk(readThenClose(1, "dump", ring.toString(), "--points", "100000"), "dump | head -1");
    }

    @Test
    void diffToAClosedPipe() throws Exception {
        assertSilentOk(readThenClose(1, "diff", ring.toString(), other.toString()), "diff | head -1");
    }

    @Test
    void analyzeToAClosedPipe() throws Exception {
        // 1,500 values of k, a row each (over 150 KB), rows flushed as they are done.
        String ks = IntStream.rangeClosed(1, 1500).mapToObj(Integer::toString).collect(Collectors.joining(","));
        Ended e = readThenClose(1, "analyze", "--backends", "2", "--points", ks, "--seeds", "1");
        assertEquals(Main.OK, e.exit(), e.stderr());
        // Progress lines may come (it runs over a second); no error line.
        assertTrue(
                e.stderr().lines().allMatch(l -> l.startsWith("ringstore analyze: ") && !l.contains("cannot write")),
                e.stderr());
    }

    @Test
    void buildToAPipeClosedAtOnceStillPublishes() throws Exception {
        Path target = dir.resolve("piped.ring");
        assertSilentOk(
                readThenClose(0, "build", fleet.toString(), "-o", target.toString(), "--generation", "5"),
                "build | true");
        try (RingStore store = RingStore.open(target)) {
            assertEquals(5, store.generation(), "published whatever became of stdout");
        }
    }

    @Test
    void buildToAFullDiskIsAnError() throws Exception {
        Path target = dir.resolve("full.ring");
        Path err = Files.createTempFile(dir, "stderr", ".txt");
        Process p = cli("build", fleet.toString(), "-o", target.toString(), "--generation", "7")
                .redirectOutput(new File("/dev/full"))
                .redirectError(err.toFile())
                .start();
        assertTrue(p.waitFor(120, TimeUnit.SECONDS));
        assertEquals(Main.FAILED, p.exitValue());
        // progress lines first if the build passed a second, then the error, nothing else
        String text = Files.readString(err);
        assertTrue(
                text.endsWith("ringstore build: published " + target
                        + " (generation 7) but cannot write the summary: stdout closed or disk full\n"),
                text);
        List<String> lines = text.lines().toList();
        for (String line : lines.subList(0, lines.size() - 1)) {
            assertTrue(PROGRESS.matcher(line).matches(), () -> "only progress before the error: " + line);
        }
    }

    @Test
    void dumpToAFullDiskIsAnError() throws IOException, InterruptedException {
        Path err = Files.createTempFile(dir, "stderr", ".txt");
        Process p = cli("dump", ring.toString())
                .redirectOutput(new File("/dev/full"))
                .redirectError(err.toFile())
                .start();
        assertTrue(p.waitFor(120, TimeUnit.SECONDS));
        assertEquals(Main.FAILED, p.exitValue());
        assertEquals("ringstore dump: cannot write the output (stdout closed or disk full?)\n", Files.readString(err));
    }
}
