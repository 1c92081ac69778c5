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
 * <p>The sort is one most-significant-digit radix pass on the top {@link #bucketBits(int)} bits of
 * the hash (hashes are uniform, so buckets come out even with about 16 points each), then an
 * insertion sort inside each bucket, where every element shares the top bits and signed order equals
 * unsigned order.
 */
public final class PointSorter {
    private static final int MIN_BUCKET_BITS = 8;
    private static final int MAX_BUCKET_BITS = 22;
    private static final int INSERTION_SORT_MAX = 48;

    private PointSorter() {
    }

    /** Bucket bits for n points: about 16 points a bucket, 2^8 to 2^22 buckets. */
    public static int bucketBits(int n) {
        int log2 = 31 - Integer.numberOfLeadingZeros(Math.max(n, 1));
        return Math.clamp(log2 - 4, MIN_BUCKET_BITS, MAX_BUCKET_BITS);
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

    public static int bucket(int hash, int bits) {
        return hash >>> (32 - bits);
    }

    /**
     * Turns per-bucket counts into start offsets (in place) and returns the total.
     */
    public static long prefixSums(int[] counts) {
        long total = 0;
        for (int b = 0; b < counts.length; b++) {
            int c = counts[b];
            counts[b] = (int) total;
            total += c;
        }
        return total;
    }

    /** Sorts each bucket's range; {@code starts[b]} is where bucket b begins, {@code end} where the last ends. */
    public static void sortBuckets(long[] a, int[] starts, int end) {
        sortBuckets(a, starts, end, 0, starts.length);
    }

    /** Sorts buckets {@code [fromBucket, toBucket)} only; disjoint bucket ranges may be sorted concurrently. */
    public static void sortBuckets(long[] a, int[] starts, int end, int fromBucket, int toBucket) {
        for (int b = fromBucket; b < toBucket; b++) {
            int from = starts[b];
            int to = b + 1 < starts.length ? starts[b + 1] : end;
            sortRange(a, from, to);
        }
    }

    static void sortRange(long[] a, int from, int to) {
        if (to - from <= INSERTION_SORT_MAX) {
            for (int i = from + 1; i < to; i++) {
                long v = a[i];
                int j = i - 1;
                while (j >= from && a[j] > v) {
                    a[j + 1] = a[j];
                    j--;
                }
                a[j + 1] = v;
            }
        } else {
            Arrays.sort(a, from, to);
        }
    }

    /**
     * Sorts {@code a[0..n)} in unsigned order using {@code scratch} (at least n long) — the
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
        System.arraycopy(scratch, 0, a, 0, n);
        sortBuckets(a, starts, n);
    }
}
