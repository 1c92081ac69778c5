package io.ringstore.internal.format;

import static io.ringstore.internal.format.RingFileDescriptor.POINT_BACKEND_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.POINT_HASH_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.POINT_LENGTH;
import static io.ringstore.internal.format.RingFileDescriptor.U16;
import static io.ringstore.internal.format.RingFileDescriptor.U32;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.function.IntUnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * {@link PointSearch} against a plain binary search over the same hashes (written here, on an int[]),
 * on uniform, clustered, colliding and boundary-hugging sorted points, and on unsorted (corrupt) points,
 * where the only promise is a position in [0, n).
 */
class PointSearchTest {
    private static final int[] EDGES = {0, 1, 2, -1, -2, Integer.MIN_VALUE, Integer.MAX_VALUE, Integer.MIN_VALUE + 1};

    /** Points as the file has them: hash u32 little-endian, then a backend u16 (here the position's low bits). */
    private static MemorySegment points(int[] hashes) {
        MemorySegment s = MemorySegment.ofArray(new byte[hashes.length * POINT_LENGTH + 3])
                .asSlice(3); // unaligned, as in a file
        for (int i = 0; i < hashes.length; i++) {
            s.set(U32, (long) i * POINT_LENGTH + POINT_HASH_OFFSET, hashes[i]);
            s.set(U16, (long) i * POINT_LENGTH + POINT_BACKEND_OFFSET, (short) i);
        }
        return s;
    }

    /** The reference: the first position whose hash is ≥ hash (unsigned), 0 past the last, -1 for none. */
    private static int binarySearch(int[] hashes, int hash) {
        if (hashes.length == 0) {
            return -1;
        }
        int from = 0;
        int to = hashes.length;
        while (from < to) {
            int mid = (from + to) >>> 1;
            if (Integer.compareUnsigned(hashes[mid], hash) < 0) {
                from = mid + 1;
            } else {
                to = mid;
            }
        }
        return from == hashes.length ? 0 : from;
    }

    private static int[] sortedUnsigned(int[] hashes) {
        int[] flipped = new int[hashes.length];
        for (int i = 0; i < hashes.length; i++) {
            flipped[i] = hashes[i] ^ Integer.MIN_VALUE;
        }
        Arrays.sort(flipped);
        for (int i = 0; i < flipped.length; i++) {
            flipped[i] ^= Integer.MIN_VALUE;
        }
        return flipped;
    }

    /** Every point's hash, its neighbours, the ends of the line, every slice boundary and {@code randoms} random hashes. */
    private static void assertSameAsBinarySearch(String shape, int[] sorted, int randoms, long seed) {
        MemorySegment segment = points(sorted);
        int n = sorted.length;
        PointSearch.Index index = PointSearch.index(segment, n);
        IntUnaryOperator search = h -> PointSearch.pointIndex(segment, n, index, h);
        for (int h : EDGES) {
            check(shape, sorted, search, h);
        }
        for (int h : sorted) {
            check(shape, sorted, search, h - 1);
            check(shape, sorted, search, h);
            check(shape, sorted, search, h + 1);
        }
        long slices = index.bytes() / 4 - 1;
        for (long k = 1; k < slices; k++) {
            int first = (int) Math.ceilDiv(k << 32, slices);
            check(shape, sorted, search, first - 1);
            check(shape, sorted, search, first);
        }
        SplittableRandom r = new SplittableRandom(seed);
        for (int i = 0; i < randoms; i++) {
            check(shape, sorted, search, r.nextInt());
        }
    }

    private static void check(String shape, int[] sorted, IntUnaryOperator search, int hash) {
        int expected = binarySearch(sorted, hash);
        int actual = search.applyAsInt(hash);
        if (actual != expected) {
            fail(shape + " (n=" + sorted.length + "): hash " + Integer.toUnsignedString(hash) + " lands on " + actual
                    + ", binary search says " + expected);
        }
    }

    @Test
    void uniformPointsOfEverySizeAroundTheSliceLength() {
        SplittableRandom r = new SplittableRandom(1);
        for (int n : new int[] {0, 1, 2, 3, 10, 11, 20, 21, 41, 42, 511, 512, 513, 1023, 1024, 1025, 16_000, 100_003}) {
            int[] sorted = sortedUnsigned(r.ints(n).toArray());
            assertSameAsBinarySearch("uniform", sorted, 20_000, n);
        }
    }

    /**
     * 400 rings of 1 to 6,000 points, a quarter of their hashes in runs of up to 60 equal ones (longer
     * than the window's gaps and the window itself) and some at the line's ends (0 and 2^32 - 1): every
     * point's hash and its neighbours, the ends, the slice boundaries and random hashes land where a
     * plain binary search lands them, wrapping to 0 past the last point.
     */
    @Test
    void manyRingsWithRunsOfEqualHashesAndTheLinesEnds() {
        SplittableRandom r = new SplittableRandom(32);
        for (int ring = 0; ring < 400; ring++) {
            int n = r.nextInt(1, 6_000);
            int[] hashes = new int[n];
            for (int i = 0; i < n; ) {
                int h = switch (r.nextInt(16)) {
                    case 0 -> 0;
                    case 1 -> -1;
                    default -> r.nextInt();
                };
                int run = r.nextInt(4) == 0 ? r.nextInt(1, 61) : 1;
                for (int k = 0; k < run && i < n; k++) {
                    hashes[i++] = h;
                }
            }
            assertSameAsBinarySearch("runs", sortedUnsigned(hashes), 2_000, ring);
        }
    }

    @Test
    void clusteredPointsFarFromTheirInterpolatedPlace() {
        SplittableRandom r = new SplittableRandom(2);
        int n = 50_000;
        // All points in 1/1000 of the line: one slice holds them all, the rest are empty.
        assertSameAsBinarySearch(
                "one cluster",
                sortedUnsigned(r.ints(n, 0x4000_0000, 0x4000_0000 + 4_294_967).toArray()),
                20_000,
                3);
        // Half the points in a narrow band, half spread: dense slices beside sparse ones.
        int[] mixed = new int[n];
        for (int i = 0; i < n; i++) {
            mixed[i] = i % 2 == 0 ? r.nextInt() : r.nextInt(0x7000_0000, 0x7001_0000);
        }
        assertSameAsBinarySearch("band", sortedUnsigned(mixed), 20_000, 4);
        // Squares: density falling along the line, so guesses drift by many windows.
        int[] skewed = new int[n];
        for (int i = 0; i < n; i++) {
            double x = (double) i / n;
            skewed[i] = (int) (long) (x * x * 4_294_967_295.0);
        }
        assertSameAsBinarySearch("skewed", sortedUnsigned(skewed), 20_000, 5);
        // Only the very ends of the line.
        int[] ends = new int[n];
        for (int i = 0; i < n; i++) {
            ends[i] = i < n / 2 ? i : -n + i;
        }
        assertSameAsBinarySearch("ends", sortedUnsigned(ends), 20_000, 6);
    }

    @Test
    void collidingHashesLandOnTheFirstOfTheirRun() {
        SplittableRandom r = new SplittableRandom(7);
        int n = 20_000;
        int[] runs = new int[n];
        for (int i = 0; i < n; ) {
            int h = r.nextInt();
            int length = Math.min(r.nextInt(1, 60), n - i);
            Arrays.fill(runs, i, i + length, h);
            i += length;
        }
        assertSameAsBinarySearch("runs of equal hashes", sortedUnsigned(runs), 20_000, 8);
        int[] allEqual = new int[n];
        Arrays.fill(allEqual, 0x9000_0000);
        assertSameAsBinarySearch("all equal", allEqual, 1_000, 9);
        int[] allMax = new int[n];
        Arrays.fill(allMax, -1);
        assertSameAsBinarySearch("all 2^32 - 1", allMax, 1_000, 10);
    }

    @Test
    void pointsOnAndBesideEverySliceBoundary() {
        SplittableRandom r = new SplittableRandom(13);
        for (int n : new int[] {513, 5_120, 51_200, 51_201}) {
            int slices = (n + PointSearch.POINTS_PER_SLICE - 1) / PointSearch.POINTS_PER_SLICE;
            int[] hashes = r.ints(n).toArray();
            for (int k = 0; k < slices; k++) {
                int first = (int) Math.ceilDiv((long) k << 32, slices);
                hashes[3 * k] = first - 1;
                hashes[3 * k + 1] = first;
                hashes[3 * k + 2] = first + 1;
            }
            assertSameAsBinarySearch("boundaries of " + slices + " slices", sortedUnsigned(hashes), 5_000, n);
        }
    }

    @Test
    void unsortedPointsStillGiveAPositionInsideTheRing() {
        SplittableRandom r = new SplittableRandom(11);
        for (int n : new int[] {1, 2, 5, 21, 41, 512, 513, 1000, 40_000}) {
            int[] random = r.ints(n).toArray();
            int[] reversed = sortedUnsigned(random.clone());
            for (int i = 0; i < n / 2; i++) {
                int t = reversed[i];
                reversed[i] = reversed[n - 1 - i];
                reversed[n - 1 - i] = t;
            }
            int[] sawtooth = new int[n];
            for (int i = 0; i < n; i++) {
                sawtooth[i] = (int) ((i % 7) * 0x2400_0000L);
            }
            int[] sortedButOneSpike = sortedUnsigned(random.clone());
            sortedButOneSpike[n / 2] = -1;
            for (int[] hashes : new int[][] {random, reversed, sawtooth, sortedButOneSpike}) {
                MemorySegment segment = points(hashes);
                PointSearch.Index index = PointSearch.index(segment, n);
                for (int i = 0; i < 20_000; i++) {
                    int h = i < EDGES.length ? EDGES[i] : i < EDGES.length + n ? hashes[i - EDGES.length] : r.nextInt();
                    int p = PointSearch.pointIndex(segment, n, index, h);
                    assertTrue(p >= 0 && p < n, "n=" + n + " hash " + Integer.toUnsignedString(h) + " gave " + p);
                }
            }
        }
    }

    @Test
    void withoutAnIndexTheBinarySearchAnswersTheSame() {
        SplittableRandom r = new SplittableRandom(21);
        int[] runs = new int[5_000];
        for (int i = 0; i < runs.length; i++) {
            runs[i] = r.nextInt(0, 40) * 0x0600_0000;
        }
        for (int[] sorted : new int[][] {
            {},
            {7},
            sortedUnsigned(r.ints(1_000).toArray()),
            sortedUnsigned(runs),
            sortedUnsigned(r.ints(100_003).toArray())
        }) {
            MemorySegment segment = points(sorted);
            IntUnaryOperator search = h -> PointSearch.pointIndex(segment, sorted.length, h);
            for (int h : EDGES) {
                check("no index", sorted, search, h);
            }
            for (int h : sorted) {
                check("no index", sorted, search, h);
                check("no index", sorted, search, h + 1);
            }
            for (int i = 0; i < 5_000; i++) {
                check("no index", sorted, search, r.nextInt());
            }
        }
        int[] reversed = sortedUnsigned(r.ints(1_000).toArray());
        for (int i = 0; i < reversed.length / 2; i++) {
            int t = reversed[i];
            reversed[i] = reversed[reversed.length - 1 - i];
            reversed[reversed.length - 1 - i] = t;
        }
        MemorySegment corrupt = points(reversed);
        for (int i = 0; i < 5_000; i++) {
            int p = PointSearch.pointIndex(corrupt, reversed.length, r.nextInt());
            assertTrue(p >= 0 && p < reversed.length, "unsorted points: " + p);
        }
    }

    @Test
    void aSegmentAnswersTheSameBeforeAndAfterItBuildsItsIndex() {
        SplittableRandom r = new SplittableRandom(22);
        int[] sorted = sortedUnsigned(r.ints(60_000).toArray());
        PointRing.Points points = new PointRing.Points(points(sorted), sorted.length);
        IntUnaryOperator search = points::search;
        // Past the switch from binary searches to the index, every answer checked on both sides of it.
        for (int i = 0; i < 3 * PointSearch.SEARCHES_BEFORE_INDEX; i++) {
            check("searches " + i, sorted, search, i % 3 == 0 ? sorted[r.nextInt(sorted.length)] : r.nextInt());
        }
    }

    @Test
    void noPointsNoPosition() {
        MemorySegment empty = MemorySegment.ofArray(new byte[0]);
        PointSearch.Index index = PointSearch.index(empty, 0);
        for (int h : EDGES) {
            assertEquals(-1, PointSearch.pointIndex(empty, 0, index, h));
            assertEquals(-1, PointSearch.pointIndex(empty, 0, h));
        }
    }

    @Test
    void theIndexCostsFourBytesPerSlice() {
        SplittableRandom r = new SplittableRandom(12);
        for (int n : new int[] {0, 1, 512, 513, 16_000, 100_000}) {
            MemorySegment segment = points(sortedUnsigned(r.ints(n).toArray()));
            long slices = Math.max(1, (n + PointSearch.POINTS_PER_SLICE - 1) / PointSearch.POINTS_PER_SLICE);
            assertEquals(4 * (slices + 1), PointSearch.index(segment, n).bytes(), "n=" + n);
        }
        // 16,000 points: 125 slices, 504 bytes, 0.53 % of the 96,000 bytes of points.
        assertEquals(
                504,
                PointSearch.index(points(sortedUnsigned(r.ints(16_000).toArray())), 16_000)
                        .bytes());
    }
}
