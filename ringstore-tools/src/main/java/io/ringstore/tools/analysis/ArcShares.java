package io.ringstore.tools.analysis;

import io.ringstore.internal.PointSorter;

/**
 * Exact shares of the 32-bit hash line from a sorted array of packed points ({@link PointSorter}
 * layout: hash, tie rank, backend). A point owns the hashes after the previous kept point up to its
 * own; the first point also owns the wrap-around past the last. Of equal hashes only the first in
 * sorted order (lowest tie rank) is kept, as the ring file does; the others are dropped.
 */
public final class ArcShares {
    /** Hashes on the line: 2³². */
    public static final long LINE = 1L << 32;

    private ArcShares() {}

    /**
     * Adds to {@code owned[backend]} the arc of every kept point in {@code sorted[from, to)}, a slice of
     * a ring of {@code n} sorted points, and returns the number of dropped points in the slice. Slices
     * are independent, so a ring can be measured in parallel and the results summed.
     */
    public static long accumulate(long[] sorted, int n, int from, int to, long[] owned) {
        if (from < 0 || from > to || to > n || n > sorted.length) {
            throw new IllegalArgumentException("slice outside the ring: from=" + from + " to=" + to + " n=" + n);
        }
        long dropped = 0;
        long previous = from == 0 ? hash(sorted[n - 1]) - LINE : hash(sorted[from - 1]);
        for (int i = from; i < to; i++) {
            long h = hash(sorted[i]);
            if (i > 0 && h == previous) {
                dropped++;
                continue;
            }
            owned[PointSorter.backend(sorted[i])] += h - previous;
            previous = h;
        }
        return dropped;
    }

    private static long hash(long packed) {
        return packed >>> 32;
    }
}
