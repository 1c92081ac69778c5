package com.example.spymemcached;

import com.example.spymemcached.Fixtures.Server;
import io.ringstore.Ring;
import io.ringstore.RingStore;
import net.spy.memcached.AddrUtil;
import net.spy.memcached.ConnectionFactory;
import net.spy.memcached.ConnectionFactoryBuilder;
import net.spy.memcached.DefaultHashAlgorithm;
import net.spy.memcached.KetamaNodeKeyFormatter;
import net.spy.memcached.KetamaNodeLocator;
import net.spy.memcached.MemcachedClient;
import net.spy.memcached.internal.OperationFuture;
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
 * Real spymemcached 2.12.3 clients against four real memcached processes on 127.0.0.1: 10,000 keys
 * set by a client whose locator is the ringstore ring are all found by a client using spymemcached's
 * own {@code KetamaNodeLocator} ({@code Locator.CONSISTENT}, {@code KETAMA_HASH}), and 10,000 set by that
 * one are all found by the ringstore client; each key lies on the server the ring file names, and a
 * client placing keys otherwise ({@code ARRAY_MOD}) misses most of them. The same for a weighted ring
 * against {@code KetamaNodeLocator} with a weights map.
 *
 * <p>Skipped without {@code /usr/bin/memcached} unless {@code RINGSTORE_REQUIRE_MEMCACHED=true}.
 */
class MemcachedParityTest {
    static final int KEYS = 10_000;
    private static final long TIMEOUT_SECONDS = 60;

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
        List<Server> servers = servers(1, 1, 1, 1);
        ConnectionFactory ketama = settings().setLocatorType(ConnectionFactoryBuilder.Locator.CONSISTENT)
                .setHashAlg(DefaultHashAlgorithm.KETAMA_HASH).build();
        assertClientsAgree(servers, "spymemcached", ketama, "u:");
    }

    @Test
    void weightedRingAndWeightedKetamaClientsFindEachOthersKeys() throws Exception {
        List<Server> servers = servers(1, 2, 3, 4);
        Map<InetSocketAddress, Integer> weights = new HashMap<>();
        for (Server s : servers) {
            weights.put(s.address(), s.weight());
        }
        // ConnectionFactoryBuilder makes only the unweighted KetamaNodeLocator: the weighted one through the same factory as ours.
        ConnectionFactory ketama = new LocatorConnectionFactory(settings().build(),
                nodes -> new KetamaNodeLocator(nodes, DefaultHashAlgorithm.KETAMA_HASH, KetamaNodeKeyFormatter.Format.SPYMEMCACHED, weights));
        assertClientsAgree(servers, "spymemcached-weighted", ketama, "w:");
    }

    private static List<Server> servers(int... weights) {
        List<Server> out = new ArrayList<>();
        for (int i = 0; i < weights.length; i++) {
            String[] endpoint = memcached.get(i).endpoint().split(":");
            out.add(new Server(endpoint[0], Integer.parseInt(endpoint[1])).weight(weights[i]));
        }
        return out;
    }

    private static ConnectionFactoryBuilder settings() {
        return new ConnectionFactoryBuilder().setDaemon(true).setOpTimeout(TimeUnit.SECONDS.toMillis(TIMEOUT_SECONDS));
    }

    private static void assertClientsAgree(List<Server> servers, String version, ConnectionFactory ketama, String prefix) throws Exception {
        long start = System.nanoTime();
        Path file = Fixtures.ringFile(dir.resolve(version + ".ring"), servers, version, 1);
        String addresses = String.join(" ", servers.stream().map(s -> s.ip() + ":" + s.port()).toList());
        List<String> setByOurs = keys(prefix + "ours:", 1);
        List<String> setByKetama = keys(prefix + "ketama:", 2);
        MemcachedClient theirs = null;
        try (SpymemcachedRing ring = SpymemcachedRing.open(file)) {
            MemcachedClient ours = new MemcachedClient(ring.connectionFactory(settings().build()), ring.addresses());
            try {
                theirs = new MemcachedClient(ketama, AddrUtil.getAddresses(addresses));
                setAll(ours, setByOurs);
                assertAllFound(theirs, setByOurs, "set by the ringstore client, got by spymemcached's KetamaNodeLocator");
                setAll(theirs, setByKetama);
                assertAllFound(ours, setByKetama, "set by spymemcached's KetamaNodeLocator, got by the ringstore client");
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
        assertArrayModMisses(addresses, setByOurs);
        System.out.printf("%s: %d + %d keys found across the clients, each on its ring server, in %.0f ms%n", version, KEYS, KEYS,
                (System.nanoTime() - start) / 1e6);
    }

    /** {@value #KEYS} keys valid for memcached's text protocol (no space, control byte or more than 250 bytes), some of them UTF-8. */
    private static List<String> keys(String prefix, long seed) {
        return Fixtures.keys(seed, KEYS).stream().map(k -> prefix + k).toList();
    }

    private static void setAll(MemcachedClient client, List<String> keys) throws Exception {
        List<OperationFuture<Boolean>> sets = new ArrayList<>();
        for (String k : keys) {
            sets.add(client.set(k, 0, value(k)));
        }
        for (int i = 0; i < sets.size(); i++) {
            assertTrue(sets.get(i).get(TIMEOUT_SECONDS, TimeUnit.SECONDS), "set " + keys.get(i) + ": " + sets.get(i).getStatus());
        }
    }

    private static String value(String key) {
        return "value of " + key;
    }

    private static void assertAllFound(MemcachedClient client, List<String> keys, String what) throws Exception {
        Map<String, Object> found = client.asyncGetBulk(keys).get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        List<String> missing = keys.stream().filter(k -> !value(k).equals(found.get(k))).toList();
        assertEquals(List.of(), missing.subList(0, Math.min(5, missing.size())), missing.size() + " of " + keys.size() + " keys " + what
                + " not found (the first 5 listed)");
    }

    /** Each key is on exactly the memcached the ring file names for it, asked one server at a time; every server has some. */
    private static void assertEachOnTheRingsServer(Path file, List<Server> servers, List<String> keys) throws Exception {
        Map<String, Integer> expected = new HashMap<>();
        try (RingStore store = RingStore.open(file)) {
            Ring ring = store.ring(Set.of(), store.versions().getFirst());
            for (String k : keys) {
                expected.put(k, ring.lookup(k.getBytes(StandardCharsets.UTF_8)));
            }
        }
        int[] held = new int[servers.size()];
        for (int i = 0; i < servers.size(); i++) {
            Server s = servers.get(i);
            MemcachedClient one = new MemcachedClient(settings().build(), AddrUtil.getAddresses(s.ip() + ":" + s.port()));
            try {
                Set<String> here = one.asyncGetBulk(keys).get(TIMEOUT_SECONDS, TimeUnit.SECONDS).keySet();
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
        for (int h : held) {
            assertTrue(h > keys.size() / 20, "every server holds keys: " + Arrays.toString(held));
        }
    }

    /** The control: a client placing keys by {@code ARRAY_MOD} finds about a quarter, so a miss is seen as one. */
    private static void assertArrayModMisses(String addresses, List<String> keys) throws Exception {
        MemcachedClient arrayMod = new MemcachedClient(settings().build(), AddrUtil.getAddresses(addresses));
        try {
            int found = arrayMod.asyncGetBulk(keys).get(TIMEOUT_SECONDS, TimeUnit.SECONDS).size();
            assertTrue(found < keys.size() / 2, "ARRAY_MOD found " + found + " of " + keys.size());
        } finally {
            arrayMod.shutdown();
        }
    }
}
