package io.ringstore.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Expected texts below are written by hand from nginx's and Rust's documented formatting rules. */
class ServerAddressTest {

    private static String text(byte[] bytes) {
        return new String(bytes, StandardCharsets.ISO_8859_1);
    }

    // ---- nginx hash input: the text as written, split at the last ':' followed only by digits ----

    @Test
    void nginxHashInputKeepsTheTextAsWritten() {
        assertEquals(
                "127.000.000.002\u00008080",
                text(ServerAddress.parse("127.000.000.002:8080").nginxHashInput()));
        assertEquals("127.0.0.1\u0000", text(ServerAddress.parse("127.0.0.1").nginxHashInput()));
        assertEquals(
                "127.0.0.1\u000080", text(ServerAddress.parse("127.0.0.1:80").nginxHashInput()));
        assertEquals("[::1]\u00009001", text(ServerAddress.parse("[::1]:9001").nginxHashInput()));
        assertEquals("[::1]\u0000", text(ServerAddress.parse("[::1]").nginxHashInput()));
        assertEquals(
                "[0:0::1]\u000000080",
                text(ServerAddress.parse("[0:0::1]:00080").nginxHashInput()));
        assertEquals(
                "[fe80::1%3]\u000080",
                text(ServerAddress.parse("[fe80::1%3]:80").nginxHashInput()));
    }

    @Test
    void nginxPortColonIsTheLastColonBeforeOnlyDigits() {
        assertEquals(9, ServerAddress.parse("127.0.0.1:80").nginxPortColon());
        assertEquals(-1, ServerAddress.parse("127.0.0.1").nginxPortColon());
        assertEquals(-1, ServerAddress.parse("[::1]").nginxPortColon(), "the ':' inside brackets is followed by ']'");
        assertEquals(-1, ServerAddress.parse("[::]").nginxPortColon());
        assertEquals(5, ServerAddress.parse("[::1]:0").nginxPortColon());
    }

    @Test
    void pingoraHashInputIsRustsIpAndThePortInDecimal() {
        assertEquals(
                "127.0.0.2\u00008080",
                text(ServerAddress.parse("127.000.000.002:8080").pingoraHashInput()));
        assertEquals("127.0.0.1\u000080", text(ServerAddress.parse("127.0.0.1").pingoraHashInput()));
        assertEquals(
                "::1\u00009001",
                text(ServerAddress.parse("[0:0:0:0:0:0:0:1]:9001").pingoraHashInput()));
        assertEquals(
                "fe80::1\u000080",
                text(ServerAddress.parse("[fe80::1%3]:080").pingoraHashInput()),
                "no scope in IpAddr");
        assertEquals(
                "::ffff:1.2.3.4\u000080",
                text(ServerAddress.parse("[::ffff:102:304]").pingoraHashInput()));
    }

    // ---- nginx's $upstream_addr ----

    @Test
    void upstreamAddressIsNginxsForm() {
        assertEquals("127.0.0.1:80", ServerAddress.parse("127.0.0.1").upstreamAddress());
        assertEquals(
                "127.0.0.2:8080", ServerAddress.parse("127.000.000.002:8080").upstreamAddress());
        assertEquals("[::1]:9001", ServerAddress.parse("[::1]:9001").upstreamAddress());
        assertEquals("[::1]:80", ServerAddress.parse("[0000:0:0:0:0:0:0:0001]").upstreamAddress());
        assertEquals("[::]:80", ServerAddress.parse("[::]").upstreamAddress());
        assertEquals("[fe80::abcd]:80", ServerAddress.parse("[FE80::ABCD]").upstreamAddress());
        assertEquals(
                "[2001:db8::1:0:0:1]:443",
                ServerAddress.parse("[2001:db8:0:0:1:0:0:1]:443").upstreamAddress(),
                "first of two equally long zero runs");
        assertEquals(
                "[2001:db8:0:1:1:1:1:1]:80",
                ServerAddress.parse("[2001:db8::1:1:1:1:1]").upstreamAddress(),
                "a single zero group is not compressed");
        assertEquals("[1::]:80", ServerAddress.parse("[1:0:0:0:0:0:0:0]").upstreamAddress());
        assertEquals(
                "[1:2:3:4:5:6:7:8]:65535",
                ServerAddress.parse("[1:2:3:4:5:6:7:8]:65535").upstreamAddress());
        // ngx_inet6_ntop writes IPv4-mapped and IPv4-compatible addresses with a dotted quad.
        assertEquals(
                "[::ffff:1.2.3.4]:80", ServerAddress.parse("[::ffff:102:304]").upstreamAddress());
        assertEquals("[::1.2.3.4]:80", ServerAddress.parse("[::102:304]").upstreamAddress());
        assertEquals("[::0.0.1.2]:80", ServerAddress.parse("[::102]").upstreamAddress());
        assertEquals("[::1]:80", ServerAddress.parse("[::0.0.0.1]").upstreamAddress(), "::1 stays ::1");
    }

    // ---- Rust's SocketAddr Display ----

    @Test
    void socketAddressIsRustsForm() {
        assertEquals("127.0.0.1:80", ServerAddress.parse("127.0.0.1").socketAddress());
        assertEquals(
                "127.0.0.2:8080", ServerAddress.parse("127.000.000.002:8080").socketAddress());
        assertEquals("10.0.0.1:0", ServerAddress.parse("10.0.0.1:0").socketAddress());
        assertEquals("[::1]:9001", ServerAddress.parse("[::1]:9001").socketAddress());
        assertEquals("[::]:80", ServerAddress.parse("[0:0:0:0:0:0:0:0]").socketAddress());
        assertEquals(
                "[2001:db8::1]:80",
                ServerAddress.parse("[2001:0DB8:0000:0000:0000:0000:0000:0001]").socketAddress());
        assertEquals(
                "[2001:db8::1:0:0:1]:80",
                ServerAddress.parse("[2001:db8:0:0:1:0:0:1]").socketAddress(),
                "RFC 5952: the first of two equally long runs");
        assertEquals(
                "[2001:0:0:1::1]:80",
                ServerAddress.parse("[2001:0:0:1:0:0:0:1]").socketAddress(),
                "RFC 5952: the longest run, not the first");
        assertEquals(
                "[2001:db8:0:1:1:1:1:1]:80",
                ServerAddress.parse("[2001:db8::1:1:1:1:1]").socketAddress(),
                "RFC 5952: one zero group stays 0");
        assertEquals("[1::]:80", ServerAddress.parse("[1::]").socketAddress());
        assertEquals(
                "[::ffff:1.2.3.4]:80", ServerAddress.parse("[::ffff:102:304]").socketAddress());
        assertEquals(
                "[::ffff:127.0.0.1]:8080",
                ServerAddress.parse("[0:0:0:0:0:ffff:127.0.0.1]:8080").socketAddress());
        assertEquals(
                "[::102:304]:80",
                ServerAddress.parse("[::1.2.3.4]").socketAddress(),
                "Rust prints IPv4-compatible in hex");
        assertEquals("[fe80::1%3]:80", ServerAddress.parse("[fe80::1%3]").socketAddress());
        assertEquals("[fe80::1]:80", ServerAddress.parse("[fe80::1%0]").socketAddress(), "scope 0 is not printed");
        assertEquals(
                "[fe80::1%4294967295]:1",
                ServerAddress.parse("[fe80::1%4294967295]:1").socketAddress());
    }

    @Test
    void partsAreParsed() {
        ServerAddress a = ServerAddress.parse("[fe80::1%7]:8443");
        assertTrue(a.isIpv6());
        assertEquals(8443, a.port());
        assertEquals(7, a.scopeId());
        assertEquals("[fe80::1%7]:8443", a.text());
        ServerAddress b = ServerAddress.parse("127.0.0.1");
        assertFalse(b.isIpv6());
        assertEquals(ServerAddress.DEFAULT_PORT, b.port());
        assertEquals("127.0.0.1", b.toString());
    }

    // ---- order and identity ----

    @Test
    void orderIsIpv4BeforeIpv6ThenBytesThenPortThenScope() {
        List<String> ordered = List.of(
                "0.0.0.0:1",
                "1.2.3.4:79",
                "1.2.3.4", // port 80
                "1.2.3.4:81",
                "1.2.3.10:1", // bytes, not text: 10 after 4
                "127.0.0.1:65535",
                "128.0.0.0:0", // unsigned bytes
                "255.255.255.255:65535",
                "[::]:0", // every IPv6 after every IPv4
                "[::1]:80",
                "[::ffff:0.0.0.0]:1", // mapped IPv4 is IPv6 here
                "[fe80::1]:80",
                "[fe80::1%1]:80",
                "[fe80::1%2]:80",
                "[fe80::1]:81",
                "[ffff::]:0");
        List<ServerAddress> shuffled =
                new ArrayList<>(ordered.stream().map(ServerAddress::parse).toList());
        Collections.shuffle(shuffled, new java.util.Random(5));
        Collections.sort(shuffled);
        assertEquals(ordered, shuffled.stream().map(ServerAddress::text).toList());
        for (int i = 0; i + 1 < ordered.size(); i++) {
            ServerAddress x = ServerAddress.parse(ordered.get(i));
            ServerAddress y = ServerAddress.parse(ordered.get(i + 1));
            assertTrue(x.compareTo(y) < 0 && y.compareTo(x) > 0, ordered.get(i) + " < " + ordered.get(i + 1));
        }
    }

    @Test
    void sameEndpointIgnoresSpelling() {
        assertTrue(ServerAddress.parse("127.0.0.1").sameEndpoint(ServerAddress.parse("127.0.0.1:80")));
        assertTrue(ServerAddress.parse("127.0.0.1:8080").sameEndpoint(ServerAddress.parse("127.000.0.01:08080")));
        assertTrue(ServerAddress.parse("[::1]").sameEndpoint(ServerAddress.parse("[0:0:0:0:0:0:0:1]:80")));
        assertFalse(ServerAddress.parse("[fe80::1]").sameEndpoint(ServerAddress.parse("[fe80::1%1]")));
        assertFalse(ServerAddress.parse("1.2.3.4").sameEndpoint(ServerAddress.parse("[::ffff:1.2.3.4]")));
        assertEquals(0, ServerAddress.parse("127.0.0.1").compareTo(ServerAddress.parse("127.0.0.1:80")));
    }

    // ---- refusals ----

    @Test
    void badAddressesAreRefusedWithAReason() {
        assertRefused("", "empty");
        assertRefused("localhost", "host names");
        assertRefused("example.com:80", "host names");
        assertRefused("256.0.0.1", "IPv4");
        assertRefused("1.2.3", "IPv4");
        assertRefused("1.2.3.4.", "IPv4");
        assertRefused("1.2.3.4:65536", "65536");
        assertRefused("1.2.3.4:-1", "port");
        assertRefused("1.2.3.4:99999999999", "port");
        assertRefused("::1", "brackets");
        assertRefused("[::1", "']'");
        assertRefused("[::1]x", "':port'");
        assertRefused("[::1::]", "'::'");
        assertRefused("[1:2:3:4:5:6:7]", "8 groups");
        assertRefused("[1:2:3:4:5:6:7:8:9]", "IPv6");
        assertRefused("[::1:2:3:4:5:6:7:8]", "IPv6");
        assertRefused("[12345::]", "IPv6");
        assertRefused("[::x]", "hex");
        assertRefused("[::1.2.3]", "IPv4");
        assertRefused("[1.2.3.4::]", "IPv6");
        assertRefused("[fe80::1%]", "scope");
        assertRefused("[fe80::1%4294967296]", "scope");
        assertRefused("[fe80::1%eth0]", "scope");
    }

    private static void assertRefused(String text, String word) {
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> ServerAddress.parse(text), text);
        assertTrue(e.getMessage().contains(word), () -> "'" + e.getMessage() + "' should mention " + word);
        if (!text.isEmpty()) {
            assertTrue(e.getMessage().contains("'" + text + "'"), e.getMessage());
        }
    }

    // ---- round trips ----

    @Test
    void rustAndNginxFormsParseBackToTheSameEndpoint() {
        SplittableRandom r = new SplittableRandom(3);
        for (int i = 0; i < 5000; i++) {
            int[] groups = new int[8];
            for (int g = 0; g < 8; g++) {
                groups[g] = r.nextInt(3) == 0 ? 0 : r.nextInt(r.nextBoolean() ? 16 : 65536);
            }
            StringBuilder full = new StringBuilder("[");
            for (int g = 0; g < 8; g++) {
                full.append(g > 0 ? ":" : "").append(Integer.toHexString(groups[g]));
            }
            full.append("]:").append(r.nextInt(65536));
            ServerAddress a = ServerAddress.parse(full.toString());
            ServerAddress fromRust = ServerAddress.parse(a.socketAddress());
            ServerAddress fromNginx = ServerAddress.parse(a.upstreamAddress());
            assertTrue(a.sameEndpoint(fromRust), full + " vs " + a.socketAddress());
            assertTrue(a.sameEndpoint(fromNginx), full + " vs " + a.upstreamAddress());
            assertEquals(a.socketAddress(), fromRust.socketAddress());
            String inside = a.socketAddress().substring(1, a.socketAddress().indexOf(']'));
            assertFalse(inside.contains(":::"), inside);
            assertTrue(inside.indexOf("::") == inside.lastIndexOf("::"), inside);
            assertEquals(inside.toLowerCase(), inside);
        }
    }
}
