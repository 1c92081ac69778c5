package io.ringstore.bench;

import io.ringstore.RingFileLayout;
import io.ringstore.RingStore;
import io.ringstore.internal.format.SegmentCheck;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * {@link RingStore#verify()} speed: GB/s of distinct segment bytes checked (each segment once, however
 * many rings share it), the file in the page cache.
 *
 * <p>Each round opens the file, times {@code verify()} on the fresh mapping ("first": the pages are
 * faulted into the mapping as verify reads them, what the CLI's {@code verify} does), then times it again
 * on the same store ("again": pages mapped already), and closes it. The file is read once before the
 * warm-up rounds so that it is in the page cache; warm-up rounds compile the code and are not reported:
 * at least {@code --warmup} of them and at least {@value #WARMUP_NANOS} ns' worth (the small file's
 * rounds are short, and its hot loops are compiled late). The median of the rounds is the result.
 *
 * <p>A second table times the per-segment kernel alone ({@link SegmentCheck#check}, what verify spends
 * nearly all its time in) on the same mapping with 1 and with 2 threads, alternating, after as many
 * warm-up rounds.
 *
 * <pre>
 * java -cp bench/target/benchmarks.jar io.ringstore.bench.VerifyMeasure [--rounds N] [--warmup N] [--tsv FILE] [SIZE...]
 * </pre>
 * Sizes default to {@code 2048x10x160} (3.3 M points, 19.7 MB) and {@code 2048x100000} (204.8 M points,
 * 1.2 GB); files are built first if not cached ({@link BenchRings}).
 */
public final class VerifyMeasure {
    private static final long WARMUP_NANOS = 3_000_000_000L;

    private VerifyMeasure() {}

    public static void main(String[] args) throws Exception {
        int rounds = 9;
        int warmup = 3;
        String tsvPath = null;
        List<String> sizes = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--warmup" -> warmup = Integer.parseInt(args[++i]);
                case "--tsv" -> tsvPath = args[++i];
                default -> sizes.add(args[i]);
            }
        }
        if (rounds < 1 || warmup < 0) {
            throw new IllegalArgumentException(
                    "--rounds must be at least 1 and --warmup at least 0: rounds=" + rounds + " warmup=" + warmup);
        }
        if (sizes.isEmpty()) {
            sizes = List.of(BenchRings.MEDIUM, BenchRings.LARGE);
        }
        System.out.printf(
                "%-14s %12s %14s %7s %12s %12s %12s %12s%n",
                "ring", "points", "segment bytes", "rounds", "first GB/s", "first min", "again GB/s", "again min");
        try (Tsv tsv = Tsv.create(tsvPath, "size", "points", "segmentBytes", "rounds", "firstGBps", "againGBps")) {
            for (String size : sizes) {
                measure(size, rounds, warmup, tsv);
            }
        }
        System.out.printf(
                "%nSegmentCheck alone, on the mapped segments:%n%-14s %14s %7s %14s %14s%n",
                "ring", "segment bytes", "rounds", "1 thread GB/s", "2 threads GB/s");
        for (String size : sizes) {
            measureKernel(size, rounds, warmup);
        }
    }

    private static void measure(String size, int rounds, int warmup, Tsv tsv) throws Exception {
        BenchRings.open(size).close(); // builds the file if it is not cached yet
        Path file = BenchRings.ringFile(BenchRings.Shape.of(size));
        long bytes;
        long points;
        try (RingStore store = RingStore.open(file)) {
            bytes = store.layout().segments().stream()
                    .mapToLong(RingFileLayout.Segment::length)
                    .sum();
            points = store.layout().distinctPointCount();
            store.verify(); // reads every segment: into the page cache
        }
        long warmupEnd = System.nanoTime() + WARMUP_NANOS;
        for (int r = 0; r < warmup || System.nanoTime() < warmupEnd; r++) {
            round(file, points, bytes);
        }
        double[] first = new double[rounds];
        double[] again = new double[rounds];
        for (int r = 0; r < rounds; r++) {
            double[] gbps = round(file, points, bytes);
            first[r] = gbps[0];
            again[r] = gbps[1];
        }
        System.out.printf(
                "%-14s %,12d %,14d %7d %12.2f %12.2f %12.2f %12.2f%n",
                size,
                points,
                bytes,
                rounds,
                median(first),
                Arrays.stream(first).min().orElseThrow(),
                median(again),
                Arrays.stream(again).min().orElseThrow());
        tsv.row(
                size,
                points,
                bytes,
                rounds,
                String.format("%.3f", median(first)),
                String.format("%.3f", median(again)));
    }

    private static void measureKernel(String size, int rounds, int warmup) throws Exception {
        Path file = BenchRings.ringFile(BenchRings.Shape.of(size));
        try (RingStore store = RingStore.open(file);
                Arena arena = Arena.ofShared();
                FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            MemorySegment mapped = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size(), arena);
            List<MemorySegment> segments = store.layout().segments().stream()
                    .map(s -> mapped.asSlice(s.offset(), s.length()))
                    .toList();
            long bytes = segments.stream().mapToLong(MemorySegment::byteSize).sum();
            int[] masks = new int[store.backendCount()];
            for (int b = 0; b < masks.length; b++) {
                for (String feature : store.backend(b).features()) {
                    masks[b] |= 1 << store.features().indexOf(feature);
                }
            }
            long warmupEnd = System.nanoTime() + WARMUP_NANOS;
            for (int r = 0; r < warmup || System.nanoTime() < warmupEnd; r++) {
                kernelRound(segments, masks, 1);
                kernelRound(segments, masks, 2);
            }
            double[][] gbps = new double[2][rounds];
            for (int r = 0; r < rounds; r++) {
                gbps[0][r] = bytes / (double) kernelRound(segments, masks, 1);
                gbps[1][r] = bytes / (double) kernelRound(segments, masks, 2);
            }
            System.out.printf("%-14s %,14d %7d %14.2f %14.2f%n", size, bytes, rounds, median(gbps[0]), median(gbps[1]));
        }
    }

    /** Nanoseconds to check every segment with {@code threads} threads a segment. */
    private static long kernelRound(List<MemorySegment> segments, int[] masks, int threads) {
        SegmentCheck check = new SegmentCheck(masks, threads);
        long t0 = System.nanoTime();
        for (MemorySegment segment : segments) {
            if (check.check(segment, 0, null).failure() != null) {
                throw new IllegalStateException("a segment failed its check");
            }
        }
        return System.nanoTime() - t0;
    }

    /** Opens the file and verifies it twice: GB/s of the first (fresh mapping) and the second verify. */
    private static double[] round(Path file, long points, long bytes) throws Exception {
        try (RingStore store = RingStore.open(file)) {
            long t0 = System.nanoTime();
            long checked = store.verify();
            long t1 = System.nanoTime();
            long checkedAgain = store.verify();
            long t2 = System.nanoTime();
            if (checked != points || checkedAgain != points) {
                throw new IllegalStateException(
                        "verify checked " + checked + " and " + checkedAgain + " points, expected " + points);
            }
            return new double[] {bytes / (double) (t1 - t0), bytes / (double) (t2 - t1)};
        }
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }
}
