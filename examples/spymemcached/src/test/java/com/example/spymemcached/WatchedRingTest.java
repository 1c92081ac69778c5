package com.example.spymemcached;

import com.example.spymemcached.Fixtures.Server;
import net.spy.memcached.DefaultHashAlgorithm;
import net.spy.memcached.KetamaNodeLocator;
import net.spy.memcached.MemcachedNode;
import net.spy.memcached.NodeLocator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.reflect.Method;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A watched ring ({@link SpymemcachedRing#watch}) under a client that keeps its nodes: a file published
 * again serves the next lookups, each generation placing keys as spymemcached's {@code KetamaNodeLocator}
 * over that generation's servers does.
 */
class WatchedRingTest {
    @TempDir
    Path dir;

    @Test
    void republishedFilesServeTheNextLookups() throws Exception {
        List<Server> servers = LocatorParityTest.weighted("1,2,3,4");
        List<MemcachedNode> nodes = Fixtures.nodes(servers);
        Path file = Fixtures.ringFile(dir.resolve("cache.ring"), servers, "spymemcached-weighted", 1);
        try (SpymemcachedRing ring = SpymemcachedRing.watch(file)) {
            NodeLocator ours = ring.locator(nodes);
            LocatorParityTest.assertSameAnswers(ours, LocatorParityTest.weightedKetama(nodes, servers), 1);

            // Generation 2: the third server is down; it keeps its points (spymemcached keeps an inactive node
            // in its locator), so every key stays where it was.
            List<Server> second = new ArrayList<>(servers);
            second.set(2, servers.get(2).markedDown());
            Fixtures.ringFile(file, second, "spymemcached-weighted", 2);
            awaitGeneration(ring, 2);
            LocatorParityTest.assertSameAnswers(ours, LocatorParityTest.weightedKetama(nodes, servers), 2);

            // Generation 3: a fifth server the client has no node for. Its keys go on along spymemcached's
            // sequence to the first node the client has (clockwise when all 7 tries are the fifth's); every
            // other key stays where KetamaNodeLocator over the five servers puts it.
            List<Server> third = new ArrayList<>(servers);
            third.add(new Server("10.200.0.5", 11211).weight(4));
            Fixtures.ringFile(file, third, "spymemcached-weighted", 3);
            awaitGeneration(ring, 3);
            MemcachedNode fifth = Fixtures.node(third.get(4).address());
            List<MemcachedNode> five = new ArrayList<>(nodes);
            five.add(fifth);
            NodeLocator theirs = LocatorParityTest.weightedKetama(five, third);
            int moved = 0;
            int stranded = 0;
            for (String k : Fixtures.keys(3, 20_000)) {
                MemcachedNode expected = theirs.getPrimary(k);
                List<MemcachedNode> sequence = LocatorParityTest.list(theirs.getSequence(k));
                sequence.removeIf(n -> n == fifth);
                assertEquals(sequence, LocatorParityTest.list(ours.getSequence(k)), k);
                if (expected == fifth && sequence.isEmpty()) { // all 7 tries on it: (4/14)^6 of its keys
                    stranded++;
                    expected = clockwiseOtherThan(theirs, k, fifth);
                } else if (expected == fifth) {
                    moved++;
                    expected = sequence.getFirst();
                }
                assertEquals(expected, ours.getPrimary(k), k);
            }
            System.out.println("generation 3: " + moved + " keys of the fifth server moved on along the sequence, " + stranded + " clockwise");
            assertTrue(moved > 20_000 / 10, "the fifth server (4 of 14 weight) had keys: " + moved);
            assertTrue(stranded > 0, "these seeds give keys whose 7 tries are all the fifth server's: " + stranded);
            assertEquals(nodes, List.copyOf(ours.getAll()));
        }
    }

    /**
     * The node of the first point of {@code KetamaNodeLocator}'s continuum at or after {@code k}'s hash,
     * wrapping, that is not {@code skipped}'s (the continuum read by reflection: spymemcached has no
     * public accessor for it).
     */
    @SuppressWarnings("unchecked")
    private static MemcachedNode clockwiseOtherThan(NodeLocator ketama, String k, MemcachedNode skipped) throws Exception {
        Method continuum = KetamaNodeLocator.class.getDeclaredMethod("getKetamaNodes");
        continuum.setAccessible(true);
        TreeMap<Long, MemcachedNode> points = (TreeMap<Long, MemcachedNode>) continuum.invoke(ketama);
        long hash = DefaultHashAlgorithm.KETAMA_HASH.hash(k);
        List<MemcachedNode> walk = new ArrayList<>(points.tailMap(hash, true).values());
        walk.addAll(points.headMap(hash, false).values());
        return walk.stream().filter(n -> n != skipped).findFirst().orElseThrow();
    }

    /** Waits (at most 10 s; the router looks every 200 ms) until generation {@code g} serves. */
    private static void awaitGeneration(SpymemcachedRing ring, long g) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (ring.ring().store().generation() != g) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("generation " + g + " of " + ring.path() + " not serving after 10 s; serving "
                        + ring.ring().store().generation());
            }
            Thread.sleep(20);
        }
    }
}
