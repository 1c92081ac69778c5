package com.example.xmemcached;

import com.google.code.yanf4j.core.Session;
import io.ringstore.Backend;
import io.ringstore.Ring;
import io.ringstore.RingStore;
import io.ringstore.family.Failover;
import io.ringstore.family.Families;
import net.rubyeye.xmemcached.MemcachedSessionLocator;
import net.rubyeye.xmemcached.networking.MemcachedSession;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * xmemcached's {@link MemcachedSessionLocator} answered from a ringstore ring ({@link XmemcachedRing}):
 * the ring's servers are the client's sessions, matched by remote address (IP and port).
 *
 * <ul>
 *   <li>{@link #getSessionByKey}: the session of the ring's backend for the key's UTF-8 bytes, as
 *       {@code KetamaMemcachedSessionLocator.getSessionByKey} (MD5 of the key, the first point at or
 *       after it, a tie already settled in the file as xmemcached settles it). When that server has no
 *       open session and the failure mode is off, xmemcached's {@code nextHash} sequence: the key hashed
 *       again with the try number, one try a server ({@link Failover#rehash} of
 *       {@link Families#XMEMCACHED}); when no try finds one, the last session found (closed); when no
 *       try found a server with a session at all (a later file's server the client was not created
 *       with), the first session clockwise along the ring; null when no server has one.</li>
 *   <li>{@link #updateSessions}: the client's sessions now (xmemcached calls it on every connect and
 *       disconnect); the ring stays.</li>
 *   <li>{@link #setFailureMode}: with it on, a closed session is answered as xmemcached's does.</li>
 * </ul>
 *
 * <p><b>The sessions should be the ring's servers, hashed by the same texts.</b> xmemcached's own
 * locator hashes a session by the text it recorded at its first connect,
 * {@code String.valueOf(remoteSocketAddress)}; with its default {@code resolveInetAddresses} that text
 * carries the server's reverse-DNS name even for a server given by IP ({@code localhost/127.0.0.1:11211}),
 * so the ring file needs {@code # ringstore: name=localhost} for it. When a session's text and its
 * backend's differ, or a server has no backend, a warning says which (once per set of sessions): the
 * keys still go where the file says, but a stock xmemcached client would place them elsewhere.
 *
 * <p>Unlike {@code KetamaMemcachedSessionLocator}, which rebuilds its ring without a server whose
 * connection dropped, this one keeps the file's ring: the keys of a server without a session go on along
 * the failover sequence until a file without it (or with it marked {@code down}) is published.
 *
 * <p>Thread-safe; a lookup reads the ring serving at its start and answers from that one.
 */
public final class RingSessionLocator implements MemcachedSessionLocator {
    private static final System.Logger LOG = System.getLogger(RingSessionLocator.class.getName());
    /** xmemcached's {@code nextHash}: one try a server. */
    private static final Failover SEQUENCE = Families.XMEMCACHED.failover();

    private final XmemcachedRing ring;
    private volatile boolean failureMode;
    /** The client's sessions by remote address, as last given. */
    private volatile Map<InetSocketAddress, List<Session>> sessions = Map.of();
    /** The sessions of the backends of the generation last used; rebuilt on the first lookup after a switch or an update. */
    private volatile Placement placement;

    RingSessionLocator(XmemcachedRing ring) {
        this.ring = Objects.requireNonNull(ring, "ring");
    }

    /** One generation's backends as sessions (an empty list: a backend without a session), for one set of sessions. */
    private record Placement(RingStore store, Map<InetSocketAddress, List<Session>> sessions, List<List<Session>> byBackend) {
    }

    /**
     * {@return the session for {@code key}, or null when the ring is empty or no server has a session}
     *
     * @throws IllegalStateException after {@link XmemcachedRing#close()}
     */
    @Override
    public Session getSessionByKey(String key) {
        byte[] bytes = key.getBytes(StandardCharsets.UTF_8);
        for (;;) {
            Ring r = ring.ring();
            try {
                return session(r, bytes);
            } catch (IllegalStateException e) {
                if (!ring.replaced(r)) {
                    throw e;
                }
            }
        }
    }

    private Session session(Ring r, byte[] key) {
        if (r.isEmpty()) {
            return null;
        }
        Placement p = placement(r);
        int first = (int) r.hash(key);
        Session s = open(p, r.lookupHash(Integer.toUnsignedLong(first)));
        if (failureMode || (s != null && !s.isClosed())) {
            return s;
        }
        int tries = SEQUENCE.lookups(p.byBackend().size());
        int h = first;
        for (int attempt = 1; attempt < tries; attempt++) {
            h = SEQUENCE.rehash(h, key, 0, key.length, attempt);
            Session next = open(p, r.lookupHash(Integer.toUnsignedLong(h)));
            if (next != null && !next.isClosed()) {
                return next;
            }
            s = next != null ? next : s;
        }
        return s != null ? s : clockwise(r, p, first);
    }

    /**
     * The session of the first point clockwise from {@code hash} whose server has one (an open one
     * first): for a key whose every try lands on servers without a session (a later file's server the
     * client was not created with); null when no server has one.
     */
    private static Session clockwise(Ring r, Placement p, int hash) {
        int start = r.pointIndex(Integer.toUnsignedLong(hash));
        Session closed = null;
        for (int i = 0; i < r.pointCount(); i++) {
            Session s = open(p, r.pointBackend((start + i) % r.pointCount()));
            if (s != null && !s.isClosed()) {
                return s;
            }
            closed = closed != null ? closed : s;
        }
        return closed;
    }

    /** An open session of backend {@code b}, else one of its closed ones, else null. */
    private static Session open(Placement p, int b) {
        if (b < 0) {
            return null;
        }
        List<Session> of = p.byBackend().get(b);
        for (Session s : of) {
            if (!s.isClosed()) {
                return s;
            }
        }
        return of.isEmpty() ? null : of.getFirst();
    }

    /** The placement of {@code r}'s generation for the current sessions: built once per generation and set of sessions, its problems logged then. */
    private Placement placement(Ring r) {
        Placement p = placement;
        Map<InetSocketAddress, List<Session>> now = sessions;
        if (p == null || p.store() != r.store() || p.sessions() != now) {
            p = placementOf(r, now);
            placement = p;
        }
        return p;
    }

    private Placement placementOf(Ring r, Map<InetSocketAddress, List<Session>> now) {
        List<String> problems = new ArrayList<>();
        List<Backend> backends = r.store().backends();
        List<List<Session>> byBackend = new ArrayList<>();
        Map<InetSocketAddress, List<Session>> unplaced = new HashMap<>(now);
        for (Backend b : backends) {
            List<Session> of = unplaced.remove(ring.address(b, false));
            byBackend.add(of == null ? List.of() : of);
            if (of != null) {
                String ours = ring.sessionText(b);
                for (Session s : of) {
                    String theirs = sessionText(s);
                    if (!ours.equals(theirs)) {
                        problems.add("xmemcached hashes the session of " + b.address() + " as " + theirs + ", the ring as " + ours
                                + (b.name() == null && theirs.indexOf('/') > 0 ? " (add # ringstore: name=" + theirs.substring(0, theirs.indexOf('/')) + ")" : ""));
                    }
                }
            }
        }
        for (InetSocketAddress a : unplaced.keySet()) {
            problems.add("the session of " + a + " is not a server of the ring");
        }
        if (!problems.isEmpty()) {
            LOG.log(System.Logger.Level.WARNING, ring.path() + " (generation " + Long.toUnsignedString(r.store().generation())
                    + ") and the client's sessions differ: " + String.join("; ", problems));
        }
        return new Placement(r.store(), now, List.copyOf(byBackend));
    }

    /** The text xmemcached's {@code KetamaMemcachedSessionLocator} hashes for {@code s} in the ring's family. */
    private String sessionText(Session s) {
        InetSocketAddress a = s.getRemoteSocketAddress();
        if (ring.version().family() == Families.XMEMCACHED_NGINX) {
            String ip = a.getAddress().getHostAddress();
            return a.getPort() == 11211 ? ip : ip + ":" + a.getPort();
        }
        if (s instanceof MemcachedSession m && m.getInetSocketAddressWrapper() != null
                && m.getInetSocketAddressWrapper().getRemoteAddressStr() != null) {
            return m.getInetSocketAddressWrapper().getRemoteAddressStr();
        }
        return String.valueOf(a);
    }

    /**
     * Uses {@code list} from now on (xmemcached's open sessions); the ring stays.
     *
     * @param list the client's sessions
     */
    @Override
    public void updateSessions(Collection<Session> list) {
        Map<InetSocketAddress, List<Session>> byAddress = new HashMap<>();
        for (Session s : list) {
            byAddress.computeIfAbsent(s.getRemoteSocketAddress(), a -> new ArrayList<>()).add(s);
        }
        sessions = byAddress;
    }

    /** With {@code failureMode}, a closed session is answered, as xmemcached's own locators do. */
    @Override
    public void setFailureMode(boolean failureMode) {
        this.failureMode = failureMode;
    }

    @Override
    public String toString() {
        return "RingSessionLocator(" + ring + ", " + sessions.size() + " servers with sessions)";
    }
}
