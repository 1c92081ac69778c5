package com.example.xmemcached;

import com.example.xmemcached.Fixtures.Server;
import io.ringstore.Ring;
import io.ringstore.RingStore;
import net.rubyeye.xmemcached.MemcachedClient;
import net.rubyeye.xmemcached.XMemcachedClientBuilder;
import net.rubyeye.xmemcached.impl.ArrayMemcachedSessionLocator;
import net.rubyeye.xmemcached.impl.KetamaMemcachedSessionLocator;
import net.rubyeye.xmemcached.utils.AddrUtil;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Real xmemcached 2.4.8 clients against four real memcached processes on 127.0.0.1: 10,000 keys set by a
 * client whose session locator is the ringstore ring are all found by a stock client using xmemcached's
 * own {@code KetamaMemcachedSessionLocator}, given the servers by IP ({@code 127.0.0.1:PORT}), and
 * 10,000 set by that one are all found by the ringstore client; each key lies on the server the ring
 * file names, and a client placing keys otherwise (xmemcached's default {@code ArrayMemcachedSessionLocator})
 * misses most of them. The same for weights 1 to 4, and for a watched file published again without a
 * server, against a stock client of the three left.
 *
 * <p>xmemcached hashes a server given by IP by its reverse-DNS name ({@code localhost/127.0.0.1:PORT}):
 * the ring files here name each server so ({@code # ringstore: name=}), the name asked of the resolver
 * as xmemcached asks it.
 *
 * <p>Skipped without {@code /usr/bin/memcached} unless {@code RINGSTORE_REQUIRE_MEMCACHED=true}.
 */
class MemcachedParityTest {
    static final int KEYS = 10_000;
    private static final long TIMEOUT_MILLIS = 60_000;

    @TempDir
    static Path dir;
    static List<Memcached> memcached = List.of();

    @BeforeAll
    static void start() throws Exception {
        Memcached.assumeInstalled();
        memcached = Memcached.startAll(dir.resolve("memcached"), 4);
    }

    @AfterAll
    static void stop() {
        memcached.forEach(Memcached::close);
    }

    @Test
    void ringstoreAndKetamaClientsFindEachOthersKeys() throws Exception {
        assertClientsAgree(servers(1, 1, 1, 1), "xmemcached", "u:");
    }

    @Test
    void weightedRingAndWeightedKetamaClientsFindEachOthersKeys() throws Exception {
        assertClientsAgree(servers(1, 2, 3, 4), "xmemcached", "w:");
    }

    /**
     * A watched file published again without the fourth server: the ringstore client, which keeps its four
     * sessions, places keys as a stock client of the three servers left, each way round.
     */
    @Test
    void aRepublishedFileIsFollowed() throws Exception {
        List<Server> servers = servers(1, 1, 1, 1);
        Path file = Fixtures.ringFile(dir.resolve("watched.ring"), servers, "xmemcached", 1);
        try (XmemcachedRing ring = XmemcachedRing.watch(file)) {
            MemcachedClient ours = ours(ring);
            MemcachedClient theirs = null;
            try {
                List<Server> three = servers.subList(0, 3);
                Fixtures.ringFile(file, three, "xmemcached", 2);
                awaitGeneration(ring, 2);
                theirs = ketama(three);
                List<String> setByOurs = keys("r:ours:", 3);
                List<String> setByKetama = keys("r:ketama:", 4);
                setAll(ours, setByOurs);
                assertAllFound(theirs, setByOurs, "set by the ringstore client after the republish, got by a stock client of the three servers");
                setAll(theirs, setByKetama);
                assertAllFound(ours, setByKetama, "set by a stock client of the three servers, got by the ringstore client");
                List<String> all = new ArrayList<>(setByOurs);
                all.addAll(setByKetama);
                assertEachOnTheRingsServer(file, servers, all);
            } finally {
                ours.shutdown();
                if (theirs != null) {
                    theirs.shutdown();
                }
            }
        }
    }

    /** The name xmemcached hashes 127.0.0.1 by: {@code InetSocketAddress.getHostName()}, as its {@code InetSocketAddressWrapper} asks it (reverse DNS). */
    static String reverseName() {
        return new InetSocketAddress("127.0.0.1", 11211).getHostName();
    }

    private static List<Server> servers(int... weights) {
        String name = reverseName();
        List<Server> out = new ArrayList<>();
        for (int i = 0; i < weights.length; i++) {
            String[] endpoint = memcached.get(i).endpoint().split(":");
            out.add(new Server(endpoint[0], Integer.parseInt(endpoint[1])).named(name).weight(weights[i]));
        }
        return out;
    }

    private static String addresses(List<Server> servers) {
        return String.join(" ", servers.stream().map(s -> s.ip() + ":" + s.port()).toList());
    }

    private static int[] weights(List<Server> servers) {
        return servers.stream().mapToInt(Server::weight).toArray();
    }

    private static MemcachedClient ours(XmemcachedRing ring) throws Exception {
        XMemcachedClientBuilder builder = new XMemcachedClientBuilder(ring.addresses(), ring.weights());
        builder.setSessionLocator(ring.locator());
        builder.setOpTimeout(TIMEOUT_MILLIS);
        return builder.build();
    }

    /** A stock client with xmemcached's ketama locator, the servers given by IP as a user writes them. */
    private static MemcachedClient ketama(List<Server> servers) throws Exception {
        XMemcachedClientBuilder builder = new XMemcachedClientBuilder(AddrUtil.getAddresses(addresses(servers)), weights(servers));
        builder.setSessionLocator(new KetamaMemcachedSessionLocator());
        builder.setOpTimeout(TIMEOUT_MILLIS);
        return builder.build();
    }

    private static void assertClientsAgree(List<Server> servers, String version, String prefix) throws Exception {
        long start = System.nanoTime();
        Path file = Fixtures.ringFile(dir.resolve(prefix.charAt(0) + version + ".ring"), servers, version, 1);
        List<String> setByOurs = keys(prefix + "ours:", 1);
        List<String> setByKetama = keys(prefix + "ketama:", 2);
        try (XmemcachedRing ring = XmemcachedRing.open(file)) {
            MemcachedClient ours = ours(ring);
            MemcachedClient theirs = null;
            try {
                theirs = ketama(servers);
                setAll(ours, setByOurs);
                assertAllFound(theirs, setByOurs, "set by the ringstore client, got by xmemcached's KetamaMemcachedSessionLocator");
                setAll(theirs, setByKetama);
                assertAllFound(ours, setByKetama, "set by xmemcached's KetamaMemcachedSessionLocator, got by the ringstore client");
            } finally {
                ours.shutdown();
                if (theirs != null) {
                    theirs.shutdown();
                }
            }
        }
        List<String> all = new ArrayList<>(setByOurs);
        all.addAll(setByKetama);
        assertEachOnTheRingsServer(file, servers, all);
        assertArrayMisses(servers, setByOurs);
        System.out.printf("%s %s: %d + %d keys found across the clients, each on its ring server, in %.0f ms%n", version,
                Arrays.toString(weights(servers)), KEYS, KEYS, (System.nanoTime() - start) / 1e6);
    }

    /** {@value #KEYS} keys valid for memcached's text protocol (no space, control byte or more than 250 bytes), some of them UTF-8. */
    private static List<String> keys(String prefix, long seed) {
        return Fixtures.keys(seed, KEYS).stream().map(k -> prefix + k).toList();
    }

    private static void setAll(MemcachedClient client, List<String> keys) throws Exception {
        for (String k : keys) {
            assertTrue(client.set(k, 0, value(k)), "set " + k);
        }
    }

    private static String value(String key) {
        return "value of " + key;
    }

    private static Map<String, Object> getAll(MemcachedClient client, List<String> keys) throws Exception {
        Map<String, Object> found = new HashMap<>();
        for (int i = 0; i < keys.size(); i += 500) {
            Map<String, Object> part = client.get(keys.subList(i, Math.min(keys.size(), i + 500)), TIMEOUT_MILLIS);
            if (part != null) {
                found.putAll(part);
            }
        }
        return found;
    }

    private static void assertAllFound(MemcachedClient client, List<String> keys, String what) throws Exception {
        Map<String, Object> found = getAll(client, keys);
        List<String> missing = keys.stream().filter(k -> !value(k).equals(found.get(k))).toList();
        assertEquals(List.of(), missing.subList(0, Math.min(5, missing.size())), missing.size() + " of " + keys.size() + " keys " + what
                + " not found (the first 5 listed)");
    }

    /** Each key is on exactly the memcached the ring file names for it, asked one server at a time; every server of the ring has some. */
    private static void assertEachOnTheRingsServer(Path file, List<Server> servers, List<String> keys) throws Exception {
        Map<String, Integer> expected = new HashMap<>();
        int backends;
        try (RingStore store = RingStore.open(file)) {
            Ring ring = store.ring(Set.of(), store.versions().getFirst());
            backends = store.backends().size();
            for (String k : keys) {
                expected.put(k, ring.lookup(k.getBytes(StandardCharsets.UTF_8)));
            }
        }
        int[] held = new int[servers.size()];
        for (int i = 0; i < servers.size(); i++) {
            Server s = servers.get(i);
            XMemcachedClientBuilder builder = new XMemcachedClientBuilder(AddrUtil.getAddresses(s.ip() + ":" + s.port()));
            builder.setOpTimeout(TIMEOUT_MILLIS);
            MemcachedClient one = builder.build();
            try {
                Set<String> here = getAll(one, keys).keySet();
                for (String k : keys) {
                    assertEquals(expected.get(k) == i, here.contains(k), k + " on " + s.ip() + ":" + s.port()
                            + " (the ring names server " + expected.get(k) + ")");
                }
                held[i] = here.size();
            } finally {
                one.shutdown();
            }
        }
        System.out.println("keys per server: " + Arrays.toString(held));
        for (int i = 0; i < backends; i++) {
            assertTrue(held[i] > keys.size() / 20, "every server of the ring holds keys: " + Arrays.toString(held));
        }
    }

    /** The control: a client placing keys by xmemcached's default {@code ArrayMemcachedSessionLocator} finds about a quarter, so a miss is seen as one. */
    private static void assertArrayMisses(List<Server> servers, List<String> keys) throws Exception {
        XMemcachedClientBuilder builder = new XMemcachedClientBuilder(AddrUtil.getAddresses(addresses(servers)));
        builder.setSessionLocator(new ArrayMemcachedSessionLocator());
        builder.setOpTimeout(TIMEOUT_MILLIS);
        MemcachedClient array = builder.build();
        try {
            int found = getAll(array, keys).size();
            assertTrue(found < keys.size() / 2, "ArrayMemcachedSessionLocator found " + found + " of " + keys.size());
        } finally {
            array.shutdown();
        }
    }

    /** Waits (at most 10 s; the router looks every 200 ms) until generation {@code g} serves. */
    static void awaitGeneration(XmemcachedRing ring, long g) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (ring.ring().store().generation() != g) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("generation " + g + " of " + ring.path() + " not serving after 10 s; serving "
                        + ring.ring().store().generation());
            }
            Thread.sleep(20);
        }
    }
}
