package io.ringstore.bench;

import java.lang.foreign.MemorySegment;

import static io.ringstore.internal.RingFormat.POINT_HASH_OFFSET;
import static io.ringstore.internal.RingFormat.POINT_LENGTH;
import static io.ringstore.internal.RingFormat.U32;

/**
 * Searches over a ring's points as mapped: sorted 6-byte records (hash u32, backend u16, little-endian),
 * hashes strictly increasing. Every search returns what {@code Ring.pointIndex} returns: the position of
 * the first point whose hash is ≥ the key's (unsigned), 0 past the last point, -1 for no points.
 *
 * <p>The alternatives exploit that point hashes are CRC-32 values, spread evenly over the 32-bit line:
 * the key's position on the line predicts its position in the array to within about √n/2 points, and
 * each further probe shrinks the error to about its square root. They stay correct for any sorted
 * data: a wrong prediction only costs more probes (at most O(log n), through the exponential search).
 *
 * <p>With {@code -Dringstore.bench.traceReads=true} every read is reported to {@link ReadTrace} (for
 * {@link SearchCacheModel}); otherwise the check is a constant the JIT removes.
 */
final class PointSearch {
    static final boolean TRACING = Boolean.getBoolean("ringstore.bench.traceReads");

    /** Interpolation probes after the first guess, at most. */
    static final int MAX_CORRECTIONS = 2;
    /** An estimated distance up to this many points is left to the exponential search. */
    static final int NEAR = 4;

    private PointSearch() {
    }

    /** The library's search: binary search over all points (the code of {@code Ring.pointIndex}). */
    static int binary(MemorySegment points, int n, int hash) {
        if (n == 0) {
            return -1;
        }
        int key = hash ^ Integer.MIN_VALUE; // unsigned order as signed
        int lo = 0;
        int hi = n;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (((int) hashAt(points, mid) ^ Integer.MIN_VALUE) < key) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo == n ? 0 : lo;
    }

    /**
     * Interpolation, no extra memory: guess the position from the key's place on the 32-bit line, correct
     * the guess from the hash read there (at most {@link #MAX_CORRECTIONS} times), then search outward
     * from the last probe in steps 1, 2, 4, …
     */
    static int interpolation(MemorySegment points, int n, int hash) {
        if (n == 0) {
            return -1;
        }
        long p = searchRange(points, Integer.toUnsignedLong(hash), 0, n, 0, 32);
        return p == n ? 0 : (int) p;
    }

    /**
     * Interpolation from a sampled index: {@code starts[k]} is the first point with hash ≥ k·2^(32-bits),
     * so the key's bucket gives the exact range its answer is in, and interpolation starts inside it.
     * The index is private heap memory of each process: 4·(2^bits + 1) bytes per ring.
     */
    static final class SampledIndex {
        private final int shift;
        private final int[] starts;

        private SampledIndex(int shift, int[] starts) {
            this.shift = shift;
            this.starts = starts;
        }

        /** Built with one binary search per bucket boundary: reads O(2^bits · log n) points, not all n. */
        static SampledIndex build(MemorySegment points, int n, int bits) {
            if (bits < 1 || bits > 24) {
                throw new IllegalArgumentException("index bits must be 1..24: bits=" + bits);
            }
            int shift = 32 - bits;
            int[] starts = new int[(1 << bits) + 1];
            for (int k = 0; k < 1 << bits; k++) {
                // max(): on unsorted (corrupt) points the ranges still nest, so searches stay in [0, n].
                starts[k] = Math.max((int) lowerBound(points, (long) k << shift, 0, n), k == 0 ? 0 : starts[k - 1]);
            }
            starts[1 << bits] = n;
            return new SampledIndex(shift, starts);
        }

        long bytes() {
            return 4L * starts.length;
        }

        int pointIndex(MemorySegment points, int n, int hash) {
            if (n == 0) {
                return -1;
            }
            long key = Integer.toUnsignedLong(hash);
            int k = (int) (key >>> shift);
            if (TRACING) {
                ReadTrace.read(ReadTrace.INDEX_ADDRESS + 4L * k, 8);
            }
            long p = searchRange(points, key, starts[k], starts[k + 1], (long) k << shift, shift);
            return p == n ? 0 : (int) p;
        }
    }

    /**
     * The first position in [lo, hi] whose hash is ≥ key (hi if none), given that the points in [lo, hi)
     * are those with hashes in [base, base + 2^width) and every point at or after hi is ≥ key.
     */
    private static long searchRange(MemorySegment points, long key, long lo, long hi, long base, int width) {
        long m = hi - lo;
        if (m == 0) {
            return lo;
        }
        // (key - hash) · m fits a long: |key - hash| < 2^32, m < 2^31.
        long i = lo + (((key - base) * m) >>> width);
        long h = hashAt(points, i);
        for (int c = 0; c < MAX_CORRECTIONS; c++) {
            long distance = ((key - h) * m) >> width;
            if (distance >= -NEAR && distance <= NEAR) {
                break;
            }
            i = Math.min(Math.max(i + distance, lo), hi - 1);
            h = hashAt(points, i);
        }
        return h < key ? gallopUp(points, key, i, hi) : gallopDown(points, key, lo, i);
    }

    /** The answer after {@code below} (whose hash is &lt; key) and at most {@code hi}. */
    private static long gallopUp(MemorySegment points, long key, long below, long hi) {
        long step = 1;
        while (below + step < hi && hashAt(points, below + step) < key) {
            below += step;
            step <<= 1;
        }
        return lowerBound(points, key, below + 1, Math.min(below + step, hi));
    }

    /** The answer at or before {@code atOrAbove} (whose hash is ≥ key) and at least {@code lo}. */
    private static long gallopDown(MemorySegment points, long key, long lo, long atOrAbove) {
        long step = 1;
        while (atOrAbove - step >= lo && hashAt(points, atOrAbove - step) >= key) {
            atOrAbove -= step;
            step <<= 1;
        }
        return lowerBound(points, key, Math.max(atOrAbove - step + 1, lo), atOrAbove);
    }

    /** The first position in [from, to) whose hash is ≥ key, or {@code to}. */
    private static long lowerBound(MemorySegment points, long key, long from, long to) {
        while (from < to) {
            long mid = (from + to) >>> 1;
            if (hashAt(points, mid) < key) {
                from = mid + 1;
            } else {
                to = mid;
            }
        }
        return from;
    }

    private static long hashAt(MemorySegment points, long position) {
        long offset = position * POINT_LENGTH + POINT_HASH_OFFSET;
        if (TRACING) {
            ReadTrace.read(offset, 4);
        }
        return Integer.toUnsignedLong(points.get(U32, offset));
    }
}
