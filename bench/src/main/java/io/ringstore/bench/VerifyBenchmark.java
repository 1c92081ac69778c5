package io.ringstore.bench;

import io.ringstore.RingFileLayout;
import io.ringstore.RingStore;
import io.ringstore.internal.format.SegmentCheck;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
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
 * {@link RingStore#verify()} speed on a file in the page cache, in GB/s of distinct segment bytes
 * checked (each segment once, however many rings share it): the {@code :bytes} line of each benchmark,
 * in bytes per ns.
 *
 * <ul>
 *   <li>{@code verifyFirst}: verify on a store opened just before (not timed), so the pages are faulted
 *       into the mapping as verify reads them: what the CLI's {@code verify} does;
 *   <li>{@code verifyAgain}: verify on a store whose pages are mapped already;
 *   <li>{@code verifyDeepAgain}: {@link RingStore#verifyDeep()} (what {@code ringstore verify} runs since
 *       issue 31: verify and every ring's points generated again, check 13) on the same store;
 *   <li>{@code segmentCheck}: the per-segment kernel alone ({@link SegmentCheck#check}, where verify spends
 *       nearly all its time) on a mapping of the file, with {@code threads} threads a segment.
 * </ul>
 * Sizes: {@code 2048x10x160} (3.3 M points, 19.7 MB) and {@code 2048x100000} (204.8 M points, 1.2 GB),
 * built first if not cached ({@link BenchRings}); the file is verified once at setup, so that it is in
 * the page cache.
 *
 * <pre>
 * java -jar bench/target/benchmarks.jar VerifyBenchmark
 * </pre>
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 11, time = 1)
@Fork(value = 1, jvmArgsAppend = "-Xmx4g") // enough to build the largest ring if it is not cached yet
public class VerifyBenchmark {
    /** The ring file, its distinct segment bytes and points, and a store opened once. */
    @State(Scope.Benchmark)
    public static class Data {
        @Param({BenchRings.MEDIUM, BenchRings.LARGE})
        public String size;

        Path file;
        long segmentBytes;
        long points;
        RingStore store;

        @Setup(Level.Trial)
        public void open() throws Exception {
            BenchRings.open(size).close(); // builds the file if it is not cached yet
            file = BenchRings.ringFile(BenchRings.Shape.of(size));
            store = RingStore.open(file);
            segmentBytes = store.layout().segments().stream()
                    .mapToLong(RingFileLayout.Segment::length)
                    .sum();
            points = store.layout().distinctPointCount();
            check(store.verify()); // reads every segment: into the page cache, and into this store's mapping
        }

        void check(long checked) {
            if (checked != points) {
                throw new IllegalStateException("verify checked " + checked + " points, expected " + points);
            }
        }

        @TearDown(Level.Trial)
        public void close() {
            store.close();
        }
    }

    /** A store opened before each call and closed after it, neither timed. */
    @State(Scope.Thread)
    public static class Fresh {
        RingStore store;

        @Setup(Level.Invocation)
        public void open(Data data) throws Exception {
            store = RingStore.open(data.file);
        }

        @TearDown(Level.Invocation)
        public void close() {
            store.close();
        }
    }

    /** The file's segments, mapped once, and the backends' feature masks, for the kernel alone. */
    @State(Scope.Benchmark)
    public static class Kernel {
        /** Threads that check one segment. */
        @Param({"1", "2"})
        public int threads;

        Arena arena;
        List<MemorySegment> segments;
        SegmentCheck check;

        @Setup(Level.Trial)
        public void map(Data data) throws Exception {
            arena = Arena.ofShared();
            try (FileChannel ch = FileChannel.open(data.file, StandardOpenOption.READ)) {
                MemorySegment mapped = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size(), arena);
                segments = data.store.layout().segments().stream()
                        .map(s -> mapped.asSlice(s.offset(), s.length()))
                        .toList();
            }
            int[] masks = new int[data.store.backendCount()];
            for (int b = 0; b < masks.length; b++) {
                for (String feature : data.store.backend(b).features()) {
                    masks[b] |= 1 << data.store.features().indexOf(feature);
                }
            }
            check = new SegmentCheck(masks, threads);
        }

        @TearDown(Level.Trial)
        public void close() {
            arena.close();
        }
    }

    /** Segment bytes checked: reported beside the calls, per ns of the iteration. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Bytes {
        public long bytes;

        @Setup(Level.Iteration)
        public void reset() {
            bytes = 0;
        }
    }

    @Benchmark
    public void verifyFirst(Data data, Fresh fresh, Bytes counted) throws Exception {
        data.check(fresh.store.verify());
        counted.bytes += data.segmentBytes;
    }

    @Benchmark
    public void verifyAgain(Data data, Bytes counted) throws Exception {
        data.check(data.store.verify());
        counted.bytes += data.segmentBytes;
    }

    @Benchmark
    public void verifyDeepAgain(Data data, Bytes counted) throws Exception {
        data.check(data.store.verifyDeep());
        counted.bytes += data.segmentBytes;
    }

    @Benchmark
    public void segmentCheck(Data data, Kernel kernel, Bytes counted) {
        for (MemorySegment segment : kernel.segments) {
            if (kernel.check.check(segment, 0, null).failure() != null) {
                throw new IllegalStateException("a segment failed its check");
            }
        }
        counted.bytes += data.segmentBytes;
    }
}
