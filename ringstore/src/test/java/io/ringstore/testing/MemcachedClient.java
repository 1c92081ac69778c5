package io.ringstore.testing;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A memcached text-protocol client over one plain socket to 127.0.0.1 (a memcached or a twemproxy
 * pool in front of some): {@code set}, multi-key {@code get}, {@code flush_all}, {@code stats}, {@code version}.
 * Requests are pipelined in batches and their replies read in bulk, so thousands of keys take a few
 * round trips. Keys are raw bytes (memcached's rule: 1..250 bytes, no space or control character;
 * bytes {@code >= 0x80} are allowed) and are checked before anything is sent.
 *
 * <p>Not thread-safe: one connection, one caller.
 */
public final class MemcachedClient implements AutoCloseable {
    /** memcached's and twemproxy's limit ({@code KEY_MAX_LENGTH}, {@code MEMCACHE_MAX_KEY_LENGTH}). */
    public static final int MAX_KEY_LENGTH = 250;

    private static final int SOCKET_TIMEOUT_MILLIS = 10_000;
    private static final int CONNECT_TIMEOUT_MILLIS = 2_000;
    /** Sets written before their replies are read: about 16 kB of requests, 2 kB of replies. */
    private static final int SETS_PER_BATCH = 256;
    /**
     * Longest {@code get k1 k2 ...} line sent: memcached handles a request line without its newline
     * yet specially once it passes 2048 bytes, so lines stay below that.
     */
    private static final int MAX_GET_LINE = 2000;
    /** Bytes of {@code get} lines written before their replies are read (replies stay in the socket buffers). */
    private static final int GET_BYTES_PER_ROUND = 16 * 1024;

    private static final int MAX_REPLY_LINE = MAX_KEY_LENGTH + 64;
    private static final byte[] CRLF = {'\r', '\n'};
    private static final byte[] SET = "set ".getBytes(StandardCharsets.US_ASCII);

    private final String peer;
    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;
    private final byte[] lineBuffer = new byte[MAX_REPLY_LINE + 2];

    private MemcachedClient(String peer, Socket socket) throws IOException {
        this.peer = peer;
        this.socket = socket;
        this.in = new BufferedInputStream(socket.getInputStream(), 64 * 1024);
        this.out = new BufferedOutputStream(socket.getOutputStream(), 64 * 1024);
    }

    /** Connects to 127.0.0.1:{@code port}; {@code what} names the peer in error messages (e.g. "memcached 127.0.0.1:41234"). */
    public static MemcachedClient connect(String what, int port) throws IOException {
        Socket socket = new Socket();
        try {
            socket.setTcpNoDelay(true);
            socket.setSoTimeout(SOCKET_TIMEOUT_MILLIS);
            socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), CONNECT_TIMEOUT_MILLIS);
            return new MemcachedClient(what, socket);
        } catch (IOException | RuntimeException e) {
            socket.close();
            throw e;
        }
    }

    /** Throws unless memcached would take {@code key}: 1..250 bytes, none of them a space or a control character. */
    public static void checkKey(byte[] key) {
        if (key.length == 0 || key.length > MAX_KEY_LENGTH) {
            throw new IllegalArgumentException(
                    "memcached key length must be 1.." + MAX_KEY_LENGTH + ": length=" + key.length);
        }
        for (int i = 0; i < key.length; i++) {
            int b = key[i] & 0xff;
            if (b <= ' ' || b == 0x7f) {
                throw new IllegalArgumentException("memcached key has a space or control byte 0x"
                        + Integer.toHexString(b) + " at offset " + i + ": " + printable(key));
            }
        }
    }

    /** {@code version}: memcached's version string (twemproxy does not forward this command). */
    public String version() throws IOException {
        write("version");
        out.flush();
        String reply = ascii(readLine());
        if (!reply.startsWith("VERSION ")) {
            throw new IOException(peer + " answered 'version' with: " + reply);
        }
        return reply.substring("VERSION ".length());
    }

    /** {@code stats}: memcached's general statistics ({@code pid}, {@code curr_items}, ...), name to value. */
    public Map<String, String> stats() throws IOException {
        write("stats");
        out.flush();
        Map<String, String> stats = new LinkedHashMap<>();
        while (true) {
            String line = ascii(readLine());
            if (line.equals("END")) {
                return stats;
            }
            String[] fields = line.split(" ", 3);
            if (fields.length != 3 || !fields[0].equals("STAT")) {
                throw new IOException(peer + " answered 'stats' with: " + line);
            }
            stats.put(fields[1], fields[2]);
        }
    }

    /** {@code flush_all}: every item becomes invisible (sets after it, even in the same second, are kept). */
    public void flushAll() throws IOException {
        write("flush_all");
        out.flush();
        expect(readLine(), "OK", "flush_all");
    }

    /**
     * {@code set key 0 0 len} for each key with the value at the same index, pipelined
     * {@value #SETS_PER_BATCH} at a time; fails on the first reply that is not {@code STORED}, naming its key.
     */
    public void setAll(List<byte[]> keys, List<byte[]> values) throws IOException {
        if (keys.size() != values.size()) {
            throw new IllegalArgumentException("one value per key: keys=" + keys.size() + " values=" + values.size());
        }
        keys.forEach(MemcachedClient::checkKey);
        for (int from = 0; from < keys.size(); from += SETS_PER_BATCH) {
            int to = Math.min(keys.size(), from + SETS_PER_BATCH);
            for (int i = from; i < to; i++) {
                byte[] value = values.get(i);
                out.write(SET);
                out.write(keys.get(i));
                write(" 0 0 " + value.length);
                out.write(value);
                out.write(CRLF);
            }
            out.flush();
            for (int i = from; i < to; i++) {
                expect(readLine(), "STORED", "set " + printable(keys.get(i)) + " (key #" + i + ")");
            }
        }
    }

    /**
     * The values of {@code keys}, in their order, {@code null} for a key the server does not hold:
     * multi-key {@code get} lines of up to {@value #MAX_GET_LINE} bytes, several written before their
     * replies are read. memcached answers a multi-key {@code get} with the keys it holds, in the order
     * asked; a reply naming a key out of that order fails.
     */
    public byte[][] getAll(List<byte[]> keys) throws IOException {
        keys.forEach(MemcachedClient::checkKey);
        byte[][] values = new byte[keys.size()][];
        int[] lineStarts = new int[keys.size() + 1];
        int next = 0;
        while (next < keys.size()) {
            int lines = 0;
            int written = 0;
            while (next < keys.size() && written < GET_BYTES_PER_ROUND) {
                lineStarts[lines++] = next;
                ByteArrayOutputStream line = new ByteArrayOutputStream(MAX_GET_LINE);
                line.writeBytes("get".getBytes(StandardCharsets.US_ASCII));
                while (next < keys.size() && line.size() + 1 + keys.get(next).length + 2 <= MAX_GET_LINE) {
                    line.write(' ');
                    line.writeBytes(keys.get(next++));
                }
                line.writeBytes(CRLF);
                line.writeTo(out);
                written += line.size();
            }
            lineStarts[lines] = next;
            out.flush();
            for (int l = 0; l < lines; l++) {
                readValues(keys, lineStarts[l], lineStarts[l + 1], values);
            }
        }
        return values;
    }

    /** Reads one {@code get} reply ({@code VALUE} blocks, then {@code END}) for {@code keys[from, to)}. */
    private void readValues(List<byte[]> keys, int from, int to, byte[][] values) throws IOException {
        int expected = from; // the reply's keys come in the order asked, the missing ones left out
        while (true) {
            byte[] line = readLine();
            String text = ascii(line);
            if (text.equals("END")) {
                return;
            }
            String[] fields = text.split(" ", -1);
            if (fields.length != 4 || !fields[0].equals("VALUE")) {
                throw new IOException(peer + " answered a get with: " + printable(line));
            }
            byte[] key = Arrays.copyOfRange(line, "VALUE ".length(), "VALUE ".length() + fields[1].length());
            while (expected < to && !Arrays.equals(keys.get(expected), key)) {
                expected++;
            }
            if (expected == to) {
                throw new IOException(peer + " returned key " + printable(key)
                        + ", not one asked for (or out of order) in keys #" + from + ".." + (to - 1));
            }
            int length;
            try {
                length = Integer.parseInt(fields[3]);
            } catch (NumberFormatException e) {
                throw new IOException(peer + " sent a VALUE line with a bad length: " + printable(line), e);
            }
            byte[] data = in.readNBytes(length);
            if (data.length != length || in.read() != '\r' || in.read() != '\n') {
                throw new IOException(peer + " sent a value of key " + printable(key) + " shorter than its " + length
                        + " bytes or without CRLF");
            }
            values[expected++] = data;
        }
    }

    private void write(String asciiLine) throws IOException {
        out.write(asciiLine.getBytes(StandardCharsets.US_ASCII));
        out.write(CRLF);
    }

    private void expect(byte[] reply, String wanted, String request) throws IOException {
        if (!ascii(reply).equals(wanted)) {
            throw new IOException(peer + " answered '" + request + "' with: " + printable(reply));
        }
    }

    /** One reply line without its CRLF. */
    private byte[] readLine() throws IOException {
        int n = 0;
        while (true) {
            int b = in.read();
            if (b < 0) {
                throw new EOFException(peer + " closed the connection in the middle of a reply"
                        + (n > 0 ? " after: " + printable(Arrays.copyOf(lineBuffer, n)) : ""));
            }
            if (b == '\n' && n > 0 && lineBuffer[n - 1] == '\r') {
                return Arrays.copyOf(lineBuffer, n - 1);
            }
            if (n == lineBuffer.length) {
                throw new IOException(peer + " sent a reply line longer than " + MAX_REPLY_LINE + " bytes: "
                        + printable(Arrays.copyOf(lineBuffer, n)));
            }
            lineBuffer[n++] = (byte) b;
        }
    }

    private static String ascii(byte[] bytes) {
        return new String(bytes, StandardCharsets.ISO_8859_1);
    }

    /** {@code bytes} quoted for a message: as UTF-8 text if they are valid UTF-8, else ASCII with other bytes as \xNN. */
    public static String printable(byte[] bytes) {
        StringBuilder s = new StringBuilder("'");
        String decoded = new String(bytes, StandardCharsets.UTF_8);
        if (Arrays.equals(decoded.getBytes(StandardCharsets.UTF_8), bytes)) {
            decoded.codePoints().forEach(c -> {
                if (c < 0x20 || c == 0x7f) {
                    s.append(String.format("\\x%02x", c));
                } else {
                    s.appendCodePoint(c);
                }
            });
        } else {
            for (byte b : bytes) {
                int c = b & 0xff;
                s.append(c >= 0x21 && c < 0x7f ? String.valueOf((char) c) : String.format("\\x%02x", c));
            }
        }
        return s.append('\'').toString();
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
