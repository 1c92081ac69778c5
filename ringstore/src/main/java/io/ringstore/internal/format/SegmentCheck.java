package io.ringstore.internal.format;

import static io.ringstore.internal.format.RingFileDescriptor.MAX_BACKENDS;
import static io.ringstore.internal.format.RingFileDescriptor.POINT_LENGTH;
import static io.ringstore.internal.format.RingFileDescriptor.U16;
import static io.ringstore.internal.format.RingFileDescriptor.U32;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.zip.CRC32C;

/**
 * One pass over a mapped segment that computes its CRC-32C and checks its points: hashes in order,
 * backend indexes in the backend table, every backend having the ring's features; it keeps the AND of
 * the backends' feature masks, the distinct backends in order of first appearance and the number of
 * distinct hashes. {@code RingStore.verify} builds its errors from the {@link Failure}.
 *
 * <p>The segment is copied to the heap a chunk at a time and both the CRC and the checks read the copy:
 * if the file is truncated under the mapping, the copy raises an {@link InternalError}, where the CRC
 * intrinsic reading the mapping directly would crash the JVM with SIGBUS (seen on JDK 25). A chunk is
 * a whole number of points, so no point straddles two. A segment of at least {@link #SPLIT_BYTES}
 * (not of a confined arena) is split at a point boundary between the calling thread and one more, their CRCs joined with
 * {@link #crc32cCombine}; a failure in the first half wins over one in the second, as one pass would
 * find it first.
 *
 * <p>Each check of a point depends only on it and the point before, and the first failing point is
 * the one reported, checks in the order: hash order, backend index, features (only at a backend's
 * first appearance: its mask does not change). An instance holds scratch space reused from segment to
 * segment; not thread-safe.
 */
public final class SegmentCheck {
    /** Points in a heap chunk: 1,048,572 bytes, just under 1 MiB (a multiple of {@value RingFileDescriptor#POINT_LENGTH}). */
    static final int CHUNK_POINTS = (1 << 20) / POINT_LENGTH;
    /** Segments this long or longer are checked by two threads (when the JVM has two processors). */
    public static final long SPLIT_BYTES = 8L << 20;

    private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
    private static final int REFLECTED_POLY = 0x82F6_3B78; // CRC-32C (Castagnoli), reflected
    /**
     * X2N[k] = x^(2^k) mod P: the factor that shifts a CRC register past 2^k zero bits, for every bit
     * of a length in bits (zlib's 32 entries, reused modulo 32, hold for CRC-32's polynomial but not
     * for CRC-32C's: x^(2^32) is not x modulo it).
     */
    private static final int[] X2N = new int[Long.SIZE + 3];

    static {
        int p = 1 << 30; // x^1
        X2N[0] = p;
        for (int k = 1; k < X2N.length; k++) {
            X2N[k] = p = multiplyModP(p, p);
        }
    }

    /** What a point failed. */
    public enum Kind {
        /** Its hash is not greater than the previous point's (or, with tie ranks, is smaller). */
        ORDER,
        /** Its hash equals the previous point's, and its backend's tie rank is not greater. */
        TIE_ORDER,
        /** It names a backend the file does not have. */
        NO_BACKEND,
        /** Its backend lacks some of the ring's required features. */
        LACKS_FEATURES
    }

    /**
     * The first failing point.
     *
     * @param kind what it failed
     * @param point its index in the segment
     * @param hash its hash
     * @param previousHash the previous point's hash (0 for point 0)
     * @param backend its backend index
     * @param previousBackend the previous point's backend index (0 for point 0)
     */
    public record Failure(Kind kind, int point, int hash, int previousHash, int backend, int previousBackend) {}

    /**
     * A checked segment. With a failure, {@code commonMask}, {@code backends} and {@code distinctHashes}
     * are partial and mean nothing; the CRC always covers the whole segment.
     *
     * @param crc32c the CRC-32C of the segment's bytes
     * @param commonMask the AND of the feature masks of the points' backends (-1 for no points)
     * @param backends the distinct backends, in order of first appearance
     * @param distinctHashes how many distinct hashes (the points, unless tie ranks let hashes repeat)
     * @param failure the first failing point, or null
     * @param pointCounts per backend index, its points in the segment (counted in the same pass, so that
     *                    the verifier's check of each backend's point count reads no point again)
     */
    public record Result(
            int crc32c, int commonMask, int[] backends, int distinctHashes, Failure failure, int[] pointCounts) {}

    private final int[] featureMasks;
    private final int threads;
    private final Scanner first;
    private Scanner second;

    /**
     * Checks segments for a backend table of {@code featureMasks.length} backends with these feature
     * masks, with two threads for long segments if the JVM has two processors.
     *
     * @param featureMasks per backend index, its feature mask
     */
    public SegmentCheck(int[] featureMasks) {
        this(featureMasks, Math.min(2, Runtime.getRuntime().availableProcessors()));
    }

    /**
     * {@link #SegmentCheck(int[])} with at most {@code threads} (1 or 2) threads a segment.
     *
     * @param featureMasks per backend index, its feature mask
     * @param threads 1, or 2 to split segments of {@link #SPLIT_BYTES} or more
     */
    public SegmentCheck(int[] featureMasks, int threads) {
        if (featureMasks.length > MAX_BACKENDS || threads < 1 || threads > 2) {
            throw new IllegalArgumentException("at most " + MAX_BACKENDS + " backends and 1 or 2 threads: backends="
                    + featureMasks.length + " threads=" + threads);
        }
        this.featureMasks = featureMasks.clone();
        this.threads = threads;
        this.first = new Scanner(this.featureMasks);
    }

    /**
     * Checks one segment.
     *
     * @param points the segment: whole 6-byte points, mapped or not; read through heap copies and one
     *               plain read (the point before the second half), never by the CRC intrinsic
     * @param requiredMask the features every point's backend must have
     * @param tieRank null if hashes must strictly increase; else, per backend index, a rank: equal
     *                hashes are allowed when their backends' ranks strictly increase
     * @return the CRC, what the points hold, and the first failing point if any
     * @throws InternalError if the mapped file shrank under the segment (SIGBUS during a copy)
     */
    public Result check(MemorySegment points, int requiredMask, int[] tieRank) {
        return check(points, null, requiredMask, tieRank);
    }

    /**
     * {@link #check(MemorySegment, int, int[])} of a 64-bit ring (FORMAT.md, "64-bit rings"): the
     * 6-byte points hold the high words and {@code lowWords} each point's low word; a high word equal to
     * the previous point's is in order when its low word is greater (unsigned). The CRC covers the
     * points, then the low words.
     *
     * @param lowWords the segment's low words (4 bytes a point, after the points), null for a 32-bit ring
     */
    public Result check(MemorySegment points, MemorySegment lowWords, int requiredMask, int[] tieRank) {
        first.low = lowWords;
        if (second != null) {
            second.low = lowWords;
        }
        Result r = check0(points, requiredMask, tieRank);
        if (lowWords == null) {
            return r;
        }
        return new Result(
                crc32cFollowedBy(r.crc32c(), lowWords),
                r.commonMask(),
                r.backends(),
                r.distinctHashes(),
                r.failure(),
                r.pointCounts());
    }

    /**
     * {@return the CRC-32C of a segment's first part (of CRC {@code crc}) followed by {@code tail}: the
     * low words of a 64-bit ring, the feature bits of storage 3 and 4}
     *
     * @throws InternalError if the mapped file shrank under the tail (SIGBUS during a copy)
     */
    public static int crc32cFollowedBy(int crc, MemorySegment tail) {
        CRC32C c = new CRC32C();
        byte[] copy = new byte[(int) Math.min(tail.byteSize(), 1 << 20)];
        MemorySegment copySegment = MemorySegment.ofArray(copy); // segment to segment: see RingFileReader.crc32c
        for (long at = 0; at < tail.byteSize(); at += copy.length) {
            int len = (int) Math.min(copy.length, tail.byteSize() - at);
            MemorySegment.copy(tail, at, copySegment, 0, len);
            c.update(copy, 0, len);
        }
        return crc32cCombine(crc, (int) c.getValue(), tail.byteSize());
    }

    /**
     * {@return whether each of the first {@code count} values of {@code sorted} (in unsigned order,
     * repeats allowed) is the hash of a point of {@code points}} One pass over the segment, which is
     * in order, read a heap chunk at a time as {@link #check} reads it: no per-point read through the
     * mapping, which a fresh JVM runs interpreted (the verifier's check of 1 M chain hashes against a
     * 3.3 M-point ring).
     *
     * @param points whole 6-byte points in order (hash, then backend)
     * @throws InternalError if the mapped file shrank under the segment (SIGBUS during a copy)
     */
    public static boolean allHashesStored(MemorySegment points, int[] sorted, int count) {
        if (count == 0) {
            return true;
        }
        int n = (int) (points.byteSize() / POINT_LENGTH);
        byte[] chunk = new byte[Math.min(CHUNK_POINTS, Math.max(1, n)) * POINT_LENGTH];
        MemorySegment chunkSegment = MemorySegment.ofArray(chunk); // segment to segment: see RingFileReader.crc32c
        int i = 0;
        for (int start = 0; start < n; start += CHUNK_POINTS) {
            int m = Math.min(CHUNK_POINTS, n - start);
            MemorySegment.copy(points, (long) start * POINT_LENGTH, chunkSegment, 0, (long) m * POINT_LENGTH);
            i = matchChunk(chunk, m, sorted, i, count);
            if (i < 0) {
                return false;
            }
            if (i == count) {
                return true;
            }
        }
        return false; // hashes above every stored one
    }

    /**
     * Matches {@code sorted[i..count)} against the chunk's {@code m} hashes, all above the hashes of the
     * chunks before: the index of the first value past the chunk's last hash, or -1 when a value lies
     * between two stored hashes (it is not stored).
     */
    private static int matchChunk(byte[] chunk, int m, int[] sorted, int i, int count) {
        int p = 0;
        while (i < count && p < m) {
            int stored = (int) INT.get(chunk, p * POINT_LENGTH) ^ Integer.MIN_VALUE; // signed order is unsigned order
            int wanted = sorted[i] ^ Integer.MIN_VALUE;
            if (stored < wanted) {
                p++;
            } else if (stored == wanted) {
                i++; // the next value may repeat it: the same point matches it
            } else {
                return -1;
            }
        }
        return i;
    }

    private Result check0(MemorySegment points, int requiredMask, int[] tieRank) {
        long bytes = points.byteSize();
        if (bytes % POINT_LENGTH != 0
                || bytes / POINT_LENGTH > Integer.MAX_VALUE
                || (tieRank != null && tieRank.length != featureMasks.length)) {
            throw new IllegalArgumentException(
                    "a segment is whole points (at most 2^31 - 1) and tie ranks one per backend: bytes=" + bytes
                            + " tieRanks=" + (tieRank == null ? "none" : tieRank.length) + " backends="
                            + featureMasks.length);
        }
        int n = (int) (bytes / POINT_LENGTH);
        if (threads == 2 && bytes >= SPLIT_BYTES) {
            Result split = checkSplit(points, n, requiredMask, tieRank);
            if (split != null) {
                return split;
            }
        }
        first.scan(points, 0, n, requiredMask, tieRank);
        return result(first, first.crc);
    }

    /** Checks the first half here and the second on a helper thread; null if the helper cannot read the segment (a confined arena's). */
    private Result checkSplit(MemorySegment points, int n, int requiredMask, int[] tieRank) {
        int half = n / 2;
        Throwable[] thrown = new Throwable[1];
        Thread helper = Thread.ofPlatform()
                .name("ringstore-segment-check")
                .daemon()
                .unstarted(() -> {
                    try {
                        second.scan(points, half, n, requiredMask, tieRank);
                    } catch (Throwable t) {
                        thrown[0] = t;
                    }
                });
        if (!points.isAccessibleBy(helper)) {
            return null;
        }
        if (second == null) {
            second = new Scanner(featureMasks);
            second.low = first.low;
        }
        helper.start();
        try {
            first.scan(points, 0, half, requiredMask, tieRank);
        } finally {
            joinUninterruptibly(helper);
        }
        if (thrown[0] instanceof Error e) {
            throw e;
        } else if (thrown[0] != null) {
            throw (RuntimeException) thrown[0]; // scan throws no checked exception
        }
        int crc = crc32cCombine(first.crc, second.crc, (long) (n - half) * POINT_LENGTH);
        if (first.failure == null) {
            first.merge(second);
        }
        return result(first, crc);
    }

    private static Result result(Scanner s, int crc) {
        return new Result(
                crc, s.common, Arrays.copyOf(s.seen, s.seenCount), s.distinctHashes, s.failure, s.counts.clone());
    }

    private static void joinUninterruptibly(Thread t) {
        boolean interrupted = false;
        while (true) {
            try {
                t.join();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * The CRC-32C of {@code A + B} from {@code crcA} of A and {@code crcB} of B ({@code lengthB}
     * bytes): crcA's register shifted past lengthB zero bytes, multiplied over GF(2) modulo the
     * polynomial, then added to crcB (zlib's {@code crc32_combine}, O(log lengthB)).
     *
     * @param crcA CRC-32C of the first part
     * @param crcB CRC-32C of the second part
     * @param lengthB bytes in the second part, at least 0
     * @return the CRC-32C of both parts together
     */
    public static int crc32cCombine(int crcA, int crcB, long lengthB) {
        if (lengthB < 0) {
            throw new IllegalArgumentException("lengthB must be at least 0: lengthB=" + lengthB);
        }
        return multiplyModP(xPow8nModP(lengthB), crcA) ^ crcB;
    }

    /** x^(8n) mod P: the factor that shifts a register past n zero bytes. */
    private static int xPow8nModP(long n) {
        int p = 1 << 31; // x^0
        for (int k = 3; n != 0; n >>>= 1, k++) {
            if ((n & 1) != 0) {
                p = multiplyModP(X2N[k], p);
            }
        }
        return p;
    }

    /** a × b mod P, bit-reflected (bit 31 is x^0); {@code a} is not 0. */
    private static int multiplyModP(int a, int b) {
        int product = 0;
        for (int m = 1 << 31; ; m >>>= 1) {
            if ((a & m) != 0) {
                product ^= b;
                if ((a & (m - 1)) == 0) {
                    return product;
                }
            }
            b = (b & 1) != 0 ? (b >>> 1) ^ REFLECTED_POLY : b >>> 1;
        }
    }

    /** Scans a range of points; one per thread. */
    private static final class Scanner {
        private static final byte UNSEEN = 0;
        private static final byte SEEN = 1;
        private static final byte INVALID = 2; // at or past the backend count

        private final int[] featureMasks;
        /** A 64-bit ring's low words, null for a 32-bit ring. */
        MemorySegment low;
        /** Per possible backend index: UNSEEN, SEEN in the range being scanned, or INVALID. */
        private final byte[] state = new byte[MAX_BACKENDS + 1];
        /** A chunk, and 2 bytes more so that every point can be read as 8 bytes; grown to the longest range scanned. */
        private byte[] chunk = new byte[0];

        private final CRC32C crc32c = new CRC32C();
        private final int[] seen;
        /** Per backend index, its points in the range scanned (those of the backends in {@link #seen}; the rest are 0). */
        private final int[] counts;

        int crc;
        int common;
        int seenCount;
        int distinctHashes;
        Failure failure;
        /** The last point checked: its hash with the sign bit flipped (so that signed order is unsigned order), its backend. */
        private int previousKey;

        private int previousBackend;
        private int ties;

        Scanner(int[] featureMasks) {
            this.featureMasks = featureMasks;
            this.seen = new int[featureMasks.length];
            this.counts = new int[featureMasks.length];
            Arrays.fill(state, featureMasks.length, state.length, INVALID);
        }

        /** CRC of points [from, to) of {@code points}, and their checks unless one fails. */
        void scan(MemorySegment points, int from, int to, int required, int[] tieRank) {
            for (int k = 0; k < seenCount; k++) {
                state[seen[k]] = UNSEEN;
                counts[seen[k]] = 0;
            }
            seenCount = 0;
            common = -1;
            failure = null;
            ties = 0;
            // The point before the range, read plainly from the mapping: the first check compares with it.
            // Point 0 has none: it passes the order check whatever its hash, and a failure reports 0 before it.
            previousKey = (from == 0 ? 0 : points.get(U32, (long) (from - 1) * POINT_LENGTH)) ^ Integer.MIN_VALUE;
            previousBackend = from == 0
                    ? 0
                    : Short.toUnsignedInt(points.get(U16, (long) (from - 1) * POINT_LENGTH + U32.byteSize()));
            crc32c.reset();
            int longest = Math.min(CHUNK_POINTS, to - from) * POINT_LENGTH + Long.BYTES - POINT_LENGTH;
            if (chunk.length < longest) {
                chunk = new byte[longest];
            }
            MemorySegment chunkSegment = MemorySegment.ofArray(chunk); // segment to segment: see RingFileReader.crc32c
            for (int start = from; start < to; start += CHUNK_POINTS) {
                int count = Math.min(CHUNK_POINTS, to - start);
                MemorySegment.copy(points, (long) start * POINT_LENGTH, chunkSegment, 0, count * POINT_LENGTH);
                crc32c.update(chunk, 0, count * POINT_LENGTH);
                if (failure == null) {
                    checkChunk(count, start, required, tieRank);
                }
            }
            crc = (int) crc32c.getValue();
            distinctHashes = to - from - ties;
        }

        /**
         * Checks the {@code count} points in the chunk, point {@code start} first. The hot loop stops
         * only at a point that needs more than a look: a hash not above the previous, or a backend not
         * seen yet in this range (or out of range); {@link #check} handles it.
         */
        private void checkChunk(int count, int start, int required, int[] tieRank) {
            byte[] buf = chunk;
            byte[] seenState = state;
            int[] pointCounts = counts;
            int previous = previousKey;
            for (int i = 0; i < count; i++) {
                for (; i < count; i++) {
                    long v = (long) LONG.get(buf, i * POINT_LENGTH);
                    int key = (int) v ^ Integer.MIN_VALUE;
                    int b = (int) (v >>> 32) & 0xFFFF;
                    if (key <= previous | seenState[b] != SEEN) {
                        break;
                    }
                    pointCounts[b]++; // SEEN: an index of the backend table
                    previous = key;
                }
                if (i < count) {
                    long v = (long) LONG.get(buf, i * POINT_LENGTH);
                    int before = i == 0 ? previousBackend : backend(buf, i - 1);
                    int b = (int) (v >>> 32) & 0xFFFF;
                    if (!check(start + i, (int) v ^ Integer.MIN_VALUE, b, previous, before, required, tieRank)) {
                        return;
                    }
                    pointCounts[b]++;
                    previous = (int) v ^ Integer.MIN_VALUE;
                }
            }
            previousKey = previous;
            previousBackend = backend(buf, count - 1);
        }

        private static int backend(byte[] buf, int i) {
            return (int) ((long) LONG.get(buf, i * POINT_LENGTH) >>> 32) & 0xFFFF;
        }

        /** Checks point {@code point} against the one before; false after recording its failure. */
        private boolean check(int point, int key, int b, int previous, int previousB, int required, int[] tieRank) {
            Kind kind = null;
            // A 64-bit ring: an equal high word is in order when the low word increases.
            boolean wideInOrder = key == previous
                    && point != 0
                    && low != null
                    && Integer.compareUnsigned(
                                    low.get(U32, (long) point * Integer.BYTES),
                                    low.get(U32, (long) (point - 1) * Integer.BYTES))
                            > 0;
            if (!wideInOrder && key <= previous && point != 0) {
                if (key < previous || tieRank == null) {
                    kind = Kind.ORDER;
                } else if (state[b] == INVALID) {
                    kind = Kind.NO_BACKEND;
                } else if (tieRank[b] <= tieRank[previousB]) {
                    kind = Kind.TIE_ORDER;
                } else {
                    ties++;
                }
            }
            if (kind == null && state[b] != SEEN) {
                if (state[b] == INVALID) {
                    kind = Kind.NO_BACKEND;
                } else if ((featureMasks[b] & required) != required) {
                    kind = Kind.LACKS_FEATURES;
                } else {
                    state[b] = SEEN;
                    seen[seenCount++] = b;
                    common &= featureMasks[b];
                }
            }
            if (kind != null) {
                failure = new Failure(kind, point, key ^ Integer.MIN_VALUE, previous ^ Integer.MIN_VALUE, b, previousB);
            }
            return kind == null;
        }

        /** Adds the range {@code next} scanned, which follows this one (which did not fail), and its failure. */
        void merge(Scanner next) {
            for (int k = 0; k < next.seenCount; k++) {
                int b = next.seen[k];
                if (state[b] != SEEN) {
                    state[b] = SEEN;
                    seen[seenCount++] = b;
                }
                counts[b] += next.counts[b];
            }
            common &= next.common;
            distinctHashes += next.distinctHashes;
            failure = next.failure;
        }
    }
}
