package io.ringstore.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * One in-process run of the {@code ringstore} command through {@link Main#run}: exit code, stdout
 * bytes and stderr text, plus the assertions every CLI test needs about the error contract.
 */
record CliRun(int exit, byte[] stdout, String stderr) {

    static CliRun run(String... args) {
        return runWithInput(new byte[0], args);
    }

    static CliRun runWithInput(String stdin, String... args) {
        return runWithInput(stdin.getBytes(StandardCharsets.UTF_8), args);
    }

    static CliRun runWithInput(byte[] stdin, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit;
        try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
                PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
            exit = Main.run(args, new ByteArrayInputStream(stdin), o, e);
        }
        return new CliRun(exit, out.toByteArray(), err.toString(StandardCharsets.UTF_8));
    }

    /** Runs with a stdout whose every write fails, as a closed pipe or a full disk. */
    static CliRun runWithBrokenStdout(String... args) {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        OutputStream broken = new OutputStream() {
            @Override
            public void write(int b) throws IOException {
                throw new IOException("No space left on device");
            }
        };
        int exit;
        try (PrintStream o = new PrintStream(broken, true, StandardCharsets.UTF_8);
                PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
            exit = Main.run(args, new ByteArrayInputStream(new byte[0]), o, e);
        }
        return new CliRun(exit, new byte[0], err.toString(StandardCharsets.UTF_8));
    }

    String out() {
        return new String(stdout, StandardCharsets.UTF_8);
    }

    List<String> outLines() {
        return out().lines().toList();
    }

    /** The value of the summary or dump line {@code name: value}; fails when there is not exactly one. */
    String field(String name) {
        List<String> found =
                outLines().stream().filter(l -> l.startsWith(name + ": ")).toList();
        assertEquals(1, found.size(), () -> "one '" + name + ": ' line expected in:\n" + out());
        return found.getFirst().substring(name.length() + 2);
    }

    /** Asserts exit 0 and a stderr free of stack traces; returns this for chaining. */
    CliRun assertOk() {
        assertEquals(Main.OK, exit, () -> "exit code; stderr:\n" + stderr + "stdout:\n" + out());
        assertNoStackTrace();
        return this;
    }

    /**
     * Asserts the error contract: exit {@code code}; stderr is one line prefixed {@code ringstore COMMAND: },
     * and for wrong arguments (exit 2) at most one more line starting {@code usage: }; never a stack trace.
     *
     * @return the error line, without its prefix
     */
    String assertError(int code, String command) {
        assertEquals(code, exit, () -> "exit code; stderr:\n" + stderr + "stdout:\n" + out());
        assertNoStackTrace();
        assertTrue(stderr.endsWith("\n"), () -> "stderr must end with a line end: " + stderr);
        List<String> lines = stderr.lines().toList();
        String prefix = command == null ? "ringstore: " : "ringstore " + command + ": ";
        assertTrue(
                lines.size() == 1
                        || (code == Main.USAGE
                                && lines.size() == 2
                                && lines.get(1).startsWith("usage: ")),
                () -> "one error line" + (code == Main.USAGE ? " (and at most one usage line)" : "")
                        + " expected, got:\n" + stderr);
        assertTrue(lines.getFirst().startsWith(prefix), () -> "error line must start with '" + prefix + "': " + stderr);
        assertFalse(lines.getFirst().substring(prefix.length()).isBlank(), () -> "empty error message: " + stderr);
        return lines.getFirst().substring(prefix.length());
    }

    void assertNoStackTrace() {
        assertFalse(stderr.contains("Exception"), () -> "exception name on stderr:\n" + stderr);
        assertFalse(stderr.contains("\tat "), () -> "stack trace on stderr:\n" + stderr);
        assertFalse(stderr.contains("Caused by"), () -> "stack trace on stderr:\n" + stderr);
    }

    // ---- files ----

    /** Writes {@code text} as a backends file {@code name} in {@code dir}. */
    static Path backends(Path dir, String name, String text) throws IOException {
        return Files.writeString(dir.resolve(name), text, StandardCharsets.UTF_8);
    }

    /** Builds {@code backends} into {@code ring} through the CLI, asserting success. */
    static CliRun build(Path backends, Path ring, String... options) {
        String[] args = Stream.concat(
                        Stream.of("build", backends.toString(), "-o", ring.toString()), Stream.of(options))
                .toArray(String[]::new);
        return run(args).assertOk();
    }

    /** Files a failed build may have left behind in {@code dir} (anything but {@code keep}). */
    static List<Path> otherFiles(Path dir, Path... keep) throws IOException {
        List<Path> kept = List.of(keep);
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> !kept.contains(p)).toList();
        }
    }
}
