package io.ringstore.bench;

import io.ringstore.builder.BuildResult;
import io.ringstore.family.RingVersion;
import io.ringstore.internal.PointGenerator;
import io.ringstore.internal.PointSorter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;

/**
 * Where a build's time goes, phase by phase, with the in-memory part (what pingora-ketama's
 * {@code Continuum::new} does: generate, sort, drop colliding hashes) and the whole build to a file
 * measured side by side in the same rounds of one JVM.
 *
 * <p>Each round runs, in this order:
 * <ul>
 *   <li>{@code memory}: a new {@link PointGenerator} (as each build makes one, so the array of packed
 *       points is allocated every time) generates the ring of every backend, then a pass over the
 *       sorted points counts the hashes kept (the writer's own first pass, the dedup); phases count,
 *       place, sort (from the generator's progress lines), dedup, and other (the rest: making the
 *       generator, allocating the array);</li>
 *   <li>{@code build}: the whole build through {@code RingBuilder} into the benchmarks' ring cache
 *       ({@link BenchRings#build}); phases from the builder's progress lines: setup (from the ring's
 *       announcement to counting: the generator's chains, its array of points, the shares), count, place, sort, write
 *       (drop collisions, pack 6-byte points, CRC-32C, FileChannel.write), sync (fsync), verify (open
 *       and verify the written file, then rename and directory fsync), and other (the rest of
 *       {@link BuildResult#nanos()}: reading the old generation, locking, creating the file).</li>
 * </ul>
 * It prints every round, then per phase the first round (a fresh JVM: what a command-line build
 * pays), the median of all rounds and the median of the rounds after {@code --warmup}.
 *
 * <pre>
 * java -Xmx4g -cp bench/target/benchmarks.jar io.ringstore.bench.BuildPhases [--rounds N] [--warmup W] [--only memory|build] [SIZE...]
 * </pre>
 * Sizes default to {@code 2048x10x160}; rounds to 11, warm-up rounds to 5.
 */
public final class BuildPhases {
    private static final List<String> MEMORY_PHASES = List.of("count", "place", "sort", "dedup", "other");
    private static final List<String> BUILD_PHASES =
            List.of("setup", "count", "place", "sort", "write", "sync", "verify", "other");
    /** Where the sum of kept hashes goes, so that the dedup pass is not optimised away. */
    private static volatile long sink;

    private BuildPhases() {}

    public static void main(String[] args) throws Exception {
        int rounds = 11;
        int warmup = 5;
        String only = null;
        List<String> sizes = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--warmup" -> warmup = Integer.parseInt(args[++i]);
                case "--only" -> only = args[++i];
                default -> sizes.add(args[i]);
            }
        }
        if (only != null && !only.equals("memory") && !only.equals("build")) {
            throw new IllegalArgumentException("--only takes memory or build: " + only);
        }
        if (rounds < 1 || warmup < 0 || warmup >= rounds) {
            throw new IllegalArgumentException(
                    "need rounds >= 1 and 0 <= warmup < rounds: rounds=" + rounds + " warmup=" + warmup);
        }
        if (sizes.isEmpty()) {
            sizes = List.of(BenchRings.MEDIUM);
        }
        for (String size : sizes) {
            BenchRings.Shape shape = BenchRings.Shape.of(size);
            Path file = BenchRings.ringFile(shape);
            long[][] memory = new long[rounds][];
            long[][] build = new long[rounds][];
            for (int r = 0; r < rounds; r++) {
                if (!"build".equals(only)) {
                    System.gc(); // the last round's array of points goes now, not during the next measurement
                    memory[r] = memory(shape);
                    print(shape, "memory", r + 1, MEMORY_PHASES, memory[r]);
                }
                if (!"memory".equals(only)) {
                    System.gc();
                    build[r] = build(shape, file);
                    print(shape, "build", r + 1, BUILD_PHASES, build[r]);
                }
            }
            if (!"build".equals(only)) {
                summary(shape, "memory", MEMORY_PHASES, memory, warmup);
            }
            if (!"memory".equals(only)) {
                summary(shape, "build", BUILD_PHASES, build, warmup);
            }
        }
    }

    /** The in-memory part once: nanoseconds per {@link #MEMORY_PHASES} phase, then the total. */
    private static long[] memory(BenchRings.Shape shape) throws Exception {
        PointGenerator.Members chains = BuildMeasure.v1Members(shape);
        Phases phases = new Phases(MEMORY_PHASES, "counting", "placing", "sorting", "writing");
        long start = System.nanoTime();
        PointGenerator generator = new PointGenerator(phases);
        PointGenerator.Sorted sorted = generator.generateSorted(chains);
        phases.accept("writing " + sorted.count() + " points of " + RingVersion.V1); // as the builder reports it
        long kept = dedup(sorted);
        phases.accept("end");
        long end = System.nanoTime();
        sink += kept;
        return phases.nanos(end - start);
    }

    /** The writer's first pass: the points kept, one per distinct hash (summed, so that the JIT keeps the loop). */
    private static long dedup(PointGenerator.Sorted sorted) {
        long[] a = sorted.points();
        int n = sorted.count();
        long kept = 0;
        long sum = 0;
        int previousHash = 0;
        for (int i = 0; i < n; i++) {
            int h = PointSorter.hash(a[i]);
            if (i == 0 || h != previousHash) {
                kept++;
                sum += a[i];
                previousHash = h;
            }
        }
        return kept + (sum & 1);
    }

    /** The whole build once: nanoseconds per {@link #BUILD_PHASES} phase, then the total ({@link BuildResult#nanos()}). */
    private static long[] build(BenchRings.Shape shape, Path file) throws Exception {
        Phases phases = new Phases(
                BUILD_PHASES, "building", "counting", "placing", "sorting", "writing", "syncing", "verifying");
        BuildResult result = BenchRings.build(shape, file, phases);
        phases.accept("end");
        return phases.nanos(result.nanos());
    }

    /**
     * Progress lines turned into phase times: a line starting with the i-th of {@code words} starts
     * phase i, any other line ends the phase running (its time goes to the last phase, "other", when
     * there is one more phase than words; else nowhere).
     */
    private static final class Phases implements Consumer<String> {
        private final List<String> names;
        private final List<String> words;
        private final long[] nanos;
        private int phase = -1;
        private long since = System.nanoTime();

        Phases(List<String> names, String... words) {
            this.names = names;
            this.words = List.of(words);
            this.nanos = new long[names.size() + 1];
        }

        @Override
        public void accept(String line) {
            long now = System.nanoTime();
            if (phase >= 0) {
                nanos[phase] += now - since;
            }
            phase = words.indexOf(line.substring(0, Math.max(0, line.indexOf(' '))));
            since = now;
        }

        /** The phase times and {@code total} last; "other" (when named) is what the named phases leave of the total. */
        long[] nanos(long total) {
            long[] out = nanos.clone();
            out[names.size()] = total;
            if (names.size() > words.size()) {
                long known = 0;
                for (int p = 0; p < words.size(); p++) {
                    known += out[p];
                }
                out[names.size() - 1] = total - known;
            }
            return out;
        }
    }

    private static void print(BenchRings.Shape shape, String what, int round, List<String> names, long[] nanos) {
        StringBuilder line = new StringBuilder(String.format("%-6s %-12s round %2d:", what, shape.name(), round));
        for (int p = 0; p < names.size(); p++) {
            line.append(String.format(" %s %.1f", names.get(p), nanos[p] / 1e6));
        }
        long total = nanos[names.size()];
        line.append(String.format(" = %.1f ms, %.1f M points/s", total / 1e6, shape.points() / (total / 1e3)));
        System.out.println(line);
    }

    private static void summary(BenchRings.Shape shape, String what, List<String> names, long[][] rounds, int warmup) {
        System.out.printf(
                "%s %s (%,d points), ms: round 1 | median of %d rounds | median of rounds %d-%d%n",
                what, shape.name(), shape.points(), rounds.length, warmup + 1, rounds.length);
        for (int p = 0; p <= names.size(); p++) {
            String name = p < names.size() ? names.get(p) : "total";
            double first = rounds[0][p] / 1e6;
            double all = median(rounds, p, 0) / 1e6;
            double steady = median(rounds, p, warmup) / 1e6;
            System.out.printf("  %-7s %9.1f %9.1f %9.1f%n", name, first, all, steady);
        }
        int t = names.size();
        System.out.printf(
                "  M points/s %6.1f %9.1f %9.1f%n",
                shape.points() / (rounds[0][t] / 1e3),
                shape.points() / (median(rounds, t, 0) / 1e3),
                shape.points() / (median(rounds, t, warmup) / 1e3));
    }

    /** Median of column {@code p} over rounds {@code from..}; the lower middle for an even count. */
    private static double median(long[][] rounds, int p, int from) {
        long[] v = new long[rounds.length - from];
        for (int r = from; r < rounds.length; r++) {
            v[r - from] = rounds[r][p];
        }
        Arrays.sort(v);
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2.0;
    }
}
