package io.ringstore.internal;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A backend address in nginx {@code server} syntax: {@code IPv4[:port]} or {@code [IPv6[%scope]][:port]}.
 *
 * <p>Keeps the text exactly as written (nginx hashes that) next to the parsed socket address
 * (pingora-ketama hashes Rust's rendering of it). Host names are refused: a ring must not depend on DNS.
 */
public final class ServerAddress implements Comparable<ServerAddress> {
    /** The port nginx connects to when a {@code server} has none. */
    public static final int DEFAULT_PORT = 80;

    private final String text;
    private final byte[] ip; // 4 or 16 bytes
    private final int port; // DEFAULT_PORT when absent
    private final long scopeId; // IPv6 only; NO_SCOPE when absent (scopeId() says 0 then, as Rust's SocketAddrV6)
    private static final long NO_SCOPE = -1;

    private final boolean portWritten;

    private ServerAddress(String text, byte[] ip, int port, long scopeId) {
        this.text = text;
        this.ip = ip;
        this.port = port;
        this.scopeId = scopeId;
        this.portWritten = text.startsWith("[") ? text.indexOf(']') + 1 < text.length() : text.indexOf(':') >= 0;
    }

    /**
     * Parses {@code text}.
     *
     * @throws IllegalArgumentException with a message that says what is wrong, for use after "file:line: "
     */
    public static ServerAddress parse(String text) {
        if (text.isEmpty()) {
            throw new IllegalArgumentException("empty address");
        }
        if (text.startsWith("unix:")) {
            throw new IllegalArgumentException("bad address " + TextLines.quote(text)
                    + ": unix sockets are not supported, a ring needs IP endpoints");
        }
        if (text.startsWith("[")) {
            int close = text.indexOf(']');
            if (close < 0) {
                throw new IllegalArgumentException(
                        "bad address " + TextLines.quote(text) + ": IPv6 address without closing ']'");
            }
            String inside = text.substring(1, close);
            String rest = text.substring(close + 1);
            int port = DEFAULT_PORT;
            if (!rest.isEmpty()) {
                if (rest.charAt(0) != ':') {
                    throw new IllegalArgumentException(
                            "bad address " + TextLines.quote(text) + ": expected ':port' after ']'");
                }
                port = parsePort(text, rest.substring(1));
            }
            long scope = NO_SCOPE;
            int percent = inside.indexOf('%');
            if (percent >= 0) {
                scope = parseScope(text, inside.substring(percent + 1));
                inside = inside.substring(0, percent);
            }
            byte[] ip = parseIpv6(text, inside);
            return new ServerAddress(text, ip, port, scope);
        }
        if (text.indexOf(':') != text.lastIndexOf(':')) {
            throw new IllegalArgumentException("bad address " + TextLines.quote(text)
                    + ": an IPv6 address must be written in brackets, as [" + text + "]");
        }
        int colon = text.indexOf(':');
        String host = colon < 0 ? text : text.substring(0, colon);
        int port = colon < 0 ? DEFAULT_PORT : parsePort(text, text.substring(colon + 1));
        byte[] ip = parseIpv4(host);
        if (ip == null) {
            boolean name = host.chars().anyMatch(Character::isLetter);
            throw new IllegalArgumentException("bad address " + TextLines.quote(text) + ": "
                    + (name
                            ? "host names are not supported, write an IP address"
                            : "expected an IPv4 address a.b.c.d with each part 0-255"));
        }
        return new ServerAddress(text, ip, port, NO_SCOPE);
    }

    /**
     * {@link #parse} of {@code text}, given also as its Latin-1 bytes {@code b[off, off + len)}, for the
     * form nearly every backend of a ring file has, {@code a.b.c.d} or {@code a.b.c.d:port}, read from the
     * bytes without the per-character String calls: a fresh JVM interprets a file's first open, and
     * parse's calls were 54 % of it at 2,048 backends. The same rules as parse (parts 0-255 and the port
     * 0-65535, leading zeros allowed, one ':' at most); {@code null} for any other text, which the caller
     * then gives to parse (which reads it, or refuses it with its message).
     */
    public static ServerAddress parseIpv4(String text, byte[] b, int off, int len) {
        int end = off + len;
        byte[] ip = new byte[4];
        int i = dottedQuad(b, off, end, ip);
        if (i < 0) {
            return null;
        }
        int port = DEFAULT_PORT;
        if (i < end) {
            if (i + 1 == end) {
                return null;
            }
            int p = 0;
            for (int k = i + 1; k < end; k++) {
                int c = b[k];
                if (c < '0' || c > '9') {
                    return null;
                }
                p = p * 10 + (c - '0');
                if (p > 65535) {
                    return null;
                }
            }
            port = p;
        }
        return new ServerAddress(text, ip, port, NO_SCOPE);
    }

    /** Decimal, leading zeros allowed (as nginx's {@code ngx_atoi}). */
    private static int parsePort(String text, String digits) {
        long port = TextLines.decimal(digits, 65535);
        if (port < 0) {
            throw new IllegalArgumentException(
                    "bad address " + TextLines.quote(text) + ": port must be a number from 0 to 65535");
        }
        if (port > 65535) {
            throw new IllegalArgumentException("bad address " + TextLines.quote(text) + ": port "
                    + TextLines.quote(digits) + " is outside 0-65535");
        }
        return (int) port;
    }

    private static long parseScope(String text, String digits) {
        long scope = TextLines.decimal(digits, 0xFFFF_FFFFL);
        if (scope < 0 || scope > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("bad address " + TextLines.quote(text)
                    + ": scope id after '%' must be a number from 0 to 4294967295");
        }
        return scope;
    }

    /** Dotted quad, each part decimal 0-255 (leading zeros allowed, as nginx does); null when not one. */
    static byte[] parseIpv4(String s) {
        byte[] b = s.getBytes(StandardCharsets.ISO_8859_1); // a char above 0xFF becomes '?', no digit
        byte[] out = new byte[4];
        return dottedQuad(b, 0, b.length, out) == b.length ? out : null;
    }

    /**
     * Reads a dotted quad from {@code b[off, end)} into {@code ip}, each part decimal 0-255 (leading
     * zeros allowed, as nginx does), up to a ':' or the end; {@return where it stopped, or -1 when no
     * dotted quad is there}
     */
    private static int dottedQuad(byte[] b, int off, int end, byte[] ip) {
        int part = 0;
        int value = -1;
        int i = off;
        for (; i < end; i++) {
            int c = b[i];
            if (c >= '0' && c <= '9') {
                value = (value < 0 ? 0 : value) * 10 + (c - '0');
                if (value > 255) {
                    return -1;
                }
            } else if (c == '.') {
                if (value < 0 || part == 3) {
                    return -1;
                }
                ip[part++] = (byte) value;
                value = -1;
            } else if (c == ':') {
                break;
            } else {
                return -1;
            }
        }
        if (value < 0 || part != 3) {
            return -1;
        }
        ip[3] = (byte) value;
        return i;
    }

    private static byte[] parseIpv6(String text, String s) {
        String bad = "bad address " + TextLines.quote(text) + ": not a valid IPv6 address";
        int doubleColon = s.indexOf("::");
        if (doubleColon >= 0 && s.indexOf("::", doubleColon + 1) >= 0) {
            throw new IllegalArgumentException(bad + " (more than one '::')");
        }
        int[] head = new int[8];
        int[] tail = new int[8];
        int headCount;
        int tailCount = 0;
        if (doubleColon < 0) {
            headCount = parseGroups(s, head, bad, true);
            if (headCount != 8) {
                throw new IllegalArgumentException(bad + " (expected 8 groups, found " + headCount + ")");
            }
        } else {
            String left = s.substring(0, doubleColon);
            String right = s.substring(doubleColon + 2);
            headCount = left.isEmpty() ? 0 : parseGroups(left, head, bad, false);
            tailCount = right.isEmpty() ? 0 : parseGroups(right, tail, bad, true);
            if (headCount + tailCount > 7) {
                throw new IllegalArgumentException(bad + " (too many groups around '::')");
            }
        }
        byte[] ip = new byte[16];
        for (int i = 0; i < headCount; i++) {
            ip[2 * i] = (byte) (head[i] >> 8);
            ip[2 * i + 1] = (byte) head[i];
        }
        for (int i = 0; i < tailCount; i++) {
            int g = 8 - tailCount + i;
            ip[2 * g] = (byte) (tail[i] >> 8);
            ip[2 * g + 1] = (byte) tail[i];
        }
        return ip;
    }

    /** Parses colon-separated hex groups; the last may be a dotted quad (two groups) when allowed. */
    private static int parseGroups(String s, int[] groups, String bad, boolean ipv4TailAllowed) {
        String[] parts = s.split(":", -1);
        int n = 0;
        for (int p = 0; p < parts.length; p++) {
            String part = parts[p];
            if (p == parts.length - 1 && ipv4TailAllowed && part.indexOf('.') >= 0) {
                byte[] v4 = parseIpv4(part);
                if (v4 == null || n + 2 > 8) {
                    throw new IllegalArgumentException(bad + " (bad embedded IPv4 " + TextLines.quote(part) + ")");
                }
                groups[n++] = ((v4[0] & 0xFF) << 8) | (v4[1] & 0xFF);
                groups[n++] = ((v4[2] & 0xFF) << 8) | (v4[3] & 0xFF);
                continue;
            }
            if (part.isEmpty() || part.length() > 4 || n == 8) {
                throw new IllegalArgumentException(bad);
            }
            int value = 0;
            for (int i = 0; i < part.length(); i++) {
                char ch = part.charAt(i);
                int d = ch < 128 ? Character.digit(ch, 16) : -1; // ASCII only: the file stores addresses as ASCII
                if (d < 0) {
                    throw new IllegalArgumentException(bad + " (" + TextLines.quote(part) + " is not a hex group)");
                }
                value = value * 16 + d;
            }
            groups[n++] = value;
        }
        return n;
    }

    /** The address exactly as written in the backends file. */
    public String text() {
        return text;
    }

    public boolean isIpv6() {
        return ip.length == 16;
    }

    public int port() {
        return port;
    }

    /**
     * Whether the text gives a port; without one, each ring family takes its own default (nginx 80, memcached 11211).
     */
    public boolean portWritten() {
        return portWritten;
    }

    /** The port as written, or {@code defaultPort} when the text has none. */
    public int port(int defaultPort) {
        return portWritten ? port : defaultPort;
    }

    /** The IP as written, without brackets, scope or port: {@code 10.0.0.1}, {@code ::1}. */
    public String hostText() {
        if (text.startsWith("[")) {
            String inside = text.substring(1, text.indexOf(']'));
            int percent = inside.indexOf('%');
            return percent < 0 ? inside : inside.substring(0, percent);
        }
        int colon = text.indexOf(':');
        return colon < 0 ? text : text.substring(0, colon);
    }

    /**
     * The IP in canonical form: dotted quad ({@code 10.0.0.1}), or RFC 5952 ({@code ::1}) without brackets or scope.
     */
    public String ipText() {
        return isIpv6() ? rustIp() : ipv4Text();
    }

    /** The address bytes (4 or 16; a copy). */
    public byte[] ipBytes() {
        return ip.clone();
    }

    /** {@code ip:port} with the port as written or {@code defaultPort}: {@code 10.0.0.1:11211}, {@code [::1]:11211}. */
    public String endpointText(int defaultPort) {
        int p = port(defaultPort);
        return isIpv6() ? "[" + rustIp() + (scopeId() != 0 ? "%" + scopeId : "") + "]:" + p : ipv4Text() + ":" + p;
    }

    /** The scope id after {@code %}; 0 when there is none (as Rust's {@code SocketAddrV6}). */
    public long scopeId() {
        return Math.max(scopeId, 0);
    }

    /** Whether the text has a scope ({@code %N}, even {@code %0}): nginx refuses every such address. */
    public boolean hasScope() {
        return scopeId != NO_SCOPE;
    }

    /**
     * nginx's split of the {@code server} text: scanning back from the end over digits, a ':' before
     * them separates host and port; otherwise the whole text is the host and the port is empty.
     * Returns the index of that ':' or -1.
     */
    public int nginxPortColon() {
        for (int j = text.length() - 1; j >= 0; j--) {
            char c = text.charAt(j);
            if (c == ':') {
                return j;
            }
            if (c < '0' || c > '9') {
                return -1;
            }
        }
        return -1;
    }

    /** The bytes nginx hashes for this server's base: host, a zero byte, port (all as written). */
    public byte[] nginxHashInput() {
        int colon = nginxPortColon();
        String host = colon < 0 ? text : text.substring(0, colon);
        String port = colon < 0 ? "" : text.substring(colon + 1);
        return (host + '\0' + port).getBytes(java.nio.charset.StandardCharsets.ISO_8859_1);
    }

    /** The bytes pingora-ketama hashes: Rust's {@code IpAddr} Display, a zero byte, the port in decimal. */
    public byte[] pingoraHashInput() {
        return (rustIp() + '\0' + port).getBytes(java.nio.charset.StandardCharsets.ISO_8859_1);
    }

    /** As nginx writes {@code $upstream_addr}: {@code 1.2.3.4:80}, {@code [::1]:9001}. */
    public String upstreamAddress() {
        if (!isIpv6()) {
            return ipv4Text() + ':' + port;
        }
        return '[' + nginxIpv6() + "]:" + port;
    }

    /**
     * {@return a key equal for two addresses exactly when their {@link #socketAddress()} texts are: for
     * IPv4 the address and port as one number (no text made: a ring file's open checks thousands), for
     * IPv6 that text}
     */
    public Object endpointKey() {
        if (!isIpv6()) {
            long packed = ((ip[0] & 0xFFL) << 40)
                    | ((ip[1] & 0xFFL) << 32)
                    | ((ip[2] & 0xFFL) << 24)
                    | ((ip[3] & 0xFFL) << 16)
                    | port;
            // Times an odd constant: a bijection (equal exactly when packed is), whose Long.hashCode spreads
            // every byte. packed's own folds the first two bytes onto the port: a fleet 10.x.y.1:8080 put
            // 16 addresses in each of a HashSet's bins, which then became trees.
            return packed * 0x9E37_79B9_7F4A_7C15L;
        }
        return socketAddress();
    }

    /** As Rust's {@code SocketAddr} Display writes it: {@code 1.2.3.4:80}, {@code [fe80::1%3]:80}. */
    public String socketAddress() {
        if (!isIpv6()) {
            return ipv4Text() + ':' + port;
        }
        return '[' + rustIp() + (scopeId() != 0 ? "%" + scopeId : "") + "]:" + port;
    }

    private String ipv4Text() {
        return (ip[0] & 0xFF) + "." + (ip[1] & 0xFF) + "." + (ip[2] & 0xFF) + "." + (ip[3] & 0xFF);
    }

    private String ipv4Text(int from) {
        return (ip[from] & 0xFF) + "." + (ip[from + 1] & 0xFF) + "." + (ip[from + 2] & 0xFF) + "."
                + (ip[from + 3] & 0xFF);
    }

    private int group(int g) {
        return ((ip[2 * g] & 0xFF) << 8) | (ip[2 * g + 1] & 0xFF);
    }

    /** Rust's {@code IpAddr} Display (RFC 5952; IPv4-mapped as {@code ::ffff:a.b.c.d}). */
    String rustIp() {
        if (!isIpv6()) {
            return ipv4Text();
        }
        boolean mapped = true;
        for (int g = 0; g < 5; g++) {
            mapped &= group(g) == 0;
        }
        if (mapped && group(5) == 0xFFFF) {
            return "::ffff:" + ipv4Text(12);
        }
        int[] run = longestZeroRun();
        StringBuilder sb = new StringBuilder(39);
        if (run[1] > 1) {
            appendGroups(sb, 0, run[0]);
            sb.append("::");
            appendGroups(sb, run[0] + run[1], 8);
        } else {
            appendGroups(sb, 0, 8);
        }
        return sb.toString();
    }

    /** nginx's {@code ngx_inet6_ntop}: like RFC 5952, but IPv4-compatible forms end in a dotted quad. */
    String nginxIpv6() {
        int[] run = longestZeroRun();
        int zero = run[1] > 1 ? run[0] : -1;
        int max = run[1] > 1 ? run[1] : 1;
        int groupsBeforeQuad = 8;
        StringBuilder sb = new StringBuilder(45);
        if (zero == 0) {
            if ((max == 5 && group(5) == 0xFFFF)
                    || max == 6
                    || (max == 7 && (ip[14] & 0xFF) != 0 && (ip[15] & 0xFF) != 1)) {
                groupsBeforeQuad = 6;
            }
            sb.append(':');
        }
        for (int g = 0; g < groupsBeforeQuad; g++) {
            if (g == zero) {
                sb.append(':');
                g += max - 1;
                continue;
            }
            sb.append(Integer.toHexString(group(g)));
            if (g < 7) {
                sb.append(':');
            }
        }
        if (groupsBeforeQuad == 6) {
            sb.append(ipv4Text(12));
        }
        return sb.toString();
    }

    /** {start, length} of the first longest run of zero groups. */
    private int[] longestZeroRun() {
        int bestStart = 0;
        int bestLen = 0;
        int curStart = 0;
        int curLen = 0;
        for (int g = 0; g < 8; g++) {
            if (group(g) == 0) {
                if (curLen == 0) {
                    curStart = g;
                }
                curLen++;
                if (curLen > bestLen) {
                    bestStart = curStart;
                    bestLen = curLen;
                }
            } else {
                curLen = 0;
            }
        }
        return new int[] {bestStart, bestLen};
    }

    private void appendGroups(StringBuilder sb, int from, int to) {
        for (int g = from; g < to; g++) {
            if (g > from) {
                sb.append(':');
            }
            sb.append(Integer.toHexString(group(g)));
        }
    }

    /** Rust's {@code SocketAddr} order: every IPv4 before every IPv6, then address bytes, port, scope. */
    @Override
    public int compareTo(ServerAddress o) {
        if (ip.length != o.ip.length) {
            return Integer.compare(ip.length, o.ip.length);
        }
        int c = Arrays.compareUnsigned(ip, o.ip);
        if (c != 0) {
            return c;
        }
        c = Integer.compare(port, o.port);
        return c != 0 ? c : Long.compare(scopeId(), o.scopeId());
    }

    /** Same endpoint: address bytes, port (80 when absent) and scope. */
    public boolean sameEndpoint(ServerAddress o) {
        return compareTo(o) == 0;
    }

    @Override
    public String toString() {
        return text;
    }
}
