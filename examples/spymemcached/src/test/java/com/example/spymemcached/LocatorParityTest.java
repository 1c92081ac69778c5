package com.example.spymemcached;

import com.example.spymemcached.Fixtures.Server;
import net.spy.memcached.DefaultHashAlgorithm;
import net.spy.memcached.KetamaNodeKeyFormatter;
import net.spy.memcached.KetamaNodeLocator;
import net.spy.memcached.MemcachedNode;
import net.spy.memcached.MemcachedNodeROImpl;
import net.spy.memcached.NodeLocator;
import net.spy.memcached.util.DefaultKetamaNodeLocatorConfiguration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The ringstore locator against spymemcached's own {@link KetamaNodeLocator} (2.12.3) over the same
 * nodes, without memcached: {@code getPrimary} for 100,000 keys and {@code getSequence} (its seven
 * nodes, in order) for 10,000, in every variant the spymemcached families cover.
 */
class LocatorParityTest {
    static final int PRIMARY_KEYS = 100_000;
    static final int SEQUENCE_KEYS = 10_000;

    @TempDir
    Path dir;

    @Test
    void unweightedEqualsKetamaNodeLocator() throws Exception {
        List<Server> servers = new ArrayList<>(Fixtures.randomServers(new SplittableRandom(19), 8));
        // Nodes made from host names: spymemcached hashes "cache-a/10.x.y.z:port-i", the ring the name= text.
        servers.set(2, servers.get(2).named("cache-a"));
        servers.set(5, servers.get(5).named("cache-b.example.com"));
        List<MemcachedNode> nodes = Fixtures.nodes(servers);
        try (SpymemcachedRing ring = SpymemcachedRing.open(Fixtures.ringFile(dir.resolve("a.ring"), servers, "spymemcached", 1))) {
            assertSameAnswers(ring.locator(nodes), new KetamaNodeLocator(nodes, DefaultHashAlgorithm.KETAMA_HASH), 1);
        }
    }

    /** {@code spymemcached:K} is a {@code KetamaNodeLocatorConfiguration} of K repetitions: K/4 digests, rounded down. */
    @ParameterizedTest
    @ValueSource(ints = {4, 82, 1000})
    void repetitionsEqualKetamaNodeLocatorConfiguration(int repetitions) throws Exception {
        List<Server> servers = Fixtures.randomServers(new SplittableRandom(repetitions), 5);
        List<MemcachedNode> nodes = Fixtures.nodes(servers);
        NodeLocator theirs = new KetamaNodeLocator(nodes, DefaultHashAlgorithm.KETAMA_HASH, new DefaultKetamaNodeLocatorConfiguration() {
            @Override
            public int getNodeRepetitions() {
                return repetitions;
            }
        });
        Path file = Fixtures.ringFile(dir.resolve("k.ring"), servers, "spymemcached:" + repetitions, 1);
        try (SpymemcachedRing ring = SpymemcachedRing.open(file)) {
            assertSameAnswers(ring.locator(nodes), theirs, repetitions);
        }
    }

    /**
     * {@code spymemcached-weighted} is {@code KetamaNodeLocator} with a weights map (the libmemcached float
     * share rule): weights 1,1,3,2,5; 25 equal servers, which that rule gives 156 points each, not 160;
     * 21 servers of random weights.
     */
    @ParameterizedTest
    @ValueSource(strings = {"1,1,3,2,5", "25x1", "21xrandom"})
    void weightedEqualsKetamaNodeLocatorWithWeights(String fleet) throws Exception {
        List<Server> servers = weighted(fleet);
        List<MemcachedNode> nodes = Fixtures.nodes(servers);
        Path file = Fixtures.ringFile(dir.resolve("w.ring"), servers, "spymemcached-weighted", 1);
        try (SpymemcachedRing ring = SpymemcachedRing.open(file)) {
            assertSameAnswers(ring.locator(nodes), weightedKetama(nodes, servers), fleet.hashCode());
        }
    }

    /**
     * A {@code down} server keeps its points in a weighted ring, as spymemcached keeps an inactive node
     * in its locator (the connection's failure mode then walks the sequence): the ring of all six.
     */
    @Test
    void weightedDownServerKeepsItsPoints() throws Exception {
        List<Server> servers = new ArrayList<>(weighted("1,1,3,2,5"));
        servers.add(new Server("10.9.9.9", 11211).weight(4).markedDown());
        List<MemcachedNode> nodes = Fixtures.nodes(servers);
        Path file = Fixtures.ringFile(dir.resolve("d.ring"), servers, "spymemcached-weighted", 1);
        try (SpymemcachedRing ring = SpymemcachedRing.open(file)) {
            NodeLocator theirs = weightedKetama(nodes, servers);
            NodeLocator ours = ring.locator(nodes);
            assertEquals(nodes, List.copyOf(ours.getAll()));
            assertSameAnswers(ours, theirs, 6);
        }
    }

    @Test
    void nodesThatAreNotTheRingsServersAreRefused() throws Exception {
        List<Server> servers = Fixtures.randomServers(new SplittableRandom(7), 4);
        Path file = Fixtures.ringFile(dir.resolve("m.ring"), servers, "spymemcached", 1);
        try (SpymemcachedRing ring = SpymemcachedRing.open(file)) {
            Server first = servers.getFirst();
            IllegalArgumentException missing = assertThrows(IllegalArgumentException.class,
                    () -> ring.locator(Fixtures.nodes(servers.subList(1, 4))));
            assertTrue(missing.getMessage().contains("the ring's " + first.ip() + ":" + first.port() + " has no node"), missing.getMessage());

            List<Server> more = new ArrayList<>(servers);
            more.add(new Server("10.1.2.3", 11300));
            IllegalArgumentException extra = assertThrows(IllegalArgumentException.class, () -> ring.locator(Fixtures.nodes(more)));
            assertTrue(extra.getMessage().contains("node /10.1.2.3:11300 is not in the ring"), extra.getMessage());

            List<Server> named = new ArrayList<>(servers);
            named.set(0, first.named("cache1"));
            IllegalArgumentException name = assertThrows(IllegalArgumentException.class, () -> ring.locator(Fixtures.nodes(named)));
            assertTrue(name.getMessage().contains("node cache1/" + first.ip() + ":" + first.port() + " is hashed by spymemcached with the name cache1"),
                    name.getMessage());

            ring.locator(Fixtures.nodes(servers)); // the same servers: accepted
        }
    }

    @Test
    void readonlyCopyAndUpdatedNodesAnswerTheSameServers() throws Exception {
        List<Server> servers = Fixtures.randomServers(new SplittableRandom(11), 4);
        Path file = Fixtures.ringFile(dir.resolve("c.ring"), servers, "spymemcached", 1);
        try (SpymemcachedRing ring = SpymemcachedRing.open(file)) {
            List<MemcachedNode> nodes = Fixtures.nodes(servers);
            NodeLocator ours = ring.locator(nodes);
            NodeLocator copy = ours.getReadonlyCopy();
            List<MemcachedNode> replacements = Fixtures.nodes(servers);
            NodeLocator updated = ring.locator(nodes);
            updated.updateLocator(replacements);
            assertEquals(replacements, List.copyOf(updated.getAll()));
            for (String k : Fixtures.keys(3, 1000)) {
                MemcachedNode primary = ours.getPrimary(k);
                MemcachedNode c = copy.getPrimary(k);
                assertInstanceOf(MemcachedNodeROImpl.class, c);
                assertEquals(primary.getSocketAddress(), c.getSocketAddress(), k);
                assertSame(replacements.get(nodes.indexOf(primary)), updated.getPrimary(k), k);
            }
            assertEquals(4, copy.getAll().size());
            assertTrue(copy.getAll().stream().allMatch(n -> n instanceof MemcachedNodeROImpl));
        }
    }

    /** Servers of a weighted fleet: weights listed, {@code NxW} (N servers of weight W) or {@code Nxrandom} (1 to 1000). */
    static List<Server> weighted(String fleet) {
        SplittableRandom random = new SplittableRandom(fleet.hashCode());
        List<Integer> weights = new ArrayList<>();
        if (fleet.contains("x")) {
            String[] parts = fleet.split("x");
            for (int i = 0; i < Integer.parseInt(parts[0]); i++) {
                weights.add(parts[1].equals("random") ? 1 + random.nextInt(1000) : Integer.parseInt(parts[1]));
            }
        } else {
            for (String w : fleet.split(",")) {
                weights.add(Integer.parseInt(w));
            }
        }
        List<Server> servers = Fixtures.randomServers(random, weights.size());
        List<Server> out = new ArrayList<>();
        for (int i = 0; i < servers.size(); i++) {
            out.add(servers.get(i).weight(weights.get(i)));
        }
        return out;
    }

    /** spymemcached's weighted locator: {@code KetamaNodeLocator} with the SPYMEMCACHED key format and a weights map. */
    static NodeLocator weightedKetama(List<MemcachedNode> nodes, List<Server> servers) {
        Map<InetSocketAddress, Integer> weights = new HashMap<>();
        for (Server s : servers) {
            weights.put(s.address(), s.weight());
        }
        return new KetamaNodeLocator(nodes, DefaultHashAlgorithm.KETAMA_HASH, KetamaNodeKeyFormatter.Format.SPYMEMCACHED, weights);
    }

    /**
     * Both locators answer the same nodes: {@code getPrimary} for {@value #PRIMARY_KEYS} keys, and
     * {@code getSequence} for the first {@value #SEQUENCE_KEYS} of them, all seven nodes in order.
     */
    static void assertSameAnswers(NodeLocator ours, NodeLocator theirs, long seed) {
        List<String> keys = Fixtures.keys(seed, PRIMARY_KEYS);
        long start = System.nanoTime();
        int primaryDisagreements = 0;
        String firstDisagreement = null;
        for (String k : keys) {
            MemcachedNode o = ours.getPrimary(k);
            MemcachedNode t = theirs.getPrimary(k);
            if (o != t) {
                primaryDisagreements++;
                firstDisagreement = firstDisagreement != null ? firstDisagreement : k + ": ringstore " + o + ", spymemcached " + t;
            }
        }
        int sequenceDisagreements = 0;
        for (String k : keys.subList(0, SEQUENCE_KEYS)) {
            List<MemcachedNode> o = list(ours.getSequence(k));
            List<MemcachedNode> t = list(theirs.getSequence(k));
            assertEquals(7, t.size(), "spymemcached's sequence has 7 nodes");
            if (!o.equals(t)) {
                sequenceDisagreements++;
                firstDisagreement = firstDisagreement != null ? firstDisagreement : k + ": ringstore " + o + ", spymemcached " + t;
            }
        }
        System.out.printf("%d primaries, %d sequences compared: %d and %d disagreements, %.0f ms%n", PRIMARY_KEYS, SEQUENCE_KEYS,
                primaryDisagreements, sequenceDisagreements, (System.nanoTime() - start) / 1e6);
        assertEquals(0, primaryDisagreements + sequenceDisagreements, primaryDisagreements + " primaries and " + sequenceDisagreements
                + " sequences differ, the first " + firstDisagreement);
    }

    static List<MemcachedNode> list(Iterator<MemcachedNode> sequence) {
        List<MemcachedNode> out = new ArrayList<>();
        sequence.forEachRemaining(out::add);
        return out;
    }
}
