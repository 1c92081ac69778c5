package io.ringstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.ringstore.builder.BackendList;
import io.ringstore.family.Families;
import io.ringstore.family.RingFamily;
import io.ringstore.family.RingVersion;
import io.ringstore.internal.BackendAccess;
import io.ringstore.internal.hash.Xxh64;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * grpc-java's {@code ring_hash} ({@code grpc-java[:MIN[:MAX]]}) against the family contract and its
 * rules restated here from grpc-java 1.85's {@code RingHashLoadBalancer}: point texts
 * {@code String.valueOf(InetSocketAddress) + "_" + i}; Envoy's scale with the hosts visited in the order
 * of a {@code HashMap} keyed by their address groups; the signed order (stored sign-flipped); a search
 * that stays on the last entry. grpc-java publishes no ring vector: the proof against its own classes
 * is {@code examples/grpc-java}'s {@code RingHashParityTest} (grpc-xds 1.85.1 in that module's test
 * scope, 100,000 keys over 11 fleets).
 */
class GrpcJavaFamilyTest extends RingFamilyContract {
    @Override
    RingFamily family() {
        return Families.GRPC_JAVA;
    }

    @Override
    String expectedName() {
        return "grpc-java";
    }

    @Override
    int expectedCode() {
        return 19;
    }

    /** Recorded by {@link SeededFleets#checksum} when this test was added (branch h/grpcjava): a regression guard. */
    @Override
    Map<RingVersion, String> goldenChecksums() {
        Map<RingVersion, String> m = new LinkedHashMap<>();
        m.put(RingVersion.parse("grpc-java"), "877b54599e6ba70497d9fb833798600b3d683d5be659ce0744ae4230c167c968");
        m.put(
                RingVersion.parse("grpc-java:64:128"),
                "166338f6a1b3e1a19a43ed23f9d3ab6405e932fa621166187215483cfd3b1c3b");
        return m;
    }

    /** Envoy's scale: every count changes with the members. */
    @Override
    boolean monotone() {
        return false;
    }

    /** Not a rank of one backend against another: grpc-java's order of hosts is its {@code HashMap}'s ({@link #tieKeeper}). */
    @Override
    Comparator<Backend> tieOrder() {
        return null;
    }

    /**
     * A 64-bit hash two hosts produce is never found (points² / 2^65); grpc-java's keeper would be the
     * host first in its {@code HashMap}'s order ({@link #hashMapOrder}). A tie here fails the test, so
     * that one found is looked at.
     */
    @Override
    Backend tieKeeper(long hash, List<Backend> producers) {
        if (producers.stream().distinct().count() > 1) {
            fail("a 64-bit hash several hosts produce: " + producers);
        }
        return producers.getFirst();
    }

    /** grpc-java's ring holds the address group's {@code InetSocketAddress}: resolved, its name the host name. */
    private static InetSocketAddress address(Backend b) throws Exception {
        String s = b.socketAddress();
        int colon = s.lastIndexOf(':');
        String ip = s.substring(0, colon).replace("[", "").replace("]", "");
        return new InetSocketAddress(
                InetAddress.getByAddress(b.name(), InetAddress.ofLiteral(ip).getAddress()),
                Integer.parseInt(s.substring(colon + 1)));
    }

    /**
     * The order grpc-java visits hosts in, restated with the JDK's own map: a {@code HashMap} keyed by
     * {@code List.of(address)} (an {@code EquivalentAddressGroup} of one address hashes and compares as
     * that list does), put in file order.
     */
    private static List<Backend> hashMapOrder(List<Backend> hosts) throws Exception {
        Map<List<InetSocketAddress>, Backend> map = new HashMap<>();
        for (Backend b : hosts) {
            map.put(List.of(address(b)), b);
        }
        return new ArrayList<>(map.values());
    }

    /**
     * Each host's entries, restated from {@code RingHashLoadBalancer}: normalized weights
     * {@code (double) w / total}, {@code scale = min(ceil(minNormalized · MIN) / minNormalized, MAX)}, and
     * over the hosts in {@link #hashMapOrder} a running target {@code += scale · normalized}, an entry for
     * each whole step up to it.
     */
    private static Map<Backend, Long> entries(List<Backend> hosts, long min, long max) throws Exception {
        long total = hosts.stream().mapToLong(Backend::weight).sum();
        double minNormalized =
                (double) hosts.stream().mapToLong(Backend::weight).min().orElseThrow() / total;
        double scale = Math.min(Math.ceil(minNormalized * min) / minNormalized, (double) max);
        Map<Backend, Long> entries = new HashMap<>();
        double current = 0;
        double target = 0;
        for (Backend b : hashMapOrder(hosts)) {
            target += scale * ((double) b.weight() / total);
            long n = 0;
            while (current < target) {
                n++;
                current++;
            }
            entries.put(b, n);
        }
        return entries;
    }

    /**
     * Seeded weighted fleets of 2 to 300 hosts (IPv4, IPv6, named): every host's entries are the
     * restatement's; and the order matters: in some fleet the counts differ from Envoy's file order
     * ({@code grpc}, the same sizes).
     */
    @Test
    void entriesAreEnvoysScaleInHashMapOrder() throws Exception {
        SplittableRandom random = new SplittableRandom(0x6A7A);
        int differFromFileOrder = 0;
        for (int n : new int[] {2, 3, 7, 13, 40, 97, 300}) {
            for (String sizes : new String[] {"1024:4096", "64:128", "3000:70000"}) {
                String fleet = stripFeatures(fleet(random, n));
                RingVersion v = RingVersion.parse("grpc-java:" + sizes);
                try (RingStore store = build(fleet, v)) {
                    List<Backend> hosts =
                            store.backends().stream().filter(b -> !b.down()).toList();
                    String[] mm = sizes.split(":");
                    Map<Backend, Long> expected = entries(hosts, Long.parseLong(mm[0]), Long.parseLong(mm[1]));
                    List<Long> actual = pointsPerBackend(fleet, v);
                    for (Backend b : store.backends()) {
                        assertEquals(
                                expected.getOrDefault(b, 0L),
                                actual.get(b.index()),
                                v + ", " + n + " hosts: " + b.address());
                    }
                    if (!actual.equals(pointsPerBackend(fleet, RingVersion.parse("grpc:" + sizes)))) {
                        differFromFileOrder++;
                    }
                }
            }
        }
        assertTrue(differFromFileOrder > 0, "no fleet's counts depend on the order of its hosts");
    }

    /** Point texts {@code /ip:port_i}, {@code name/ip:port_i}, IPv6 as the JDK prints it, hashed with XXH64 (sign-flipped). */
    @Test
    void pointTextsAreTheSocketAddressesOfTheJdk() throws Exception {
        Map<String, String> texts = new LinkedHashMap<>();
        texts.put("server 10.0.0.1:8080;", "/10.0.0.1:8080_");
        texts.put("server 10.0.0.1;", "/10.0.0.1:80_");
        texts.put("server [2001:db8::a]:8080;", "/[2001:db8:0:0:0:0:0:a]:8080_");
        texts.put("server 10.0.0.2:9000;  # ringstore: name=api-1.example", "api-1.example/10.0.0.2:9000_");
        for (Map.Entry<String, String> e : texts.entrySet()) {
            Backend b = BackendList.parse("text", e.getKey() + "\n").backends().getFirst();
            long[] points = new long[3];
            RingVersion.parse("grpc-java").points().hashes(BackendAccess.record(b), points.length, points);
            for (int i = 0; i < points.length; i++) {
                byte[] text = (e.getValue() + i).getBytes(StandardCharsets.US_ASCII);
                assertEquals(Xxh64.hash(text, 0, text.length, 0) ^ Long.MIN_VALUE, points[i], e.getValue() + i);
            }
        }
        byte[] key = "user-42".getBytes(StandardCharsets.US_ASCII);
        assertEquals(
                Xxh64.hash(key, 0, key.length, 0) ^ Long.MIN_VALUE,
                RingVersion.parse("grpc-java").keyHash().hash64(key, 0, key.length));
    }

    /**
     * The ring is in signed order of grpc-java's hashes (the stored ones sign-flipped back), and a hash
     * past the last entry lands on the last one, where {@code grpc}'s wraps to the first.
     */
    @Test
    void signedOrderAndNoWrap() throws Exception {
        String fleet = stripFeatures(fleet(new SplittableRandom(0x516), 20));
        RingVersion v = RingVersion.parse("grpc-java");
        try (RingStore store = build(fleet, v);
                RingStore grpc = build(fleet, RingVersion.parse("grpc"))) {
            Ring ring = store.ring(Set.of(), v);
            long[] signed = new long[ring.pointCount()];
            for (int p = 0; p < signed.length; p++) {
                signed[p] = ring.pointHash(p) ^ Long.MIN_VALUE;
            }
            long[] sorted = signed.clone();
            Arrays.sort(sorted);
            assertTrue(Arrays.equals(sorted, signed), "signed order");
            assertTrue(sorted[0] < 0 && sorted[sorted.length - 1] > 0, "entries on both sides of 0");
            int last = ring.pointCount() - 1;
            assertEquals(ring.pointBackend(last), ring.lookupHash(-1L));
            assertEquals(ring.pointBackend(last), ring.lookupHash(ring.pointHash(last) + 1));
            assertEquals(ring.pointBackend(0), ring.lookupHash(0L));
            assertTrue(!ring.wraps());
            Ring wrapping = grpc.ring(Set.of(), RingVersion.parse("grpc"));
            assertTrue(wrapping.wraps());
            assertEquals(wrapping.pointBackend(0), wrapping.lookupHash(-1L));
            double[] shares = ring.lineShares();
            assertEquals(1.0, Arrays.stream(shares).sum(), 1e-9);
        }
    }

    /** MIN and MAX: grpc-java's defaults, MAX up to {@code RingHashOptions}' largest cap, 8,388,608. */
    @Test
    void sizesAreRingHashOptions() {
        assertTrue(Arrays.equals(
                new int[] {1024, 4096}, RingVersion.parse("grpc-java").parameters()));
        assertEquals(8_388_608, RingVersion.parse("grpc-java:1024:8388608").parameters()[1]);
        assertThrows(IllegalArgumentException.class, () -> RingVersion.parse("grpc-java:1024:8388609"));
        assertThrows(IllegalArgumentException.class, () -> RingVersion.parse("grpc-java:4096:1024"));
    }
}
