package com.example.spymemcached;

import io.ringstore.Backend;
import io.ringstore.Ring;
import io.ringstore.RingFileException;
import io.ringstore.RingStore;
import io.ringstore.family.Families;
import io.ringstore.family.RingVersion;
import io.ringstore.live.RingRouter;
import net.spy.memcached.ConnectionFactory;
import net.spy.memcached.MemcachedNode;
import net.spy.memcached.NodeLocator;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * A ringstore ring file as spymemcached's key placement: the file's {@code spymemcached},
 * {@code spymemcached:K} or {@code spymemcached-weighted} ring, which places every key as spymemcached's
 * own {@code KetamaNodeLocator} with {@code DefaultHashAlgorithm.KETAMA_HASH} does over the same servers
 * (with {@code :K}, a {@code KetamaNodeLocatorConfiguration} of K node repetitions; weighted, its weights
 * map), given to the client as its {@link NodeLocator} ({@link RingNodeLocator}).
 *
 * <pre>{@code
 * try (SpymemcachedRing ring = SpymemcachedRing.watch(Path.of("/etc/ringstore/cache.ring"))) {
 *     MemcachedClient client = new MemcachedClient(
 *             ring.connectionFactory(new ConnectionFactoryBuilder().setDaemon(true).build()),
 *             ring.addresses());
 *     ...
 *     client.shutdown();
 * }
 * }</pre>
 *
 * <p>{@link #open} maps the file as it is; {@link #watch} follows the path ({@link RingRouter}): a file
 * published there again (a weight changed, a server added or removed) serves the client's next operations, without a new client. A client connects only to the
 * servers it was created with: keys that a new file gives to a server the client has no node for go
 * on along spymemcached's failover sequence (logged once per file); create a new client to add servers.
 *
 * <p>Close it after the clients using it are shut down: their operations then fail. Thread-safe.
 */
public final class SpymemcachedRing implements AutoCloseable {
    private final Path path;
    private final RingVersion version;
    /** The file as opened ({@link #open}); null when watched. */
    private final RingStore store;
    private final Ring fixed;
    /** The router following the path ({@link #watch}); null when fixed. */
    private final RingRouter router;
    private final RingRouter.Route route;

    private SpymemcachedRing(Path path, RingVersion version, RingStore store, RingRouter router) {
        this.path = path;
        this.version = version;
        this.store = store;
        this.fixed = store == null ? null : store.ring(Set.of(), version);
        this.router = router;
        this.route = router == null ? null : router.route(Set.of());
    }

    /**
     * Maps the ring file at {@code file} and checks it completely ({@link RingStore#verify()}); the file
     * is not looked at again.
     *
     * @param file a ring file with a spymemcached version
     * @return its ring
     * @throws RingFileException        when the file cannot be read or is damaged
     * @throws IllegalArgumentException when it has no spymemcached version
     */
    public static SpymemcachedRing open(Path file) throws RingFileException {
        RingStore s = RingStore.open(file);
        try {
            s.verify();
            return new SpymemcachedRing(file, spymemcachedVersion(s), s, null);
        } catch (RingFileException | RuntimeException e) {
            s.close();
            throw e;
        }
    }

    /**
     * Follows the ring file at {@code file}: each file published there (by rename) that verifies and
     * still has the same spymemcached version serves from then on ({@link RingRouter}'s rules: a
     * damaged file or one of a lower generation is refused and logged).
     *
     * @param file a ring file with a spymemcached version
     * @return its ring, following the path
     * @throws RingFileException        when the file there now cannot be read or is damaged
     * @throws IllegalArgumentException when it has no spymemcached version
     */
    public static SpymemcachedRing watch(Path file) throws RingFileException {
        RingVersion v;
        try (RingStore s = RingStore.open(file)) {
            v = spymemcachedVersion(s);
        }
        RingRouter r = RingRouter.builder(file).versions(v, v).open();
        try {
            return new SpymemcachedRing(file, v, null, r);
        } catch (RuntimeException e) {
            r.close();
            throw e;
        }
    }

    /** The file's first spymemcached version: the family whose ring equals {@code KetamaNodeLocator}'s. */
    private static RingVersion spymemcachedVersion(RingStore s) {
        for (RingVersion v : s.versions()) {
            if (v.family() == Families.SPYMEMCACHED || v.family() == Families.SPYMEMCACHED_WEIGHTED) {
                return v;
            }
        }
        throw new IllegalArgumentException(s.path() + ": no spymemcached ring (the file has " + s.versions()
                + "): build it with --algorithm spymemcached, spymemcached:K or spymemcached-weighted");
    }

    /** {@return the ring file's path} */
    public Path path() {
        return path;
    }

    /** {@return the version whose ring places the keys: {@code spymemcached}, {@code spymemcached:K} or {@code spymemcached-weighted}} */
    public RingVersion version() {
        return version;
    }

    /** {@return whether the path is followed ({@link #watch}) rather than mapped once ({@link #open})} */
    public boolean watched() {
        return router != null;
    }

    /**
     * The servers of the ring file serving now, in file order, as addresses to create the client with:
     * resolved from the IP in the file, without DNS, and carrying the backend's
     * {@code # ringstore: name=HOST} as the host name. spymemcached hashes
     * {@code String.valueOf(address)}, {@code 10.0.0.1:11211} or {@code HOST/10.0.0.1:11211}, which is
     * what the ring hashed; a client created from these addresses is the ring's match exactly.
     *
     * @return the addresses, one per backend of the file (a {@code down} one included)
     */
    public List<InetSocketAddress> addresses() {
        List<InetSocketAddress> out = new ArrayList<>();
        for (Backend b : ring().store().backends()) {
            out.add(address(b, true));
        }
        return out;
    }

    /**
     * {@return spymemcached's locator over {@code nodes}, placing keys by this ring}
     *
     * @param nodes the client's nodes
     * @throws IllegalArgumentException when the nodes and the ring's servers differ ({@link RingNodeLocator})
     */
    public NodeLocator locator(List<MemcachedNode> nodes) {
        return new RingNodeLocator(this, nodes);
    }

    /**
     * {@return a connection factory with {@code base}'s settings and this ring as its locator} For
     * {@code new MemcachedClient(ring.connectionFactory(base), ring.addresses())}.
     *
     * @param base the settings, for example {@code new ConnectionFactoryBuilder().setProtocol(Protocol.BINARY).build()}
     */
    public ConnectionFactory connectionFactory(ConnectionFactory base) {
        return new LocatorConnectionFactory(base, this::locator);
    }

    /** The ring serving now. */
    Ring ring() {
        return route != null ? route.oldRing() : fixed;
    }

    /**
     * Whether {@code r}, on which a lookup just threw {@link IllegalStateException}, is of a generation
     * replaced since (unmapped after its grace period): the lookup is then made again on {@link #ring()}.
     */
    boolean replaced(Ring r) {
        return route != null && ring().store() != r.store();
    }

    /**
     * {@code backend}'s address as spymemcached's node has it: its IP and port (the family's answer,
     * {@code ip:port}, port 11211 when the file gives none), with its name as the host name when
     * {@code named}. Equal to the node's address in either case ({@code InetSocketAddress} compares IP
     * and port only).
     */
    InetSocketAddress address(Backend backend, boolean named) {
        String endpoint = backend.answer(version.family());
        int colon = endpoint.lastIndexOf(':');
        String ip = endpoint.startsWith("[") ? endpoint.substring(1, colon - 1) : endpoint.substring(0, colon);
        byte[] bytes = InetAddress.ofLiteral(ip).getAddress();
        try {
            return new InetSocketAddress(InetAddress.getByAddress(named ? backend.name() : null, bytes),
                    Integer.parseInt(endpoint.substring(colon + 1)));
        } catch (UnknownHostException e) {
            throw new IllegalStateException("an address of 4 or 16 bytes is always accepted", e);
        }
    }

    /** Unmaps the file (and stops following the path): the locators over it then fail every lookup. */
    @Override
    public void close() {
        if (router != null) {
            route.close();
            router.close();
        } else {
            store.close();
        }
    }

    @Override
    public String toString() {
        return "SpymemcachedRing(" + path + " " + version + (watched() ? ", watched" : "") + ")";
    }
}
