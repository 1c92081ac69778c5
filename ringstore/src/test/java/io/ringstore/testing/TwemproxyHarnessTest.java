package io.ringstore.testing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.api.io.TempDir;

/**
 * The memcached/twemproxy harness itself: four real memcached behind a real nutcracker pool; keys set
 * through the pool are each found on exactly one memcached, every memcached gets some, and nutcracker
 * names its servers as {@link Twemproxy.Server} says. Needs Debian's memcached and nutcracker: skipped
 * without them unless {@code -Dringstore.requireMemcached=true}.
 */
@Tag("process")
@EnabledIf(value = Twemproxy.TESTS_RUN, disabledReason = Twemproxy.MISSING)
class TwemproxyHarnessTest {
    private static final int SERVERS = 4;
    private static final int KEYS = 2_000;
    private static final int MANY_KEYS = 10_000;

    @TempDir
    static Path dir;

    private static List<Memcached> memcached = List.of();

    @BeforeAll
    static void startMemcached() throws Exception {
        Twemproxy.requireInstalled("the twemproxy harness test");
        long start = System.nanoTime();
        memcached = Memcached.startAll(dir.resolve("memcached"), SERVERS, 16);
        System.out.printf("%d memcached started in %.0f ms%n", SERVERS, (System.nanoTime() - start) / 1e6);
    }

    @AfterAll
    static void stopMemcached() throws Exception {
        for (Memcached m : memcached) {
            m.close();
        }
    }

    @Test
    void md5PoolPutsEachKeyOnExactlyOneMemcached() throws Exception {
        List<Twemproxy.Server> servers = new ArrayList<>();
        Set<String> expectedNames = new LinkedHashSet<>();
        for (Memcached m : memcached) {
            servers.add(new Twemproxy.Server(m.port(), 1));
            expectedNames.add("127.0.0.1:" + m.port());
        }
        List<byte[]> keys = MemcachedKeys.random(1, KEYS);
        KeyPlacement placement = place("md5", servers, keys, expectedNames);
        assertEveryKeyOnOneServer("md5", placement, keys);
    }

    @Test
    void fnv1a64PoolWithNamesAndWeights() throws Exception {
        List<Twemproxy.Server> servers = new ArrayList<>();
        Set<String> names = new LinkedHashSet<>();
        for (int i = 0; i < SERVERS; i++) {
            String name = "cache-" + (char) ('a' + i);
            servers.add(new Twemproxy.Server(memcached.get(i).port(), i + 1, name));
            names.add(name);
        }
        List<byte[]> keys = MemcachedKeys.random(2, KEYS);
        KeyPlacement named = place("fnv1a_64", servers, keys, names);
        assertEveryKeyOnOneServer("fnv1a_64 named", named, keys);
        int[] perServer = named.keysPerServer();
        // weights 1:2:3:4 of 2,000 keys: about 200/400/600/800 (ketama's spread is a few percent)
        assertTrue(
                perServer[0] < perServer[3],
                () -> "weight 1 got fewer keys than weight 4: " + Arrays.toString(perServer));

        // The same memcached, the same keys, md5 instead: flush_all made the first placement vanish, and a
        // different hash puts most keys elsewhere (the hash setting took effect).
        KeyPlacement md5 = place("md5", servers, keys, names);
        assertEveryKeyOnOneServer("md5 named", md5, keys);
        int moved = 0;
        for (int i = 0; i < keys.size(); i++) {
            moved += named.owner(i) != md5.owner(i) ? 1 : 0;
        }
        assertTrue(
                moved > keys.size() / 4,
                "keys placed differently by fnv1a_64 and md5: " + moved + " of " + keys.size());
    }

    @Test
    void tenThousandKeysInAFewRoundTrips() throws Exception {
        List<Twemproxy.Server> servers = new ArrayList<>();
        for (Memcached m : memcached) {
            servers.add(new Twemproxy.Server(m.port(), 1));
        }
        List<byte[]> keys = MemcachedKeys.random(3, MANY_KEYS);
        try (Twemproxy proxy = Twemproxy.start(dir.resolve("many"), "murmur", servers)) {
            long start = System.nanoTime();
            KeyPlacement placement = KeyPlacement.find(proxy, memcached, keys);
            long millis = (System.nanoTime() - start) / 1_000_000;
            System.out.printf(
                    "%,d keys set through twemproxy and found on %d memcached in %d ms%n", MANY_KEYS, SERVERS, millis);
            assertEveryKeyOnOneServer("murmur", placement, keys);
        }
    }

    /** The client itself: values round-trip, a missing key is null, keys memcached would refuse are refused before sending. */
    @Test
    void clientRoundTripsAndChecksKeys() throws Exception {
        try (MemcachedClient c = memcached.get(0).client()) {
            assertTrue(c.version().matches("\\d+\\.\\d+.*"), "memcached version");
            c.flushAll();
            List<byte[]> keys = List.of(bytes("a"), bytes("ключ-123"), bytes("b".repeat(250)));
            c.setAll(keys, List.of(bytes("1"), bytes(""), bytes("three\r\nlines\r\n")));
            byte[][] values =
                    c.getAll(List.of(bytes("a"), bytes("missing"), bytes("ключ-123"), bytes("b".repeat(250))));
            assertArrayEquals(bytes("1"), values[0]);
            assertNull(values[1]);
            assertArrayEquals(bytes(""), values[2]);
            assertArrayEquals(bytes("three\r\nlines\r\n"), values[3]);
            for (String bad : List.of("", "with space", "tab\t", "b".repeat(251))) {
                assertThrows(IllegalArgumentException.class, () -> c.getAll(List.of(bytes(bad))), bad);
            }
        }
    }

    private static KeyPlacement place(String hash, List<Twemproxy.Server> servers, List<byte[]> keys, Set<String> names)
            throws Exception {
        long start = System.nanoTime();
        try (Twemproxy proxy =
                Twemproxy.start(dir.resolve(hash + "-" + servers.getFirst().name()), hash, servers)) {
            long started = System.nanoTime();
            assertEquals(
                    names, proxy.serverNames(), () -> "server names in nutcracker's stats\n" + proxy.diagnostics());
            KeyPlacement placement = KeyPlacement.find(proxy, memcached, keys);
            System.out.printf(
                    "twemproxy %s: started in %.0f ms, %,d keys placed in %.0f ms, per server %s%n",
                    hash,
                    (started - start) / 1e6,
                    keys.size(),
                    (System.nanoTime() - started) / 1e6,
                    Arrays.toString(placement.keysPerServer()));
            return placement;
        }
    }

    private static void assertEveryKeyOnOneServer(String what, KeyPlacement placement, List<byte[]> keys) {
        assertEquals(keys.size(), placement.size());
        for (int i = 0; i < keys.size(); i++) {
            int k = i;
            assertEquals(
                    1,
                    placement.holders(i),
                    () -> what + ": memcached holding key #" + k + " " + MemcachedClient.printable(keys.get(k)));
        }
        int[] perServer = placement.keysPerServer();
        assertEquals(keys.size(), Arrays.stream(perServer).sum());
        assertTrue(
                Arrays.stream(perServer).allMatch(n -> n > 0),
                () -> what + ": every memcached got keys: " + Arrays.toString(perServer));
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
