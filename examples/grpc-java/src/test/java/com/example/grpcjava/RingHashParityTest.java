package com.example.grpcjava;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.Backend;
import io.ringstore.Ring;
import io.ringstore.RingStore;
import io.ringstore.family.RingVersion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * The {@code grpc-java} family against grpc-java 1.85's own {@code RingHashLoadBalancer}
 * ({@link ReferenceRingHash}): for fleets of IPv4 and IPv6 servers (with and without zero runs, some
 * named), equal and weighted (1–100), 1 to 257 servers, at the default sizes and custom MIN and MAX
 * (within and past grpc-java's cap of 4,096), every key goes to the server grpc-java's picker picks;
 * a down server leaves the ring as it leaves grpc-java's address list; with servers failing, the
 * picker's walk to the next READY entry is ringstore's failover.
 */
class RingHashParityTest {
    @TempDir
    Path dir;

    /** A fleet, its sizes and keys: {@code keys} seeded keys must land alike. */
    private record Case(String name, List<Fleet.Server> servers, long min, long max, int keys) {
        RingVersion version() {
            return RingVersion.parse("grpc-java:" + min + ":" + max);
        }
    }

    @Test
    void everyKeyGoesWhereGrpcJavaSends() throws Exception {
        SplittableRandom random = new SplittableRandom(0x6A7A);
        List<Case> cases = new ArrayList<>();
        cases.add(new Case("one server", Fleet.seeded(random, 1, false), 1024, 4096, 2_000));
        cases.add(new Case("3 equal IPv4", List.of(
                new Fleet.Server("10.0.0.1", 8080), new Fleet.Server("10.0.0.2", 8080), new Fleet.Server("10.0.0.3", 8080)),
                1024, 4096, 10_000));
        cases.add(new Case("1, 1, 3", List.of(
                new Fleet.Server("10.0.0.1", 8080), new Fleet.Server("10.0.0.2", 8080),
                new Fleet.Server("10.0.0.3", 8080).weight(3)), 1024, 4096, 10_000));
        cases.add(new Case("12 equal mixed", Fleet.seeded(random, 12, false), 1024, 4096, 10_000));
        cases.add(new Case("13 weighted mixed", Fleet.seeded(random, 13, true), 1024, 4096, 10_000));
        cases.add(new Case("25 weighted, 64:128", Fleet.seeded(random, 25, true), 64, 128, 10_000));
        cases.add(new Case("40 weighted, 300:5000", Fleet.seeded(random, 40, true), 300, 5000, 10_000));
        cases.add(new Case("100 equal, 4096:4096", Fleet.seeded(random, 100, false), 4096, 4096, 10_000));
        cases.add(new Case("257 weighted", Fleet.seeded(random, 257, true), 1024, 4096, 10_000));
        cases.add(new Case("257 weighted, 1024:1048576", Fleet.seeded(random, 257, true), 1024, 1_048_576, 10_000));
        cases.add(new Case("60 weighted, 1048576:1048576", Fleet.seeded(random, 60, true), 1_048_576, 1_048_576, 8_000));
        int compared = 0;
        for (Case c : cases) {
            compared += compare(c, random);
        }
        assertEquals(100_000, compared);
    }

    @Test
    void aDownServerLeavesTheRingAsItLeavesTheAddressList() throws Exception {
        SplittableRandom random = new SplittableRandom(0xD0);
        List<Fleet.Server> servers = new ArrayList<>(Fleet.seeded(random, 30, true));
        for (int i : new int[] {0, 7, 29}) {
            servers.set(i, servers.get(i).markedDown());
        }
        Path file = dir.resolve("down.ring");
        RingVersion version = RingVersion.parse("grpc-java");
        Fleet.publish(servers, version, file);
        try (RingStore store = RingStore.open(file);
                ReferenceRingHash grpc = new ReferenceRingHash()) {
            grpc.accept(servers.stream().filter(s -> !s.down()).toList(), 1024, 4096);
            Ring ring = store.ring(Set.of(), version);
            for (int k = 0; k < 10_000; k++) {
                String key = Fleet.key(random);
                assertEquals(grpc.pick(key), address(store.backend(ring.lookup(ascii(key)))), key);
            }
        }
    }

    /**
     * Servers failing one after another (TRANSIENT_FAILURE): grpc-java's picker walks from the key's
     * entry to the next READY one, wrapping; ringstore's {@code select} walks the same entries.
     */
    @Test
    void failoverWalksToTheNextReadyEntry() throws Exception {
        SplittableRandom random = new SplittableRandom(0xFA11);
        List<Fleet.Server> servers = Fleet.seeded(random, 9, true);
        Path file = dir.resolve("failover.ring");
        RingVersion version = RingVersion.parse("grpc-java:64:256");
        Fleet.publish(servers, version, file);
        try (RingStore store = RingStore.open(file);
                ReferenceRingHash grpc = new ReferenceRingHash()) {
            grpc.accept(servers, 64, 256);
            Ring ring = store.ring(Set.of(), version);
            List<String> keys = new ArrayList<>();
            for (int k = 0; k < 5_000; k++) {
                keys.add(Fleet.key(random));
            }
            for (String key : keys) {
                grpc.pick(key); // every server READY before any fails
            }
            Set<InetSocketAddress> failed = new java.util.HashSet<>();
            int moved = 0;
            for (int round = 0; round < 4; round++) {
                Fleet.Server down = servers.get(random.nextInt(servers.size()));
                failed.add(down.address());
                grpc.fail(down.address());
                for (String key : keys) {
                    byte[] bytes = ascii(key);
                    Backend b = ring.selectBackend(
                            ring.hash(bytes), ring.pointCount(), x -> !failed.contains(address(x)));
                    InetSocketAddress expected = grpc.pick(key);
                    assertEquals(expected, address(b), key + " with " + failed + " failed");
                    moved += address(store.backend(ring.lookup(bytes))).equals(expected) ? 0 : 1;
                }
            }
            assertTrue(moved > 1_000, moved + " keys failed over");
        }
    }

    private int compare(Case c, SplittableRandom random) throws Exception {
        Path file = dir.resolve(c.name().replaceAll("[^a-z0-9]", "_") + ".ring");
        Fleet.publish(c.servers(), c.version(), file);
        try (RingStore store = RingStore.open(file);
                ReferenceRingHash grpc = new ReferenceRingHash()) {
            store.verify();
            grpc.accept(c.servers(), c.min(), c.max());
            Ring ring = store.ring(Set.of(), c.version());
            for (int k = 0; k < c.keys(); k++) {
                String key = Fleet.key(random);
                assertEquals(grpc.pick(key), address(store.backend(ring.lookup(ascii(key)))), c.name() + ": key " + key);
            }
            // keys past the last entry: grpc-java's search stays on it (no wrap)
            long last = ring.pointHash(ring.pointCount() - 1);
            if (last != -1L) {
                assertEquals(store.backend(ring.pointBackend(ring.pointCount() - 1)), store.backend(ring.lookupHash(-1L)));
            }
        }
        return c.keys();
    }

    /** The key's bytes as grpc-java hashes a header value: its characters, each not in ASCII as {@code ?} (what {@code Metadata} keeps of them). */
    static byte[] ascii(String key) {
        return key.getBytes(StandardCharsets.US_ASCII);
    }

    static InetSocketAddress address(Backend b) {
        String s = b.socketAddress();
        int colon = s.lastIndexOf(':');
        String host = s.substring(0, colon);
        if (host.startsWith("[")) {
            host = host.substring(1, host.length() - 1);
        }
        return new InetSocketAddress(InetAddress.ofLiteral(host), Integer.parseInt(s.substring(colon + 1)));
    }
}
