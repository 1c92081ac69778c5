package io.ringstore.tools.analysis;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.ringstore.internal.PointSorter;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class ArcSharesTest {
    private static final long LINE = 1L << 32;

    @Test
    void onePointOwnsTheWholeLine() {
        long[] owned = new long[1];
        long[] sorted = {PointSorter.pack(0x1234_5678, 0, 0)};
        assertEquals(0, ArcShares.accumulate(sorted, 1, 0, 1, owned));
        assertEquals(LINE, owned[0]);
    }

    @Test
    void firstPointOwnsTheWrapAround() {
        // Points at 100 (backend 0) and 2^31 (backend 1): backend 1 owns (100, 2^31], backend 0 the rest.
        long[] sorted = {PointSorter.pack(100, 0, 0), PointSorter.pack(Integer.MIN_VALUE, 1, 1)};
        long[] owned = new long[2];
        ArcShares.accumulate(sorted, 2, 0, 2, owned);
        assertEquals((1L << 31) - 100, owned[1]);
        assertEquals(LINE - owned[1], owned[0]);
    }

    /**
     * Brute force on small rings: hashes are multiples of 2^(32-b) (the top b bits only), so the keys of
     * each block (p·s − s, p·s] all go to the first point at or after p·s (wrapping), and walking the
     * 2^b blocks through a TreeMap visits every key of the line. Rings are dense enough that many
     * points share a hash; a shared hash goes to the lowest tie rank.
     */
    @Test
    void arcsMatchBruteForceOverEveryKey() {
        SplittableRandom random = new SplittableRandom(11);
        for (int trial = 0; trial < 200; trial++) {
            int bits = 4 + random.nextInt(9);
            int shift = 32 - bits;
            int backends = 1 + random.nextInt(12);
            int n = 1 + random.nextInt(Math.min(600, 3 << bits));
            int[] rank = shuffledRanks(backends, random);
            long[] points = new long[n];
            TreeMap<Long, Integer> owner = new TreeMap<>(); // hash -> backend of the lowest rank there
            Set<Long> distinct = new HashSet<>();
            for (int i = 0; i < n; i++) {
                long hash = (long) random.nextInt(1 << bits) << shift;
                int b = random.nextInt(backends);
                points[i] = PointSorter.pack((int) hash, rank[b], b);
                owner.merge(hash, b, (x, y) -> rank[x] <= rank[y] ? x : y);
                distinct.add(hash);
            }
            long[] brute = new long[backends];
            long block = 1L << shift;
            for (long p = 0; p < 1L << bits; p++) {
                Map.Entry<Long, Integer> e = owner.ceilingEntry(p * block);
                brute[(e != null ? e : owner.firstEntry()).getValue()] += block;
            }

            long[] sorted = sortUnsigned(points);
            long[] owned = new long[backends];
            long dropped = ArcShares.accumulate(sorted, n, 0, n, owned);
            String what = "trial " + trial + ": bits=" + bits + " backends=" + backends + " points=" + n;
            assertArrayEquals(brute, owned, what);
            assertEquals(n - distinct.size(), dropped, what + ": dropped = points - distinct hashes");

            // Any split into slices sums to the same.
            int cut = random.nextInt(n + 1);
            long[] sliced = new long[backends];
            long slicedDropped =
                    ArcShares.accumulate(sorted, n, 0, cut, sliced) + ArcShares.accumulate(sorted, n, cut, n, sliced);
            assertArrayEquals(owned, sliced, what + " cut at " + cut);
            assertEquals(dropped, slicedDropped, what + " cut at " + cut);
        }
    }

    private static int[] shuffledRanks(int n, SplittableRandom random) {
        int[] rank = new int[n];
        Arrays.setAll(rank, i -> i);
        for (int i = n - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            int t = rank[i];
            rank[i] = rank[j];
            rank[j] = t;
        }
        return rank;
    }

    /** Unsigned order, by flipping the sign bit around a signed sort (independent of PointSorter). */
    private static long[] sortUnsigned(long[] points) {
        long[] a = points.clone();
        for (int i = 0; i < a.length; i++) {
            a[i] ^= Long.MIN_VALUE;
        }
        Arrays.sort(a);
        for (int i = 0; i < a.length; i++) {
            a[i] ^= Long.MIN_VALUE;
        }
        return a;
    }
}
