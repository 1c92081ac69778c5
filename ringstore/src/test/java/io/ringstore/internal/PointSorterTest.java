package io.ringstore.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class PointSorterTest {

    /** The reference: Arrays.sort of the boxed values under Long.compareUnsigned. */
    private static long[] unsignedSorted(long[] a, int n) {
        Long[] boxed = new Long[n];
        for (int i = 0; i < n; i++) {
            boxed[i] = a[i];
        }
        Arrays.sort(boxed, Long::compareUnsigned);
        long[] out = a.clone();
        for (int i = 0; i < n; i++) {
            out[i] = boxed[i];
        }
        return out;
    }

    /**
     * The sort orders by bits 63..16 (hash, then tie rank), unsigned; bits 15..0 hold the backend,
     * which the rank already determines in real points, so the order among longs that agree on
     * bits 63..16 is left open. Checks: the same multiset, and keys never decreasing.
     */
    private static void check(long[] a, int n) {
        long[] actual = a.clone();
        PointSorter.sort(actual, n, new long[n]);
        long[] sameElements = unsignedSorted(actual, n);
        assertArrayEquals(unsignedSorted(a, n), sameElements, () -> "a permutation of the input: n=" + n);
        for (int i = 1; i < n; i++) {
            int at = i;
            assertTrue(
                    Long.compareUnsigned(actual[i - 1] >>> 16, actual[i] >>> 16) <= 0,
                    () -> "key order at " + at + " of " + n + ": " + Long.toHexString(actual[at - 1]) + " > "
                            + Long.toHexString(actual[at]));
        }
    }

    @Test
    void sortsInUnsignedOrderLikeArraysSort() {
        SplittableRandom r = new SplittableRandom(11);
        for (int n : new int[] {0, 1, 2, 3, 47, 48, 49, 100, 1000, 65_536, 200_000}) {
            long[] a = new long[n];
            for (int i = 0; i < n; i++) {
                a[i] = r.nextLong(); // half of them negative
            }
            check(a, n);
        }
    }

    @Test
    void crowdedBucketsDuplicatesAndExtremes() {
        SplittableRandom r = new SplittableRandom(12);
        for (int round = 0; round < 20; round++) {
            int n = 50 + r.nextInt(3000);
            long[] a = new long[n];
            long[] tops = {0L, 0x7FFFL, 0x8000L, 0xFFFFL, r.nextInt(0x10000)};
            for (int i = 0; i < n; i++) {
                long top = tops[r.nextInt(tops.length)] << 48; // few buckets: the in-bucket sorts do the work
                long low = r.nextInt(4) == 0 ? r.nextInt(4) : r.nextLong() & 0xFFFF_FFFF_FFFFL;
                a[i] = top | low;
            }
            a[0] = Long.MIN_VALUE;
            a[n - 1] = -1L;
            a[n / 2] = Long.MAX_VALUE;
            check(a, n);
        }
    }

    @Test
    void sortsOnlyThePrefix() {
        SplittableRandom r = new SplittableRandom(13);
        long[] a = r.longs(1000).toArray();
        long[] tail = Arrays.copyOfRange(a, 600, 1000);
        long[] sorted = a.clone();
        PointSorter.sort(sorted, 600, new long[600]);
        assertArrayEquals(tail, Arrays.copyOfRange(sorted, 600, 1000), "elements past n are untouched");
        assertArrayEquals(unsignedSorted(a, 600), unsignedSorted(sorted, 600), "the same elements");
        for (int i = 1; i < 600; i++) {
            assertTrue(Long.compareUnsigned(sorted[i - 1] >>> 16, sorted[i] >>> 16) <= 0, "key order at " + i);
        }
    }

    @Test
    void packedPointsSortByHashThenRank() {
        SplittableRandom r = new SplittableRandom(14);
        int n = 50_000;
        long[] a = new long[n];
        for (int i = 0; i < n; i++) {
            int hash = r.nextInt(4) == 0 ? r.nextInt(100) - 50 : r.nextInt(); // collisions, negative hashes
            a[i] = PointSorter.pack(hash, r.nextInt(65536), r.nextInt(65536));
        }
        PointSorter.sort(a, n, new long[n]);
        for (int i = 1; i < n; i++) {
            int c = Integer.compareUnsigned(PointSorter.hash(a[i - 1]), PointSorter.hash(a[i]));
            assertTrue(c <= 0, "hash order at " + i);
            if (c == 0) {
                assertTrue(((a[i - 1] >>> 16) & 0xFFFF) <= ((a[i] >>> 16) & 0xFFFF), "rank order at " + i);
            }
        }
    }

    @Test
    void packUnpacks() {
        SplittableRandom r = new SplittableRandom(15);
        for (int i = 0; i < 10_000; i++) {
            int hash = r.nextInt();
            int rank = r.nextInt(65536);
            int backend = r.nextInt(65536);
            long p = PointSorter.pack(hash, rank, backend);
            assertEquals(hash, PointSorter.hash(p));
            assertEquals(backend, PointSorter.backend(p));
            assertEquals(rank, (int) ((p >>> 16) & 0xFFFF));
            int bits = 8 + r.nextInt(15);
            assertEquals(Integer.toUnsignedLong(hash) >> (32 - bits), PointSorter.bucket(hash, bits));
        }
    }

    @Test
    void bucketBitsGiveSixteenPointsABucketThen256ThenUpTo1024Buckets() {
        for (int n : new int[] {
            0, 1, 100, 4095, 4096, 65_536, 1 << 20, (1 << 22) - 1, 1 << 22, 1 << 23, 204_800_000, Integer.MAX_VALUE
        }) {
            int bits = PointSorter.bucketBits(n);
            assertTrue(bits >= 1 && bits <= 10, n + " -> " + bits);
            if (n >= 1 << 23) {
                assertEquals(10, bits, "a ring of 8 M points or more uses 1,024 buckets: n=" + n);
            } else if (n >= 1 << 22) {
                assertEquals(9, bits, "n=" + n);
            } else if (n >= 4096) {
                assertEquals(8, bits, "256 buckets up to 4 M points: n=" + n);
            } else if (n >= 32) {
                double perBucket = (double) n / (1 << bits);
                assertTrue(perBucket >= 16 && perBucket < 32, n + " -> " + bits);
            }
        }
    }

    /**
     * The in-bucket sort orders by hash first, then puts runs of equal hashes in rank order: runs of
     * every length, the long ones (beyond insertion sort) too, ranks that disagree with the input order.
     */
    @Test
    void runsOfEqualHashesEndInRankOrder() {
        SplittableRandom r = new SplittableRandom(16);
        for (int runLength : new int[] {2, 3, 48, 49, 500, 5000}) {
            int n = 20_000;
            long[] a = new long[n];
            int[] hashes = {r.nextInt(), r.nextInt(), -1, 0, 0x8000_0000};
            for (int i = 0; i < n; i++) {
                int hash = i < runLength * hashes.length ? hashes[i % hashes.length] : r.nextInt();
                a[i] = PointSorter.pack(hash, r.nextInt(65536), i & 0xFFFF);
            }
            check(a, n);
        }
    }

    @Test
    void prefixSumsTurnCountsIntoStarts() {
        int[] counts = {3, 0, 5, 1};
        assertEquals(9, PointSorter.prefixSums(counts));
        assertArrayEquals(new int[] {0, 3, 3, 8}, counts);
    }
}
