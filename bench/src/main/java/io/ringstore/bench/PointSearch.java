package io.ringstore.bench;

import static io.ringstore.internal.format.RingFileDescriptor.POINT_HASH_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.POINT_LENGTH;
import static io.ringstore.internal.format.RingFileDescriptor.U32;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * Searches over a ring's points as mapped: sorted 6-byte records (hash u32, backend u16, little-endian),
 * hashes strictly increasing. Every search returns what {@code Ring.pointIndex} returns: the position of
 * the first point whose hash is ≥ the key's (unsigned), 0 past the last point, -1 for no points.
 *
 * <ul>
 *   <li>{@link #binary}: plain binary search over all points, what the library did before and what the
 *       heap baselines do; kept to compare with;
 *   <li>{@link Sliced}: a copy of the library's search ({@code io.ringstore.internal.format.PointSearch}, same
 *       slice table, same probes) that can report its reads. The library's own code cannot be traced, so
 *       {@link SearchCacheModel} replays this copy, and checks every answer against the library's.
 * </ul>
 *
 * <p>With {@code -Dringstore.bench.traceReads=true} every read is reported to {@link ReadTrace} (for
 * {@link SearchCacheModel}), in rounds ({@link #endRound}): the reads of one round have addresses known
 * before any of them returns, so a processor waits for their misses together; a read whose address
 * or whose being done at all depends on an earlier read starts a new round. Otherwise the check is a
 * constant the JIT removes.
 */
final class PointSearch {
    static final boolean TRACING = Boolean.getBoolean("ringstore.bench.traceReads");

    /** Lines read, one array per round, since the last {@link #drainRounds()}. */
    private static final List<long[]> ROUNDS = new ArrayList<>();
    /** True while the reads being traced belong to one round. */
    private static boolean grouping;

    private PointSearch() {}

    /** Closes the current round of reads (if it read anything): the next read waits for its answers. */
    static void endRound() {
        long[] lines = ReadTrace.drain();
        if (lines.length > 0) {
            ROUNDS.add(lines);
        }
    }

    /** The rounds of reads since the last call, each the lines it read in order; then starts afresh. */
    static List<long[]> drainRounds() {
        endRound();
        List<long[]> out = List.copyOf(ROUNDS);
        ROUNDS.clear();
        return out;
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
     * The library's sliced search: S = ⌈n / {@link #POINTS_PER_SLICE}⌉ equal slices of the hash line,
     * {@code starts[k]} the first point with hash ≥ ⌈k·2^32 / S⌉, so the key's slice gives the range
     * its answer is in; inside it five reads {@link #STEP} points apart around an interpolated guess,
     * a binary search between the two that bracket the key, or a galloping search from the edge.
     */
    static final class Sliced {
        /** The library's constants. */
        private static final int POINTS_PER_SLICE = 512;

        private static final int STEP = 10;

        private final long slices;
        private final int[] starts;

        private Sliced(int slices, int[] starts) {
            this.slices = slices;
            this.starts = starts;
        }

        /** The table the library builds for {@code n} points. */
        static Sliced build(MemorySegment points, int n) {
            int slices = (int) Math.max(1, (n + (long) POINTS_PER_SLICE - 1) / POINTS_PER_SLICE);
            int[] starts = new int[slices + 1];
            long perSlice = n / slices;
            long start = 0;
            for (int k = 1; k < slices; k++) {
                long first = Math.ceilDiv((long) k << 32, slices);
                long guess = Math.min(start + perSlice, n - 1);
                start = hashAt(points, guess) < first
                        ? gallopUp(points, first, guess, n)
                        : gallopDown(points, first, start, guess);
                starts[k] = (int) start;
            }
            starts[slices] = n;
            return new Sliced(slices, starts);
        }

        /** Heap bytes of the table, as {@code PointSearch.Index.bytes()}. */
        long bytes() {
            return 4L * starts.length;
        }

        int pointIndex(MemorySegment points, int n, int hash) {
            if (n == 0) {
                return -1;
            }
            long scaled = Integer.toUnsignedLong(hash) * slices;
            int k = (int) (scaled >>> 32);
            if (TRACING) {
                ReadTrace.read(ReadTrace.INDEX_ADDRESS + 4L * k, 8);
                endRound();
            }
            long p = searchSlice(points, Integer.toUnsignedLong(hash), starts[k], starts[k + 1], scaled & 0xFFFF_FFFFL);
            return p == n ? 0 : (int) p;
        }

        private static long searchSlice(MemorySegment points, long key, long lo, long hi, long place) {
            long m = hi - lo;
            if (m == 0) {
                return lo;
            }
            long guess = lo + ((place * m) >>> 32);
            long p0 = Math.max(guess - 2 * STEP, lo);
            long p1 = Math.max(guess - STEP, lo);
            long p3 = Math.min(guess + STEP, hi - 1);
            long p4 = Math.min(guess + 2 * STEP, hi - 1);
            grouping = TRACING; // the five reads' addresses depend on the table only: one round
            int below = below(points, p0, key)
                    + below(points, p1, key)
                    + below(points, guess, key)
                    + below(points, p3, key)
                    + below(points, p4, key);
            grouping = false;
            if (TRACING) {
                endRound();
            }
            return switch (below) {
                case 0 -> gallopDown(points, key, lo, p0);
                case 1 -> lowerBound(points, key, p0 + 1, p1);
                case 2 -> lowerBound(points, key, p1 + 1, guess);
                case 3 -> lowerBound(points, key, guess + 1, p3);
                case 4 -> lowerBound(points, key, p3 + 1, p4);
                default -> gallopUp(points, key, p4, hi);
            };
        }

        private static int below(MemorySegment points, long position, long key) {
            return hashAt(points, position) < key ? 1 : 0;
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
            if (!grouping) {
                endRound();
            }
            ReadTrace.read(offset, 4);
        }
        return Integer.toUnsignedLong(points.get(U32, offset));
    }
}
