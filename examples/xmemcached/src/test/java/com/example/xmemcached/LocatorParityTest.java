package com.example.xmemcached;

import com.example.xmemcached.Fixtures.Server;
import com.example.xmemcached.Fixtures.StandIn;
import com.google.code.yanf4j.core.Session;
import net.rubyeye.xmemcached.MemcachedSessionLocator;
import net.rubyeye.xmemcached.impl.KetamaMemcachedSessionLocator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * ringstore's locator against xmemcached 2.4.8's own {@code KetamaMemcachedSessionLocator} over the same
 * sessions (stand-ins: a locator asks a session only its address, weight, recorded text and whether it
 * is closed), without memcached: {@value #KEYS} keys a fleet, the same session for each.
 */
class LocatorParityTest {
    static final int KEYS = 100_000;

    @TempDir
    Path dir;

    /** 8 servers, two known by a host name, one IPv6, weights 1 to 5: {@code xmemcached} against the default locator. */
    @Test
    void xmemcachedAsTheDefaultKetamaLocator() throws Exception {
        List<Server> servers = new ArrayList<>(Fixtures.randomServers(new SplittableRandom(1), 6));
        servers.set(1, servers.get(1).named("cache1.example.com"));
        servers.set(3, servers.get(3).named("localhost").weight(3));
        servers.set(4, servers.get(4).weight(5));
        servers.add(new Server("2001:db8::a", 11211).weight(2));
        servers.add(new Server("10.200.0.9", 11300).weight(4));
        assertSameSessions(servers, "xmemcached", new KetamaMemcachedSessionLocator());
    }

    /** 21 servers of random weights: the ties xmemcached settles by the point's hash are the file's. */
    @Test
    void twentyOneWeightedServers() throws Exception {
        SplittableRandom random = new SplittableRandom(21);
        List<Server> servers = new ArrayList<>();
        for (Server s : Fixtures.randomServers(random, 21)) {
            servers.add(s.weight(1 + random.nextInt(10)));
        }
        assertSameSessions(servers, "xmemcached", new KetamaMemcachedSessionLocator());
    }

    /** {@code xmemcached-nginx} against {@code new KetamaMemcachedSessionLocator(true)}: ports 11211 and others, one IPv6. */
    @Test
    void nginxCompatibleAsCwNginxUpstreamConsistent() throws Exception {
        List<Server> servers = new ArrayList<>(Fixtures.randomServers(new SplittableRandom(2), 7));
        servers.add(new Server("2001:db8::b", 11212));
        assertSameSessions(servers, "xmemcached-nginx", new KetamaMemcachedSessionLocator(true));
    }

    /** Closed sessions: the lookup goes on by xmemcached's {@code nextHash}, one try a server, as the stock locator's; with the failure mode, the closed one. */
    @Test
    void closedSessionsFailOverAsXmemcachedDoes() throws Exception {
        List<Server> servers = Fixtures.randomServers(new SplittableRandom(3), 5);
        Path file = Fixtures.ringFile(dir.resolve("closed.ring"), servers, "xmemcached", 1);
        List<StandIn> standIns = Fixtures.sessions(servers);
        List<Session> sessions = Fixtures.list(standIns);
        try (XmemcachedRing ring = XmemcachedRing.open(file)) {
            for (boolean failureMode : new boolean[] {false, true}) {
                MemcachedSessionLocator ours = ring.locator();
                KetamaMemcachedSessionLocator theirs = new KetamaMemcachedSessionLocator();
                for (MemcachedSessionLocator l : List.of(ours, theirs)) {
                    l.updateSessions(sessions);
                    l.setFailureMode(failureMode);
                }
                standIns.get(1).closed().set(true);
                standIns.get(3).closed().set(true);
                int movedOn = 0;
                for (String k : Fixtures.keys(4, KEYS)) {
                    Session expected = theirs.getSessionByKey(k);
                    assertSame(expected, ours.getSessionByKey(k), k + (failureMode ? ", failure mode" : ""));
                    if (!failureMode && isClosedOwner(ring, k) && !expected.isClosed()) {
                        movedOn++; // (2/5)^6 of them find no open session in the 6 lookups, as xmemcached's
                    }
                }
                if (!failureMode) {
                    System.out.println("closed sessions: " + movedOn + " of " + KEYS + " keys went on by nextHash");
                    assertTrue(movedOn > KEYS / 10, "keys of the two closed servers went on: " + movedOn);
                }
                standIns.forEach(s -> s.closed().set(false));
            }
        }
    }

    /** Whether {@code k}'s first lookup lands on session 1 or 3 (the closed ones). */
    private static boolean isClosedOwner(XmemcachedRing ring, String k) {
        int b = ring.ring().lookup(k.getBytes(StandardCharsets.UTF_8));
        return b == 1 || b == 3;
    }

    /**
     * xmemcached hashes a session by the text recorded at its first connect, which for a server given by
     * IP carries its reverse-DNS name ({@code localhost/127.0.0.1:11211}): a ring with
     * {@code name=localhost} places every key as the stock locator; the same servers without the name
     * place most keys elsewhere.
     */
    @Test
    void theReverseDnsNameIsPartOfTheHashedText() throws Exception {
        List<Server> named = new ArrayList<>();
        for (int port = 11211; port < 11215; port++) {
            named.add(new Server("127.0.0.1", port).named("localhost"));
        }
        List<Session> sessions = Fixtures.list(Fixtures.sessions(named));
        KetamaMemcachedSessionLocator theirs = new KetamaMemcachedSessionLocator();
        theirs.updateSessions(sessions);
        try (XmemcachedRing ring = XmemcachedRing.open(Fixtures.ringFile(dir.resolve("named.ring"), named, "xmemcached", 1))) {
            MemcachedSessionLocator ours = ring.locator();
            ours.updateSessions(sessions);
            assertSameAnswers(ours, theirs, 8);
        }
        List<Server> unnamed = named.stream().map(s -> new Server(s.ip(), s.port())).toList();
        try (XmemcachedRing ring = XmemcachedRing.open(Fixtures.ringFile(dir.resolve("unnamed.ring"), unnamed, "xmemcached", 1))) {
            MemcachedSessionLocator ours = ring.locator();
            ours.updateSessions(sessions);
            int differ = 0;
            for (String k : Fixtures.keys(8, KEYS)) {
                differ += theirs.getSessionByKey(k) != ours.getSessionByKey(k) ? 1 : 0;
            }
            System.out.println("without name=localhost: " + differ + " of " + KEYS + " keys on another server");
            assertTrue(differ > KEYS / 2, "the name moves most keys: " + differ);
        }
    }

    /** No session at all: null, as xmemcached's; an empty ring's file answers null too. */
    @Test
    void withoutSessionsNull() throws Exception {
        List<Server> servers = Fixtures.randomServers(new SplittableRandom(5), 3);
        try (XmemcachedRing ring = XmemcachedRing.open(Fixtures.ringFile(dir.resolve("none.ring"), servers, "xmemcached", 1))) {
            MemcachedSessionLocator ours = ring.locator();
            ours.updateSessions(List.of());
            assertNull(ours.getSessionByKey("k"));
        }
    }

    private void assertSameSessions(List<Server> servers, String version, MemcachedSessionLocator theirs) throws Exception {
        Path file = Fixtures.ringFile(dir.resolve(version + "-" + servers.size() + ".ring"), servers, version, 1);
        List<Session> sessions = Fixtures.list(Fixtures.sessions(servers));
        try (XmemcachedRing ring = XmemcachedRing.open(file)) {
            MemcachedSessionLocator ours = ring.locator();
            ours.updateSessions(sessions);
            theirs.updateSessions(sessions);
            assertSameAnswers(ours, theirs, 7);
        }
    }

    /** {@value #KEYS} seeded keys: each the same session from both locators; every session gets some. */
    static void assertSameAnswers(MemcachedSessionLocator ours, MemcachedSessionLocator theirs, long seed) {
        Map<Session, Integer> counts = new HashMap<>();
        for (String k : Fixtures.keys(seed, KEYS)) {
            Session expected = theirs.getSessionByKey(k);
            assertSame(expected, ours.getSessionByKey(k), k);
            counts.merge(expected, 1, Integer::sum);
        }
        System.out.println(KEYS + " keys, the same session from both locators; keys per session " + counts.values());
        assertTrue(counts.size() > 1, "keys spread over sessions: " + counts);
    }
}
