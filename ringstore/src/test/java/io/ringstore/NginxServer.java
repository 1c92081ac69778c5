package io.ringstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * An nginx started for one test class: one foreground process ({@code master_process off}, {@code daemon
 * off}) listening on free loopback ports, with its config, pid, lock, logs and temp directories all
 * under one directory, so nothing under /etc, /var or /run is touched.
 */
public final class NginxServer implements AutoCloseable {
    /** Debian's nginx-light, or the binary {@code -Dringstore.nginx=PATH} names (a missing one skips the tests). */
    static final Path BINARY = Path.of(System.getProperty("ringstore.nginx", "/usr/sbin/nginx"));

    private static final long START_TIMEOUT_MILLIS = 15_000;
    private static final int START_ATTEMPTS = 3;
    private static final long LOG_WAIT_MILLIS = 10_000;

    private final Process process;
    private final Path dir;
    private final int[] ports;

    private NginxServer(Process process, Path dir, int[] ports) {
        this.process = process;
        this.dir = dir;
        this.ports = ports;
    }

    static boolean installed() {
        return Files.isExecutable(BINARY);
    }

    /**
     * For {@code @EnabledIf(value = TESTS_RUN, disabledReason = MISSING)} on an nginx test class: without
     * nginx surefire then counts its tests as skipped (an assumption failing in {@code @BeforeAll} shows
     * as "Tests run: 0").
     */
    static final String TESTS_RUN = "io.ringstore.NginxServer#testsRun";

    static final String MISSING =
            "no nginx at -Dringstore.nginx (default /usr/sbin/nginx; Debian: apt-get install nginx-light)";

    /**
     * Whether the nginx test classes run: when nginx is installed, and with
     * {@code -Dringstore.requireNginx=true} (CI) also when it is not, so that {@link #requireInstalled} fails them.
     */
    static boolean testsRun() {
        return installed() || Boolean.getBoolean("ringstore.requireNginx");
    }

    /** Fails the calling test class unless nginx is installed (only reached when {@link #testsRun} says so). */
    static void requireInstalled(String test) {
        if (!installed()) {
            fail(BINARY + " is missing (install Debian's nginx-light), and ringstore.requireNginx=true requires " + test
                    + " to run");
        }
    }

    /**
     * Starts nginx with {@code http.apply(ports)} inside its {@code http { }} block, {@code portCount}
     * free loopback ports chosen for it, and waits until every port accepts connections. A port taken by
     * someone else between choosing and binding it makes another attempt with fresh ports.
     */
    static NginxServer start(Path dir, int portCount, Function<int[], String> http)
            throws IOException, InterruptedException {
        Files.createDirectories(dir.resolve("temp"));
        for (int attempt = 1; ; attempt++) {
            int[] ports = freePorts(portCount);
            Files.writeString(dir.resolve("nginx.conf"), config(dir, http.apply(ports)));
            Files.deleteIfExists(dir.resolve("error.log"));
            Process p = new ProcessBuilder(
                            BINARY.toString(),
                            "-p",
                            dir + "/",
                            "-c",
                            dir.resolve("nginx.conf").toString(),
                            "-e",
                            dir.resolve("error.log").toString())
                    .redirectErrorStream(true)
                    .redirectOutput(dir.resolve("nginx.out").toFile())
                    .start();
            NginxServer server = new NginxServer(p, dir, ports);
            try {
                server.awaitListening();
                return server;
            } catch (IOException | RuntimeException | Error e) {
                server.close();
                if (attempt < START_ATTEMPTS && server.diagnostics().contains("Address already in use")) {
                    continue;
                }
                throw e;
            }
        }
    }

    /** What {@code nginx -t} said of a config: its exit status and its output. */
    record ConfigTest(int status, String output) {}

    /**
     * Runs {@code nginx -t} on the config {@link #start} would write, with {@code http} inside its
     * {@code http { }} block, under {@code dir}; nothing is started.
     */
    static ConfigTest test(Path dir, String http) throws IOException, InterruptedException {
        Files.createDirectories(dir.resolve("temp"));
        Files.writeString(dir.resolve("nginx.conf"), config(dir, http));
        Process p = new ProcessBuilder(
                        BINARY.toString(),
                        "-t",
                        "-p",
                        dir + "/",
                        "-c",
                        dir.resolve("nginx.conf").toString(),
                        "-e",
                        "stderr")
                .redirectErrorStream(true)
                .start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(START_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS)) {
            p.destroyForcibly();
            throw new IOException("nginx -t did not finish within " + START_TIMEOUT_MILLIS + " ms");
        }
        return new ConfigTest(p.exitValue(), output);
    }

    private static String config(Path dir, String http) {
        String d = dir.toString();
        return """
                master_process off;
                daemon off;
                worker_processes 1;
                pid "%1$s/nginx.pid";
                lock_file "%1$s/nginx.lock";
                # crit: nginx's own start-up errors (emerg) but not one line per refused upstream connect.
                error_log "%1$s/error.log" crit;
                events {
                    worker_connections 1024;
                }
                http {
                    access_log off;
                    client_body_temp_path "%1$s/temp/client_body";
                    proxy_temp_path "%1$s/temp/proxy";
                    fastcgi_temp_path "%1$s/temp/fastcgi";
                    uwsgi_temp_path "%1$s/temp/uwsgi";
                    scgi_temp_path "%1$s/temp/scgi";
                %2$s
                }
                """.formatted(d, http.indent(4));
    }

    private static int[] freePorts(int count) throws IOException {
        ServerSocket[] sockets = new ServerSocket[count]; // held together so that the ports differ
        try {
            int[] ports = new int[count];
            for (int i = 0; i < count; i++) {
                sockets[i] = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                ports[i] = sockets[i].getLocalPort();
            }
            return ports;
        } finally {
            for (ServerSocket s : sockets) {
                if (s != null) {
                    s.close();
                }
            }
        }
    }

    private void awaitListening() throws IOException, InterruptedException {
        long deadline = System.currentTimeMillis() + START_TIMEOUT_MILLIS;
        for (int port : ports) {
            while (true) {
                if (!process.isAlive()) {
                    throw new IOException("nginx exited with status " + process.exitValue()
                            + " before listening on 127.0.0.1:" + port + "\n" + diagnostics());
                }
                try (Socket s = new Socket()) {
                    s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 200);
                    break;
                } catch (IOException notYet) {
                    if (System.currentTimeMillis() > deadline) {
                        throw new IOException("nginx did not listen on 127.0.0.1:" + port + " within "
                                + START_TIMEOUT_MILLIS + " ms\n" + diagnostics());
                    }
                    Thread.sleep(50);
                }
            }
        }
    }

    int port(int i) {
        return ports[i];
    }

    Path dir() {
        return dir;
    }

    /**
     * The access log {@code name} (under {@link #dir()}) in the format {@code '$request_uri\t<value>'}:
     * URI → value, once all {@code expected} lines are there (nginx logs after responding). Fails unless
     * each URI was logged exactly once.
     */
    Map<String, String> accessLog(String name, int expected) throws IOException, InterruptedException {
        Path log = dir.resolve(name);
        long deadline = System.currentTimeMillis() + LOG_WAIT_MILLIS;
        String text = "";
        while (System.currentTimeMillis() < deadline) {
            text = Files.exists(log) ? Files.readString(log, StandardCharsets.ISO_8859_1) : "";
            if (text.chars().filter(c -> c == '\n').count() >= expected) {
                break;
            }
            Thread.sleep(50);
        }
        Map<String, String> byUri = new HashMap<>();
        List<String> lines = text.lines().toList();
        assertEquals(
                expected,
                lines.size(),
                () -> "access log lines in " + log + " (each request logged once)\n" + diagnostics());
        for (String line : lines) {
            int tab = line.lastIndexOf('\t');
            assertTrue(tab >= 0, () -> "access log line without a tab: " + line);
            String previous = byUri.put(line.substring(0, tab), line.substring(tab + 1));
            assertEquals(null, previous, () -> "URI logged twice: " + line);
        }
        return byUri;
    }

    /** nginx's error log, its standard output and the config, for failure messages. */
    String diagnostics() {
        return "--- " + dir.resolve("error.log") + "\n" + read("error.log")
                + "--- nginx stdout/stderr\n" + read("nginx.out")
                + "--- " + dir.resolve("nginx.conf") + "\n" + read("nginx.conf");
    }

    private String read(String name) {
        try {
            Path f = dir.resolve(name);
            return Files.exists(f) ? Files.readString(f, StandardCharsets.ISO_8859_1) : "(none)\n";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Stops nginx (SIGTERM: fast shutdown; SIGKILL if it has not gone after 5 s). */
    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(5, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(5, TimeUnit.SECONDS);
        }
    }
}
