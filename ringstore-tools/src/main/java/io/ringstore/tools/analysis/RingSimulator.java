package io.ringstore.tools.analysis;

import io.ringstore.internal.PointGenerator;
import java.io.InterruptedIOException;
import java.util.function.Consumer;

/**
 * Builds rings in memory with the ring builder's own {@link PointGenerator} (CRC-32 point chains,
 * packed points, bucket sort, one point per hash in tie order) and measures every backend's exact
 * share of the line. One ring at a time: the point array is reused between rings and grows only when
 * a ring needs more. Work is split over {@code threads} (generation by backends, sorting by buckets,
 * measuring by slices); results do not depend on the thread count.
 *
 * <p>{@code hashBits} below 32 keeps only the top bits of every point hash, a smaller line on which
 * collisions come sooner: tests use it to reach the collision regime with small rings.
 *
 * <p>Progress goes to the caller's consumer from the calling thread only, so the consumer need not be
 * thread-safe.
 *
 * <p>Not thread-safe: one ring at a time.
 */
public final class RingSimulator {
    private static final long TABLE_BYTES = 2L * 4 << 22; // bucket counts and cursors at the largest bucket count

    private final PointGenerator generator;

    public RingSimulator(int threads) {
        this.generator = new PointGenerator(threads);
    }

    /** Heap a ring of {@code points} points needs beyond what is already allocated: its packed array and tables. */
    public static long heapBytes(long points, int threads) {
        return 8 * points + threads * TABLE_BYTES + (64L << 20);
    }

    /**
     * One ring's measurement.
     *
     * @param owned   hashes of the line each backend owns (they sum to 2³²)
     * @param points  points generated (before equal hashes are dropped)
     * @param dropped points dropped because a backend earlier in tie order holds their hash
     */
    public record Measurement(long[] owned, long points, long dropped) {}

    /**
     * The points of {@code ring} in ring order, as the builder generates them (equal hashes not yet
     * dropped); valid until the next ring.
     */
    public PointGenerator.Sorted points(SimulatedRing ring, int hashBits, Consumer<String> progress)
            throws InterruptedIOException {
        return generator.generateSorted(ring.members(), hashBits, progress);
    }

    /**
     * Builds and measures {@code ring}; {@code progress} gets lines as the phases go, each prefixed with {@code label}.
     */
    public Measurement simulate(SimulatedRing ring, int hashBits, String label, Consumer<String> progress) {
        Consumer<String> labelled = line -> progress.accept(label + ": " + line);
        try {
            PointGenerator.Sorted sorted = points(ring, hashBits, labelled);
            long[] a = sorted.points();
            int n = sorted.count();
            labelled.accept("measuring arcs of " + n + " points");
            int parts = generator.threads();
            long[][] owned = new long[parts][ring.backends()];
            long[] dropped = new long[parts];
            generator.inParallel(p -> dropped[p] = ArcShares.accumulate(
                    a, n, (int) ((long) n * p / parts), (int) ((long) n * (p + 1) / parts), owned[p]));
            long[] sum = owned[0];
            long drops = dropped[0];
            for (int p = 1; p < parts; p++) {
                for (int b = 0; b < sum.length; b++) {
                    sum[b] += owned[p][b];
                }
                drops += dropped[p];
            }
            return new Measurement(sum, n, drops);
        } catch (InterruptedIOException e) {
            throw new IllegalStateException("interrupted while simulating a ring", e);
        }
    }
}
