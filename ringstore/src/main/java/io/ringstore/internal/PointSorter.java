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
 * {@link #bucketBits(int)} bits of the hash spreads the points over at most 256 buckets (256 write
 * streams stay in cache; the builder fuses this pass with point generation, so it needs no scratch
 * array the size of the ring). Then each bucket, small enough to sit in cache, is sorted by a
 * least-significant-digit radix sort on the remaining key bits, {@value #DIGIT_BITS} bits a pass,
 * with a scratch array the size of the largest bucket. Bits 15..0 are not sorted on: the rank
 * already decides every tie.
 */
public final class PointSorter {
    private static final int MAX_TOP_BITS = 8;
    private static final int DIGIT_BITS = 10;
    private static final int DIGITS = 1 << DIGIT_BITS;
    /** The least significant key bit (bits below it are the backend index). */
    private static final int KEY_LOW_BIT = 16;
    private static final int INSERTION_SORT_MAX = 48;

    private PointSorter() {
    }

    /** Bits of the first level for n points: 8 (256 buckets), fewer for tiny rings. */
    public static int bucketBits(int n) {
        int log2 = 31 - Integer.numberOfLeadingZeros(Math.max(n, 1));
        return Math.clamp(log2 - 4, 1, MAX_TOP_BITS);
    }

    public static long pack(int hash, int rank, int backend) {
        return ((hash & 0xFFFF_FFFFL) << 32) | ((long) rank << 16) | backend;
    }

    public static int hash(long packed) {
        return (int) (packed >>> 32);
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
        int[] counts = new int[DIGITS];
        for (int b = fromBucket; b < toBucket; b++) {
            sortRange(a, starts[b], limit(starts, b, end), scratch, 0, topBits, counts);
        }
    }

    private static int limit(int[] starts, int b, int end) {
        return b + 1 < starts.length ? starts[b + 1] : end;
    }

    /**
     * Sorts a[from, to), whose elements share their top {@code topBits} bits, on key bits
     * (63 - topBits)..16, using scratch[scratchFrom, scratchFrom + to - from).
     */
    static void sortRange(long[] a, int from, int to, long[] scratch, int scratchFrom, int topBits, int[] counts) {
        int n = to - from;
        if (n <= INSERTION_SORT_MAX) {
            for (int i = from + 1; i < to; i++) {
                long v = a[i];
                int j = i - 1;
                while (j >= from && a[j] > v) { // equal top bits: signed order is unsigned order
                    a[j + 1] = a[j];
                    j--;
                }
                a[j + 1] = v;
            }
            return;
        }
        long[] src = a;
        int srcFrom = from;
        long[] dst = scratch;
        int dstFrom = scratchFrom;
        for (int shift = KEY_LOW_BIT; shift < 64 - topBits; shift += DIGIT_BITS) {
            Arrays.fill(counts, 0);
            for (int i = 0; i < n; i++) {
                counts[(int) (src[srcFrom + i] >>> shift) & (DIGITS - 1)]++;
            }
            prefixSums(counts);
            for (int i = 0; i < n; i++) { // stable: keeps the order the lower digits made
                long v = src[srcFrom + i];
                dst[dstFrom + counts[(int) (v >>> shift) & (DIGITS - 1)]++] = v;
            }
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
        int[] counts = new int[DIGITS];
        for (int b = 0; b < starts.length; b++) {
            sortRange(scratch, starts[b], limit(starts, b, n), a, starts[b], bits, counts);
        }
        System.arraycopy(scratch, 0, a, 0, n);
    }
}
