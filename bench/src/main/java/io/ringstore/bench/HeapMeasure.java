package io.ringstore.bench;

import io.ringstore.Ring;
import io.ringstore.RingStore;
import io.ringstore.builder.BackendList;
import io.ringstore.builder.RingBuilder;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.ref.Reference;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.function.Supplier;

/**
 * Heap each structure retains, measured: heap used after full collections ({@link MemoryMXBean},
 * {@value #GC_ROUNDS} rounds of {@link System#gc()}) before and after building it from the points of
 * the same mapped ring, with the structure still reachable.
 *
 * <p>For ringstore the structure is an open {@link RingStore} after the first lookups in each of its
 * rings (which build each ring's slice table): the private heap a router pays for a ring file. The file
 * is opened and closed once before, so class loading and static state are not counted. The baselines
 * are {@link Baselines}; the TreeMap is skipped above {@value Baselines#TREEMAP_MAX_POINTS} points.
 *
 * <pre>
 * java -Xmx4g -cp bench/target/benchmarks.jar io.ringstore.bench.HeapMeasure [--tsv FILE] [SIZE|BACKENDS_FILE...]
 * </pre>
 * Sizes default to all three benchmark sizes. A backends file is built (v1, every feature ring) into
 * the benchmarks' ring directory; only ringstore is measured for it.
 */
public final class HeapMeasure {
    private static final int GC_ROUNDS = 4;
    private static final int LOOKUPS_PER_RING = 1_000;
    /** Where lookup results go, so the lookups are not optimised away. */
    private static volatile long sink;

    private HeapMeasure() {}

    public static void main(String[] args) throws Exception {
        String tsvPath = null;
        List<String> subjects = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--tsv")) {
                tsvPath = args[++i];
            } else {
                subjects.add(args[i]);
            }
        }
        if (subjects.isEmpty()) {
            subjects = List.of(BenchRings.SMALL, BenchRings.MEDIUM, BenchRings.LARGE);
        }
        System.out.printf(
                "%-22s %13s %-12s %16s %12s%n", "ring", "points", "structure", "retained bytes", "bytes/point");
        try (Tsv tsv = Tsv.create(tsvPath, "subject", "points", "structure", "retainedBytes", "bytesPerPoint")) {
            for (String subject : subjects) {
                Path file;
                boolean baselines;
                if (Files.isRegularFile(Path.of(subject))) {
                    file = BenchRings.dataDir().resolve(Path.of(subject).getFileName() + ".ring");
                    Files.createDirectories(file.toAbsolutePath().getParent());
                    RingBuilder.of(BackendList.parse(Path.of(subject)))
                            .generation(1)
                            .build(file);
                    baselines = false;
                } else {
                    BenchRings.open(subject).close(); // builds the file if it is not cached yet
                    file = BenchRings.ringFile(BenchRings.Shape.of(subject));
                    baselines = true;
                }
                measure(subject, file, baselines, tsv);
            }
        }
    }

    private static void measure(String subject, Path file, boolean baselines, Tsv tsv) throws Exception {
        openAndLookUp(file).close(); // loads and initialises every class involved
        long before = usedHeapAfterGc();
        RingStore store = openAndLookUp(file);
        long ringstore = usedHeapAfterGc() - before;
        long points = store.rings().stream()
                .filter(r -> !r.isEmpty())
                .collect(java.util.stream.Collectors.toMap(
                        r -> store.layout().segmentOf(r).offset(), Ring::pointCount, (a, b) -> a))
                .values()
                .stream()
                .mapToLong(Integer::longValue)
                .sum(); // rings with one backend set share a segment
        report(tsv, subject, points, "ringstore", ringstore);
        if (baselines) {
            Ring ring = store.ring(Set.of());
            int backends = store.backendCount();
            if (ring.pointCount() <= Baselines.TREEMAP_MAX_POINTS) {
                report(tsv, subject, points, "treemap", retained(() -> new Baselines.TreeMapRing(ring, backends)));
            } else {
                System.out.printf(
                        "%-22s %,13d %-12s skipped: more than %,d points%n",
                        subject, points, "treemap", Baselines.TREEMAP_MAX_POINTS);
            }
            report(tsv, subject, points, "heapArrays", retained(() -> new Baselines.HeapArrays(ring)));
            report(tsv, subject, points, "longPoints", retained(() -> new Baselines.LongPoints(ring)));
        }
        Reference.reachabilityFence(store);
        store.close();
    }

    /** Opens the file and looks up random hashes in each of its rings, so each ring's slice table is built. */
    private static RingStore openAndLookUp(Path file) throws Exception {
        RingStore store = RingStore.open(file);
        SplittableRandom random = new SplittableRandom(1);
        long sum = 0;
        for (Ring ring : store.rings()) {
            for (int i = 0; i < LOOKUPS_PER_RING; i++) {
                sum += ring.lookupHash(random.nextInt());
            }
        }
        sink = sum;
        return store;
    }

    private static long retained(Supplier<Object> build) {
        long before = usedHeapAfterGc();
        Object structure = build.get();
        long after = usedHeapAfterGc();
        Reference.reachabilityFence(structure);
        return after - before;
    }

    private static void report(Tsv tsv, String subject, long points, String structure, long bytes) {
        System.out.printf(
                "%-22s %,13d %-12s %,16d %12.3f%n", subject, points, structure, bytes, (double) bytes / points);
        tsv.row(subject, points, structure, bytes, (double) bytes / points);
    }

    static long usedHeapAfterGc() {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        long used = Long.MAX_VALUE;
        for (int i = 0; i < GC_ROUNDS; i++) {
            System.gc();
            used = Math.min(used, memory.getHeapMemoryUsage().getUsed());
        }
        return used;
    }
}
