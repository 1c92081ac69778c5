package io.ringstore.bench;

import io.ringstore.Ring;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.IntUnaryOperator;

/**
 * The on-heap structures ringstore is compared with, each built from the points of a mapped ring (so
 * they hold exactly its content) and answering a hash with a backend index:
 *
 * <ul>
 *   <li>{@link TreeMapRing}: {@code TreeMap<Long, Integer>}, {@code ceilingEntry} wrapping to
 *       {@code firstEntry}, as Dubbo's ConsistentHashLoadBalance and spymemcached's KetamaNodeLocator do;
 *   <li>{@link HeapArrays}: sorted {@code int[]} hashes and {@code short[]} backends, unsigned binary search;
 *   <li>{@link LongPoints}: one sorted {@code long[]} of {@code hash << 32 | backend} (pingora-ketama v1).
 * </ul>
 */
final class Baselines {
    /**
     * Largest ring a TreeMap is built for. At the 64 bytes per entry {@link HeapMeasure} measures
     * (a 40-byte TreeMap.Entry and a 24-byte Long key), 204.8 million points would need about 13 GB of heap.
     */
    static final int TREEMAP_MAX_POINTS = 20_000_000;

    private Baselines() {}

    /**
     * The points as {@code TreeMap<Long, Integer>}. A 32-bit ring's keys are its hashes unsigned, looked
     * up by {@link #applyAsInt}; a ring of 64-bit points ({@link Ring#isWide()}: Envoy's, gRPC's) keys
     * each 64-bit hash with its sign bit flipped, so that {@code Long}'s signed order is the hashes'
     * unsigned order (their {@code uint64_t}), looked up by {@link #backend64}.
     */
    static final class TreeMapRing implements IntUnaryOperator {
        final TreeMap<Long, Integer> map = new TreeMap<>();
        /** Whether a hash past the last point goes to the first (else to the last: grpc-java's). */
        private final boolean wraps;
        /** Whether a key goes to the nearer of the two points around it (HAProxy's family), as HAProxy's eb32 tree looks up. */
        final boolean nearest;

        /** @throws IllegalStateException for rings of more than {@link #TREEMAP_MAX_POINTS} points */
        TreeMapRing(Ring ring, int backendCount) {
            int n = ring.pointCount();
            if (n > TREEMAP_MAX_POINTS) {
                throw new IllegalStateException("treemap skipped: a TreeMap of " + n + " points needs about "
                        + Math.round(64.0 * n / 1e9) + " GB of heap, more than -Xmx4g and this machine allow"
                        + " (built up to " + TREEMAP_MAX_POINTS + " points)");
            }
            Integer[] backends = new Integer[backendCount]; // shared values, as the nodes of a real ring are
            for (int b = 0; b < backendCount; b++) {
                backends[b] = b;
            }
            boolean wide = ring.isWide();
            wraps = ring.wraps();
            nearest = ring.version().family().landing().nearest();
            for (int i = 0; i < n; i++) {
                map.put(wide ? ring.pointHash(i) ^ Long.MIN_VALUE : ring.pointHash(i), backends[ring.pointBackend(i)]);
            }
        }

        @Override
        public int applyAsInt(int hash) {
            long h = Integer.toUnsignedLong(hash);
            Map.Entry<Long, Integer> e = map.ceilingEntry(h);
            e = e != null ? e : wraps ? map.firstEntry() : map.lastEntry();
            if (nearest) {
                Map.Entry<Long, Integer> prev = map.lowerEntry(e.getKey());
                prev = prev != null ? prev : map.lastEntry();
                if (((h - prev.getKey()) & 0xFFFF_FFFFL) <= ((e.getKey() - h) & 0xFFFF_FFFFL)) {
                    return prev.getValue();
                }
            }
            return e.getValue();
        }

        /** {@return the backend of a 64-bit hash in a ring of 64-bit points} */
        int backend64(long hash) {
            Map.Entry<Long, Integer> e = map.ceilingEntry(hash ^ Long.MIN_VALUE);
            return (e != null ? e : wraps ? map.firstEntry() : map.lastEntry()).getValue();
        }
    }

    static final class HeapArrays implements IntUnaryOperator {
        final int[] hashes;
        final short[] backends;

        HeapArrays(Ring ring) {
            int n = ring.pointCount();
            hashes = new int[n];
            backends = new short[n];
            for (int i = 0; i < n; i++) {
                hashes[i] = (int) ring.pointHash(i);
                backends[i] = (short) ring.pointBackend(i);
            }
        }

        @Override
        public int applyAsInt(int hash) {
            int key = hash ^ Integer.MIN_VALUE; // unsigned order as signed
            int lo = 0;
            int hi = hashes.length;
            while (lo < hi) {
                int mid = (lo + hi) >>> 1;
                if ((hashes[mid] ^ Integer.MIN_VALUE) < key) {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            return Short.toUnsignedInt(backends[lo == hashes.length ? 0 : lo]);
        }
    }

    static final class LongPoints implements IntUnaryOperator {
        final long[] points;

        LongPoints(Ring ring) {
            int n = ring.pointCount();
            points = new long[n];
            for (int i = 0; i < n; i++) {
                points[i] = (ring.pointHash(i) << 32) | ring.pointBackend(i);
            }
        }

        @Override
        public int applyAsInt(int hash) {
            long key = ((long) hash << 32) ^ Long.MIN_VALUE; // unsigned order as signed; backend bits 0
            int lo = 0;
            int hi = points.length;
            while (lo < hi) {
                int mid = (lo + hi) >>> 1;
                if ((points[mid] ^ Long.MIN_VALUE) < key) {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            return (int) points[lo == points.length ? 0 : lo];
        }
    }

    /** Throws if {@code structure} answers any of {@code hashes} differently from {@code ring}. */
    static void check(String name, IntUnaryOperator structure, Ring ring, int[] hashes) {
        for (int hash : hashes) {
            int expected = ring.lookupHash(hash);
            int actual = structure.applyAsInt(hash);
            if (actual != expected) {
                throw new IllegalStateException(name + " answers backend " + actual + " for hash "
                        + Integer.toUnsignedString(hash) + "; the ring file answers " + expected);
            }
        }
    }
}
