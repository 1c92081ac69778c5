package io.ringstore.bench;

import io.ringstore.Ring;
import io.ringstore.RingStore;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * One lookup, in the mapped ring file and in three on-heap structures holding the same points: the
 * v1 ring of the size's backends, the same URL-like keys. Each structure is measured from the key's
 * bytes ({@code *Key}: CRC-32 included) and from a precomputed hash ({@code *Hash}).
 *
 * <ul>
 *   <li>{@code ringstore}: {@link Ring#lookup(byte[])} / {@link Ring#lookupHash(int)} on the mapped file;
 *   <li>{@code treemap}: {@code TreeMap<Long, Integer>}, {@code ceilingEntry} wrapping to {@code firstEntry},
 *       as Dubbo's ConsistentHashLoadBalance and spymemcached's KetamaNodeLocator do;
 *   <li>{@code heapArrays}: sorted {@code int[]} hashes and {@code short[]} backends, unsigned binary search;
 *   <li>{@code longPoints}: one sorted {@code long[]} of {@code hash << 32 | backend} (pingora-ketama v1).
 * </ul>
 * The treemap is not built for rings of more than {@value #TREEMAP_MAX_POINTS} points: at about 64
 * bytes per entry (measured at 3.3 million), 200 million entries would need 12+ GB of heap. Its benchmarks fail at setup for
 * such sizes with a message saying so; exclude them with {@code -p size=100x160,2048x10x160} on a
 * {@code treemap} run.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = "-Xmx4g")
public class LookupBenchmark {
    static final int TREEMAP_MAX_POINTS = 20_000_000;

    /** The ring file and the keys. */
    @State(Scope.Benchmark)
    public static class Data {
        @Param({BenchRings.SMALL, BenchRings.MEDIUM, BenchRings.LARGE})
        public String size;
        @Param("65536")
        public int keyCount;

        RingStore store;
        Ring ring;
        byte[][] keys;
        int[] hashes;
        int mask;

        @Setup(Level.Trial)
        public void open() throws Exception {
            store = BenchRings.open(size);
            ring = store.ring(Set.of());
            keys = BenchRings.urlKeys(keyCount, BenchRings.KEY_SEED);
            hashes = BenchRings.hashes(keys);
            mask = keyCount - 1;
        }

        @TearDown(Level.Trial)
        public void close() {
            store.close();
        }

        /** Fails the setup if {@code lookup} answers any key differently from the ring file. */
        void check(String structure, java.util.function.IntUnaryOperator lookup) {
            for (int hash : hashes) {
                int expected = ring.lookupHash(hash);
                int actual = lookup.applyAsInt(hash);
                if (actual != expected) {
                    throw new IllegalStateException(structure + " answers backend " + actual + " for hash "
                            + Integer.toUnsignedString(hash) + "; the ring file answers " + expected);
                }
            }
        }
    }

    @State(Scope.Benchmark)
    public static class TreeMapRing {
        TreeMap<Long, Integer> map;

        @Setup(Level.Trial)
        public void build(Data data) {
            int n = data.ring.pointCount();
            if (n > TREEMAP_MAX_POINTS) {
                throw new IllegalStateException("treemap skipped for size=" + data.size + ": a TreeMap of " + n
                        + " points needs about " + Math.round(64.0 * n / (1L << 30)) + " GB of heap (more than -Xmx and this machine allow);"
                        + " run the treemap benchmarks with -p size=" + BenchRings.SMALL + "," + BenchRings.MEDIUM);
            }
            Integer[] backends = new Integer[data.store.backendCount()]; // shared values, as the nodes of a real ring are
            for (int b = 0; b < backends.length; b++) {
                backends[b] = b;
            }
            long before = usedHeap();
            map = new TreeMap<>();
            for (int i = 0; i < n; i++) {
                map.put(Integer.toUnsignedLong(data.ring.pointHash(i)), backends[data.ring.pointBackend(i)]);
            }
            System.out.printf("%ntreemap: %,d entries, about %,d MB of heap%n", n, (usedHeap() - before) >> 20);
            data.check("treemap", this::lookup);
        }

        int lookup(int hash) {
            Map.Entry<Long, Integer> e = map.ceilingEntry(Integer.toUnsignedLong(hash));
            return (e != null ? e : map.firstEntry()).getValue();
        }
    }

    @State(Scope.Benchmark)
    public static class HeapArrays {
        int[] hashes;
        short[] backends;

        @Setup(Level.Trial)
        public void build(Data data) {
            int n = data.ring.pointCount();
            hashes = new int[n];
            backends = new short[n];
            for (int i = 0; i < n; i++) {
                hashes[i] = data.ring.pointHash(i);
                backends[i] = (short) data.ring.pointBackend(i);
            }
            data.check("heapArrays", this::lookup);
        }

        int lookup(int hash) {
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

    @State(Scope.Benchmark)
    public static class LongPoints {
        long[] points;

        @Setup(Level.Trial)
        public void build(Data data) {
            int n = data.ring.pointCount();
            points = new long[n];
            for (int i = 0; i < n; i++) {
                points[i] = (Integer.toUnsignedLong(data.ring.pointHash(i)) << 32) | data.ring.pointBackend(i);
            }
            data.check("longPoints", this::lookup);
        }

        int lookup(int hash) {
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

    private static long usedHeap() {
        System.gc();
        Runtime rt = Runtime.getRuntime();
        return rt.totalMemory() - rt.freeMemory();
    }

    @Benchmark
    public int ringstoreKey(Data data, KeyCursor cursor) {
        return data.ring.lookup(data.keys[cursor.next(data.mask)]);
    }

    @Benchmark
    public int ringstoreHash(Data data, KeyCursor cursor) {
        return data.ring.lookupHash(data.hashes[cursor.next(data.mask)]);
    }

    @Benchmark
    public int treemapKey(Data data, TreeMapRing treemap, KeyCursor cursor) {
        return treemap.lookup(BenchRings.crc32(data.keys[cursor.next(data.mask)]));
    }

    @Benchmark
    public int treemapHash(Data data, TreeMapRing treemap, KeyCursor cursor) {
        return treemap.lookup(data.hashes[cursor.next(data.mask)]);
    }

    @Benchmark
    public int heapArraysKey(Data data, HeapArrays arrays, KeyCursor cursor) {
        return arrays.lookup(BenchRings.crc32(data.keys[cursor.next(data.mask)]));
    }

    @Benchmark
    public int heapArraysHash(Data data, HeapArrays arrays, KeyCursor cursor) {
        return arrays.lookup(data.hashes[cursor.next(data.mask)]);
    }

    @Benchmark
    public int longPointsKey(Data data, LongPoints points, KeyCursor cursor) {
        return points.lookup(BenchRings.crc32(data.keys[cursor.next(data.mask)]));
    }

    @Benchmark
    public int longPointsHash(Data data, LongPoints points, KeyCursor cursor) {
        return points.lookup(data.hashes[cursor.next(data.mask)]);
    }
}
