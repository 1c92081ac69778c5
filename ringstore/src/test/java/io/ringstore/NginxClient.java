package io.ringstore;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Sends {@code GET} requests with exact request-line bytes over a few keep-alive connections: plain
 * sockets, because an HTTP client library would check or re-encode the URIs.
 */
public final class NginxClient {
    private static final int SOCKET_TIMEOUT_MILLIS = 10_000;

    private NginxClient() {}

    /**
     * Requests every URI from 127.0.0.1:{@code port}, {@code connections} at a time, and returns each
     * response's status code, in the order of {@code uris}.
     */
    static int[] getAll(int port, List<byte[]> uris, int connections, long timeoutSeconds) throws Exception {
        int[] statuses = new int[uris.size()];
        AtomicInteger next = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(connections);
        try {
            List<Future<?>> workers = new ArrayList<>();
            for (int c = 0; c < connections; c++) {
                workers.add(pool.submit(() -> {
                    Connection conn = null;
                    try {
                        for (int i; (i = next.getAndIncrement()) < uris.size(); ) {
                            if (conn == null) {
                                conn = new Connection(port);
                            }
                            statuses[i] = conn.get(uris.get(i));
                            if (conn.closedByServer) {
                                conn.close();
                                conn = null;
                            }
                        }
                    } finally {
                        if (conn != null) {
                            conn.close();
                        }
                    }
                    return null;
                }));
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
            for (Future<?> w : workers) {
                w.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        return statuses;
    }

    private static final class Connection implements AutoCloseable {
        private final Socket socket;
        private final InputStream in;
        private final OutputStream out;
        boolean closedByServer;

        Connection(int port) throws IOException {
            socket = new Socket();
            socket.setTcpNoDelay(true);
            socket.setSoTimeout(SOCKET_TIMEOUT_MILLIS);
            socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), SOCKET_TIMEOUT_MILLIS);
            in = new BufferedInputStream(socket.getInputStream(), 16 * 1024);
            out = socket.getOutputStream();
        }

        int get(byte[] uri) throws IOException {
            ByteArrayOutputStream request = new ByteArrayOutputStream(uri.length + 48);
            request.write("GET ".getBytes(StandardCharsets.US_ASCII));
            request.write(uri);
            request.write(" HTTP/1.1\r\nHost: ringstore-parity\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            out.write(request.toByteArray());
            out.flush();
            return readResponse();
        }

        private int readResponse() throws IOException {
            String statusLine = line();
            String[] parts = statusLine.split(" ", 3);
            if (parts.length < 2 || !parts[0].startsWith("HTTP/1.")) {
                throw new IOException("not an HTTP status line: " + statusLine);
            }
            int status = Integer.parseInt(parts[1]);
            long length = -1;
            boolean chunked = false;
            for (String h; !(h = line()).isEmpty(); ) {
                int colon = h.indexOf(':');
                String name = h.substring(0, Math.max(colon, 0)).strip().toLowerCase(Locale.ROOT);
                String value = h.substring(colon + 1).strip().toLowerCase(Locale.ROOT);
                switch (name) {
                    case "content-length" -> length = Long.parseLong(value);
                    case "transfer-encoding" -> chunked = value.contains("chunked");
                    case "connection" -> closedByServer |= value.contains("close");
                    default -> {}
                }
            }
            if (status == 204 || status == 304 || status < 200) {
                return status; // no body, whatever the headers say (RFC 9112, section 6.3)
            }
            if (chunked) {
                for (long size; (size = Long.parseLong(line().split(";", 2)[0].strip(), 16)) > 0; ) {
                    skip(size + 2);
                }
                while (!line().isEmpty()) {
                    // trailers
                }
            } else if (length >= 0) {
                skip(length);
            } else {
                in.transferTo(OutputStream.nullOutputStream());
                closedByServer = true;
            }
            return status;
        }

        private String line() throws IOException {
            StringBuilder sb = new StringBuilder();
            for (int b; (b = in.read()) != '\n'; ) {
                if (b < 0) {
                    throw new EOFException("connection closed mid-response after '" + sb + "'");
                }
                if (b != '\r') {
                    sb.append((char) b);
                }
            }
            return sb.toString();
        }

        private void skip(long n) throws IOException {
            in.skipNBytes(n);
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}
