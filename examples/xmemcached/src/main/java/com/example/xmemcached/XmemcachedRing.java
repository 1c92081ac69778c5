package com.example.xmemcached;

import io.ringstore.Backend;
import io.ringstore.Ring;
import io.ringstore.RingFileException;
import io.ringstore.RingStore;
import io.ringstore.family.Families;
import io.ringstore.family.RingVersion;
import io.ringstore.live.RingRouter;
import net.rubyeye.xmemcached.MemcachedSessionLocator;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * A ringstore ring file as xmemcached's key placement: the file's {@code xmemcached} or
 * {@code xmemcached-nginx} ring, which places every key as xmemcached's own
 * {@code KetamaMemcachedSessionLocator} with {@code HashAlgorithm.KETAMA_HASH} does over the same servers
 * (the default locator, or {@code new KetamaMemcachedSessionLocator(true)}: {@code cwNginxUpstreamConsistent}),
 * given to the client as its {@link MemcachedSessionLocator} ({@link RingSessionLocator}).
 *
 * <pre>{@code
 * try (XmemcachedRing ring = XmemcachedRing.watch(Path.of("/etc/ringstore/cache.ring"))) {
 *     XMemcachedClientBuilder builder = new XMemcachedClientBuilder(ring.addresses(), ring.weights());
 *     builder.setSessionLocator(ring.locator());
 *     MemcachedClient client = builder.build();
 *     ...
 *     client.shutdown();
 * }
 * }</pre>
 *
 * <p>{@link #open} maps the file as it is; {@link #watch} follows the path ({@link RingRouter}): a file
 * published there again (a weight changed, a server added, removed or marked {@code down}) serves the
 * client's next operations, without a new client. A client connects only to the servers it was created
 * with: keys that a new file gives to a server the client has no session for go on along xmemcached's
 * failover sequence; create a new client to add servers.
 *
 * <p>Close it after the clients using it are shut down: their operations then fail. Thread-safe.
 */
public final class XmemcachedRing implements AutoCloseable {
    private final Path path;
    private final RingVersion version;
    /** The file as opened ({@link #open}); null when watched. */
    private final RingStore store;
    private final Ring fixed;
    /** The router following the path ({@link #watch}); null when fixed. */
    private final RingRouter router;
    private final RingRouter.Route route;

    private XmemcachedRing(Path path, RingVersion version, RingStore store, RingRouter router) {
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
     * @param file a ring file with an xmemcached version
     * @return its ring
     * @throws RingFileException        when the file cannot be read or is damaged
     * @throws IllegalArgumentException when it has no xmemcached version
     */
    public static XmemcachedRing open(Path file) throws RingFileException {
        RingStore s = RingStore.open(file);
        try {
            s.verify();
            return new XmemcachedRing(file, xmemcachedVersion(s), s, null);
        } catch (RingFileException | RuntimeException e) {
            s.close();
            throw e;
        }
    }

    /**
     * Follows the ring file at {@code file}: each file published there (by rename) that verifies and
     * still has the same xmemcached version serves from then on ({@link RingRouter}'s rules: a damaged
     * file or one of a lower generation is refused and logged).
     *
     * @param file a ring file with an xmemcached version
     * @return its ring, following the path
     * @throws RingFileException        when the file there now cannot be read or is damaged
     * @throws IllegalArgumentException when it has no xmemcached version
     */
    public static XmemcachedRing watch(Path file) throws RingFileException {
        RingVersion v;
        try (RingStore s = RingStore.open(file)) {
            v = xmemcachedVersion(s);
        }
        RingRouter r = RingRouter.builder(file).versions(v, v).open();
        try {
            return new XmemcachedRing(file, v, null, r);
        } catch (RuntimeException e) {
            r.close();
            throw e;
        }
    }

    /** The file's first xmemcached version: the family whose ring equals {@code KetamaMemcachedSessionLocator}'s. */
    private static RingVersion xmemcachedVersion(RingStore s) {
        for (RingVersion v : s.versions()) {
            if (v.family() == Families.XMEMCACHED || v.family() == Families.XMEMCACHED_NGINX) {
                return v;
            }
        }
        throw new IllegalArgumentException(s.path() + ": no xmemcached ring (the file has " + s.versions()
                + "): build it with --algorithm xmemcached or xmemcached-nginx");
    }

    /** {@return the ring file's path} */
    public Path path() {
        return path;
    }

    /** {@return the version whose ring places the keys: {@code xmemcached} or {@code xmemcached-nginx}} */
    public RingVersion version() {
        return version;
    }

    /** {@return whether the path is followed ({@link #watch}) rather than mapped once ({@link #open})} */
    public boolean watched() {
        return router != null;
    }

    /**
     * The servers of the ring file serving now, in file order, as addresses to create the client with:
     * resolved from the IP in the file, without DNS, carrying the backend's {@code # ringstore: name=HOST}
     * as the host name.
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

    /** {@return the weights of {@link #addresses()}, in the same order, for {@code new XMemcachedClientBuilder(addresses, weights)}} */
    public int[] weights() {
        List<Backend> backends = ring().store().backends();
        int[] out = new int[backends.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = Math.toIntExact(backends.get(i).weight());
        }
        return out;
    }

    /** {@return a session locator placing keys by this ring, for {@code XMemcachedClientBuilder.setSessionLocator}} */
    public RingSessionLocator locator() {
        return new RingSessionLocator(this);
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
     * {@code backend}'s address: its IP and port (the family's answer, {@code ip:port}, port 11211 when the
     * file gives none), with its name as the host name when {@code named}. Equal to a session's remote
     * address either way ({@code InetSocketAddress} compares IP and port only).
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

    /**
     * The text xmemcached hashes for {@code backend}'s session in this ring's family, as the ring hashed
     * it: {@code String.valueOf(InetSocketAddress)}, {@code /10.0.0.1:11211} or
     * {@code localhost/127.0.0.1:11211} with a name ({@code xmemcached}); the IP as
     * {@code getHostAddress()} prints it, then {@code :port} unless 11211 ({@code xmemcached-nginx}).
     */
    String sessionText(Backend backend) {
        InetSocketAddress a = address(backend, true);
        if (version.family() == Families.XMEMCACHED_NGINX) {
            String ip = a.getAddress().getHostAddress();
            return a.getPort() == 11211 ? ip : ip + ":" + a.getPort();
        }
        return String.valueOf(a);
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
        return "XmemcachedRing(" + path + " " + version + (watched() ? ", watched" : "") + ")";
    }
}
