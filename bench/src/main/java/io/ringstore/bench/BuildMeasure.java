package io.ringstore.bench;

import io.ringstore.BuildResult;
import io.ringstore.internal.Crc32;
import io.ringstore.internal.PointSorter;
import io.ringstore.internal.ServerAddress;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Build speed: points per second for whole builds (generate, sort, write, fsync, rename) of the
 * benchmark rings, and for the sort alone, {@link PointSorter#sort} against {@link Arrays#sort(long[])}
 * on the same packed points.
 *
 * <p>Packed points ({@link PointSorter}) carry the hash in their top 32 bits, so about half are negative
 * as signed longs and {@code Arrays.sort} alone would put hashes ≥ 2^31 first. Flipping the sign bit
 * (XOR {@link Long#MIN_VALUE}) makes signed order equal unsigned order; the Arrays.sort figures include
 * the flip before and after (two linear passes), so both sorts produce the same array, which is checked.
 *
 * <p>The sort input is every backend's points in generation order, as {@link io.ringstore.RingBuilder}
 * generates them; the time to generate them (CRC-32 chains, no sort) is printed too, since the builder
 * generates every point twice (a counting pass, then a pass that places each point in its bucket).
 *
 * <p>Builds are written into the benchmarks' ring cache ({@link BenchRings}), so a build here also
 * prepares the files {@link LookupBenchmark} and {@link SearchBenchmark} open.
 *
 * <pre>
 * java -Xmx4g -cp bench/target/benchmarks.jar io.ringstore.bench.BuildMeasure [--builds N] [--sorts N] [--no-build] [--no-sort] [SIZE...]
 * </pre>
 * Sizes default to {@code 2048x10x160 2048x100000}. Rings over 10 million points are built once
 * whatever {@code --builds} says. Sorting n points takes 16·n bytes of heap (array and scratch).
 */
public final class BuildMeasure {
    private static final long LARGE_POINTS = 10_000_000;

    private BuildMeasure() {
    }

    public static void main(String[] args) throws Exception {
        int builds = 3;
        int sorts = 5;
        boolean build = true;
        boolean sort = true;
        List<String> sizes = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--builds" -> builds = Integer.parseInt(args[++i]);
                case "--sorts" -> sorts = Integer.parseInt(args[++i]);
                case "--no-build" -> build = false;
                case "--no-sort" -> sort = false;
                default -> sizes.add(args[i]);
            }
        }
        if (sizes.isEmpty()) {
            sizes = List.of(BenchRings.MEDIUM, BenchRings.LARGE);
        }
        for (String size : sizes) {
            BenchRings.Shape shape = BenchRings.Shape.of(size);
            boolean large = shape.points() > LARGE_POINTS;
            if (build) {
                measureBuild(shape, large ? 1 : builds);
            }
            if (sort) {
                measureSort(shape, large ? Math.min(sorts, 2) : sorts);
            }
        }
    }

    private static void measureBuild(BenchRings.Shape shape, int rounds) throws Exception {
        for (int r = 1; r <= rounds; r++) {
            BuildResult result = BenchRings.build(shape, BenchRings.ringFile(shape));
            long generated = result.points() + result.collisions();
            double seconds = result.nanos() / 1e9;
            System.out.printf("build %-12s round %d: %,d points generated (%,d kept, %,d collisions) in %.2f s = %,.0f points/s; file %,d bytes%n",
                    shape.name(), r, generated, result.points(), result.collisions(), seconds, generated / seconds, result.fileBytes());
        }
    }

    private static void measureSort(BenchRings.Shape shape, int rounds) {
        int n = Math.toIntExact(shape.points());
        long[] a = new long[n];
        long expected = 0;
        for (int r = 1; r <= rounds; r++) {
            long g = System.nanoTime();
            generate(shape, a);
            report(shape, "generate (no sort)", r, n, System.nanoTime() - g);
            long t = System.nanoTime();
            flipSign(a, n);
            Arrays.sort(a, 0, n);
            flipSign(a, n);
            report(shape, "Arrays.sort (sign flipped)", r, n, System.nanoTime() - t);
            expected = checkSorted(a, n);
        }
        long[] scratch = new long[n];
        for (int r = 1; r <= rounds; r++) {
            generate(shape, a);
            long t = System.nanoTime();
            PointSorter.sort(a, n, scratch);
            report(shape, "PointSorter.sort", r, n, System.nanoTime() - t);
            long actual = checkSorted(a, n);
            if (actual != expected) {
                throw new IllegalStateException("PointSorter.sort and Arrays.sort disagree: checksums " + actual + " vs " + expected);
            }
        }
    }

    /** The packed points of every backend in the order RingBuilder generates them (rank = index, as v1). */
    private static void generate(BenchRings.Shape shape, long[] a) {
        int pointsPerBackend = (int) (shape.points() / shape.backends());
        int k = 0;
        for (int b = 0; b < shape.backends(); b++) {
            int base = Crc32.update(Crc32.INITIAL, ServerAddress.parse(shape.address(b)).nginxHashInput());
            int previous = 0;
            for (int j = 0; j < pointsPerBackend; j++) {
                previous = Crc32.nextPoint(base, previous);
                a[k++] = PointSorter.pack(previous, b, b);
            }
        }
    }

    private static void flipSign(long[] a, int n) {
        for (int i = 0; i < n; i++) {
            a[i] ^= Long.MIN_VALUE;
        }
    }

    /** Checks unsigned order and returns an order-sensitive checksum. */
    private static long checkSorted(long[] a, int n) {
        long sum = 0;
        for (int i = 0; i < n; i++) {
            if (i > 0 && Long.compareUnsigned(a[i - 1], a[i]) > 0) {
                throw new IllegalStateException("not sorted at " + i);
            }
            sum = sum * 31 + a[i];
        }
        return sum;
    }

    private static void report(BenchRings.Shape shape, String sort, int round, int n, long nanos) {
        System.out.printf("sort  %-12s %-27s round %d: %,d points in %.3f s = %,.0f points/s%n",
                shape.name(), sort, round, n, nanos / 1e9, n / (nanos / 1e9));
    }
}
