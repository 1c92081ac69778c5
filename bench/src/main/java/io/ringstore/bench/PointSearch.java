package io.ringstore.bench;

import java.lang.foreign.MemorySegment;

import static io.ringstore.internal.format.RingFileDescriptor.POINT_HASH_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.POINT_LENGTH;
import static io.ringstore.internal.format.RingFileDescriptor.U32;

/**
 * Searches over a ring's points as mapped: sorted 6-byte records (hash u32, backend u16, little-endian),
 * hashes strictly increasing. Every search returns what {@code Ring.pointIndex} returns: the position of
 * the first point whose hash is ≥ the key's (unsigned), 0 past the last point, -1 for no points.
 *
 * <ul>
 *   <li>{@link #binary}: plain binary search over all points, what the library did before and what the
 *       heap baselines do; kept to compare with;
 *   <li>{@link Sliced}: a copy of the library's search ({@code io.ringstore.internal.PointSearch}, same
 *       slice table, same probes) that can report its reads. The library's own code cannot be traced, so
 *       {@link SearchCacheModel} replays this copy, and checks every answer against the library's.
 * </ul>
 *
 * <p>With {@code -Dringstore.bench.traceReads=true} every read is reported to {@link ReadTrace} (for
 * {@link SearchCacheModel}); otherwise the check is a constant the JIT removes.
 */
final class PointSearch {
    static final boolean TRACING = Boolean.getBoolean("ringstore.bench.traceReads");

    private PointSearch() {
    }

    /** Plain binary search over all points. */
    static int binary(MemorySegment points, int n, int hash) {
        if (n == 0) {
            return -1;
        }
        long p = lowerBound(points, Integer.toUnsignedLong(hash), 0, n);
        return p == n ? 0 : (int) p;
    }

    /**
     * The library's sliced interpolation search: {@code starts[k]} is the first point with hash ≥
     * k·2^(32-bits), so the key's slice gives the range its answer is in; inside it an interpolated
     * guess, at most {@link #MAX_CORRECTIONS} corrected guesses, then a galloping search.
     */
    static final class Sliced {
        /** The library's constants: about 2^8 points per slice, at most 2^12 slices. */
        private static final int POINTS_PER_SLICE_LOG2 = 8;
        private static final int MAX_BITS = 12;
        private static final int MAX_CORRECTIONS = 2;
        private static final int NEAR = 4;

        private final int shift;
        private final int[] starts;

        private Sliced(int shift, int[] starts) {
            this.shift = shift;
            this.starts = starts;
        }

        /** The table the library builds for {@code n} points. */
        static Sliced build(MemorySegment points, int n) {
            int log2 = 31 - Integer.numberOfLeadingZeros(Math.max(n, 1));
            int bits = Math.clamp(log2 - POINTS_PER_SLICE_LOG2, 0, MAX_BITS);
            int shift = 32 - bits;
            int[] starts = new int[(1 << bits) + 1];
            for (int k = 1; k < 1 << bits; k++) {
                starts[k] = Math.max((int) lowerBound(points, (long) k << shift, 0, n), starts[k - 1]);
            }
            starts[1 << bits] = n;
            return new Sliced(shift, starts);
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

        private static long searchRange(MemorySegment points, long key, long lo, long hi, long base, int width) {
            long m = hi - lo;
            if (m == 0) {
                return lo;
            }
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

        private static long gallopUp(MemorySegment points, long key, long below, long hi) {
            long step = 1;
            while (below + step < hi && hashAt(points, below + step) < key) {
                below += step;
                step <<= 1;
            }
            return lowerBound(points, key, below + 1, Math.min(below + step, hi));
        }

        private static long gallopDown(MemorySegment points, long key, long lo, long atOrAbove) {
            long step = 1;
            while (atOrAbove - step >= lo && hashAt(points, atOrAbove - step) >= key) {
                atOrAbove -= step;
                step <<= 1;
            }
            return lowerBound(points, key, Math.max(atOrAbove - step + 1, lo), atOrAbove);
        }
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
