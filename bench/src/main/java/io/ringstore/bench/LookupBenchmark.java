package io.ringstore.bench;

import io.ringstore.Ring;
import io.ringstore.RingStore;
import java.util.Set;
import java.util.concurrent.TimeUnit;
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
import org.openjdk.jmh.infra.ThreadParams;

/**
 * One lookup, in the mapped ring file and in three on-heap structures holding the same points
 * ({@link Baselines}): the v1 ring of the size's backends, the same URL-like keys, one thread. Each
 * structure is measured from the key's bytes ({@code *Key}: CRC-32 included) and from a precomputed
 * hash ({@code *Hash}).
 *
 * <ul>
 *   <li>{@code ringstore}: {@link Ring#lookup(byte[])} / {@link Ring#lookupHash(long)} on the mapped file
 *       (the library's sliced interpolation search);
 *   <li>{@code treemap}: {@link Baselines.TreeMapRing}, "TreeMap ketama";
 *   <li>{@code heapArrays}: {@link Baselines.HeapArrays}, int[] + short[];
 *   <li>{@code longPoints}: {@link Baselines.LongPoints}, 8-byte points.
 * </ul>
 * The treemap is not built for rings of more than {@value Baselines#TREEMAP_MAX_POINTS} points (see
 * there); its benchmarks fail at setup for such sizes with a message saying so. Run them with
 * {@code -p size=100x160,2048x10x160}.
 *
 * <p>With the default 65,536 keys the lines a search touches in the largest ring stay in a large L3
 * after the first pass; {@code -p keyCount=4194304} makes lookups there go to memory.
 *
 * <p>From several threads ({@code -t 2}): the ring, keys and hashes are shared and only read; each
 * thread has its own {@link Cursor}, starting at its own share of the keys. Compare {@code -t 1} and
 * {@code -t 2} only on a machine doing nothing else: a thread that shares its core with another process
 * halves the figure, and JMH cannot tell.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = "-Xmx4g")
public class LookupBenchmark {
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
    }

    /**
     * Each thread's place in the keys. Thread i of t starts i/t of the way through them, so that
     * threads look up different keys at any moment, as a router's threads do, not the same keys in
     * step, where one thread's cache misses would bring the lines the other is about to read. One
     * thread goes through the keys as {@link KeyCursor} does.
     */
    @State(Scope.Thread)
    public static class Cursor {
        private int position;

        @Setup(Level.Trial)
        public void start(Data data, ThreadParams thread) {
            position = (int) ((long) data.keyCount * thread.getThreadIndex() / thread.getThreadCount());
        }

        int next(int mask) {
            return position = (position + 1) & mask;
        }
    }

    @State(Scope.Benchmark)
    public static class TreeMapState {
        Baselines.TreeMapRing ring;

        @Setup(Level.Trial)
        public void build(Data data) {
            try {
                ring = new Baselines.TreeMapRing(data.ring, data.store.backendCount());
            } catch (IllegalStateException e) {
                throw new IllegalStateException(e.getMessage() + "; size=" + data.size, e);
            }
            Baselines.check("treemap", ring, data.ring, data.hashes);
        }
    }

    @State(Scope.Benchmark)
    public static class HeapArraysState {
        Baselines.HeapArrays ring;

        @Setup(Level.Trial)
        public void build(Data data) {
            ring = new Baselines.HeapArrays(data.ring);
            Baselines.check("heapArrays", ring, data.ring, data.hashes);
        }
    }

    @State(Scope.Benchmark)
    public static class LongPointsState {
        Baselines.LongPoints ring;

        @Setup(Level.Trial)
        public void build(Data data) {
            ring = new Baselines.LongPoints(data.ring);
            Baselines.check("longPoints", ring, data.ring, data.hashes);
        }
    }

    @Benchmark
    public int ringstoreKey(Data data, Cursor cursor) {
        return data.ring.lookup(data.keys[cursor.next(data.mask)]);
    }

    @Benchmark
    public int ringstoreHash(Data data, Cursor cursor) {
        return data.ring.lookupHash(data.hashes[cursor.next(data.mask)]);
    }

    @Benchmark
    public int treemapKey(Data data, TreeMapState treemap, Cursor cursor) {
        return treemap.ring.applyAsInt(BenchRings.crc32(data.keys[cursor.next(data.mask)]));
    }

    @Benchmark
    public int treemapHash(Data data, TreeMapState treemap, Cursor cursor) {
        return treemap.ring.applyAsInt(data.hashes[cursor.next(data.mask)]);
    }

    @Benchmark
    public int heapArraysKey(Data data, HeapArraysState arrays, Cursor cursor) {
        return arrays.ring.applyAsInt(BenchRings.crc32(data.keys[cursor.next(data.mask)]));
    }

    @Benchmark
    public int heapArraysHash(Data data, HeapArraysState arrays, Cursor cursor) {
        return arrays.ring.applyAsInt(data.hashes[cursor.next(data.mask)]);
    }

    @Benchmark
    public int longPointsKey(Data data, LongPointsState points, Cursor cursor) {
        return points.ring.applyAsInt(BenchRings.crc32(data.keys[cursor.next(data.mask)]));
    }

    @Benchmark
    public int longPointsHash(Data data, LongPointsState points, Cursor cursor) {
        return points.ring.applyAsInt(data.hashes[cursor.next(data.mask)]);
    }
}
