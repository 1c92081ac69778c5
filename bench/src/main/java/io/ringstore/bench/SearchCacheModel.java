package io.ringstore.bench;

import static io.ringstore.internal.format.RingFileDescriptor.POINT_BACKEND_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.POINT_LENGTH;

import io.ringstore.Ring;
import io.ringstore.RingStore;
import io.ringstore.internal.format.PointSearch;
import io.ringstore.internal.format.SearchTrace;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.IntUnaryOperator;

/**
 * How many cache lines each search reads that a cache would not hold: replays the reads of lookups
 * with random hashes (search, then the point's backend) through least-recently-used caches of a few
 * sizes, for plain binary search and for the library's search with its index, as the library itself
 * runs them ({@link PointSearch}, its reads reported through {@link SearchTrace}). The machine's counters
 * are not available in a VM, so this is a model: fully associative, no prefetching, nothing else
 * competing for the cache.
 *
 * <p>Misses are counted twice: every line missed ({@code miss}), and the waits ({@code wait}): rounds
 * of reads with at least one miss, where a round is reads issued together because none of their
 * addresses depends on another's answer ({@link ReadTrace}). Each miss of a binary search
 * is a wait of its own; the library's five window reads miss up to five lines in one wait.
 *
 * <pre>java -Xmx4g -cp bench/target/benchmarks.jar io.ringstore.bench.SearchCacheModel [--lookups N] [--tsv FILE] [SIZE...]</pre>
 */
public final class SearchCacheModel {
    private static final long[] CACHE_BYTES = {2L << 20, 32L << 20};

    private SearchCacheModel() {}

    public static void main(String[] args) throws Exception {
        System.setProperty("ringstore.traceSearch", "true"); // before SearchTrace is initialised
        if (!SearchTrace.ON) {
            throw new IllegalStateException("SearchTrace was initialised before tracing was turned on");
        }
        ReadTrace tracer = new ReadTrace();
        SearchTrace.listen(tracer);
        int lookups = 1_000_000;
        String tsvPath = null;
        List<String> sizes = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--lookups" -> lookups = Integer.parseInt(args[++i]);
                case "--tsv" -> tsvPath = args[++i];
                default -> sizes.add(args[i]);
            }
        }
        if (sizes.isEmpty()) {
            sizes = List.of(BenchRings.SMALL, BenchRings.MEDIUM, BenchRings.LARGE);
        }
        System.out.printf(
                "%-12s %-8s %8s %8s %10s %10s %10s %10s%n",
                "size", "search", "reads", "lines", "miss@2MiB", "miss@32MiB", "wait@2MiB", "wait@32MiB");
        try (Tsv tsv = Tsv.create(
                tsvPath,
                "size",
                "points",
                "search",
                "reads",
                "lines",
                "miss2MiB",
                "miss32MiB",
                "wait2MiB",
                "wait32MiB")) {
            for (String size : sizes) {
                try (RingStore store = BenchRings.open(size);
                        Arena arena = Arena.ofConfined()) {
                    Ring ring = store.ring(java.util.Set.of());
                    MemorySegment points = BenchRings.mapPoints(ring, arena);
                    int n = ring.pointCount();
                    PointSearch.Index index = PointSearch.index(points, n);
                    long indexBytes = index.bytes();
                    System.out.printf(
                            "%-12s index: %,d bytes of heap for %,d points (%.2f %% of their %,d bytes)%n",
                            size,
                            indexBytes,
                            n,
                            100.0 * indexBytes / ((double) n * POINT_LENGTH),
                            (long) n * POINT_LENGTH);
                    tracer.drainRounds(); // the index's own reads
                    Map<String, IntUnaryOperator> searches = new LinkedHashMap<>();
                    searches.put("binary", h -> PointSearch.pointIndex(points, n, h));
                    searches.put("library", h -> PointSearch.pointIndex(points, n, index, h));
                    for (Map.Entry<String, IntUnaryOperator> e : searches.entrySet()) {
                        double[] r = model(tracer, e.getValue(), lookups);
                        System.out.printf(
                                "%-12s %-8s %8.2f %8.2f %10.2f %10.2f %10.2f %10.2f%n",
                                size, e.getKey(), r[0], r[1], r[2], r[3], r[4], r[5]);
                        tsv.row(size, n, e.getKey(), r[0], r[1], r[2], r[3], r[4], r[5]);
                    }
                }
            }
        }
    }

    /** Per lookup: reads, distinct lines, misses in each cache, waits in each cache; after {@code lookups / 5} warm-up lookups. */
    private static double[] model(ReadTrace tracer, IntUnaryOperator search, int lookups) {
        Lru[] caches = new Lru[CACHE_BYTES.length];
        for (int c = 0; c < caches.length; c++) {
            caches[c] = new Lru((int) (CACHE_BYTES[c] >> ReadTrace.LINE_SHIFT));
        }
        int warmup = lookups / 5;
        SplittableRandom random = new SplittableRandom(42);
        long reads = 0;
        long lines = 0;
        long[] misses = new long[caches.length];
        long[] waits = new long[caches.length];
        for (int i = 0; i < warmup + lookups; i++) {
            lookup(tracer, search, random.nextInt());
            List<long[]> rounds = tracer.drainRounds();
            long[] trace =
                    rounds.stream().flatMapToLong(java.util.Arrays::stream).toArray();
            boolean measured = i >= warmup;
            if (measured) {
                for (int r = 0; r < trace.length; r++) {
                    if (r == 0 || trace[r] != trace[r - 1]) { // consecutive reads of one line count once
                        reads++;
                    }
                }
                lines += java.util.Arrays.stream(trace).distinct().count();
            }
            for (int c = 0; c < caches.length; c++) {
                for (long[] round : rounds) {
                    boolean waited = false;
                    for (long line : round) {
                        if (!caches[c].touch(line) && measured) {
                            misses[c]++;
                            waited = true;
                        }
                    }
                    if (waited) {
                        waits[c]++;
                    }
                }
            }
        }
        return new double[] {
            (double) reads / lookups,
            (double) lines / lookups,
            (double) misses[0] / lookups,
            (double) misses[1] / lookups,
            (double) waits[0] / lookups,
            (double) waits[1] / lookups
        };
    }

    /** A search as a lookup does it: the point, then its backend (a round of its own). */
    private static void lookup(ReadTrace tracer, IntUnaryOperator search, int hash) {
        int p = search.applyAsInt(hash);
        if (p >= 0) {
            tracer.read((long) p * POINT_LENGTH + POINT_BACKEND_OFFSET, 2);
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
