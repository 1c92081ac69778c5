package com.example.xmemcached;

import com.example.xmemcached.Fixtures.Server;
import com.google.code.yanf4j.core.Session;
import net.rubyeye.xmemcached.MemcachedSessionLocator;
import net.rubyeye.xmemcached.impl.KetamaMemcachedSessionLocator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A watched ring ({@link XmemcachedRing#watch}) under a client that keeps its sessions: a file published
 * again serves the next lookups, each generation placing keys as xmemcached's
 * {@code KetamaMemcachedSessionLocator} over that generation's servers does (sessions compared by
 * address: the stock locator takes a server's weight from its session).
 */
class WatchedRingTest {
    static final int KEYS = 20_000;

    @TempDir
    Path dir;

    @Test
    void republishedFilesServeTheNextLookups() throws Exception {
        List<Server> servers = new ArrayList<>();
        int w = 1;
        for (Server s : Fixtures.randomServers(new SplittableRandom(9), 4)) {
            servers.add(s.weight(w++));
        }
        List<Session> sessions = Fixtures.list(Fixtures.sessions(servers));
        Path file = Fixtures.ringFile(dir.resolve("cache.ring"), servers, "xmemcached", 1);
        try (XmemcachedRing ring = XmemcachedRing.watch(file)) {
            MemcachedSessionLocator ours = ring.locator();
            ours.updateSessions(sessions);
            assertSameServers(ours, servers, 1);

            // Generation 2: the first server's weight 1 → 5.
            List<Server> second = new ArrayList<>(servers);
            second.set(0, servers.get(0).weight(5));
            Fixtures.ringFile(file, second, "xmemcached", 2);
            MemcachedParityTest.awaitGeneration(ring, 2);
            assertSameServers(ours, second, 2);

            // Generation 3: the third server removed (the client keeps its session, which no key reaches).
            List<Server> third = new ArrayList<>(second);
            third.remove(2);
            Fixtures.ringFile(file, third, "xmemcached", 3);
            MemcachedParityTest.awaitGeneration(ring, 3);
            assertSameServers(ours, third, 3);

            // Generation 4: a server the client has no session for: its keys go on by nextHash to one it has;
            // every other key stays where the stock locator over the five servers puts it.
            List<Server> fourth = new ArrayList<>(third);
            fourth.add(new Server("10.200.0.5", 11211).weight(3));
            Fixtures.ringFile(file, fourth, "xmemcached", 4);
            MemcachedParityTest.awaitGeneration(ring, 4);
            List<Session> all = Fixtures.list(Fixtures.sessions(fourth));
            KetamaMemcachedSessionLocator theirs = new KetamaMemcachedSessionLocator();
            theirs.updateSessions(all);
            int movedOn = 0;
            for (String k : Fixtures.keys(4, KEYS)) {
                Session expected = theirs.getSessionByKey(k);
                Session got = ours.getSessionByKey(k);
                assertTrue(got != null && !got.getRemoteSocketAddress().equals(all.get(3).getRemoteSocketAddress()), k);
                if (expected == all.get(3)) {
                    movedOn++;
                } else {
                    assertEquals(expected.getRemoteSocketAddress(), got.getRemoteSocketAddress(), k);
                }
            }
            System.out.println("generation 4: " + movedOn + " keys of the server without a session went on by nextHash");
            assertTrue(movedOn > KEYS / 10, "the added server (3 of 12 weight) had keys: " + movedOn);
        }
    }

    /** Every key's server from {@code ours} is the one the stock locator over {@code servers}' sessions picks. */
    private static void assertSameServers(MemcachedSessionLocator ours, List<Server> servers, long seed) {
        KetamaMemcachedSessionLocator theirs = new KetamaMemcachedSessionLocator();
        theirs.updateSessions(Fixtures.list(Fixtures.sessions(servers)));
        for (String k : Fixtures.keys(seed, KEYS)) {
            assertEquals(theirs.getSessionByKey(k).getRemoteSocketAddress(), ours.getSessionByKey(k).getRemoteSocketAddress(),
                    k + ", generation " + seed);
        }
    }
}
