package io.ringstore.internal;

import java.util.Arrays;

/**
 * Sorting of packed points without boxing. A packed point is a {@code long}:
 * <pre>
 *   bits 63..32  hash (u32)
 *   bits 31..16  tie rank: which backend keeps the point when hashes are equal (lower wins)
 *   bits 15..0   backend index
 * </pre>
 * so that unsigned order of the longs is ring order with ties already resolved.
 *
 * <p>A radix sort in two levels, chosen for locality. One most-significant-digit pass on the top
 * {@link #bucketBits(int)} bits of the hash spreads the points over at most 1,024 buckets (256 up to
 * 4 M points: that many write streams stay in cache; the builder fuses this pass with point
 * generation, so it needs no scratch array the size of the ring). Then each bucket, small enough to
 * sit in or near the L2 cache, is sorted by a least-significant-digit radix sort on the rest of the
 * hash only, in digits of at most {@value #DIGIT_BITS} bits (two passes below 256 or 1,024 buckets),
 * with a scratch array the size of the largest bucket; the rare runs of equal hashes are then put in
 * rank order. Bits 15..0 are not sorted on: the rank already decides every tie.
 */
public final class PointSorter {
    /**
     * The widest digit of the in-bucket radix sort: the 24 hash bits below 256 buckets take two passes
     * (a 16 KiB count array each, in L1), as do the 22 below 1,024. Measured on 3.3 M points: two
     * passes of 12 bits beat three of 8 (and the four passes of 10 over hash and rank before).
     */
    private static final int DIGIT_BITS = 12;
    /** Counters of the in-bucket radix sort: three passes of the widest digit (31 hash bits below 1 bucket bit). */
    private static final int COUNTERS = 3 << DIGIT_BITS;
    /** The least significant key bit (bits below it are the backend index). */
    private static final int KEY_LOW_BIT = 16;
    /** The least significant hash bit (bits below it are the tie rank and the backend index). */
    private static final int HASH_LOW_BIT = 32;

    private static final int INSERTION_SORT_MAX = 48;

    private PointSorter() {}

    /**
     * Bits of the first level for n points: fewer for tiny rings (16 to 31 points a bucket), 8 (256
     * buckets) from 4,096 points, 9 from 4 M and 10 (1,024 buckets) from 8 M, so that a bucket of a large
     * ring is 200 K points rather than 800 K (measured on 204.8 M points: the sort took 0.63 s instead of
     * 1.04 s, placing the same; 4,096 buckets made placing 60 % slower).
     */
    public static int bucketBits(int n) {
        int log2 = 31 - Integer.numberOfLeadingZeros(Math.max(n, 1));
        return Math.clamp(log2 - 4, 1, 8) + Math.clamp(log2 - 21, 0, 2);
    }

    public static long pack(int hash, int rank, int backend) {
        return ((hash & 0xFFFF_FFFFL) << 32) | ((long) rank << 16) | backend;
    }

    public static int hash(long packed) {
        return (int) (packed >>> 32);
    }

    /** {@return the end of the run of points from {@code i} that share point i's hash, in sorted {@code packed[0..n)}} */
    public static int sameHashEnd(long[] packed, int i, int n) {
        int h = hash(packed[i]);
        int j = i + 1;
        while (j < n && hash(packed[j]) == h) {
            j++;
        }
        return j;
    }

    public static int backend(long packed) {
        return (int) (packed & 0xFFFF);
    }

    /** The first-level bucket of a hash. */
    public static int bucket(int hash, int bits) {
        return hash >>> (32 - bits);
    }

    /** Turns per-bucket counts into start offsets (in place) and returns the total. */
    public static long prefixSums(int[] counts) {
        long total = 0;
        for (int b = 0; b < counts.length; b++) {
            int c = counts[b];
            counts[b] = (int) total;
            total += c;
        }
        return total;
    }

    /** Sorts every bucket; {@code starts[b]} is where bucket b begins, {@code end} where the last ends. */
    public static void sortBuckets(long[] a, int[] starts, int end) {
        sortBuckets(a, starts, end, 0, starts.length);
    }

    /**
     * Sorts buckets {@code [fromBucket, toBucket)} only, with a scratch array the size of the largest;
     * disjoint bucket ranges may be sorted concurrently.
     */
    public static void sortBuckets(long[] a, int[] starts, int end, int fromBucket, int toBucket) {
        int topBits = Integer.numberOfTrailingZeros(starts.length);
        int largest = 0;
        for (int b = fromBucket; b < toBucket; b++) {
            largest = Math.max(largest, limit(starts, b, end) - starts[b]);
        }
        long[] scratch = new long[largest];
        int[] counts = new int[COUNTERS];
        for (int b = fromBucket; b < toBucket; b++) {
            sortRange(a, starts[b], limit(starts, b, end), scratch, 0, topBits, counts);
        }
    }

    private static int limit(int[] starts, int b, int end) {
        return b + 1 < starts.length ? starts[b + 1] : end;
    }

    /**
     * Sorts a[from, to), whose elements share their top {@code topBits} bits, in unsigned order of bits
     * 63..16 (hash, then tie rank), using scratch[scratchFrom, scratchFrom + to - from).
     */
    static void sortRange(long[] a, int from, int to, long[] scratch, int scratchFrom, int topBits, int[] counts) {
        if (to - from <= INSERTION_SORT_MAX) {
            insertionSort(a, from, to);
            return;
        }
        radixSort(a, from, to, scratch, scratchFrom, HASH_LOW_BIT, 64 - topBits, counts);
        sortTies(a, from, to, scratch, scratchFrom, counts);
    }

    /** Insertion sort of a[from, to), whose elements share their top bit: signed order is unsigned order there. */
    private static void insertionSort(long[] a, int from, int to) {
        for (int i = from + 1; i < to; i++) {
            long v = a[i];
            int j = i - 1;
            while (j >= from && a[j] > v) {
                a[j + 1] = a[j];
                j--;
            }
            a[j + 1] = v;
        }
    }

    /**
     * After the sort on the hash alone: puts each run of equal hashes in rank order. Runs are rare on the
     * 32-bit line (a few per million points) and short, so this is one read of the range; a shortened
     * line ({@code PointGenerator}'s hashBits) makes them long, and those are radix-sorted on the rank.
     */
    private static void sortTies(long[] a, int from, int to, long[] scratch, int scratchFrom, int[] counts) {
        int i = from + 1;
        while (i < to) {
            if (hash(a[i]) != hash(a[i - 1])) {
                i++;
                continue;
            }
            int runFrom = i - 1;
            int h = hash(a[runFrom]);
            int runTo = i + 1;
            while (runTo < to && hash(a[runTo]) == h) {
                runTo++;
            }
            if (runTo - runFrom <= INSERTION_SORT_MAX) {
                insertionSort(a, runFrom, runTo);
            } else {
                radixSort(a, runFrom, runTo, scratch, scratchFrom + runFrom - from, KEY_LOW_BIT, HASH_LOW_BIT, counts);
            }
            i = runTo + 1;
        }
    }

    /**
     * Stable least-significant-digit radix sort of a[from, to) on bits [lowBit, highBit), in as few
     * passes as digits of at most {@value #DIGIT_BITS} bits allow, using scratch[scratchFrom, ...). One
     * read counts the digits of every pass; each pass then moves every element once, between a and
     * scratch, and the result ends in a.
     */
    private static void radixSort(
            long[] a, int from, int to, long[] scratch, int scratchFrom, int lowBit, int highBit, int[] counts) {
        int n = to - from;
        int bits = highBit - lowBit;
        int passes = (bits + DIGIT_BITS - 1) / DIGIT_BITS;
        int digitBits = (bits + passes - 1) / passes;
        int digits = 1 << digitBits;
        Arrays.fill(counts, 0, passes * digits, 0);
        if (passes == 2) {
            countTwoDigits(a, from, to, lowBit, digitBits, counts);
        } else {
            countDigits(a, from, to, lowBit, digitBits, passes, counts);
        }
        long[] src = a;
        int srcFrom = from;
        long[] dst = scratch;
        int dstFrom = scratchFrom;
        for (int p = 0; p < passes; p++) {
            int base = p * digits;
            int sum = dstFrom;
            for (int d = base; d < base + digits; d++) {
                int c = counts[d];
                counts[d] = sum;
                sum += c;
            }
            scatter(src, srcFrom, srcFrom + n, dst, counts, base, lowBit + p * digitBits, digits - 1);
            long[] t = src;
            src = dst;
            dst = t;
            int f = srcFrom;
            srcFrom = dstFrom;
            dstFrom = f;
        }
        if (src != a) {
            System.arraycopy(src, srcFrom, a, from, n);
        }
    }

    /** The digit counts of two passes in one read: the common case (24 hash bits in two digits of 12). */
    private static void countTwoDigits(long[] a, int from, int to, int lowBit, int digitBits, int[] counts) {
        int digits = 1 << digitBits;
        int mask = digits - 1;
        for (int i = from; i < to; i++) {
            long v = a[i] >>> lowBit;
            counts[(int) v & mask]++;
            counts[digits + ((int) (v >>> digitBits) & mask)]++;
        }
    }

    private static void countDigits(long[] a, int from, int to, int lowBit, int digitBits, int passes, int[] counts) {
        int digits = 1 << digitBits;
        int mask = digits - 1;
        for (int i = from; i < to; i++) {
            long v = a[i] >>> lowBit;
            for (int p = 0; p < passes; p++) {
                counts[p * digits + ((int) (v >>> (p * digitBits)) & mask)]++;
            }
        }
    }

    /** Moves src[from, to) to dst at the positions counts[base + digit] hands out, in order: stable. */
    private static void scatter(long[] src, int from, int to, long[] dst, int[] counts, int base, int shift, int mask) {
        for (int i = from; i < to; i++) {
            long v = src[i];
            dst[counts[base + ((int) (v >>> shift) & mask)]++] = v;
        }
    }

    /**
     * Sorts {@code a[0..n)} in unsigned order using {@code scratch} (at least n long): the
     * stand-alone form of the sort, for packed points that already sit in an array.
     */
    public static void sort(long[] a, int n, long[] scratch) {
        int bits = bucketBits(n);
        int[] starts = new int[1 << bits];
        for (int i = 0; i < n; i++) {
            starts[(int) (a[i] >>> (64 - bits))]++;
        }
        prefixSums(starts);
        int[] next = starts.clone();
        for (int i = 0; i < n; i++) {
            long v = a[i];
            scratch[next[(int) (v >>> (64 - bits))]++] = v;
        }
        // The buckets now sit in scratch; each is sorted there with its own range of a as scratch.
        int[] counts = new int[COUNTERS];
        for (int b = 0; b < starts.length; b++) {
            sortRange(scratch, starts[b], limit(starts, b, n), a, starts[b], bits, counts);
        }
        System.arraycopy(scratch, 0, a, 0, n);
    }
}
