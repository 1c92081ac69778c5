package io.ringstore.bench;

import static io.ringstore.internal.format.RingFileDescriptor.POINT_BACKEND_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.POINT_LENGTH;
import static io.ringstore.internal.format.RingFileDescriptor.U16;

import io.ringstore.Ring;
import io.ringstore.RingStore;
import io.ringstore.internal.format.PointSearch;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.IntUnaryOperator;
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

/**
 * Plain binary search against the library's search, over the same mapped points, each as a whole
 * lookup (search, then the point's backend) so the times compare with {@link LookupBenchmark}'s
 * {@code *Hash} benchmarks: {@code library} is {@link Ring#lookupHash(long)} itself (the sliced
 * interpolation search), {@code binary} is the library's search without its index (a binary search of
 * all points, {@link PointSearch#pointIndex(MemorySegment, int, int)}) over a second read-only mapping
 * of the same points. Keys are LookupBenchmark's, hashed beforehand.
 *
 * <p>Setup checks that the binary search returns {@link Ring#pointIndex(int)}'s answer for 100,000
 * seeded random hashes and for every point's own hash, its neighbours and the ends of the line (the
 * latter sampled on rings of more than 200,000 points).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = "-Xmx4g") // enough to build the largest ring if it is not cached yet
@State(Scope.Benchmark)
public class SearchBenchmark {
    private static final int RANDOM_CHECKS = 100_000;

    @Param({BenchRings.SMALL, BenchRings.MEDIUM, BenchRings.LARGE})
    public String size;

    @Param("65536")
    public int keyCount;

    private RingStore store;
    private Arena arena;
    private Ring ring;
    private MemorySegment points;
    private int pointCount;
    private int backendCount;
    private int[] hashes;
    private int mask;

    @Setup(Level.Trial)
    public void open() throws Exception {
        store = BenchRings.open(size);
        ring = store.ring(Set.of());
        arena = Arena.ofShared();
        points = BenchRings.mapPoints(ring, arena);
        pointCount = ring.pointCount();
        backendCount = store.backendCount();
        hashes = BenchRings.hashes(BenchRings.urlKeys(keyCount, BenchRings.KEY_SEED));
        mask = keyCount - 1;
        check("binary", h -> PointSearch.pointIndex(points, pointCount, h));
    }

    @TearDown(Level.Trial)
    public void close() {
        arena.close();
        store.close();
    }

    private void check(String name, IntUnaryOperator search) {
        SplittableRandom random = new SplittableRandom(7);
        for (int i = 0; i < RANDOM_CHECKS; i++) {
            check(name, search, random.nextInt());
        }
        for (int hash : new int[] {0, 1, -2, -1, Integer.MIN_VALUE, Integer.MAX_VALUE}) {
            check(name, search, hash);
        }
        int step = Math.max(1, pointCount / 200_000);
        for (int p = 0; p < pointCount; p += step) {
            int h = (int) ring.pointHash(p);
            check(name, search, h - 1);
            check(name, search, h);
            check(name, search, h + 1);
        }
    }

    private void check(String name, IntUnaryOperator search, int hash) {
        int expected = ring.pointIndex(hash);
        int actual = search.applyAsInt(hash);
        if (actual != expected) {
            throw new IllegalStateException(name + " search finds point " + actual + " for hash "
                    + Integer.toUnsignedString(hash) + "; Ring.pointIndex finds " + expected + " (size=" + size + ")");
        }
    }

    private int backendAt(int position) {
        int b = Short.toUnsignedInt(points.get(U16, (long) position * POINT_LENGTH + POINT_BACKEND_OFFSET));
        return b < backendCount ? b : Ring.NO_BACKEND;
    }

    @Benchmark
    public int library(KeyCursor cursor) {
        return ring.lookupHash(hashes[cursor.next(mask)]);
    }

    @Benchmark
    public int binary(KeyCursor cursor) {
        return backendAt(PointSearch.pointIndex(points, pointCount, hashes[cursor.next(mask)]));
    }
}
