package com.example.dubbo;

import io.ringstore.Backend;
import io.ringstore.Ring;
import io.ringstore.RingFileException;
import io.ringstore.RingStore;
import io.ringstore.family.Families;
import io.ringstore.family.RingVersion;
import io.ringstore.live.RingRouter;

import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A ringstore ring file as Dubbo's consistent hashing: the file's {@code dubbo} or {@code dubbo:K} ring,
 * whose points are the ones Dubbo's {@code ConsistentHashLoadBalance} makes for the same providers
 * ({@code host:port} and the digest number, K/4 MD5 digests a provider, {@code hash.nodes} = K), mapped
 * once for every consumer of the process rather than built into a {@code TreeMap} per invoker list.
 * {@link RingstoreLoadBalance} answers Dubbo's calls from it.
 *
 * <p>{@link #open} maps the file as it is; {@link #watch} follows the path ({@link RingRouter}): a file
 * published there again serves the next calls.
 *
 * <p><b>Each generation is checked against Dubbo's texts once</b> ({@link #generation}): for every
 * provider of the ring, the K/4 digests of {@code address + i} must give points of the ring, and the ring
 * no other points. The same pass finds the hashes that several providers produce (ties: the file keeps
 * one of them, the last listed, as Dubbo's {@code TreeMap} does), which the load balance needs to answer
 * as Dubbo would when the provider the file kept is not in the invoker list, or the list has another
 * order. That is K/4 MD5s a provider once per file, not per invoker list.
 *
 * <p>Thread-safe. Close it after the consumers using it are destroyed.
 */
public final class DubboRing implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(DubboRing.class.getName());
    /** Points a digest: Dubbo reads four little-endian words of each MD5. */
    private static final int POINTS_PER_DIGEST = 4;

    private final Path path;
    private final RingVersion version;
    /** The file as opened ({@link #open}); null when watched. */
    private final RingStore store;
    private final Ring fixed;
    /** The router following the path ({@link #watch}); null when fixed. */
    private final RingRouter router;
    private final RingRouter.Route route;
    /** The generation last indexed. */
    private volatile Generation generation;
    private final AtomicLong generationsIndexed = new AtomicLong();

    private DubboRing(Path path, RingVersion version, RingStore store, RingRouter router) {
        this.path = path;
        this.version = version;
        this.store = store;
        this.fixed = store == null ? null : store.ring(Set.of(), version);
        this.router = router;
        this.route = router == null ? null : router.route(Set.of());
    }

    /**
     * Maps the ring file at {@code file}, checks it completely ({@link RingStore#verify()}) and against
     * Dubbo's point texts; the file is not looked at again.
     *
     * @param file a ring file with a dubbo version
     * @return its ring
     * @throws RingFileException        when the file cannot be read or is damaged
     * @throws IllegalArgumentException when it has no dubbo version, or its points are not Dubbo's for its providers
     */
    public static DubboRing open(Path file) throws RingFileException {
        RingStore s = RingStore.open(file);
        try {
            s.verify();
            DubboRing ring = new DubboRing(file, dubboVersion(s), s, null);
            ring.requireDubboPoints();
            return ring;
        } catch (RingFileException | RuntimeException e) {
            s.close();
            throw e;
        }
    }

    /**
     * Follows the ring file at {@code file}: each file published there (by rename) that verifies and still
     * has the same dubbo version serves from then on ({@link RingRouter}'s rules: a damaged file or one of
     * a lower generation is refused and logged).
     *
     * @param file a ring file with a dubbo version
     * @return its ring, following the path
     * @throws RingFileException        when the file there now cannot be read or is damaged
     * @throws IllegalArgumentException when it has no dubbo version, or its points are not Dubbo's for its providers
     */
    public static DubboRing watch(Path file) throws RingFileException {
        RingVersion v;
        try (RingStore s = RingStore.open(file)) {
            v = dubboVersion(s);
        }
        RingRouter r = RingRouter.builder(file).versions(v, v).open();
        try {
            DubboRing ring = new DubboRing(file, v, null, r);
            ring.requireDubboPoints();
            return ring;
        } catch (RuntimeException e) {
            r.close();
            throw e;
        }
    }

    private static RingVersion dubboVersion(RingStore s) {
        for (RingVersion v : s.versions()) {
            if (v.family() == Families.DUBBO) {
                return v;
            }
        }
        throw new IllegalArgumentException(s.path() + ": no dubbo ring (the file has " + s.versions()
                + "): build it with --algorithm dubbo or dubbo:K");
    }

    private void requireDubboPoints() {
        Generation g = generation(ring());
        if (!g.problems().isEmpty()) {
            throw new IllegalArgumentException(describe(g));
        }
    }

    /** {@return the ring file's path} */
    public Path path() {
        return path;
    }

    /** {@return the version whose ring places the calls: {@code dubbo:K}} */
    public RingVersion version() {
        return version;
    }

    /** {@return K, the ring's points a provider: what the consumer's {@code hash.nodes} must be (up to whole digests)} */
    public int pointsPerProvider() {
        return version.pointMultiple();
    }

    /** {@return whether the path is followed ({@link #watch}) rather than mapped once ({@link #open})} */
    public boolean watched() {
        return router != null;
    }

    /** {@return how many generations were indexed ({@link #generation}): one per file served, however the invoker lists change} */
    public long generationsIndexed() {
        return generationsIndexed.get();
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
     * One generation of the file as Dubbo sees it: its providers by the address Dubbo hashes
     * ({@code invoker.getUrl().getAddress()}), and the hashes several of them produce.
     *
     * @param ring        the generation's ring
     * @param byAddress   backend index by Dubbo address ({@code 10.0.0.1:20880}, or {@code name:port}), the ring's members only
     * @param tieHashes   the hashes (as {@code int}s, sorted) that more than one provider produces
     * @param tieProducers for each of {@link #tieHashes}, the backends producing it, in file order
     * @param problems    where the file's points and Dubbo's texts differ (empty for a good file)
     */
    record Generation(Ring ring, Map<String, Integer> byAddress, int[] tieHashes, int[][] tieProducers, List<String> problems) {
        RingStore store() {
            return ring.store();
        }
    }

    /** The index of {@code r}'s generation: built once per generation, its problems logged then. */
    Generation generation(Ring r) {
        Generation g = generation;
        if (g != null && g.store() == r.store()) {
            return g;
        }
        synchronized (this) { // one index a generation, however many calls arrive with it
            g = generation;
            if (g == null || g.store() != r.store()) {
                g = index(r);
                if (!g.problems().isEmpty()) {
                    LOG.log(System.Logger.Level.WARNING, describe(g));
                }
                generationsIndexed.incrementAndGet();
                if (r.store() == ring().store()) { // a call still on a replaced generation keeps its index to itself
                    generation = g;
                }
            }
            return g;
        }
    }

    String describe(Generation g) {
        return path + " (generation " + Long.toUnsignedString(g.store().generation()) + ") is not Dubbo's "
                + version + " ring of its providers: " + String.join("; ", g.problems());
    }

    /**
     * {@code backend}'s address as Dubbo's invoker URL gives it ({@code URL.getAddress()}, what
     * {@code ConsistentHashLoadBalance} hashes): its {@code name=} or IP, a colon, the port (20880 when
     * the file gives none).
     */
    static String dubboAddress(Backend backend) {
        String endpoint = backend.answer(Families.DUBBO);
        return backend.name() != null ? backend.name() + endpoint.substring(endpoint.lastIndexOf(':')) : endpoint;
    }

    /** Every provider's Dubbo points looked up in {@code r}: which it owns, which it ties on, which are missing. */
    private Generation index(Ring r) {
        MessageDigest md5;
        try {
            md5 = MessageDigest.getInstance("MD5");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has MD5", e);
        }
        int digests = pointsPerProvider() / POINTS_PER_DIGEST;
        Map<String, Integer> byAddress = new HashMap<>();
        TreeMap<Integer, TreeSet<Integer>> ties = new TreeMap<>();
        List<String> problems = new ArrayList<>();
        long owned = 0;
        for (Backend b : r.store().backends()) {
            if (b.down()) {
                continue; // not in the ring: Dubbo's invoker list has no such provider
            }
            String address = dubboAddress(b);
            byAddress.put(address, b.index()); // two providers of one address: the last listed has its points
            int[] hashes = new int[digests * POINTS_PER_DIGEST];
            int missing = 0;
            for (int i = 0; i < digests; i++) {
                // Dubbo: Bytes.getMD5(address + i), String.getBytes() in the platform charset (ASCII here).
                byte[] d = md5.digest((address + i).getBytes());
                for (int w = 0; w < POINTS_PER_DIGEST; w++) {
                    int h = (d[w * 4] & 0xFF) | (d[w * 4 + 1] & 0xFF) << 8 | (d[w * 4 + 2] & 0xFF) << 16 | (d[w * 4 + 3] & 0xFF) << 24;
                    hashes[i * POINTS_PER_DIGEST + w] = h;
                    int pos = r.pointIndex(Integer.toUnsignedLong(h));
                    if (pos < 0 || r.pointHash(pos) != Integer.toUnsignedLong(h)) {
                        missing++;
                        continue;
                    }
                    int owner = r.pointBackend(pos);
                    if (owner != b.index()) {
                        TreeSet<Integer> producers = ties.computeIfAbsent(h, x -> new TreeSet<>());
                        producers.add(owner);
                        producers.add(b.index());
                    }
                }
            }
            if (missing > 0) {
                problems.add(missing + " of the " + hashes.length + " points of " + address + " are not in the ring");
            }
            Arrays.sort(hashes);
            for (int i = 0; i < hashes.length; i++) {
                if (i > 0 && hashes[i] == hashes[i - 1]) {
                    continue;
                }
                int pos = r.pointIndex(Integer.toUnsignedLong(hashes[i]));
                if (pos >= 0 && r.pointHash(pos) == Integer.toUnsignedLong(hashes[i]) && r.pointBackend(pos) == b.index()) {
                    owned++;
                }
            }
        }
        if (owned != r.pointCount()) {
            problems.add("the ring has " + r.pointCount() + " points, its providers' Dubbo texts give " + owned + " of them");
        }
        int[] tieHashes = new int[ties.size()];
        int[][] tieProducers = new int[ties.size()][];
        int t = 0;
        for (Map.Entry<Integer, TreeSet<Integer>> e : ties.entrySet()) {
            tieHashes[t] = e.getKey();
            tieProducers[t++] = e.getValue().stream().mapToInt(Integer::intValue).toArray();
        }
        return new Generation(r, Map.copyOf(byAddress), tieHashes, tieProducers, List.copyOf(problems));
    }

    /** Unmaps the file (and stops following the path): calls answered from it then fail. */
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
        return "DubboRing(" + path + " " + version + (watched() ? ", watched" : "") + ")";
    }
}
