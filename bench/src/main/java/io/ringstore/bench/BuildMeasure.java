package io.ringstore.bench;

import io.ringstore.builder.BackendList;
import io.ringstore.builder.BuildResult;
import io.ringstore.builder.RingBuilder;
import io.ringstore.family.RingFamily;
import io.ringstore.family.RingVersion;
import io.ringstore.internal.BackendRecord;
import io.ringstore.internal.PointGenerator;
import io.ringstore.internal.PointSorter;
import io.ringstore.internal.ServerAddress;
import io.ringstore.internal.ServerParameters;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * Build speed and build memory: points per second for whole builds (generate, sort, drop collisions,
 * write, fsync, verify, rename: {@link BuildResult#nanos()}) of the benchmark rings and of backends files, with
 * the time of each of the builder's phases (from its progress lines, see {@link #PHASES}), the heap and
 * resident memory each build peaked at; the file's bytes per point; the builder's in-memory generation
 * alone ({@link PointGenerator}: CRC-32 chains, bucket placement and sort, no file); and the sort alone,
 * {@link PointSorter#sort} against {@link Arrays#sort(long[])} on the same packed points.
 *
 * <p>Memory per build: heap used after a full GC at the start; the peak of heap used sampled every
 * millisecond by a second thread; the sum of the heap pools' peaks ({@link MemoryPoolMXBean}, reset
 * before; an upper bound, since the pools peak at different moments); resident set size at the start
 * and its peak (VmRSS and VmHWM of /proc/self/status; the peak is reset before by writing 5 to
 * /proc/self/clear_refs).
 *
 * <p>Packed points ({@link PointSorter}) carry the hash in their top 32 bits, so about half are negative
 * as signed longs and {@code Arrays.sort} alone would put hashes ≥ 2^31 first. Flipping the sign bit
 * (XOR {@link Long#MIN_VALUE}) makes signed order equal unsigned order; the Arrays.sort figures include
 * the flip before and after (two linear passes), so both sorts produce the same array, which is checked
 * against the generator's. The sort input is the generator's points in a seeded random order (shuffled
 * outside the timing); {@code PointGenerator} is the time of the generation the builder runs per ring.
 *
 * <p>Builds of sizes are written into the benchmarks' ring cache ({@link BenchRings}), so a build here
 * also prepares the files {@link LookupBenchmark} and {@link SearchBenchmark} open. A backends file
 * (an argument naming an existing file) is built with every feature ring, v1, into the same directory.
 *
 * <pre>
 * java -Xmx4g -cp bench/target/benchmarks.jar io.ringstore.bench.BuildMeasure [--builds N] [--sorts N] [--no-build] [--no-sort] [--tsv FILE] [SIZE|BACKENDS_FILE...]
 * </pre>
 * Sizes default to {@code 2048x10x160 2048x100000}; {@code --builds} to 5 and {@code --sorts} to 5.
 * Rings over 10 million points are built at most 3 times and sorted at most twice. The first round
 * of each includes the JIT's warm-up; the report takes medians. Sorting n points takes 16·n bytes of heap.
 */
public final class BuildMeasure {
    private static final long LARGE_POINTS = 10_000_000;
    private static final long SHUFFLE_SEED = 0x5EED_5047L;

    private BuildMeasure() {}

    public static void main(String[] args) throws Exception {
        int builds = 5;
        int sorts = 5;
        boolean build = true;
        boolean sort = true;
        String tsvPath = null;
        List<String> subjects = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--builds" -> builds = Integer.parseInt(args[++i]);
                case "--sorts" -> sorts = Integer.parseInt(args[++i]);
                case "--no-build" -> build = false;
                case "--no-sort" -> sort = false;
                case "--tsv" -> tsvPath = args[++i];
                default -> subjects.add(args[i]);
            }
        }
        if (subjects.isEmpty()) {
            subjects = List.of(BenchRings.MEDIUM, BenchRings.LARGE);
        }
        try (Tsv tsv = Tsv.create(
                tsvPath,
                "what",
                "subject",
                "round",
                "points",
                "seconds",
                "pointsPerSecond",
                "fileBytes",
                "bytesPerPoint",
                "startHeap",
                "peakHeapSampled",
                "peakHeapPools",
                "startRss",
                "peakRss",
                "countS",
                "placeS",
                "sortS",
                "writeS",
                "syncS",
                "verifyS")) {
            for (String subject : subjects) {
                if (Files.isRegularFile(Path.of(subject))) {
                    if (build) {
                        for (int r = 1; r <= builds; r++) {
                            Path target = BenchRings.dataDir()
                                    .resolve(Path.of(subject).getFileName() + ".ring");
                            Files.createDirectories(target.toAbsolutePath().getParent());
                            BackendList backends = BackendList.parse(Path.of(subject));
                            measureBuild(
                                    subject,
                                    r,
                                    progress -> RingBuilder.of(backends)
                                            .generation(1)
                                            .progress(progress)
                                            .build(target),
                                    tsv);
                        }
                    }
                    continue;
                }
                BenchRings.Shape shape = BenchRings.Shape.of(subject);
                boolean large = shape.points() > LARGE_POINTS;
                if (build) {
                    for (int r = 1; r <= (large ? Math.min(builds, 3) : builds); r++) {
                        measureBuild(
                                shape.name(),
                                r,
                                progress -> BenchRings.build(shape, BenchRings.ringFile(shape), progress),
                                tsv);
                    }
                }
                if (sort) {
                    measureSort(shape, large ? Math.min(sorts, 2) : sorts, tsv);
                }
            }
        }
    }

    /** A build reporting its progress lines to {@code progress}. */
    interface Build {
        BuildResult run(Consumer<String> progress) throws Exception;
    }

    /**
     * The builder's phases, named by the first word of its progress lines: counting points per bucket
     * ("counting"), placing them ("placing"), sorting within buckets ("sorting"), writing ("writing"),
     * fsync ("syncing"), opening and verifying the written file, then the rename ("verifying"); the ring
     * announcement before counting ("building") is in no phase. A phase lasts until the next line, the
     * last one until the build returns; phases of several segments add up.
     */
    private static final List<String> PHASES =
            List.of("counting", "placing", "sorting", "writing", "syncing", "verifying");

    private static void measureBuild(String subject, int round, Build build, Tsv tsv) throws Exception {
        long startHeap = HeapMeasure.usedHeapAfterGc();
        List<MemoryPoolMXBean> heapPools = ManagementFactory.getMemoryPoolMXBeans().stream()
                .filter(p -> p.getType() == MemoryType.HEAP)
                .toList();
        heapPools.forEach(MemoryPoolMXBean::resetPeakUsage);
        resetPeakRss();
        long startRss = procStatusBytes("VmRSS");
        HeapSampler sampler = new HeapSampler();
        long[] phaseNanos = new long[PHASES.size()];
        int[] phase = {-1};
        long[] since = {System.nanoTime()};
        Consumer<String> progress = line -> {
            long now = System.nanoTime();
            if (phase[0] >= 0) {
                phaseNanos[phase[0]] += now - since[0];
            }
            phase[0] = PHASES.indexOf(line.substring(0, Math.max(0, line.indexOf(' '))));
            since[0] = now;
        };
        BuildResult result;
        try {
            result = build.run(progress);
            progress.accept("end");
        } finally {
            sampler.stop();
        }
        long peakRss = procStatusBytes("VmHWM");
        long peakPools =
                heapPools.stream().mapToLong(p -> p.getPeakUsage().getUsed()).sum();
        long generated = result.points() + result.collisions();
        double seconds = result.nanos() / 1e9;
        StringBuilder phases = new StringBuilder();
        for (int p = 0; p < PHASES.size(); p++) {
            phases.append(p == 0 ? "" : ", ")
                    .append(PHASES.get(p))
                    .append(String.format(" %.3f s", phaseNanos[p] / 1e9));
        }
        System.out.printf(
                "build %-16s round %d: %,d points generated (%,d kept, %,d collisions, %d segments) in %.2f s = %,.0f points/s (%s);"
                        + " file %,d bytes = %.4f bytes/point; heap start %,d MB, peak %,d MB sampled (%,d MB pool peaks); RSS start %,d MB, peak %,d MB%n",
                subject,
                round,
                generated,
                result.points(),
                result.collisions(),
                result.segments(),
                seconds,
                generated / seconds,
                phases,
                result.fileBytes(),
                result.bytesPerPoint(),
                startHeap >> 20,
                sampler.peak() >> 20,
                peakPools >> 20,
                startRss >> 20,
                peakRss >> 20);
        tsv.row(
                "build",
                subject,
                round,
                generated,
                seconds,
                generated / seconds,
                result.fileBytes(),
                result.bytesPerPoint(),
                startHeap,
                sampler.peak(),
                peakPools,
                startRss,
                peakRss,
                phaseNanos[0] / 1e9,
                phaseNanos[1] / 1e9,
                phaseNanos[2] / 1e9,
                phaseNanos[3] / 1e9,
                phaseNanos[4] / 1e9,
                phaseNanos[5] / 1e9);
    }

    /** The v1 ring of every backend of {@code shape}, as the builder makes it from the family. */
    static PointGenerator.Members v1Members(BenchRings.Shape shape) {
        List<BackendRecord> backends = new ArrayList<>(shape.backends());
        for (int b = 0; b < shape.backends(); b++) {
            backends.add(new BackendRecord(
                    ServerAddress.parse(shape.address(b)), shape.weight(), 0, ServerParameters.DEFAULTS));
        }
        RingFamily v1 = RingVersion.V1.family();
        long[] points = v1.weights().memberPoints(backends, RingVersion.V1);
        return new PointGenerator.Members(
                RingVersion.V1.points().source(backends),
                v1.ties().ranks(backends),
                Arrays.stream(points).mapToInt(Math::toIntExact).toArray());
    }

    private static void measureSort(BenchRings.Shape shape, int rounds, Tsv tsv) throws IOException {
        int n = Math.toIntExact(shape.points());
        PointGenerator generator = new PointGenerator(line -> {});
        PointGenerator.Members chains = v1Members(shape);
        long expected = 0;
        for (int r = 1; r <= rounds; r++) {
            long g = System.nanoTime();
            long[] a = generator.generateSorted(chains).points();
            report(shape, "PointGenerator", r, n, System.nanoTime() - g, tsv);
            expected = checkSorted(a, n);
            shuffle(a, n);
            long t = System.nanoTime();
            flipSign(a, n);
            Arrays.sort(a, 0, n);
            flipSign(a, n);
            report(shape, "Arrays.sort", r, n, System.nanoTime() - t, tsv);
            if (checkSorted(a, n) != expected) {
                throw new IllegalStateException("PointGenerator and Arrays.sort disagree");
            }
        }
        long[] scratch = new long[n];
        for (int r = 1; r <= rounds; r++) {
            long[] a = generator.generateSorted(chains).points();
            shuffle(a, n);
            long t = System.nanoTime();
            PointSorter.sort(a, n, scratch);
            report(shape, "PointSorter.sort", r, n, System.nanoTime() - t, tsv);
            long actual = checkSorted(a, n);
            if (actual != expected) {
                throw new IllegalStateException(
                        "PointSorter.sort and Arrays.sort disagree: checksums " + actual + " vs " + expected);
            }
        }
    }

    /** Peak of heap used, sampled every millisecond while a build runs. */
    private static final class HeapSampler {
        private final MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        private final Thread thread;
        private volatile boolean running = true;
        private volatile long peak;

        HeapSampler() {
            peak = memory.getHeapMemoryUsage().getUsed();
            thread = Thread.ofPlatform().daemon().name("heap-sampler").start(() -> {
                while (running) {
                    peak = Math.max(peak, memory.getHeapMemoryUsage().getUsed());
                    LockSupport.parkNanos(1_000_000);
                }
            });
        }

        void stop() throws InterruptedException {
            running = false;
            thread.join();
            peak = Math.max(peak, memory.getHeapMemoryUsage().getUsed());
        }

        long peak() {
            return peak;
        }
    }

    /** Resets VmHWM to the current RSS (Linux 4.0+); without /proc the peak is the process's whole life. */
    private static void resetPeakRss() {
        try {
            Files.writeString(Path.of("/proc/self/clear_refs"), "5");
        } catch (IOException e) {
            System.err.println("bench: cannot reset the peak RSS (" + e + "); VmHWM is the peak since the JVM started");
        }
    }

    /** A "Name:   N kB" line of /proc/self/status, in bytes; -1 without /proc. */
    private static long procStatusBytes(String name) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith(name + ":")) {
                    return Long.parseLong(
                                    line.substring(name.length() + 1).trim().split("\\s+")[0])
                            * 1024;
                }
            }
        } catch (IOException e) {
            // not Linux
        }
        return -1;
    }

    /** Puts the packed points in a random order, the same every round: the input of the stand-alone sorts. */
    private static void shuffle(long[] a, int n) {
        SplittableRandom random = new SplittableRandom(SHUFFLE_SEED);
        for (int i = n - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            long t = a[i];
            a[i] = a[j];
            a[j] = t;
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

    private static void report(BenchRings.Shape shape, String what, int round, int n, long nanos, Tsv tsv) {
        System.out.printf(
                "sort  %-12s %-16s round %d: %,d points in %.3f s = %,.0f points/s%n",
                shape.name(), what, round, n, nanos / 1e9, n / (nanos / 1e9));
        tsv.row(
                what,
                shape.name(),
                round,
                n,
                nanos / 1e9,
                n / (nanos / 1e9),
                "",
                "",
                "",
                "",
                "",
                "",
                "",
                "",
                "",
                "",
                "",
                "",
                "");
    }
}
