package com.example.xmemcached;

import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A memcached process on a free 127.0.0.1 port, as ringstore's own tests start them
 * ({@code ringstore/src/test/java/io/ringstore/testing/Memcached.java}): {@code memcached -l 127.0.0.1
 * -p PORT -U 0 -m 16 -t 1}, with {@code -u root} when running as root (memcached refuses root
 * otherwise), its output in {@code memcached-PORT.log}; started once {@code stats} on its port answers
 * with its own pid (a port taken by someone else in between: another attempt on a fresh port).
 */
final class Memcached implements AutoCloseable {
    /** Debian's memcached, or the binary {@code -Dringstore.memcached=PATH} names. */
    static final Path BINARY = Path.of(System.getProperty("ringstore.memcached", "/usr/bin/memcached"));
    private static final long START_TIMEOUT_MILLIS = 15_000;
    private static final int START_ATTEMPTS = 3;

    private final Process process;
    private final int port;
    private final Path log;

    private Memcached(Process process, int port, Path log) {
        this.process = process;
        this.port = port;
        this.log = log;
    }

    /**
     * Skips the calling test when memcached is not installed, unless {@code RINGSTORE_REQUIRE_MEMCACHED=true}
     * (or {@code -Dringstore.requireMemcached=true}) is set, as CI does: then it fails, naming the binary.
     */
    static void assumeInstalled() {
        if (Files.isExecutable(BINARY)) {
            return;
        }
        boolean required = "true".equals(System.getenv("RINGSTORE_REQUIRE_MEMCACHED"))
                || Boolean.getBoolean("ringstore.requireMemcached");
        if (required) {
            throw new AssertionError(BINARY + " is not an executable and RINGSTORE_REQUIRE_MEMCACHED=true:"
                    + " install memcached (apt-get install memcached) or point -Dringstore.memcached at one");
        }
        Assumptions.abort(BINARY + " is not installed: the tests against real memcached are skipped"
                + " (RINGSTORE_REQUIRE_MEMCACHED=true makes that a failure)");
    }

    /** Starts {@code count} memcached processes, all or none. */
    static List<Memcached> startAll(Path dir, int count) throws IOException, InterruptedException {
        List<Memcached> started = new ArrayList<>();
        try {
            for (int i = 0; i < count; i++) {
                started.add(start(dir));
            }
            return started;
        } catch (IOException | RuntimeException | InterruptedException e) {
            started.forEach(Memcached::close);
            throw e;
        }
    }

    private static Memcached start(Path dir) throws IOException, InterruptedException {
        for (int attempt = 1; ; attempt++) {
            Memcached m = launch(dir, freePort());
            try {
                m.awaitReady();
                return m;
            } catch (IOException e) {
                m.close();
                if (attempt == START_ATTEMPTS) {
                    throw e;
                }
            }
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static Memcached launch(Path dir, int port) throws IOException {
        Files.createDirectories(dir);
        Path log = dir.resolve("memcached-" + port + ".log");
        List<String> command = new ArrayList<>(List.of(BINARY.toString(),
                "-l", "127.0.0.1", "-p", Integer.toString(port), "-U", "0", "-m", "16", "-t", "1"));
        if ("root".equals(System.getProperty("user.name"))) {
            command.addAll(List.of("-u", "root")); // "can't run as root without the -u switch"
        }
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        return new Memcached(p, port, log);
    }

    /** Waits until the port answers {@code stats} with this process's pid. */
    private void awaitReady() throws IOException, InterruptedException {
        long deadline = System.currentTimeMillis() + START_TIMEOUT_MILLIS;
        String want = "STAT pid " + process.pid() + "\r\n";
        while (true) {
            if (!process.isAlive()) {
                throw new IOException("memcached on 127.0.0.1:" + port + " exited with status " + process.exitValue() + ": " + output());
            }
            String stats = stats();
            if (stats != null && stats.contains(want)) {
                return;
            }
            if (stats != null) {
                throw new IOException("127.0.0.1:" + port + " is answered by another memcached, not pid " + process.pid());
            }
            if (System.currentTimeMillis() > deadline) {
                throw new IOException("memcached did not answer 'stats' on 127.0.0.1:" + port + " within "
                        + START_TIMEOUT_MILLIS + " ms: " + output());
            }
            Thread.sleep(10);
        }
    }

    /** {@code stats}' answer up to {@code END}, or null when the port does not answer yet. */
    private String stats() {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 200);
            s.setSoTimeout(2000);
            OutputStream out = s.getOutputStream();
            out.write("stats\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            StringBuilder answer = new StringBuilder();
            int c;
            while ((c = in.read()) >= 0) {
                answer.append((char) c);
                if (answer.length() >= 5 && answer.lastIndexOf("END\r\n") == answer.length() - 5) {
                    return answer.toString();
                }
            }
            return null;
        } catch (IOException notYet) {
            return null;
        }
    }

    private String output() throws IOException {
        return Files.exists(log) ? Files.readString(log, StandardCharsets.ISO_8859_1).strip() : "(no output)";
    }

    /** {@return its address, {@code 127.0.0.1:PORT}} */
    String endpoint() {
        return "127.0.0.1:" + port;
    }

    /** Stops it with SIGKILL: it keeps nothing worth a graceful exit. */
    @Override
    public void close() {
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return "memcached " + endpoint();
    }
}
