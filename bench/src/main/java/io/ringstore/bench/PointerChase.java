package io.ringstore.bench;

import io.ringstore.Ring;
import io.ringstore.RingStore;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * A lookup from a precomputed hash against one dependent random memory load, in one JVM: how many
 * memory latencies a lookup costs in a ring too large for any cache.
 *
 * <p>The load: an off-heap region as large as the ring's file, cut into 64-byte slots that hold a
 * random cyclic permutation (Sattolo's shuffle, one cycle through every slot); each step reads the
 * next slot's offset from the current one, so every load waits for the one before. The lookups:
 * {@link Ring#lookupHash(long)} over {@code --lookups} seeded random hashes, twice: one after another
 * as {@link LookupBenchmark} does (independent: the processor may overlap consecutive lookups), and as a
 * chain in which the next hash's position depends on the backend just found (each lookup waits for
 * the one before, as each load of the chase does). Each round times all three, the chase steps as
 * many as there are lookups; the figures are medians over {@code --rounds} rounds after
 * {@value #WARMUP} not counted, the ratios the median of the per-round ratios.
 *
 * <pre>java -Xmx4g -cp bench/target/benchmarks.jar io.ringstore.bench.PointerChase [--lookups N] [--rounds R] [--tsv FILE] [SIZE]</pre>
 *
 * SIZE defaults to {@code 2048x100000} (204.8 million points, a 1.2 GB file).
 */
public final class PointerChase {
    private static final int SLOT_BYTES = 64;
    private static final int WARMUP = 2;
    private static final long HASH_SEED = 0xC4A5EL;
    private static final long PERMUTATION_SEED = 0x51077EDL;
    /** Where results go, so the loops are not optimised away. */
    private static volatile long sink;

    private PointerChase() {}

    public static void main(String[] args) throws Exception {
        String size = BenchRings.LARGE;
        int lookups = 4_194_304;
        int rounds = 9;
        String tsvPath = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--lookups" -> lookups = Integer.parseInt(args[++i]);
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--tsv" -> tsvPath = args[++i];
                default -> size = args[i];
            }
        }
        if (Integer.bitCount(lookups) != 1 || rounds < 1) {
            throw new IllegalArgumentException("--lookups must be a power of two and --rounds at least 1: lookups="
                    + lookups + " rounds=" + rounds);
        }
        try (RingStore store = BenchRings.open(size);
                Arena arena = Arena.ofConfined()) {
            Ring ring = store.ring(Set.of());
            long fileBytes = Files.size(store.path());
            long t0 = System.nanoTime();
            ring.lookupHash(0); // the first lookup builds the ring's search index
            double indexMs = (System.nanoTime() - t0) / 1e6;

            int[] hashes = new SplittableRandom(HASH_SEED).ints(lookups).toArray();
            long slots = fileBytes / SLOT_BYTES;
            t0 = System.nanoTime();
            MemorySegment region = cycle(arena, slots);
            double cycleMs = (System.nanoTime() - t0) / 1e6;
            System.out.printf(
                    "ring %s: %,d points, file %,d bytes; first lookup (index build) %.1f ms%n",
                    size, ring.pointCount(), fileBytes, indexMs);
            System.out.printf(
                    "chase: %,d slots of %d bytes (%,d bytes) in one random cycle, written in %.0f ms; %s%n",
                    slots, SLOT_BYTES, region.byteSize(), cycleMs, hugePages());
            System.out.printf(
                    "%d rounds after %d warm-up, %,d lookups and %,d chase steps a round%n%n",
                    rounds, WARMUP, lookups, lookups);

            double[] chase = new double[rounds];
            double[] independent = new double[rounds];
            double[] dependent = new double[rounds];
            double[] independentRatio = new double[rounds];
            double[] dependentRatio = new double[rounds];
            long position = 0;
            for (int r = -WARMUP; r < rounds; r++) {
                long s = System.nanoTime();
                position = chase(region, position, lookups);
                double c = (System.nanoTime() - s) / (double) lookups;
                s = System.nanoTime();
                sink += lookupAll(ring, hashes);
                double i = (System.nanoTime() - s) / (double) lookups;
                s = System.nanoTime();
                sink += lookupChain(ring, hashes);
                double d = (System.nanoTime() - s) / (double) lookups;
                System.out.printf(
                        "round %2d%s: load %6.1f ns, lookup %6.1f ns (%.2f loads), chained lookup %6.1f ns (%.2f loads)%n",
                        r, r < 0 ? " (warm-up)" : "", c, i, i / c, d, d / c);
                if (r >= 0) {
                    chase[r] = c;
                    independent[r] = i;
                    dependent[r] = d;
                    independentRatio[r] = i / c;
                    dependentRatio[r] = d / c;
                }
            }
            sink += position;
            System.out.printf(
                    "%nmedian: dependent random load %.1f ns; lookupHash %.1f ns = %.2f loads; chained lookupHash %.1f ns = %.2f loads%n",
                    median(chase),
                    median(independent),
                    median(independentRatio),
                    median(dependent),
                    median(dependentRatio));
            try (Tsv tsv = Tsv.create(
                    tsvPath,
                    "size",
                    "points",
                    "loadNs",
                    "lookupNs",
                    "lookupLoads",
                    "chainedLookupNs",
                    "chainedLookupLoads")) {
                tsv.row(
                        size,
                        ring.pointCount(),
                        median(chase),
                        median(independent),
                        median(independentRatio),
                        median(dependent),
                        median(dependentRatio));
            }
        }
    }

    /**
     * {@code slots} 64-byte slots, off-heap, each holding the byte offset of the next slot of one cycle
     * through all of them (Sattolo's shuffle of the identity).
     */
    private static MemorySegment cycle(Arena arena, long slots) {
        if (slots < 2 || slots > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("slots must be in [2, 2^31): slots=" + slots);
        }
        int[] next = new int[(int) slots];
        Arrays.setAll(next, i -> i);
        SplittableRandom random = new SplittableRandom(PERMUTATION_SEED);
        for (int i = next.length - 1; i > 0; i--) {
            int j = random.nextInt(i); // j < i: Sattolo, so the permutation is a single cycle
            int t = next[i];
            next[i] = next[j];
            next[j] = t;
        }
        MemorySegment region = arena.allocate(slots * SLOT_BYTES, 4096);
        for (int i = 0; i < next.length; i++) {
            region.set(ValueLayout.JAVA_LONG, (long) i * SLOT_BYTES, (long) next[i] * SLOT_BYTES);
        }
        return region;
    }

    /** {@code steps} dependent loads from {@code position}; returns where the chase stopped. */
    private static long chase(MemorySegment region, long position, int steps) {
        long p = position;
        for (int i = 0; i < steps; i++) {
            p = region.get(ValueLayout.JAVA_LONG, p);
        }
        return p;
    }

    /** Every hash in order, as a benchmark loop does: consecutive lookups do not wait for each other. */
    private static long lookupAll(Ring ring, int[] hashes) {
        long sum = 0;
        for (int hash : hashes) {
            sum += ring.lookupHash(hash);
        }
        return sum;
    }

    /** As many lookups, each hash chosen by the backend the previous lookup found. */
    private static long lookupChain(Ring ring, int[] hashes) {
        int mask = hashes.length - 1;
        int backend = 0;
        long sum = 0;
        for (int i = 0; i < hashes.length; i++) {
            backend = ring.lookupHash(hashes[(i + backend) & mask]);
            sum += backend;
        }
        return sum;
    }

    /** The process's anonymous huge pages (they would make the chase's loads cheaper than the ring's). */
    private static String hugePages() throws IOException {
        Path rollup = Path.of("/proc/self/smaps_rollup");
        if (!Files.isReadable(rollup)) {
            return "huge pages unknown";
        }
        return Files.readAllLines(rollup).stream()
                .filter(l -> l.startsWith("AnonHugePages:"))
                .map(l -> l.replaceAll("\\s+", " "))
                .findFirst()
                .orElse("AnonHugePages unknown");
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }
}
