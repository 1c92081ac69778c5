package io.ringstore.internal.format;

import static io.ringstore.internal.format.RingFileDescriptor.POINT_LENGTH;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.ringstore.internal.format.SegmentCheck.Failure;
import io.ringstore.internal.format.SegmentCheck.Kind;
import io.ringstore.internal.format.SegmentCheck.Result;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;
import net.openhft.chronicle.testframework.process.JavaProcessBuilder;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link SegmentCheck} against a point-by-point oracle (the checks {@code RingStore.verify} made before
 * the kernel) and {@link CRC32C}: valid segments, each failure at chunk edges and around the split
 * between two threads, tie ranks, and a file shrinking under the mapping.
 */
class SegmentCheckTest {
    private static final int BACKENDS = 300;
    /** Points in a segment long enough to be split: a little over {@link SegmentCheck#SPLIT_BYTES}. */
    /** The backend lacking feature bit 0. */
    private static final int LACKING = BACKENDS - 1;

    private static final int SPLIT_POINTS = (int) (SegmentCheck.SPLIT_BYTES / POINT_LENGTH) + 1001;

    /**
     * {@link SegmentCheck#allHashesStored} against a binary search per value: segments across chunk
     * boundaries, with repeated stored hashes (ties), values stored or not, repeated, below the first
     * and above the last stored hash, and with the sign bit set (unsigned order).
     */
    @Test
    void allHashesStoredIsASearchPerValue() {
        SplittableRandom random = new SplittableRandom(21);
        for (int round = 0; round < 16; round++) {
            int n = round < 5 ? round : random.nextInt(1, 3 * SegmentCheck.CHUNK_POINTS);
            int[] stored = new int[n];
            for (int i = 0; i < n; i++) {
                stored[i] = i > 0 && random.nextInt(20) == 0 ? stored[i - 1] : random.nextInt();
            }
            stored = sortedUnsigned(stored);
            byte[] bytes = new byte[n * POINT_LENGTH];
            for (int i = 0; i < n; i++) {
                putHash(bytes, i, stored[i]);
            }
            MemorySegment points = MemorySegment.ofArray(bytes);
            int count = random.nextInt(0, 2000);
            int[] values = new int[count];
            boolean missing = false;
            for (int k = 0; k < count; k++) {
                boolean present = n > 0 && random.nextInt(round % 2 == 0 ? 1000 : 3) != 0;
                values[k] = present ? stored[random.nextInt(n)] : random.nextInt();
                missing |= !contains(stored, values[k]);
            }
            int[] sorted = sortedUnsigned(values);
            assertEquals(
                    !missing,
                    SegmentCheck.allHashesStored(points, sorted, count),
                    "round " + round + ": " + n + " points, " + count + " values");
            if (n > 0) { // the last and first stored hash, and a value just above the last
                int[] ends = sortedUnsigned(new int[] {stored[0], stored[n - 1], stored[n - 1]});
                assertTrue(SegmentCheck.allHashesStored(points, ends, 3), "round " + round);
                if (stored[n - 1] != -1) {
                    assertEquals(
                            contains(stored, stored[n - 1] + 1),
                            SegmentCheck.allHashesStored(points, new int[] {stored[n - 1] + 1}, 1));
                }
            }
        }
    }

    private static int[] sortedUnsigned(int[] values) {
        Integer[] boxed = Arrays.stream(values).boxed().toArray(Integer[]::new);
        Arrays.sort(boxed, Integer::compareUnsigned);
        return Arrays.stream(boxed).mapToInt(Integer::intValue).toArray();
    }

    private static boolean contains(int[] sortedUnsigned, int value) {
        int lo = 0;
        int hi = sortedUnsigned.length - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            int c = Integer.compareUnsigned(sortedUnsigned[mid], value);
            if (c == 0) {
                return true;
            } else if (c < 0) {
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        return false;
    }

    @Test
    void crc32cCombineEqualsTheCrcOfTheConcatenation() {
        SplittableRandom random = new SplittableRandom(14);
        for (int round = 0; round < 300; round++) {
            byte[] bytes = new byte[round < 50 ? round : random.nextInt(1, 100_000)];
            random.nextBytes(bytes);
            int split = random.nextInt(bytes.length + 1);
            int a = crc32c(bytes, 0, split);
            int b = crc32c(bytes, split, bytes.length);
            assertEquals(
                    crc32c(bytes, 0, bytes.length),
                    SegmentCheck.crc32cCombine(a, b, bytes.length - split),
                    "split at " + split + " of " + bytes.length);
        }
    }

    /**
     * Second parts of over 2^29 bytes (2^32 bits and more: where a table of x^(2^k) reused modulo 32,
     * as zlib's for CRC-32, goes wrong for CRC-32C): random bytes, then 1.5 GB of zeros, fed to
     * {@link CRC32C} against the combination.
     */
    @Test
    void crc32cCombineHoldsForSecondPartsOverTwoToThe29Bytes() {
        byte[] first = new byte[1000];
        new SplittableRandom(29).nextBytes(first);
        byte[] zeros = new byte[1 << 20];
        long length = 1_500_000_007L; // bits 29 and 30 set
        CRC32C whole = new CRC32C();
        CRC32C second = new CRC32C();
        whole.update(first);
        for (long left = length; left > 0; left -= zeros.length) {
            int n = (int) Math.min(zeros.length, left);
            whole.update(zeros, 0, n);
            second.update(zeros, 0, n);
        }
        assertEquals(
                (int) whole.getValue(),
                SegmentCheck.crc32cCombine(crc32c(first, 0, first.length), (int) second.getValue(), length));
        assertEquals(
                0x1234_5678, SegmentCheck.crc32cCombine(0x1234_5678, 0, 0), "an empty second part changes nothing");
    }

    @Test
    void aValidSegmentGivesItsCrcBackendsAndCommonMask() {
        int[] masks = masks();
        for (int threads = 1; threads <= 2; threads++) {
            for (int n : new int[] {
                1,
                2,
                SegmentCheck.CHUNK_POINTS - 1,
                SegmentCheck.CHUNK_POINTS,
                SegmentCheck.CHUNK_POINTS + 1,
                2 * SegmentCheck.CHUNK_POINTS + 7,
                SPLIT_POINTS
            }) {
                byte[] bytes = segment(n, new SplittableRandom(n), LACKING);
                Result got = new SegmentCheck(masks, threads).check(MemorySegment.ofArray(bytes), 0b1, null);
                assertSame(oracle(bytes, masks, 0b1, null), got, threads + " threads, " + n + " points");
                assertNull(got.failure());
                assertEquals(n, got.distinctHashes());
            }
        }
    }

    /** A long segment of a confined arena, which no other thread may read: checked by the caller alone. */
    @Test
    void aConfinedSegmentIsNotSplit() {
        int[] masks = masks();
        byte[] bytes = segment(SPLIT_POINTS, new SplittableRandom(8), LACKING);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment points = arena.allocate(bytes.length);
            MemorySegment.copy(MemorySegment.ofArray(bytes), 0, points, 0, bytes.length);
            assertSame(
                    oracle(bytes, masks, 0b1, null), new SegmentCheck(masks, 2).check(points, 0b1, null), "confined");
        }
    }

    /** One instance, many segments: backends seen in one are not counted as seen in the next. */
    @Test
    void scratchSpaceIsResetBetweenSegments() {
        int[] masks = masks();
        SegmentCheck check = new SegmentCheck(masks, 2);
        SplittableRandom random = new SplittableRandom(7);
        for (int round = 0; round < 6; round++) {
            int n = round % 2 == 0 ? SPLIT_POINTS : random.nextInt(1, 5_000);
            byte[] bytes = segment(n, random, 1 + random.nextInt(BACKENDS));
            assertSame(
                    oracle(bytes, masks, 0, null),
                    check.check(MemorySegment.ofArray(bytes), 0, null),
                    "round " + round);
        }
    }

    /** Every kind of failure, at the edges of chunks and of the two threads' halves: the first is reported. */
    @Tag("slow")
    @Test
    void theFirstFailingPointIsReported() {
        int[] masks = masks();
        int n = SPLIT_POINTS;
        int half = n / 2;
        int c = SegmentCheck.CHUNK_POINTS;
        int[] positions = {0, 1, c - 1, c, c + 1, half - 1, half, half + 1, half + c, n - 1};
        byte[] valid = segment(n, new SplittableRandom(3), LACKING);
        for (int threads = 1; threads <= 2; threads++) {
            SegmentCheck check = new SegmentCheck(masks, threads);
            for (int at : positions) {
                for (Kind kind : List.of(Kind.ORDER, Kind.NO_BACKEND, Kind.LACKS_FEATURES)) {
                    byte[] bytes = valid.clone();
                    corrupt(bytes, at, kind);
                    Result got = check.check(MemorySegment.ofArray(bytes), 0b1, null);
                    Result expected = oracle(bytes, masks, 0b1, null);
                    String what = threads + " threads, " + kind + " at " + at;
                    assertEquals(expected.failure(), got.failure(), what);
                    assertEquals(expected.crc32c(), got.crc32c(), what);
                    if (at > 0 || kind != Kind.ORDER) { // point 0 has no order to break
                        assertEquals(kind, got.failure().kind(), what);
                    }
                }
            }
        }
    }

    /** Failures in both halves: the first half's wins, as in one pass. */
    @Test
    void aFailureInTheFirstHalfWinsOverOneInTheSecond() {
        int[] masks = masks();
        byte[] bytes = segment(SPLIT_POINTS, new SplittableRandom(5), BACKENDS);
        int half = SPLIT_POINTS / 2;
        corrupt(bytes, half + 10, Kind.ORDER);
        corrupt(bytes, half - 10, Kind.NO_BACKEND);
        Result got = new SegmentCheck(masks, 2).check(MemorySegment.ofArray(bytes), 0, null);
        assertEquals(
                new Failure(
                        Kind.NO_BACKEND,
                        half - 10,
                        hash(bytes, half - 10),
                        hash(bytes, half - 11),
                        BACKENDS + 5,
                        backend(bytes, half - 11)),
                got.failure());
    }

    /** A backend lacking features that first appears in the second half is reported at that appearance. */
    @Test
    void aBackendFirstSeenInTheSecondHalfIsCheckedThere() {
        int[] masks = masks();
        byte[] bytes = segment(SPLIT_POINTS, new SplittableRandom(9), LACKING);
        int at = SPLIT_POINTS / 2 + 12_345;
        putBackend(bytes, at, LACKING);
        Result got = new SegmentCheck(masks, 2).check(MemorySegment.ofArray(bytes), 0b1, null);
        assertEquals(
                new Failure(
                        Kind.LACKS_FEATURES, at, hash(bytes, at), hash(bytes, at - 1), LACKING, backend(bytes, at - 1)),
                got.failure());
        assertNull(
                new SegmentCheck(masks, 2)
                        .check(MemorySegment.ofArray(bytes), 0, null)
                        .failure(),
                "no feature required");
    }

    @Test
    void tiesAreAllowedOnlyInTieRankOrder() {
        int[] masks = masks();
        int[] rank = new int[BACKENDS];
        for (int b = 0; b < BACKENDS; b++) {
            rank[b] = BACKENDS - b; // backend 0 ranks last
        }
        SplittableRandom random = new SplittableRandom(11);
        for (int threads = 1; threads <= 2; threads++) {
            int n = SPLIT_POINTS;
            byte[] bytes = segment(n, random, BACKENDS);
            // Ties at the chunk edge and across the halves, ranks increasing: backends 20, 10, 5, 2 of equal hash.
            int ties = 0;
            for (int start : new int[] {SegmentCheck.CHUNK_POINTS - 2, n / 2 - 2, 100}) {
                int h = hash(bytes, start);
                int[] group = {20, 10, 5, 2};
                for (int k = 0; k < group.length; k++) {
                    putHash(bytes, start + k, h);
                    putBackend(bytes, start + k, group[k]);
                }
                ties += group.length - 1;
            }
            SegmentCheck check = new SegmentCheck(masks, threads);
            Result got = check.check(MemorySegment.ofArray(bytes), 0, rank);
            assertSame(oracle(bytes, masks, 0, rank), got, threads + " threads");
            assertNull(got.failure());
            assertEquals(n - ties, got.distinctHashes());
            assertEquals(
                    Kind.ORDER,
                    check.check(MemorySegment.ofArray(bytes), 0, null).failure().kind(),
                    "no ties without ranks");

            int at = n / 2; // the third of the group across the halves: backend 5 after 10
            putBackend(bytes, at, 30);
            Result bad = check.check(MemorySegment.ofArray(bytes), 0, rank);
            assertEquals(
                    new Failure(Kind.TIE_ORDER, at, hash(bytes, at), hash(bytes, at), 30, 10),
                    bad.failure(),
                    threads + " threads");
            putBackend(bytes, at, BACKENDS + 1);
            assertEquals(
                    Kind.NO_BACKEND,
                    check.check(MemorySegment.ofArray(bytes), 0, rank).failure().kind());
        }
    }

    @Test
    void segmentsOfPartPointsAndWrongTieRanksAreRefused() {
        SegmentCheck check = new SegmentCheck(masks(), 1);
        assertThrows(IllegalArgumentException.class, () -> check.check(MemorySegment.ofArray(new byte[7]), 0, null));
        assertThrows(
                IllegalArgumentException.class, () -> check.check(MemorySegment.ofArray(new byte[6]), 0, new int[3]));
        assertThrows(IllegalArgumentException.class, () -> new SegmentCheck(masks(), 3));
    }

    /**
     * A mapped segment, split over two threads, truncated under the mapping: both threads' copies
     * fault, the caller gets the JVM's InternalError, and the JVM does not crash (a child JVM runs it).
     */
    @Tag("process")
    @Test
    void aFileShrinkingUnderTheMappingGivesAnInternalError(@TempDir Path dir) throws Exception {
        assumeTrue(System.getProperty("os.name").startsWith("Linux"), "the SIGBUS behaviour examined is Linux's");
        Path file = dir.resolve("points");
        Files.write(file, segment(SPLIT_POINTS * 2, new SplittableRandom(1), BACKENDS));
        Process child = JavaProcessBuilder.create(ShrinkingChild.class)
                .withJvmArguments(
                        "-Xmx64m", "-XX:ErrorFile=" + dir.resolve("hs_err_pid%p.log"), "-XX:-CreateCoredumpOnCrash")
                .withProgramArguments(file.toString())
                .start();
        String out = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        String err = new String(child.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(child.waitFor(60, TimeUnit.SECONDS));
        assertEquals(0, child.exitValue(), () -> "the child JVM must survive: " + out + "\n" + err);
        assertEquals("java.lang.InternalError: a fault occurred in an unsafe memory access operation", out, err);
    }

    /** Maps the file, truncates it to one page, checks it with two threads and prints what was thrown. */
    static final class ShrinkingChild {
        public static void main(String[] args) throws Exception {
            Path file = Path.of(args[0]);
            try (Arena arena = Arena.ofShared();
                    FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                MemorySegment points = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size(), arena);
                ch.truncate(4096);
                try {
                    new SegmentCheck(masks(), 2).check(points, 0, null);
                    System.out.println("no error");
                } catch (Throwable t) {
                    System.out.println(t);
                }
            }
        }
    }

    /** Every backend has feature bit 0 but {@link #LACKING}, which {@link #segment} never names. */
    private static int[] masks() {
        int[] masks = new int[BACKENDS];
        for (int b = 0; b < BACKENDS; b++) {
            masks[b] = 0b1 | (b % 3 == 0 ? 0b10 : 0) | (b % 5 == 0 ? 0b100 : 0);
        }
        masks[LACKING] = 0b10;
        return masks;
    }

    /**
     * {@code n} points of strictly increasing unsigned hashes spread over the whole range (gaps of 1
     * to 2^32 / n, so they cross 2^31), backends below {@code backends}.
     */
    private static byte[] segment(int n, SplittableRandom random, int backends) {
        long gap = (1L << 32) / n;
        byte[] bytes = new byte[n * POINT_LENGTH];
        long h = random.nextLong(gap);
        for (int i = 0; i < n; i++, h += random.nextLong(1, gap + 1)) {
            putHash(bytes, i, (int) h);
            putBackend(bytes, i, random.nextInt(backends));
        }
        return bytes;
    }

    /** Makes point {@code at} fail {@code kind} (and no earlier point). */
    private static void corrupt(byte[] bytes, int at, Kind kind) {
        switch (kind) {
            case ORDER -> putHash(bytes, at, at == 0 ? 0 : hash(bytes, at - 1));
            case NO_BACKEND -> putBackend(bytes, at, BACKENDS + 5);
            case LACKS_FEATURES -> putBackend(bytes, at, LACKING);
            case TIE_ORDER -> throw new IllegalArgumentException("not without ranks");
        }
    }

    /** What the checks are, point by point. */
    private static Result oracle(byte[] bytes, int[] masks, int required, int[] tieRank) {
        int n = bytes.length / POINT_LENGTH;
        LinkedHashSet<Integer> seen = new LinkedHashSet<>();
        int[] counts = new int[masks.length];
        int common = -1;
        int ties = 0;
        Failure failure = null;
        for (int i = 0; i < n && failure == null; i++) {
            int h = hash(bytes, i);
            int b = backend(bytes, i);
            int ph = i == 0 ? 0 : hash(bytes, i - 1);
            int pb = i == 0 ? 0 : backend(bytes, i - 1);
            if (i > 0 && Integer.compareUnsigned(h, ph) <= 0) {
                if (Integer.compareUnsigned(h, ph) < 0 || tieRank == null) {
                    failure = new Failure(Kind.ORDER, i, h, ph, b, pb);
                } else if (b >= masks.length) {
                    failure = new Failure(Kind.NO_BACKEND, i, h, ph, b, pb);
                } else if (tieRank[b] <= tieRank[pb]) {
                    failure = new Failure(Kind.TIE_ORDER, i, h, ph, b, pb);
                } else {
                    ties++;
                }
            }
            if (failure == null && b >= masks.length) {
                failure = new Failure(Kind.NO_BACKEND, i, h, ph, b, pb);
            } else if (failure == null && (masks[b] & required) != required) {
                failure = new Failure(Kind.LACKS_FEATURES, i, h, ph, b, pb);
            } else if (failure == null && seen.add(b)) {
                common &= masks[b];
            }
            if (failure == null) {
                counts[b]++;
            }
        }
        return new Result(
                crc32c(bytes, 0, bytes.length),
                common,
                seen.stream().mapToInt(Integer::intValue).toArray(),
                n - ties,
                failure,
                counts);
    }

    private static void assertSame(Result expected, Result got, String what) {
        assertEquals(expected.failure(), got.failure(), what);
        assertEquals(expected.crc32c(), got.crc32c(), what);
        assertEquals(expected.commonMask(), got.commonMask(), what);
        assertArrayEquals(expected.backends(), got.backends(), what);
        assertEquals(expected.distinctHashes(), got.distinctHashes(), what);
        if (expected.failure() == null) { // with a failure they are partial and mean nothing
            assertArrayEquals(expected.pointCounts(), got.pointCounts(), what + ": points per backend");
        }
    }

    private static int crc32c(byte[] bytes, int from, int to) {
        CRC32C crc = new CRC32C();
        crc.update(bytes, from, to - from);
        return (int) crc.getValue();
    }

    private static ByteBuffer le(byte[] bytes) {
        return ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
    }

    private static int hash(byte[] bytes, int point) {
        return le(bytes).getInt(point * POINT_LENGTH);
    }

    private static int backend(byte[] bytes, int point) {
        return Short.toUnsignedInt(le(bytes).getShort(point * POINT_LENGTH + 4));
    }

    private static void putHash(byte[] bytes, int point, int hash) {
        le(bytes).putInt(point * POINT_LENGTH, hash);
    }

    private static void putBackend(byte[] bytes, int point, int backend) {
        le(bytes).putShort(point * POINT_LENGTH + 4, (short) backend);
    }
}
