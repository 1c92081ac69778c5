package io.ringstore.bench;

import io.ringstore.Ring;
import io.ringstore.RingStore;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.IntUnaryOperator;

import static io.ringstore.internal.RingFormat.POINT_BACKEND_OFFSET;
import static io.ringstore.internal.RingFormat.POINT_LENGTH;

/**
 * How many cache lines each search reads that a cache would not hold: replays the reads of lookups
 * with random hashes (search, then the point's backend) through least-recently-used caches of a few
 * sizes. The machine's counters are not available in a VM, so this is a model: fully associative, no
 * prefetching, nothing else competing for the cache.
 *
 * <pre>java -Xmx4g -cp bench/target/benchmarks.jar io.ringstore.bench.SearchCacheModel [SIZE...]</pre>
 */
public final class SearchCacheModel {
    private static final long[] CACHE_BYTES = {2L << 20, 32L << 20};
    private static final int WARMUP_LOOKUPS = 200_000;
    private static final int LOOKUPS = 1_000_000;

    private SearchCacheModel() {
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("ringstore.bench.traceReads", "true"); // before PointSearch is initialised
        if (!PointSearch.TRACING) {
            throw new IllegalStateException("PointSearch was initialised before tracing was turned on");
        }
        List<String> sizes = args.length > 0 ? List.of(args) : List.of(BenchRings.SMALL, BenchRings.MEDIUM, BenchRings.LARGE);
        System.out.printf("%-12s %-14s %8s %8s %10s %10s%n", "size", "search", "reads", "lines", "miss@2MiB", "miss@32MiB");
        for (String size : sizes) {
            try (RingStore store = BenchRings.open(size); Arena arena = Arena.ofConfined()) {
                Ring ring = store.ring(java.util.Set.of());
                MemorySegment points = BenchRings.mapPoints(ring, arena);
                int n = ring.pointCount();
                PointSearch.SampledIndex index12 = PointSearch.SampledIndex.build(points, n, 12);
                PointSearch.SampledIndex index16 = PointSearch.SampledIndex.build(points, n, 16);
                ReadTrace.drain();
                Map<String, IntUnaryOperator> searches = new LinkedHashMap<>();
                searches.put("binary", h -> PointSearch.binary(points, n, h));
                searches.put("interpolation", h -> PointSearch.interpolation(points, n, h));
                searches.put("sampled12", h -> index12.pointIndex(points, n, h));
                searches.put("sampled16", h -> index16.pointIndex(points, n, h));
                for (Map.Entry<String, IntUnaryOperator> e : searches.entrySet()) {
                    model(size, e.getKey(), e.getValue());
                }
            }
        }
    }

    private static void model(String size, String name, IntUnaryOperator search) {
        Lru[] caches = new Lru[CACHE_BYTES.length];
        for (int c = 0; c < caches.length; c++) {
            caches[c] = new Lru((int) (CACHE_BYTES[c] >> ReadTrace.LINE_SHIFT));
        }
        SplittableRandom random = new SplittableRandom(42);
        long reads = 0;
        long lines = 0;
        long[] misses = new long[caches.length];
        for (int i = 0; i < WARMUP_LOOKUPS + LOOKUPS; i++) {
            lookup(search, random.nextInt());
            long[] trace = ReadTrace.drain();
            boolean measured = i >= WARMUP_LOOKUPS;
            if (measured) {
                reads += trace.length;
                lines += java.util.Arrays.stream(trace).distinct().count();
            }
            for (int c = 0; c < caches.length; c++) {
                for (long line : trace) {
                    if (!caches[c].touch(line) && measured) {
                        misses[c]++;
                    }
                }
            }
        }
        System.out.printf("%-12s %-14s %8.2f %8.2f %10.2f %10.2f%n", size, name, (double) reads / LOOKUPS,
                (double) lines / LOOKUPS, (double) misses[0] / LOOKUPS, (double) misses[1] / LOOKUPS);
    }

    /** A search as a lookup does it: the point, then its backend. */
    private static void lookup(IntUnaryOperator search, int hash) {
        int p = search.applyAsInt(hash);
        if (p >= 0) {
            ReadTrace.read((long) p * POINT_LENGTH + POINT_BACKEND_OFFSET, 2);
        }
    }

    /** Fully associative least-recently-used cache of line numbers. */
    @SuppressWarnings("serial") // never serialised
    private static final class Lru extends LinkedHashMap<Long, Boolean> {
        private final int capacity;

        Lru(int capacity) {
            super(capacity * 2, 0.75f, true);
            this.capacity = capacity;
        }

        /** True on a hit; either way the line is now the most recently used. */
        boolean touch(long line) {
            return put(line, Boolean.TRUE) != null;
        }

        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, Boolean> eldest) {
            return size() > capacity;
        }
    }
}
