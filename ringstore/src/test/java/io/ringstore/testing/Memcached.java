package io.ringstore.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A memcached process on a free 127.0.0.1 port: {@code memcached -l 127.0.0.1 -p PORT -U 0 -m MB -t 1}
 * (TCP only, one worker thread, {@code -u root} added when the tests run as root, which memcached
 * otherwise refuses), its output in {@code memcached-PORT.log} under the directory given. Ready once its
 * port answers {@code stats} with its pid.
 */
public final class Memcached implements AutoCloseable {
    /** Debian's memcached, or the binary {@code -Dringstore.memcached=PATH} names. */
    public static final Path BINARY = Path.of(System.getProperty("ringstore.memcached", "/usr/bin/memcached"));

    private static final long START_TIMEOUT_MILLIS = 15_000;
    private static final int START_ATTEMPTS = 3;

    private final Process process;
    private final int port;
    private final Path log;
    private final String commandLine;
    private boolean portTakenByOther;

    private Memcached(Process process, int port, Path log, String commandLine) {
        this.process = process;
        this.port = port;
        this.log = log;
        this.commandLine = commandLine;
    }

    /** Whether {@link #BINARY} is there. */
    public static boolean installed() {
        return Files.isExecutable(BINARY);
    }

    /**
     * Starts one memcached with {@code megabytes} of item memory and waits until it answers; a port
     * taken by someone else between choosing and binding it makes another attempt on a fresh port.
     */
    public static Memcached start(Path dir, int megabytes) throws IOException, InterruptedException {
        for (int attempt = 1; ; attempt++) {
            Memcached m = launch(dir, LoopbackPorts.free(1)[0], megabytes);
            try {
                m.awaitReady();
                return m;
            } catch (IOException | RuntimeException e) {
                m.close();
                if (attempt < START_ATTEMPTS && m.portTaken()) {
                    continue;
                }
                throw e;
            }
        }
    }

    /**
     * Starts one memcached on {@code port} exactly (for a port that matters, such as 11211) and waits
     * until it answers; no retry on another port.
     */
    public static Memcached startOn(Path dir, int port, int megabytes) throws IOException, InterruptedException {
        Memcached m = launch(dir, port, megabytes);
        try {
            m.awaitReady();
            return m;
        } catch (IOException | RuntimeException e) {
            m.close();
            throw e;
        }
    }

    /** Starts {@code count} memcached processes at once, then waits for each (as {@link #start} does); all or none. */
    public static List<Memcached> startAll(Path dir, int count, int megabytes)
            throws IOException, InterruptedException {
        List<Memcached> started = new ArrayList<>();
        try {
            for (int port : LoopbackPorts.free(count)) {
                started.add(launch(dir, port, megabytes));
            }
            for (int i = 0; i < count; i++) {
                Memcached m = started.get(i);
                try {
                    m.awaitReady();
                } catch (IOException | RuntimeException e) {
                    m.close();
                    if (!m.portTaken()) {
                        throw e;
                    }
                    started.set(i, start(dir, megabytes));
                }
            }
            return started;
        } catch (IOException | RuntimeException | Error | InterruptedException e) {
            for (Memcached m : started) {
                m.close();
            }
            throw e;
        }
    }

    private static Memcached launch(Path dir, int port, int megabytes) throws IOException {
        Files.createDirectories(dir);
        Path log = dir.resolve("memcached-" + port + ".log");
        List<String> command = new ArrayList<>(List.of(
                BINARY.toString(),
                "-l",
                "127.0.0.1",
                "-p",
                Integer.toString(port),
                "-U",
                "0",
                "-m",
                Integer.toString(megabytes),
                "-t",
                "1"));
        if ("root".equals(System.getProperty("user.name"))) {
            command.addAll(List.of("-u", "root")); // "can't run as root without the -u switch"
        }
        Process p = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        return new Memcached(p, port, log, String.join(" ", command));
    }

    /**
     * Waits until the port answers {@code stats} with this process's pid: a memcached someone else runs
     * on the port (this one then fails to bind) does not count as started.
     */
    private void awaitReady() throws IOException, InterruptedException {
        long deadline = System.currentTimeMillis() + START_TIMEOUT_MILLIS;
        while (true) {
            if (!process.isAlive()) {
                throw new IOException("memcached exited with status " + process.exitValue()
                        + " before answering on 127.0.0.1:" + port + "\n" + diagnostics());
            }
            if (LoopbackPorts.accepts(port)) {
                String pid = null;
                try (MemcachedClient c = client()) {
                    pid = c.stats().get("pid");
                } catch (IOException notYet) {
                    // listening but not answering yet: retried until the deadline
                }
                if (Long.toString(process.pid()).equals(pid)) {
                    return;
                }
                if (pid != null) {
                    portTakenByOther = true;
                    throw new IOException("127.0.0.1:" + port + " is answered by another memcached (pid " + pid
                            + ", not " + process.pid() + ")");
                }
            }
            if (System.currentTimeMillis() > deadline) {
                throw new IOException("memcached did not answer 'stats' on 127.0.0.1:" + port + " within "
                        + START_TIMEOUT_MILLIS + " ms\n" + diagnostics());
            }
            Thread.sleep(10);
        }
    }

    private boolean portTaken() {
        String out = read(log);
        return portTakenByOther || out.contains("Address already in use") || out.contains("failed to listen");
    }

    /** Its TCP port on 127.0.0.1. */
    public int port() {
        return port;
    }

    /** A new connection to it (the caller closes it). */
    public MemcachedClient client() throws IOException {
        return MemcachedClient.connect("memcached 127.0.0.1:" + port, port);
    }

    /** Its command line output, for failure messages. */
    public String diagnostics() {
        return "--- " + log + " (" + commandLine + ")\n" + read(log);
    }

    private static String read(Path file) {
        try {
            return Files.exists(file) ? Files.readString(file, StandardCharsets.ISO_8859_1) : "(none)\n";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Stops memcached with SIGKILL: it keeps nothing worth a graceful exit, and after SIGTERM it takes
     * about a second to go.
     */
    @Override
    public void close() {
        process.destroyForcibly();
        Processes.awaitExit(process);
    }

    @Override
    public String toString() {
        return "memcached 127.0.0.1:" + port;
    }
}
