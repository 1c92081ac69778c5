package io.ringstore.tools;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
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
 * Origin servers for an end-to-end test: one small nginx per origin (Debian's nginx-light, in the
 * foreground, everything under one directory), each on its own loopback port answering every request
 * with its own name, so that one can be stopped and started again on the same port. Paths under
 * {@code /slow/} answer after {@value #SLOW_SECONDS} s, so requests overlap; under {@code /hold/}
 * after {@value #HOLD_SECONDS} s, to hold requests in flight; others at once.
 */
final class Origins implements AutoCloseable {
    /** Debian's nginx-light, or the binary {@code -Dringstore.nginx=PATH} names (a missing one skips the tests). */
    static final Path NGINX = Path.of(System.getProperty("ringstore.nginx", "/usr/sbin/nginx"));
    /** The echo module, for a delay (Debian's libnginx-mod-http-echo, a dependency of nginx-light). */
    static final Path ECHO_MODULE = Path.of("/usr/lib/nginx/modules/ngx_http_echo_module.so");

    static final String SLOW_SECONDS = "0.05";
    static final String HOLD_SECONDS = "4";
    private static final long START_TIMEOUT_MILLIS = 15_000;

    private final Path dir;
    private final int[] ports;
    private final Process[] processes;

    private Origins(Path dir, int[] ports) {
        this.dir = dir;
        this.ports = ports;
        this.processes = new Process[ports.length];
    }

    static boolean installed() {
        return Files.isExecutable(NGINX) && Files.isReadable(ECHO_MODULE);
    }

    /**
     * For {@code @EnabledIf(value = TESTS_RUN, disabledReason = MISSING)} on a test class that needs the
     * origins: without them surefire then counts its tests as skipped (an assumption failing in
     * {@code @BeforeAll} shows as "Tests run: 0").
     */
    static final String TESTS_RUN = "io.ringstore.tools.Origins#testsRun";

    static final String MISSING =
            "no nginx with the echo module at -Dringstore.nginx (default /usr/sbin/nginx; Debian: apt-get install nginx-light)";

    /**
     * Whether such a test class runs: when the origins can start, and with
     * {@code -Dringstore.requireNginx=true} (CI) also when they cannot, so that {@link #requireInstalled} fails it.
     */
    static boolean testsRun() {
        return installed() || Boolean.getBoolean("ringstore.requireNginx");
    }

    /** Fails the calling test class unless the origins can start (only reached when {@link #testsRun} says so). */
    static void requireInstalled(String test) {
        if (!installed()) {
            fail("no nginx with the echo module (" + NGINX + ", " + ECHO_MODULE
                    + "), and ringstore.requireNginx=true requires " + test + " to run");
        }
    }

    /** Starts {@code count} origins on free loopback ports, named {@code origin0} … and waits until each listens. */
    static Origins start(Path dir, int count) throws IOException, InterruptedException {
        int[] ports = new int[count];
        List<ServerSocket> held = new ArrayList<>(); // held together so that the ports differ
        try {
            for (int i = 0; i < count; i++) {
                ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                held.add(s);
                ports[i] = s.getLocalPort();
            }
        } finally {
            for (ServerSocket s : held) {
                s.close();
            }
        }
        Origins origins = new Origins(dir, ports);
        try {
            for (int i = 0; i < count; i++) {
                origins.start(i);
            }
        } catch (IOException | RuntimeException | Error e) {
            origins.close();
            throw e;
        }
        return origins;
    }

    /** The address of origin {@code i} as a ring names it (nginx's {@code $upstream_addr}). */
    String address(int i) {
        return "127.0.0.1:" + ports[i];
    }

    int count() {
        return ports.length;
    }

    /** The origin listening at {@code address}, or -1. */
    int indexOf(String address) {
        for (int i = 0; i < ports.length; i++) {
            if (address(i).equals(address)) {
                return i;
            }
        }
        return -1;
    }

    /** Starts origin {@code i} (again, on its port) and waits until it accepts connections. */
    void start(int i) throws IOException, InterruptedException {
        Path d = dir.resolve("origin" + i);
        Files.createDirectories(d.resolve("temp"));
        Files.writeString(
                d.resolve("nginx.conf"), """
                load_module "%1$s";
                master_process off;
                daemon off;
                worker_processes 1;
                pid "%2$s/nginx.pid";
                lock_file "%2$s/nginx.lock";
                error_log "%2$s/error.log" crit;
                events { worker_connections 1024; }
                http {
                    access_log off;
                    client_body_temp_path "%2$s/temp/client_body";
                    proxy_temp_path "%2$s/temp/proxy";
                    fastcgi_temp_path "%2$s/temp/fastcgi";
                    uwsgi_temp_path "%2$s/temp/uwsgi";
                    scgi_temp_path "%2$s/temp/scgi";
                    keepalive_requests 100000;
                    server {
                        listen 127.0.0.1:%3$d;
                        location /slow/ { echo_sleep %5$s; echo origin%4$d; }
                        location /hold/ { echo_sleep %6$s; echo origin%4$d; }
                        location / { echo origin%4$d; }
                    }
                }
                """.formatted(ECHO_MODULE, d, ports[i], i, SLOW_SECONDS, HOLD_SECONDS));
        processes[i] = new ProcessBuilder(
                        NGINX.toString(),
                        "-p",
                        d + "/",
                        "-c",
                        d.resolve("nginx.conf").toString(),
                        "-e",
                        d.resolve("error.log").toString())
                .redirectErrorStream(true)
                .redirectOutput(d.resolve("nginx.out").toFile())
                .start();
        long deadline = System.currentTimeMillis() + START_TIMEOUT_MILLIS;
        while (true) {
            if (!processes[i].isAlive()) {
                throw new IOException("origin " + i + ": nginx exited with status " + processes[i].exitValue() + "\n"
                        + diagnostics(i));
            }
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), ports[i]), 200);
                return;
            } catch (IOException notYet) {
                if (System.currentTimeMillis() > deadline) {
                    throw new IOException("origin " + i + " did not listen within " + START_TIMEOUT_MILLIS + " ms\n"
                            + diagnostics(i));
                }
                Thread.sleep(20);
            }
        }
    }

    /** Stops origin {@code i}: its port refuses connections once this returns. */
    void stop(int i) throws InterruptedException {
        Process p = processes[i];
        if (p == null) {
            return;
        }
        p.destroy(); // SIGTERM: nginx's fast shutdown
        if (!p.waitFor(5, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            p.waitFor(5, TimeUnit.SECONDS);
        }
        processes[i] = null;
    }

    private String diagnostics(int i) throws IOException {
        Path d = dir.resolve("origin" + i);
        StringBuilder b = new StringBuilder();
        for (String f : List.of("error.log", "nginx.out", "nginx.conf")) {
            Path p = d.resolve(f);
            b.append("--- ")
                    .append(p)
                    .append('\n')
                    .append(Files.exists(p) ? Files.readString(p, StandardCharsets.ISO_8859_1) : "(none)\n");
        }
        return b.toString();
    }

    @Override
    public void close() throws InterruptedException {
        for (int i = 0; i < processes.length; i++) {
            stop(i);
        }
    }
}
