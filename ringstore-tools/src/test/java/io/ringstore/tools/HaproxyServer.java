package io.ringstore.tools;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.BufferedInputStream;
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
import java.util.function.IntFunction;

/**
 * A real HAProxy for one test class, in the foreground ({@code -db}), its configuration under one
 * directory, in front of loopback origins that answer every request with their own {@code ip:port}
 * (in-process, one listening socket each, HTTP/1.1 keep-alive), and a client that sends batches of
 * pipelined requests over one kept-alive connection and reads back which origin answered each.
 */
final class HaproxyServer implements AutoCloseable {
    /** Debian's haproxy, or the binary {@code -Dringstore.haproxy=PATH} names. */
    static final Path BINARY = Path.of(System.getProperty("ringstore.haproxy", "/usr/sbin/haproxy"));

    private static final long START_TIMEOUT_MILLIS = 15_000;

    /** For {@code @EnabledIf(value = TESTS_RUN, disabledReason = MISSING)}. */
    static final String TESTS_RUN = "io.ringstore.tools.HaproxyServer#testsRun";

    static final String MISSING =
            "no haproxy at -Dringstore.haproxy (default /usr/sbin/haproxy; Debian: apt-get install haproxy);"
                    + " RINGSTORE_REQUIRE_HAPROXY=true makes that a failure";

    private final Process process;
    private final Path dir;
    private final int port;

    private HaproxyServer(Process process, Path dir, int port) {
        this.process = process;
        this.dir = dir;
        this.port = port;
    }

    static boolean installed() {
        return Files.isExecutable(BINARY);
    }

    /** Whether the HAProxy tests run: when it is installed, or when {@code RINGSTORE_REQUIRE_HAPROXY=true} (to fail them). */
    static boolean testsRun() {
        return installed() || "true".equals(System.getenv("RINGSTORE_REQUIRE_HAPROXY"));
    }

    /** Fails the calling test class unless HAProxy is installed (only reached when {@link #testsRun} says so). */
    static void requireInstalled(String test) {
        if (!installed()) {
            fail(BINARY + " is missing (install Debian's haproxy), and RINGSTORE_REQUIRE_HAPROXY=true requires " + test
                    + " to run");
        }
    }

    /**
     * Starts HAProxy with the configuration {@code config.apply(frontendPort)} writes (its frontend on
     * that free loopback port) and waits until the port accepts connections.
     */
    static HaproxyServer start(Path dir, IntFunction<String> config) throws IOException, InterruptedException {
        int port = freePort();
        Path cfg = dir.resolve("haproxy.cfg");
        Files.writeString(cfg, config.apply(port));
        Process p = new ProcessBuilder(BINARY.toString(), "-db", "-f", cfg.toString())
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("haproxy.out").toFile())
                .start();
        HaproxyServer server = new HaproxyServer(p, dir, port);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(START_TIMEOUT_MILLIS);
        while (true) {
            if (!p.isAlive()) {
                throw new IOException("haproxy exited with " + p.exitValue() + ": " + server.output());
            }
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 200);
                return server;
            } catch (IOException notYet) {
                if (System.nanoTime() > deadline) {
                    server.close();
                    throw new IOException(
                            "haproxy did not listen within " + START_TIMEOUT_MILLIS + " ms: " + server.output());
                }
                Thread.sleep(20);
            }
        }
    }

    /** What haproxy wrote (its warnings and errors). */
    String output() {
        try {
            return Files.readString(dir.resolve("haproxy.out"));
        } catch (IOException e) {
            return "(no output: " + e + ")";
        }
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /** A request: the target (path and query) and the headers after {@code Host}. */
    record Request(String target, List<String> headers) {}

    /**
     * Sends {@code requests} over one kept-alive connection, pipelined {@code batch} at a time, and returns
     * each response's body (the answering origin's {@code ip:port}), or {@code "status N"} for a response
     * other than 200.
     */
    List<String> send(List<Request> requests, int batch) throws IOException {
        List<String> answers = new ArrayList<>(requests.size());
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
            s.setSoTimeout(10_000);
            s.setTcpNoDelay(true);
            OutputStream out = s.getOutputStream();
            InputStream in = new BufferedInputStream(s.getInputStream(), 65536);
            for (int from = 0; from < requests.size(); from += batch) {
                int to = Math.min(requests.size(), from + batch);
                StringBuilder text = new StringBuilder();
                for (Request r : requests.subList(from, to)) {
                    text.append("GET ").append(r.target()).append(" HTTP/1.1\r\nHost: t\r\n");
                    r.headers().forEach(h -> text.append(h).append("\r\n"));
                    text.append("\r\n");
                }
                out.write(text.toString().getBytes(StandardCharsets.ISO_8859_1));
                out.flush();
                for (int i = from; i < to; i++) {
                    answers.add(readResponse(in));
                }
            }
        }
        return answers;
    }

    /** One response: its body when the status is 200, else {@code "status N"}. */
    private static String readResponse(InputStream in) throws IOException {
        String status = line(in);
        int length = 0;
        for (String h; !(h = line(in)).isEmpty(); ) {
            if (h.regionMatches(true, 0, "content-length:", 0, 15)) {
                length = Integer.parseInt(h.substring(15).strip());
            }
        }
        byte[] body = in.readNBytes(length);
        String code = status.split(" ")[1];
        return code.equals("200") ? new String(body, StandardCharsets.ISO_8859_1) : "status " + code;
    }

    private static String line(InputStream in) throws IOException {
        StringBuilder b = new StringBuilder();
        for (int c; (c = in.read()) != '\n'; ) {
            if (c < 0) {
                throw new IOException("connection closed after '" + b + "'");
            }
            if (c != '\r') {
                b.append((char) c);
            }
        }
        return b.toString();
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    /** Loopback origins, each answering every request with its own {@code 127.0.0.1:port}. */
    static final class Origins implements AutoCloseable {
        private final List<ServerSocket> sockets = new ArrayList<>();

        Origins(int count) throws IOException {
            try {
                for (int i = 0; i < count; i++) {
                    ServerSocket s = new ServerSocket(0, 128, InetAddress.getLoopbackAddress());
                    sockets.add(s);
                    byte[] body = address(i).getBytes(StandardCharsets.ISO_8859_1);
                    Thread.ofVirtual().start(() -> accept(s, body));
                }
            } catch (IOException | RuntimeException e) {
                close();
                throw e;
            }
        }

        /** Origin i's {@code ip:port}. */
        String address(int i) {
            return "127.0.0.1:" + sockets.get(i).getLocalPort();
        }

        private static void accept(ServerSocket s, byte[] body) {
            while (!s.isClosed()) {
                try {
                    Socket c = s.accept();
                    Thread.ofVirtual().start(() -> serve(c, body));
                } catch (IOException closed) {
                    return;
                }
            }
        }

        /** Answers each request of a kept-alive connection (a GET without a body) with {@code body}. */
        private static void serve(Socket c, byte[] body) {
            byte[] head = ("HTTP/1.1 200 OK\r\nContent-Length: " + body.length + "\r\nContent-Type: text/plain\r\n\r\n")
                    .getBytes(StandardCharsets.ISO_8859_1);
            try (c) {
                InputStream in = new BufferedInputStream(c.getInputStream());
                OutputStream out = new java.io.BufferedOutputStream(c.getOutputStream());
                while (true) {
                    int last = 0; // a request (a GET, no body) ends with CR LF CR LF
                    while (last != 0x0D0A0D0A) {
                        int b = in.read();
                        if (b < 0) {
                            return;
                        }
                        last = last << 8 | b;
                    }
                    out.write(head);
                    out.write(body);
                    if (in.available() == 0) {
                        out.flush();
                    }
                }
            } catch (IOException gone) {
                // haproxy closed the connection
            }
        }

        @Override
        public void close() {
            for (ServerSocket s : sockets) {
                try {
                    s.close();
                } catch (IOException ignored) {
                    // closing anyway
                }
            }
        }
    }
}
