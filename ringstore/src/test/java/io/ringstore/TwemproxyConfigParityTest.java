package io.ringstore;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.ringstore.builder.BackendList;
import io.ringstore.builder.RingBuilder;
import io.ringstore.builder.TwemproxyConfig;
import io.ringstore.family.RingVersion;
import io.ringstore.testing.KeyPlacement;
import io.ringstore.testing.Memcached;
import io.ringstore.testing.MemcachedClient;
import io.ringstore.testing.MemcachedKeys;
import io.ringstore.testing.Twemproxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code ringstore build --from twemproxy} end to end: real memcached behind a real nutcracker pool,
 * and a ring built from the very {@code nutcracker.yml} nutcracker runs with, read by
 * {@link TwemproxyConfig#parse} (nothing written twice). Each key is set through the pool and found on
 * the one memcached holding it; ringstore's ring must name the same server for every key.
 *
 * <p>Pool: weights 1, 1, 3, 2, 5, servers named {@code cache-a}…{@code cache-e} or unnamed (nutcracker
 * names those {@code 127.0.0.1:PORT}), hash md5 or fnv1a_64; 2,000 seeded keys a case, a fifth of them
 * non-ASCII. Needs Debian's memcached and nutcracker: skipped without them, unless
 * {@code -Dringstore.requireMemcached=true}.
 */
@Tag("process")
@EnabledIf(value = Twemproxy.TESTS_RUN, disabledReason = Twemproxy.MISSING)
class TwemproxyConfigParityTest {
    private static final long SEED = 0xF20C_0F16L;
    private static final int[] WEIGHTS = {1, 1, 3, 2, 5};
    private static final int KEYS = 2_000;

    @TempDir
    static Path dir;

    private static List<Memcached> memcached = List.of();

    @BeforeAll
    static void startMemcached() throws Exception {
        Twemproxy.requireInstalled("the twemproxy config parity test");
        memcached = Memcached.startAll(dir.resolve("memcached"), WEIGHTS.length, 16);
    }

    @AfterAll
    static void stopMemcached() {
        for (Memcached m : memcached) {
            m.close();
        }
    }

    /**
     * What docs/from-config.md says replaces {@code auto_eject_hosts}: nutcracker's ring without a
     * server (as after an ejection: built from the live servers) is ringstore's ring of the whole pool
     * with that server {@code down}. nutcracker runs the pool without cache-c; ringstore reads a backends
     * file of all five, cache-c marked down.
     */
    @ParameterizedTest
    @ValueSource(strings = {"md5", "fnv1a_64"})
    void aDownServerLeavesTheRingAsNutcrackersEjectionDoes(String hash) throws Exception {
        int down = 2;
        List<Twemproxy.Server> live = new ArrayList<>();
        StringBuilder backends = new StringBuilder("upstream pool {\n");
        for (int i = 0; i < WEIGHTS.length; i++) {
            String serverName = "cache-" + (char) ('a' + i);
            if (i != down) {
                live.add(new Twemproxy.Server(memcached.get(i).port(), WEIGHTS[i], serverName));
            }
            backends.append("    server 127.0.0.1:")
                    .append(memcached.get(i).port())
                    .append(" weight=")
                    .append(WEIGHTS[i])
                    .append(i == down ? " down" : "")
                    .append(";  # ringstore: name=")
                    .append(serverName)
                    .append('\n');
        }
        Path file = Files.writeString(dir.resolve("down-" + hash + ".backends"), backends.append("}\n"));
        RingVersion version = RingVersion.parse("twemproxy:" + hash);
        Path ringFile = dir.resolve("down-" + hash + ".ring");
        RingBuilder.of(BackendList.parse(file)).version(version).build(ringFile);
        List<byte[]> keys = MemcachedKeys.random(SEED ^ 0xD0 ^ hash.hashCode(), KEYS);
        List<Memcached> order = new ArrayList<>(memcached);
        order.remove(down);
        try (Twemproxy proxy = Twemproxy.start(dir.resolve("twemproxy-down-" + hash), hash, live);
                RingStore store = RingStore.open(ringFile)) {
            KeyPlacement twemproxy = KeyPlacement.find(proxy, order, keys);
            Ring ring = store.ring(Set.of(), version);
            int disagreements = 0;
            for (int i = 0; i < keys.size(); i++) {
                int backend = ring.lookup(keys.get(i));
                int expected = twemproxy.owner(i) < down
                        ? twemproxy.owner(i)
                        : twemproxy.owner(i) + 1; // live index -> pool index
                disagreements += backend == expected ? 0 : 1;
            }
            System.out.printf(
                    "twemproxy config parity down-%s: %,d keys, %d disagreements; keys per live server %s%n",
                    hash, keys.size(), disagreements, Arrays.toString(twemproxy.keysPerServer()));
            assertEquals(
                    0,
                    disagreements,
                    hash
                            + ": keys placed differently by nutcracker without cache-c and by ringstore with cache-c down");
        }
    }

    @ParameterizedTest(name = "{0}, named servers: {1}")
    @CsvSource({"md5, true", "fnv1a_64, true", "md5, false", "fnv1a_64, false"})
    void theRingBuiltFromNutcrackersOwnConfigPlacesKeysAsNutcrackerDoes(String hash, boolean named) throws Exception {
        List<Twemproxy.Server> servers = new ArrayList<>();
        for (int i = 0; i < WEIGHTS.length; i++) {
            servers.add(new Twemproxy.Server(
                    memcached.get(i).port(), WEIGHTS[i], named ? "cache-" + (char) ('a' + i) : null));
        }
        List<byte[]> keys = MemcachedKeys.random(SEED ^ hash.hashCode() ^ (named ? 1 : 0), KEYS);
        String name = hash + (named ? "-named" : "-unnamed");
        try (Twemproxy proxy = Twemproxy.start(dir.resolve("twemproxy-" + name), hash, servers)) {
            TwemproxyConfig config = TwemproxyConfig.parse(proxy.config(), named ? Twemproxy.POOL : null);
            assertEquals(Twemproxy.POOL, config.pool());
            assertEquals(RingVersion.parse("twemproxy:" + hash), config.version());
            // what was read is what the harness wrote, in its order: backend i is memcached i
            for (int i = 0; i < servers.size(); i++) {
                Backend b = config.backends().backend(i);
                assertEquals("127.0.0.1:" + servers.get(i).port(), b.address());
                assertEquals(servers.get(i).weight(), b.weight());
                assertEquals(servers.get(i).name(), b.name());
            }
            Path ringFile = dir.resolve(name + ".ring");
            RingBuilder.of(config.backends()).version(config.version()).build(ringFile);
            int[] ringstore = new int[keys.size()];
            try (RingStore store = RingStore.open(ringFile)) {
                Ring ring = store.ring(Set.of(), config.version());
                for (int i = 0; i < keys.size(); i++) {
                    ringstore[i] = ring.lookup(keys.get(i));
                }
            }
            KeyPlacement twemproxy = KeyPlacement.find(proxy, memcached, keys);
            int disagreements = 0;
            StringBuilder shown = new StringBuilder();
            for (int i = 0; i < keys.size(); i++) {
                int k = i;
                assertEquals(
                        1,
                        twemproxy.holders(i),
                        () -> name + ": memcached holding key #" + k + " " + MemcachedClient.printable(keys.get(k)));
                if (twemproxy.owner(i) != ringstore[i] && ++disagreements <= 10) {
                    shown.append("\n  key #")
                            .append(i)
                            .append(' ')
                            .append(MemcachedClient.printable(keys.get(i)))
                            .append(": twemproxy server ")
                            .append(twemproxy.owner(i))
                            .append(", ringstore ")
                            .append(ringstore[i]);
                }
            }
            System.out.printf(
                    "twemproxy config parity %s: %,d keys, %d disagreements; keys per server %s%n",
                    name, keys.size(), disagreements, Arrays.toString(twemproxy.keysPerServer()));
            assertEquals(
                    0,
                    disagreements,
                    name + ": keys placed differently by nutcracker and by the ring built from its config" + shown
                            + "\n" + proxy.diagnostics());
        }
    }
}
