package io.ringstore;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.ringstore.family.Families;
import io.ringstore.family.RingFamily;
import io.ringstore.family.RingVersion;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * xmemcached with {@code cwNginxUpstreamConsistent} ({@code xmemcached-nginx}) against the family
 * contract and {@code KetamaMemcachedSessionLocatorNginxUpstreamConsistentUnitTest}
 * ({@code vectors/xmemcached/}): the keys {@code 127.0.0.1-0}, {@code 127.0.0.1:11212-39}, … are the
 * sessions' own point texts, so each lands on a point of its session (18 rows, two session sets).
 */
class XmemcachedNginxFamilyTest extends RingFamilyContract {
    static final RingVersion VERSION = RingVersion.parse("xmemcached-nginx");

    @Override
    RingFamily family() {
        return Families.XMEMCACHED_NGINX;
    }

    @Override
    String expectedName() {
        return "xmemcached-nginx";
    }

    @Override
    int expectedCode() {
        return 10;
    }

    /** Recorded by {@link SeededFleets#checksum} when this test was added (branch h/contract on 95f3c34): a regression guard. */
    @Override
    Map<RingVersion, String> goldenChecksums() {
        return Map.of(VERSION, "f0b2f6d230015d5b7f0711292d4806308616e7ccee3dc3bd49b4cf71f2543bbb");
    }

    /** 160 points a weight unit: a session's points are its own. */
    @Override
    boolean monotone() {
        return true;
    }

    /** The tie depends on the hash: {@link #tieKeeper}. */
    @Override
    Comparator<Backend> tieOrder() {
        return null;
    }

    /** As xmemcached's ({@link XmemcachedFamilyTest#tieKeeper}), over this mode's {@code sockStr}. */
    @Override
    Backend tieKeeper(long hash, List<Backend> producers) {
        List<Backend> sorted = new ArrayList<>(producers);
        sorted.sort(Comparator.comparing(XmemcachedNginxFamilyTest::sockStr));
        return sorted.get((int) (hash % sorted.size()));
    }

    /** {@code getAddress().getHostAddress()}, then {@code ":" + port} unless the port is 11211 (no port written: 11211). */
    static String sockStr(Backend b) {
        try {
            String a = b.address();
            boolean v6 = a.startsWith("[");
            String host = v6 ? a.substring(1, a.indexOf(']')) : a.contains(":") ? a.substring(0, a.indexOf(':')) : a;
            int colon = v6 ? a.indexOf("]:") : a.indexOf(':');
            int port = colon < 0 ? 11211 : Integer.parseInt(a.substring(colon + (v6 ? 2 : 1)));
            String ip = InetAddress.getByName(host).getHostAddress();
            return port == 11211 ? ip : ip + ":" + port;
        } catch (java.net.UnknownHostException e) {
            throw new IllegalStateException(b.address(), e);
        }
    }

    /**
     * Both tests of the class: sessions 127.0.0.1:11211..11213 and 192.168.1.1..3:11211, each key a
     * point text of the expected session. Catches {@code :11211} kept in the text (then
     * {@code 127.0.0.1-0} is no session's text) and the slash of the default mode.
     */
    @Test
    void nginxUpstreamConsistentUnitTest() throws Exception {
        String testClass = "KetamaMemcachedSessionLocatorNginxUpstreamConsistentUnitTest";
        int checked = 0;
        for (String test : List.of(
                "testSessionKey_CompatibleWithNginxUpstreamConsistent",
                "testSessionKey_CompatibleWithNginxUpstreamConsistent_DefaultPort")) {
            StringBuilder text = new StringBuilder();
            for (ProjectVectors.Row row : ProjectVectors.rows(
                    "xmemcached/sessions.tsv", r -> r.get("test").equals(test))) {
                String args = row.get("construction").replaceAll(".*\\((.*)\\).*", "$1"); // "127.0.0.1", 11211
                String host = args.substring(args.indexOf('"') + 1, args.lastIndexOf('"'));
                String port = args.substring(args.indexOf(',') + 1).strip();
                text.append("server ").append(host).append(':').append(port).append(";\n");
            }
            try (RingStore store = build(text.toString(), VERSION)) {
                checked += XmemcachedFamilyTest.check(
                        store.ring(Set.of(), VERSION), XmemcachedFamilyTest.lookups(testClass, test));
            }
        }
        assertEquals(18, checked);
    }
}
