package io.ringstore.tools;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The {@code ringstore} command in a child JVM on this test's class path, as a shell starts it: for
 * what only a real process shows (argv decoded by the JVM under a locale, a mapping losing its pages).
 * stdout is handed out line by line as raw bytes; stderr is collected.
 */
final class ChildCli implements AutoCloseable {
    private final Process process;
    private final BlockingQueue<byte[]> lines = new LinkedBlockingQueue<>();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();
    private final Thread outDrain;
    private final Thread errDrain;

    private ChildCli(Process process) {
        this.process = process;
        this.outDrain = drain(process.getInputStream(), this::splitLines, "stdout");
        this.errDrain = drain(
                process.getErrorStream(),
                chunk -> {
                    synchronized (err) {
                        err.writeBytes(chunk);
                    }
                },
                "stderr");
    }

    /**
     * Starts {@code sh -c 'exec java -cp CLASSPATH io.ringstore.tools.Main ARGUMENTS'} with only
     * {@code LC_ALL=locale} and {@code PATH} of the locale variables and environment: {@code arguments}
     * is shell text, so a test can pass any bytes with {@code "$(printf '\303\251')"} while this JVM,
     * whatever its own locale, only ever encodes ASCII. {@code "$1"}, {@code "$2"}, … are {@code
     * positional}.
     */
    static ChildCli start(String locale, String arguments, String... positional) throws IOException {
        List<String> command = new ArrayList<>(List.of(
                "sh",
                "-c",
                "exec \"$JAVA\" -Xmx64m -XX:+UseSerialGC -cp \"$CLASSPATH\" io.ringstore.tools.Main " + arguments,
                "sh"));
        command.addAll(List.of(positional));
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.environment()
                .keySet()
                .removeIf(k -> k.startsWith("LC_")
                        || k.equals("LANG")
                        || k.equals("LANGUAGE")
                        || k.startsWith("JAVA_")
                        || k.startsWith("JDK_"));
        pb.environment().put("LC_ALL", locale);
        pb.environment()
                .put(
                        "JAVA",
                        Path.of(System.getProperty("java.home"), "bin", "java").toString());
        pb.environment().put("CLASSPATH", System.getProperty("java.class.path"));
        return new ChildCli(pb.start());
    }

    private interface Sink {
        void accept(byte[] chunk);
    }

    private static Thread drain(InputStream in, Sink sink, String name) {
        Thread t = new Thread(
                () -> {
                    byte[] buf = new byte[8192];
                    try {
                        int n;
                        while ((n = in.read(buf)) > 0) {
                            sink.accept(Arrays.copyOf(buf, n));
                        }
                    } catch (IOException e) {
                        // the child is gone
                    }
                },
                name + " of the child CLI");
        t.setDaemon(true);
        t.start();
        return t;
    }

    private final ByteArrayOutputStream partial = new ByteArrayOutputStream();

    private void splitLines(byte[] chunk) {
        for (byte b : chunk) {
            if (b == '\n') {
                lines.add(partial.toByteArray());
                partial.reset();
            } else {
                partial.write(b);
            }
        }
    }

    OutputStream stdin() {
        return process.getOutputStream();
    }

    /** The next stdout line's bytes (no line end), or null when none comes within {@code millis}. */
    byte[] nextLine(long millis) throws InterruptedException {
        return lines.poll(millis, TimeUnit.MILLISECONDS);
    }

    String stderr() {
        synchronized (err) {
            return err.toString(StandardCharsets.UTF_8);
        }
    }

    /** Waits for stderr to have a line containing {@code text}. */
    void awaitStderr(String text, long millis) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (!stderr().contains(text)) {
            assertTrue(
                    System.nanoTime() < deadline,
                    () -> "'" + text + "' not on the child's stderr within " + millis + " ms:\n" + stderr());
            Thread.sleep(20);
        }
    }

    /** Closes stdin and waits for the exit code; the streams are drained to their end. */
    int exit() throws IOException, InterruptedException {
        process.getOutputStream().close();
        boolean ended = process.waitFor(60, TimeUnit.SECONDS);
        assertTrue(ended, () -> "the child CLI did not end within 60 s:\n" + stderr());
        outDrain.join(10_000);
        errDrain.join(10_000);
        return process.exitValue();
    }

    @Override
    public void close() {
        process.destroyForcibly();
    }
}
