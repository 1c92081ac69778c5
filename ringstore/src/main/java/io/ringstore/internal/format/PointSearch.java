package io.ringstore.internal.format;

import static io.ringstore.internal.format.RingFileDescriptor.POINT_HASH_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.POINT_LENGTH;
import static io.ringstore.internal.format.RingFileDescriptor.U32;

import java.lang.foreign.MemorySegment;

/**
 * Finds the point a hash lands on in a sorted 6-byte segment, waiting for about one cache miss.
 *
 * <p>Point hashes are uniform on the 32-bit line, so a hash's position predicts its index. A per-ring
 * table (the {@link Index}) cuts the line into S equal slices, S = ⌈n / {@value #POINTS_PER_SLICE}⌉,
 * and holds the first point of each: the hash's slice gives the range its answer is in, m points
 * (about {@value #POINTS_PER_SLICE}), and the hash's place in the slice predicts the answer to within
 * a standard deviation of at most √m / 2 points (5.7 for 128). Three reads {@value #STEP} points apart
 * around that guess, 60 bytes apart, touch every cache line of a 21-point window; their addresses
 * depend on the table alone, so the processor loads those lines at once rather than one after another.
 * Which half of the window holds the answer is then picked by a mask, and a binary search of the 9
 * points between two reads moves by masks too: 4 steps, each reading a line already loaded, and no
 * branch that depends on where in the window the hash falls, so a lookup mispredicts little and lookups
 * one after another overlap their misses. A guess off by more than 10 points (5 % of random hashes on
 * uniform points) gallops on from the window's edge. Three reads measured faster than five (a 41-point
 * window, rarely missed): the instructions a lookup takes limit how many lookups are in flight.
 *
 * <p>Cost: the table is private heap in each process that searches the ring, 4 bytes per slice, about
 * 4 / (6 · {@value #POINTS_PER_SLICE}) = 0.52 % of the ring's point bytes (504 bytes at 16,000 points,
 * 100 KiB at 3.3 M, 6.1 MiB at 200 M): within 1 %, and small enough to stay in the L1 or L2 cache
 * beside a ring that fits there. It is built after a segment's first {@value #SEARCHES_BEFORE_INDEX}
 * searches (binary searches of the whole segment: a one-shot lookup reads log2(n) points, not every
 * page) by one galloping search per slice boundary, each from the previous boundary, which reads about
 * every page of the points once.
 *
 * <p>Safe on corrupt data: on unsorted points the table's slices still nest and every read is
 * clamped to the key's slice, so the answer is always a position in [0, n).
 */
public final class PointSearch {
    /**
     * Points per slice the table aims at: table bytes per point (0.52 %) against the guess's spread
     * (512 before issue 32: 0.13 %, but a spread of 11 points, which the branchy search after the
     * window's reads paid for in mispredictions).
     */
    static final int POINTS_PER_SLICE = 128;
    /** Points between two of the window's reads: 60 bytes, less than a cache line. */
    static final int STEP = 10;
    /**
     * Searches a segment answers by plain binary search before it builds its index: a one-shot command
     * (ringstore lookup FILE KEY) then reads about log2(n) points instead of a page of every 128 points
     * (at 3.3 M points, 23 reads instead of 25,600 galloping searches over 4,800 pages); a router pays at
     * most this many searches of log2(n) reads before the index serves.
     */
    public static final int SEARCHES_BEFORE_INDEX = 1024;

    private PointSearch() {}

    /** First positions of S equal slices of the hash line. Immutable, so racy publication is safe. */
    public static final class Index {
        private final long slices;
        private final int[] starts;

        private Index(int slices, int[] starts) {
            this.slices = slices;
            this.starts = starts;
        }

        /** Heap bytes held (the private per-process cost of a ring): 4 per slice, plus 4. */
        public long bytes() {
            return 4L * starts.length;
        }
    }

    /**
     * Builds the index for {@code n} points: each slice boundary by a galloping search from where the
     * previous boundary plus an average slice puts it.
     */
    public static Index index(MemorySegment points, int n) {
        int slices = (int) Math.max(1, (n + (long) POINTS_PER_SLICE - 1) / POINTS_PER_SLICE);
        int[] starts = new int[slices + 1];
        long perSlice = n / slices;
        long start = 0;
        for (int k = 1; k < slices; k++) {
            // Slice k holds the hashes h with ⌊h·S / 2^32⌋ = k: from ⌈k·2^32 / S⌉ on.
            long first = Math.ceilDiv((long) k << 32, slices);
            long guess = Math.min(start + perSlice, n - 1);
            // Either way the new start is in [start, n]: on unsorted (corrupt) points the slices still nest.
            start = hashAt(points, guess) < first
                    ? gallopUp(points, first, guess, n)
                    : gallopDown(points, first, start, guess);
            starts[k] = (int) start;
        }
        starts[slices] = n;
        return new Index(slices, starts);
    }

    /** Position of the first point with hash ≥ {@code hash} (unsigned), 0 past the last; -1 when n is 0. */
    public static int pointIndex(MemorySegment points, int n, Index index, int hash) {
        if (n == 0) {
            return -1;
        }
        // key · S < 2^32 · 2^31: the slice in the high 32 bits, the key's place inside it in the low.
        long scaled = Integer.toUnsignedLong(hash) * index.slices;
        int k = (int) (scaled >>> 32);
        if (SearchTrace.ON) {
            SearchTrace.slice(k);
        }
        long p = searchSlice(
                points, Integer.toUnsignedLong(hash), index.starts[k], index.starts[k + 1], scaled & 0xFFFF_FFFFL);
        return p == n ? 0 : (int) p;
    }

    /**
     * {@link #pointIndex(MemorySegment, int, Index, int)} without an index: a binary search of all
     * {@code n} points, the same answer on sorted points (and a position in [0, n) on any).
     */
    public static int pointIndex(MemorySegment points, int n, int hash) {
        if (n == 0) {
            return -1;
        }
        long p = lowerBound(points, Integer.toUnsignedLong(hash), 0, n);
        return p == n ? 0 : (int) p;
    }

    /**
     * The first position in [lo, hi] whose hash is ≥ key (hi if none), given that the points in
     * [lo, hi) are those of the key's slice, every point at or after hi is ≥ key, and the key lies
     * {@code place} / 2^32 of the way through its slice.
     */
    private static long searchSlice(MemorySegment points, long key, long lo, long hi, long place) {
        long m = hi - lo;
        if (m == 0) {
            return lo;
        }
        long guess = lo + ((place * m) >>> 32); // place · m < 2^32 · 2^31; guess < hi
        // Three reads STEP points apart, clamped to the slice (so in order, nondecreasing): no address
        // depends on a read, so their lines load together; what comes next depends on all three.
        long before = Math.max(guess - STEP, lo);
        long after = Math.min(guess + STEP, hi - 1);
        if (SearchTrace.ON) {
            SearchTrace.together(3);
        }
        int belowBefore = below(points, before, key);
        int belowGuess = below(points, guess, key);
        int belowAfter = below(points, after, key);
        if (belowBefore == 0) {
            return gallopDown(points, key, lo, before);
        }
        if (belowAfter != 0) {
            return gallopUp(points, key, after, hi);
        }
        // hash(before) < key ≤ hash(after): the answer is in (before, guess] when the guess's hash is at
        // or above the key, else in (guess, after], picked by a mask rather than a branch (which half is
        // as random as the hash). Unsorted, either is still inside the slice.
        long up = -(long) belowGuess;
        long from = before + 1 + ((guess - before) & up);
        long to = guess + ((after - guess) & up);
        return lowerBoundInGap(points, key, from, to);
    }

    /**
     * The first position in [from, to] with hash ≥ key, given that hash(to) ≥ key (to itself is never
     * read): a binary search whose every step moves by a mask, not a branch, so a lookup whose lines
     * are loaded mispredicts nothing, and lookups one after another overlap their misses. The steps
     * depend only on to − from (STEP − 1 = 9 but at a slice's edge): 4 steps, each a read of a line the
     * window's reads loaded.
     */
    static long lowerBoundInGap(MemorySegment points, long key, long from, long to) {
        long base = from;
        for (long n = to - from + 1; n > 1; ) {
            long half = n >>> 1;
            base += half & ((hashAt(points, base + half - 1) - key) >> 63);
            n -= half;
        }
        return base;
    }

    /** 1 when the hash at {@code position} is below the key, else 0: a subtraction's sign, not a branch. */
    private static int below(MemorySegment points, long position, long key) {
        return (int) ((hashAt(points, position) - key) >>> 63);
    }

    /** Given hash(below) < key: doubling steps up, then a binary search of the last step. */
    private static long gallopUp(MemorySegment points, long key, long below, long hi) {
        long step = 1;
        while (below + step < hi && hashAt(points, below + step) < key) {
            below += step;
            step <<= 1;
        }
        return lowerBound(points, key, below + 1, Math.min(below + step, hi));
    }

    /** Given hash(atOrAbove) ≥ key: doubling steps down, then a binary search of the last step. */
    private static long gallopDown(MemorySegment points, long key, long lo, long atOrAbove) {
        long step = 1;
        while (atOrAbove - step >= lo && hashAt(points, atOrAbove - step) >= key) {
            atOrAbove -= step;
            step <<= 1;
        }
        return lowerBound(points, key, Math.max(atOrAbove - step + 1, lo), atOrAbove);
    }

    /** Plain binary search: the first position in [from, to] with hash ≥ key. */
    static long lowerBound(MemorySegment points, long key, long from, long to) {
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
        if (SearchTrace.ON) {
            SearchTrace.point(position);
        }
        return Integer.toUnsignedLong(points.get(U32, position * POINT_LENGTH + POINT_HASH_OFFSET));
    }
}
