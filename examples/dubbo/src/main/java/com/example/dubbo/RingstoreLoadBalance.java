package com.example.dubbo;

import io.ringstore.Ring;
import io.ringstore.RingFileException;
import org.apache.dubbo.common.URL;
import org.apache.dubbo.common.constants.CommonConstants;
import org.apache.dubbo.common.resource.Disposable;
import org.apache.dubbo.rpc.Invocation;
import org.apache.dubbo.rpc.Invoker;
import org.apache.dubbo.rpc.RpcException;
import org.apache.dubbo.rpc.cluster.loadbalance.AbstractLoadBalance;
import org.apache.dubbo.rpc.cluster.loadbalance.ConsistentHashLoadBalance;
import org.apache.dubbo.rpc.support.RpcUtils;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.RandomAccess;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Dubbo's {@code loadbalance=ringstore}: {@link ConsistentHashLoadBalance}'s placement answered from a
 * ringstore ring file ({@link DubboRing}) instead of a {@code TreeMap} that Dubbo builds for every
 * service method and again whenever the invoker list changes.
 *
 * <p>Configured on the reference (or a method) like {@code consistenthash}:
 * <ul>
 *   <li>{@code ringstore.file}: the ring file, built with {@code --algorithm dubbo[:K]} from the
 *       providers; followed while the consumer runs ({@link DubboRing#watch}). Required.</li>
 *   <li>{@code hash.nodes}: Dubbo's, default 160; must be the file's K (whole digests: K/4 of them).</li>
 *   <li>{@code hash.arguments}: Dubbo's, default {@code 0}: the arguments whose
 *       {@code StringBuilder.append} make the key.</li>
 * </ul>
 *
 * <p><b>Equal to {@code consistenthash} over any invoker list of the file's providers.</b> The key is
 * Dubbo's ({@link KeyBytes}), hashed with MD5's first little-endian word, and looked up in the file's
 * ring; the point it lands on is a hash some providers produce. The call goes to the last of them in the
 * invoker list's order (Dubbo's {@code TreeMap.put}: the last put keeps a hash) that is in the list; when
 * none is, to the next point clockwise, and so on. Dubbo's ring of the listed providers has exactly the
 * points of those providers (a provider's points depend on its address alone), so its first point at or
 * after the key's hash is the first point of the file's ring with a listed producer, held by the last
 * listed: the same invoker. A provider gone from the list thus costs no new ring: its points are walked
 * past. Hashes that several providers produce are known from the file ({@link DubboRing.Generation}).
 *
 * <p>Invokers whose address is not a provider of the file (a provider added since the file was built)
 * get no calls: the file has no points of theirs; this is logged once per invoker list. Republish the
 * file with them to give them their share, as Dubbo's rebuilt ring would.
 *
 * <p>Per call it allocates nothing of its own for a key whose arguments are strings (the thread's key
 * buffer; a non-string argument's {@code toString}); a new invoker list costs an array of its invokers
 * per provider of the file, once.
 */
public class RingstoreLoadBalance extends AbstractLoadBalance implements Disposable {
    /** The extension's name: {@code loadbalance=ringstore}. */
    public static final String NAME = "ringstore";
    /** The parameter naming the ring file. */
    public static final String FILE = "ringstore.file";

    private static final System.Logger LOG = System.getLogger(RingstoreLoadBalance.class.getName());
    private static final int DEFAULT_HASH_NODES = 160;

    private final ConcurrentMap<String, DubboRing> rings = new ConcurrentHashMap<>();
    private final ConcurrentMap<String, int[]> argumentIndexes = new ConcurrentHashMap<>();
    /** The invoker list last seen by service: where each of the file's providers is in it. */
    private final ConcurrentMap<String, Placement> placements = new ConcurrentHashMap<>();
    private final LongAdder placementsBuilt = new LongAdder();
    private final LongAdder walkedPast = new LongAdder();

    /**
     * An invoker list over a generation of the file: the invoker of each backend (null: not listed), and
     * its position in the list, which decides a hash several listed providers produce.
     */
    private record Placement(DubboRing.Generation generation, Invoker<?>[] list, Invoker<?>[] byBackend, int[] rank) {
        boolean isOf(DubboRing.Generation g, List<? extends Invoker<?>> invokers) {
            if (generation != g || list.length != invokers.size()) {
                return false;
            }
            if (invokers instanceof RandomAccess) { // no iterator
                for (int i = 0; i < list.length; i++) {
                    if (list[i] != invokers.get(i)) {
                        return false;
                    }
                }
                return true;
            }
            int i = 0;
            for (Invoker<?> invoker : invokers) {
                if (list[i++] != invoker) {
                    return false;
                }
            }
            return true;
        }

        /** The last listed of {@code producers}, or null when none is listed. */
        Invoker<?> lastListed(int[] producers) {
            int best = -1;
            for (int b : producers) {
                if (byBackend[b] != null && (best < 0 || rank[b] > rank[best])) {
                    best = b;
                }
            }
            return best < 0 ? null : byBackend[best];
        }
    }

    @Override
    @SuppressWarnings("unchecked")
    protected <T> Invoker<T> doSelect(List<Invoker<T>> invokers, URL url, Invocation invocation) {
        String method = RpcUtils.getMethodName(invocation);
        URL first = invokers.get(0).getUrl();
        String file = first.getMethodParameter(method, FILE);
        DubboRing ring = ring(file != null ? file : url.getMethodParameter(method, FILE)); // direct URLs: the reference's
        int nodes = first.getMethodParameter(method, ConsistentHashLoadBalance.HASH_NODES, DEFAULT_HASH_NODES);
        if (nodes / 4 != ring.pointsPerProvider() / 4) {
            throw new RpcException(first.getServiceKey() + "." + method + " has hash.nodes=" + nodes + " but "
                    + ring.path() + " is a " + ring.version() + " ring: build it with --algorithm dubbo:" + nodes);
        }
        int[] indexes = argumentIndexes(first.getMethodParameter(method, ConsistentHashLoadBalance.HASH_ARGUMENTS, "0"));
        KeyBytes key = KeyBytes.ofThisThread().of(indexes, RpcUtils.getArguments(invocation));
        try {
            for (;;) {
                Ring r = ring.ring();
                try {
                    return (Invoker<T>) select(ring, r, first.getServiceKey(), invokers, key);
                } catch (IllegalStateException e) {
                    if (!ring.replaced(r)) {
                        throw e;
                    }
                }
            }
        } finally {
            key.trim();
        }
    }

    private Invoker<?> select(DubboRing ring, Ring r, String service, List<? extends Invoker<?>> invokers, KeyBytes key) {
        DubboRing.Generation g = ring.generation(r);
        Placement p = placement(ring, g, service, invokers);
        int n = r.pointCount();
        int pos = r.pointIndex(r.hash(key.bytes(), 0, key.length()));
        int[] ties = g.tieHashes();
        for (int walked = 0; walked < n; walked++) {
            Invoker<?> invoker;
            int t = ties.length == 0 ? -1 : Arrays.binarySearch(ties, (int) r.pointHash(pos));
            if (t >= 0) {
                invoker = p.lastListed(g.tieProducers()[t]);
            } else {
                int b = r.pointBackend(pos);
                invoker = b < 0 ? null : p.byBackend()[b];
            }
            if (invoker != null) {
                if (walked > 0) {
                    walkedPast.increment();
                }
                return invoker;
            }
            pos = pos + 1 == n ? 0 : pos + 1;
        }
        throw new RpcException(service + ": none of the " + invokers.size() + " invokers " + addresses(invokers)
                + " is a provider of " + ring.path() + " (generation " + Long.toUnsignedString(r.store().generation()) + ")");
    }

    private Placement placement(DubboRing ring, DubboRing.Generation g, String service, List<? extends Invoker<?>> invokers) {
        Placement p = placements.get(service);
        if (p != null && p.isOf(g, invokers)) {
            return p;
        }
        int backends = g.store().backendCount();
        Invoker<?>[] byBackend = new Invoker<?>[backends];
        int[] rank = new int[backends];
        Invoker<?>[] list = invokers.toArray(new Invoker<?>[0]);
        List<String> unknown = new ArrayList<>();
        for (int i = 0; i < list.length; i++) {
            String address = list[i].getUrl().getAddress();
            Integer b = g.byAddress().get(address);
            if (b == null) {
                unknown.add(address);
                continue;
            }
            byBackend[b] = list[i]; // two invokers of one address: the last has its points, as in Dubbo's TreeMap
            rank[b] = i;
        }
        if (!unknown.isEmpty()) {
            LOG.log(System.Logger.Level.WARNING, service + ": invokers " + unknown + " are not providers of " + ring.path()
                    + " (generation " + Long.toUnsignedString(g.store().generation())
                    + ") and get no calls; republish the file with them");
        }
        p = new Placement(g, list, byBackend, rank);
        placements.put(service, p);
        placementsBuilt.increment();
        return p;
    }

    DubboRing ring(String file) {
        if (file == null || file.isEmpty()) {
            throw new RpcException("loadbalance=" + NAME + " needs the parameter " + FILE + " (the ring file)");
        }
        DubboRing ring = rings.get(file);
        if (ring != null) {
            return ring;
        }
        synchronized (rings) {
            ring = rings.get(file);
            if (ring == null) {
                try {
                    ring = DubboRing.watch(Path.of(file));
                } catch (RingFileException | IllegalArgumentException e) {
                    throw new RpcException(FILE + "=" + file + ": " + e.getMessage(), e);
                }
                rings.put(file, ring);
            }
            return ring;
        }
    }

    private int[] argumentIndexes(String arguments) {
        int[] indexes = argumentIndexes.get(arguments);
        if (indexes == null) {
            String[] parts = CommonConstants.COMMA_SPLIT_PATTERN.split(arguments);
            indexes = new int[parts.length];
            for (int i = 0; i < parts.length; i++) {
                indexes[i] = Integer.parseInt(parts[i]); // as Dubbo's selector, which fails the call likewise
            }
            argumentIndexes.put(arguments, indexes);
        }
        return indexes;
    }

    private static String addresses(List<? extends Invoker<?>> invokers) {
        List<String> out = new ArrayList<>();
        for (Invoker<?> i : invokers) {
            out.add(i.getUrl().getAddress());
        }
        return out.toString();
    }

    /** {@return how many invoker lists were mapped to the file's providers: one per list (and generation) seen, no ring built} */
    public long placementsBuilt() {
        return placementsBuilt.sum();
    }

    /** {@return how many calls went past the key's point to a later one (its providers not listed)} */
    public long walkedPast() {
        return walkedPast.sum();
    }

    /** {@return how many file generations were indexed, over every ring file in use} */
    public long generationsIndexed() {
        return rings.values().stream().mapToLong(DubboRing::generationsIndexed).sum();
    }

    /** Closes the ring files, when Dubbo destroys the application. */
    @Override
    public void destroy() {
        synchronized (rings) {
            rings.values().forEach(DubboRing::close);
            rings.clear();
        }
    }
}
