package com.example.spymemcached;

import io.ringstore.Backend;
import io.ringstore.Ring;
import io.ringstore.RingStore;
import io.ringstore.family.Failover;
import io.ringstore.family.Families;
import net.spy.memcached.MemcachedNode;
import net.spy.memcached.MemcachedNodeROImpl;
import net.spy.memcached.NodeLocator;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * spymemcached's {@link NodeLocator} answered from a ringstore ring ({@link SpymemcachedRing}): the
 * ring's servers are the client's {@link MemcachedNode}s, matched by socket address (IP and port).
 *
 * <ul>
 *   <li>{@link #getPrimary}: the ring's backend for the key's UTF-8 bytes, as
 *       {@code KetamaNodeLocator.getPrimary} (MD5 of the key, the first point at or after it).</li>
 *   <li>{@link #getSequence}: {@code KetamaIterator}'s sequence: seven lookups, the key's hash and then
 *       each time that hash plus the MD5 of the try number (from 0) and the key ({@link Failover#rehash}
 *       of {@link Families#SPYMEMCACHED}). Nodes, not distinct ones: the primary comes first and a
 *       node may come again, as spymemcached's own does.</li>
 *   <li>{@link #getAll}: the client's nodes; {@link #getReadonlyCopy}: the same ring over
 *       {@link MemcachedNodeROImpl} copies of them; {@link #updateLocator}: other nodes, the ring kept.</li>
 * </ul>
 *
 * <p><b>The nodes must be the ring's servers.</b> When the locator is made (and on
 * {@link #updateLocator}), the ring serving and the nodes must have the same addresses, each once, and
 * a node made from a host name ({@code cache1/10.0.0.1:11211}, which spymemcached hashes with the
 * name) must be a backend named so ({@code # ringstore: name=cache1}), a node made from an IP one
 * without a name; otherwise {@link IllegalArgumentException} says what differs. A later file of a
 * watched ring is not held to this (the client cannot change its nodes): it is logged once, and a key
 * that lands on a server without a node goes on along the sequence to the first that has one (or, when
 * none of the seven tries has one, clockwise along the ring).
 *
 * <p>Thread-safe; a lookup reads the ring serving at its start and answers from that one.
 */
public final class RingNodeLocator implements NodeLocator {
    private static final System.Logger LOG = System.getLogger(RingNodeLocator.class.getName());
    /** The rehash rule of {@code KetamaIterator}, which is the same for weighted and unweighted rings. */
    private static final Failover SEQUENCE = Families.SPYMEMCACHED.failover();

    private final SpymemcachedRing ring;
    private volatile Nodes nodes;
    /** The nodes of the backends of the generation last used; rebuilt on the first lookup after a switch. */
    private volatile Placement placement;

    RingNodeLocator(SpymemcachedRing ring, List<MemcachedNode> nodes) {
        this.ring = ring;
        setNodes(nodes);
    }

    private RingNodeLocator(SpymemcachedRing ring, Nodes nodes) {
        this.ring = ring;
        this.nodes = nodes;
    }

    /** The client's nodes by address, and as given. */
    private record Nodes(List<MemcachedNode> all, Map<InetSocketAddress, MemcachedNode> byAddress) {
        static Nodes of(List<MemcachedNode> nodes) {
            Map<InetSocketAddress, MemcachedNode> byAddress = new HashMap<>();
            for (MemcachedNode n : nodes) {
                if (byAddress.put(socketAddress(n), n) != null) {
                    throw new IllegalArgumentException("node " + n.getSocketAddress() + " is given twice: a ring has each server once");
                }
            }
            return new Nodes(List.copyOf(nodes), byAddress);
        }
    }

    /** One generation's backends as nodes (null: a backend without a node), and what differs from the nodes. */
    private record Placement(RingStore store, Nodes nodes, MemcachedNode[] byBackend, List<String> problems) {
    }

    private static InetSocketAddress socketAddress(MemcachedNode n) {
        SocketAddress a = n.getSocketAddress();
        if (!(a instanceof InetSocketAddress isa) || isa.isUnresolved()) {
            throw new IllegalArgumentException("node " + a + " has no resolved IP address: a ring places servers by IP and port");
        }
        return isa;
    }

    /** The host name of a node's address, as {@code String.valueOf} prints it before the slash; null when made from an IP. */
    private static String hostName(InetSocketAddress a) {
        String s = a.getAddress().toString();
        int slash = s.indexOf('/');
        return slash > 0 ? s.substring(0, slash) : null;
    }

    private void setNodes(List<MemcachedNode> list) {
        Nodes n = Nodes.of(list);
        Placement p = placementOf(ring.ring(), n);
        if (!p.problems().isEmpty()) {
            throw new IllegalArgumentException(describe(p) + "; build the ring file from the client's servers,"
                    + " or create the client with SpymemcachedRing.addresses()");
        }
        nodes = n;
        placement = p;
    }

    private String describe(Placement p) {
        return ring.path() + " (generation " + Long.toUnsignedString(p.store().generation()) + ") and the client's nodes differ: "
                + String.join("; ", p.problems());
    }

    private Placement placementOf(Ring r, Nodes n) {
        List<String> problems = new ArrayList<>();
        List<Backend> backends = r.store().backends();
        MemcachedNode[] byBackend = new MemcachedNode[backends.size()];
        Map<InetSocketAddress, MemcachedNode> unplaced = new HashMap<>(n.byAddress());
        for (Backend b : backends) {
            InetSocketAddress a = ring.address(b, false);
            MemcachedNode node = unplaced.remove(a);
            if (node == null) {
                problems.add("the ring's " + a.getAddress().getHostAddress() + ":" + a.getPort() + " has no node");
                continue;
            }
            byBackend[b.index()] = node;
            String host = hostName(socketAddress(node));
            if (host == null ? b.name() != null : !host.equals(b.name())) {
                problems.add("node " + node.getSocketAddress() + " is hashed by spymemcached "
                        + (host == null ? "without a name" : "with the name " + host) + ", the ring's backend "
                        + (b.name() == null ? "without one" : "with name=" + b.name()));
            }
        }
        for (InetSocketAddress a : unplaced.keySet()) {
            problems.add("node " + a + " is not in the ring");
        }
        return new Placement(r.store(), n, byBackend, List.copyOf(problems));
    }

    /** The placement of {@code r}'s generation for the current nodes: built once per generation, its problems logged then. */
    private Placement placement(Ring r) {
        Placement p = placement;
        Nodes n = nodes;
        if (p == null || p.store() != r.store() || p.nodes() != n) {
            p = placementOf(r, n);
            if (!p.problems().isEmpty()) {
                LOG.log(System.Logger.Level.WARNING, describe(p) + "; keys of servers without a node go on along the failover sequence");
            }
            placement = p;
        }
        return p;
    }

    /**
     * {@return the node of the ring's backend for {@code k}} When that backend has no node (a later file
     * of a watched ring), the first node of {@link #getSequence}; when none of its tries has one, the
     * node of the first point clockwise from the key's whose server has one.
     *
     * @throws IllegalStateException when the ring is empty or none of its servers has a node (a lookup
     *         racing a switch is made again on the new generation; a lookup after {@link SpymemcachedRing#close()} throws)
     */
    @Override
    public MemcachedNode getPrimary(String k) {
        byte[] key = k.getBytes(StandardCharsets.UTF_8);
        for (;;) {
            Ring r = ring.ring();
            try {
                return primary(r, key);
            } catch (IllegalStateException e) {
                if (!ring.replaced(r)) {
                    throw e;
                }
            }
        }
    }

    private MemcachedNode primary(Ring r, byte[] key) {
        int b = r.lookup(key);
        if (b < 0) {
            throw new IllegalStateException(ring.path() + " (generation " + Long.toUnsignedString(r.store().generation())
                    + ") has no server in its " + ring.version() + " ring");
        }
        Placement p = placement(r);
        MemcachedNode n = p.byBackend()[b];
        if (n != null) {
            return n;
        }
        List<MemcachedNode> sequence = sequence(r, p, key);
        if (!sequence.isEmpty()) {
            return sequence.getFirst();
        }
        // Every try on servers without a node: the first point clockwise from the key's whose server has one.
        MemcachedNode[] byBackend = p.byBackend();
        b = r.select(r.hash(key), r.pointCount(), i -> byBackend[i] != null);
        if (b < 0) {
            throw new IllegalStateException(describe(p) + "; no server of the ring has a node");
        }
        return byBackend[b];
    }

    /**
     * {@return {@code KetamaIterator}'s sequence for {@code k}: the nodes of its seven lookups, in order,
     * the primary first; a backend without a node (a later file of a watched ring) left out}
     * {@code remove} is not supported, as in spymemcached's.
     */
    @Override
    public Iterator<MemcachedNode> getSequence(String k) {
        byte[] key = k.getBytes(StandardCharsets.UTF_8);
        for (;;) {
            Ring r = ring.ring();
            try {
                return sequence(r, placement(r), key).iterator();
            } catch (IllegalStateException e) {
                if (!ring.replaced(r)) {
                    throw e;
                }
            }
        }
    }

    private static List<MemcachedNode> sequence(Ring r, Placement p, byte[] key) {
        int tries = SEQUENCE.lookups(p.byBackend().length);
        MemcachedNode[] out = new MemcachedNode[tries];
        int n = 0;
        int h = r.keyHash().hash(key, 0, key.length);
        for (int attempt = 0; attempt < tries; attempt++) {
            if (attempt > 0) {
                h = SEQUENCE.rehash(h, key, 0, key.length, attempt);
            }
            int b = r.lookupHash(h);
            if (b >= 0 && p.byBackend()[b] != null) {
                out[n++] = p.byBackend()[b];
            }
        }
        return Arrays.asList(out).subList(0, n);
    }

    /** {@return the client's nodes, as given} */
    @Override
    public Collection<MemcachedNode> getAll() {
        return nodes.all();
    }

    /** {@return a locator over the same ring whose nodes are read-only copies ({@link MemcachedNodeROImpl}) of these} */
    @Override
    public NodeLocator getReadonlyCopy() {
        List<MemcachedNode> copies = new ArrayList<>();
        for (MemcachedNode n : nodes.all()) {
            copies.add(new MemcachedNodeROImpl(n));
        }
        return new RingNodeLocator(ring, Nodes.of(copies)); // not checked again: the same addresses
    }

    /**
     * Uses {@code nodes} from now on; the ring stays. They are checked as the first ones were.
     *
     * @param nodes the client's new nodes
     * @throws IllegalArgumentException when they and the ring's servers differ
     */
    @Override
    public void updateLocator(List<MemcachedNode> nodes) {
        setNodes(nodes);
    }

    @Override
    public String toString() {
        return "RingNodeLocator(" + ring + ", " + nodes.all().size() + " nodes)";
    }
}
