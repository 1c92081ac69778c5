package io.ringstore.internal.format;

import static io.ringstore.internal.format.RingFileDescriptor.POINT_BACKEND_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.POINT_HASH_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.POINT_LENGTH;
import static io.ringstore.internal.format.RingFileDescriptor.U16;
import static io.ringstore.internal.format.RingFileDescriptor.U32;
import static io.ringstore.internal.format.RingFileDescriptor.U64;

import java.lang.foreign.MemorySegment;

/**
 * One ring's walk over its points by <em>cursor</em>: a cursor is where a point lies in the segment the
 * ring reads, so a view, or a ring kept with ties, is walked without a table of positions. The public
 * {@code Ring} holds one and answers its lookups, failover and bounded load through it; the rest of the
 * module reaches a ring's walk through {@code internal.BackendAccess} (the one bridge), never through
 * {@code Ring} itself.
 *
 * <p><b>One hash, two widths.</b> A ring hash is one {@code long}: a 32-bit ring's unsigned (of which it
 * reads the low 32 bits, so an {@code int} hash widened with its sign lands on the same point), a 64-bit
 * ring's whole (Envoy's and gRPC's: a 6-byte point holds the high word, the low words follow the points;
 * FORMAT.md, "64-bit rings"). {@link #of} picks the cursor for the segment's width once, when the ring
 * opens: {@link #cursor(long)}, {@link #hash(int)} and {@link #seed(long)} are the only operations whose
 * answer depends on it, and nothing outside this class tests the width to look a hash up.
 *
 * <p>A key's point is the first stored point at or after the key's hash (wrapping; a 64-bit ring of
 * grpc-java's stays on the last point, {@link #wraps()}); for a view, the
 * first from there whose backend is a member, which is the point the ring keeps at that hash (points of
 * one hash are stored in tie order). A family that lands keys on the nearer of the two points around
 * the hash (HAProxy's, {@code family.Landing}) reads with {@link Nearest}, picked in {@link #of} as the
 * width is: the one other place a key's point is decided, and {@link #lineBoundary} the one other
 * answer that depends on it. Allocation-free and thread-safe; on a corrupt segment every answer
 * is still -1 or a cursor inside the segment, and every backend -1 or inside the backend table.
 */
public abstract sealed class PointRing permits PointRing.Narrow, PointRing.Wide {
    /**
     * A segment's points as rings read them: shared by every ring of one segment (a version's views and
     * the ring they view), so that they share one search index too.
     */
    public static final class Points {
        final MemorySegment segment;
        final int count;
        /** A 64-bit ring's low words (4 bytes a point, in point order); null for a 32-bit ring. */
        final MemorySegment low;
        /**
         * The points' feature bits (storage 3: a block of {@link #featureCount} u64 words a 64 points;
         * storage 4: the same words by feature); null without.
         */
        final MemorySegment featureBits;
        /** Words in a block of {@link #featureBits}: the file's features. */
        final int featureCount;
        /** Whether {@link #featureBits} are stored by feature (storage 4), else by block (storage 3). */
        final boolean bitsByFeature;

        private PointSearch.Index index;
        /** Searches answered before the index was built (racy: an estimate is enough). */
        private int searchesWithoutIndex;

        public Points(MemorySegment segment, int count) {
            this(segment, count, null);
        }

        /**
         * @param segment the 6-byte points (a 64-bit ring's high words)
         * @param count   how many
         * @param low     a 64-bit ring's low words, null for a 32-bit ring
         */
        public Points(MemorySegment segment, int count, MemorySegment low) {
            this(segment, count, low, null, 0, false);
        }

        /**
         * @param segment      the 6-byte points (a 64-bit ring's high words)
         * @param count        how many
         * @param low          a 64-bit ring's low words, null for a 32-bit ring
         * @param featureBits  the points' feature bits (FORMAT.md, "Feature bits"), null for a segment without
         * @param featureCount the file's features: u64 words in a block of feature bits
         * @param bitsByFeature whether the feature bits are stored by feature (storage 4), else by block (3)
         */
        public Points(
                MemorySegment segment,
                int count,
                MemorySegment low,
                MemorySegment featureBits,
                int featureCount,
                boolean bitsByFeature) {
            this.segment = segment;
            this.count = count;
            this.low = low;
            this.featureBits = featureBits;
            this.featureCount = featureCount;
            this.bitsByFeature = bitsByFeature;
        }

        /** {@return a 64-bit ring's low words, null for a 32-bit ring} */
        public MemorySegment low() {
            return low;
        }

        /** The stored position of the first point with hash ≥ {@code hash}, 0 past the last; -1 when empty. */
        public int search(int hash) {
            PointSearch.Index i = index;
            if (i == null) {
                if (searchesWithoutIndex < PointSearch.SEARCHES_BEFORE_INDEX) {
                    searchesWithoutIndex++;
                    return PointSearch.pointIndex(segment, count, hash);
                }
                i = buildIndex();
            }
            return PointSearch.pointIndex(segment, count, i, hash);
        }

        /**
         * After {@link PointSearch#SEARCHES_BEFORE_INDEX} searches, the next builds the segment's slice
         * table (about 0.52 % of the points' bytes; it reads every page of the points: 4–11 ms at 3.3 M
         * points, 147–149 ms at 200 M with a quarter of the slices), once: threads racing here wait for it rather than each build their own. The field
         * needs no volatile: the index's final fields make publishing it without a lock safe.
         */
        private synchronized PointSearch.Index buildIndex() {
            PointSearch.Index i = index;
            if (i == null) {
                i = PointSearch.index(segment, count);
                index = i;
            }
            return i;
        }

        /** {@return the points' bytes} */
        public MemorySegment segment() {
            return segment;
        }

        /** {@return how many points the segment holds} */
        public int count() {
            return count;
        }
    }

    private final Points stored;
    private final MemorySegment points;

    private final int storedCount;
    private final int backendCount;
    /** A view's members as a bitmap by backend index; null when every stored point's backend is a member. */
    private final long[] members;
    /** Whether ring positions differ from stored positions (ties kept, or a view). */
    private final boolean ties;
    /** A view of a segment with feature bits: those bits; else null (a view then reads points one by one). */
    private final MemorySegment featureBits;
    /** Bytes from one block's word of a feature to the next block's: all the features' words (storage 3) or 8 (4). */
    private final long blockBytes;
    /** Where the view's features' words of block 0 are in {@link #featureBits}, one offset a feature. */
    private final long[] featureWords;
    /** Blocks of feature bits: ⌈storedCount / 64⌉. */
    private final int blocks;

    private PointRing(Points stored, long[] members, int featureMask, int backendCount, boolean ties) {
        this.stored = stored;
        this.points = stored.segment;
        this.storedCount = stored.count;
        this.members = members;
        this.backendCount = backendCount;
        this.ties = ties;
        boolean bits = members != null && stored.featureBits != null && featureMask != 0;
        this.featureBits = bits ? stored.featureBits : null;
        this.blocks = (int) ((storedCount + (long) RingFileDescriptor.FEATURE_BITS_BLOCK_POINTS - 1)
                / RingFileDescriptor.FEATURE_BITS_BLOCK_POINTS);
        int storage = stored.bitsByFeature
                ? RingFileDescriptor.STORAGE_POINTS_WITH_FEATURE_BITS_BY_FEATURE
                : RingFileDescriptor.STORAGE_POINTS_WITH_FEATURE_BITS;
        this.blockBytes = RingFileDescriptor.featureWordOffset(storage, blocks, stored.featureCount, 1, 0);
        this.featureWords = new long[bits ? Integer.bitCount(featureMask) : 0];
        for (int f = 0, k = 0; bits && f < stored.featureCount; f++) {
            if ((featureMask & 1 << f) != 0) {
                featureWords[k++] = RingFileDescriptor.featureWordOffset(storage, blocks, stored.featureCount, 0, f);
            }
        }
    }

    /**
     * {@return the walk of a ring over {@code stored}: the 64-bit cursor when the segment has low words,
     * the 32-bit one otherwise} The one place that looks at the width.
     *
     * @param stored       the segment the ring reads
     * @param members      a view's members as a bitmap by backend index, null for a ring stored as its points
     * @param featureMask  the ring's features: a view's members are the backends having all of them
     * @param backendCount backends in the file: a stored backend at or above it reads as -1
     * @param ties         whether the segment keeps points of equal hashes (ties kept, or a view)
     * @param wraps        whether a hash past the last point lands on the first, else on the last (grpc-java's
     *                     search; read by the 64-bit cursor, every 32-bit ring wraps)
     * @param nearest      whether a key goes to the nearer of the two points around its hash ({@link Nearest}:
     *                     HAProxy's family, whose rings are 32-bit and stored as their points, never views)
     */
    public static PointRing of(
            Points stored,
            long[] members,
            int featureMask,
            int backendCount,
            boolean ties,
            boolean wraps,
            boolean nearest) {
        if (nearest && stored.low == null && members == null && !ties) {
            return new Nearest(stored, backendCount);
        }
        return stored.low == null
                ? new Narrow(stored, members, featureMask, backendCount, ties)
                : new Wide(stored, members, featureMask, backendCount, ties, wraps);
    }

    /**
     * {@return the last position of the 32-bit line whose keys go to a point at {@code here} rather than
     * to the next point, at {@code next}: {@code here} itself when keys go to the next point at or after
     * their hash, the midpoint (rounded down) for {@link Nearest}} Both are unwrapped ({@code here} may be
     * below 0, {@code next} above 2^32 - 1, {@code here < next}); what each point's share of the line is
     * counted from.
     *
     * @param here a point's place on the line
     * @param next the next point's
     */
    public long lineBoundary(long here, long next) {
        return here;
    }

    /**
     * {@return the cursor of the point a key of {@code hash} lands on; -1 for an empty ring, and for a
     * view without member points (only in a damaged file)}
     *
     * @param hash the key's ring hash (see the class comment)
     */
    public abstract int cursor(long hash);

    /**
     * {@return the ring hash of the stored point at {@code p}: what {@link #cursor(long)} compares a key's
     * hash with (a 32-bit ring's unsigned)}
     *
     * @param p a stored position, 0 ≤ p &lt; {@link #storedCount()}
     */
    public abstract long hash(int p);

    /**
     * {@return a key's hash as the seed of a sequence drawn from it (bounded load's random jumps): a
     * 64-bit ring's as it is, a 32-bit ring's low 32 bits sign-extended, as the jumps were first
     * defined on {@code int} hashes}
     *
     * @param hash the key's ring hash
     */
    public abstract long seed(long hash);

    /** {@return whether the ring's points are 64-bit} */
    public abstract boolean isWide();

    /** {@return whether a hash past the last point lands on the first point (else on the last: grpc-java's 64-bit rings)} */
    public abstract boolean wraps();

    /** The 32-bit cursor: a 6-byte point's word is its whole hash. */
    static sealed class Narrow extends PointRing permits Nearest {
        private Narrow(Points stored, long[] members, int featureMask, int backendCount, boolean ties) {
            super(stored, members, featureMask, backendCount, ties);
        }

        @Override
        public int cursor(long hash) {
            return lineCursor((int) hash);
        }

        @Override
        public long hash(int p) {
            return Integer.toUnsignedLong(storedHash(p));
        }

        @Override
        public long seed(long hash) {
            return (int) hash;
        }

        @Override
        public boolean isWide() {
            return false;
        }

        @Override
        public boolean wraps() {
            return true;
        }
    }

    /**
     * HAProxy's cursor ({@code chash_get_server_hash}): of the point at or after the hash ({@code next},
     * the first point past the last wrapping to point 0) and the point stored before it ({@code prev},
     * the last before point 0), {@code prev} when {@code hash - prev <= next - hash} in 32-bit unsigned
     * arithmetic, else {@code next}. A ring of one point answers it. Only 32-bit rings stored as their
     * points (one point a hash) read with it: the family's tie keeps a shared hash, which is then both
     * the {@code next} of the keys at or before it and the {@code prev} of those after.
     */
    static final class Nearest extends Narrow {
        private Nearest(Points stored, int backendCount) {
            super(stored, null, 0, backendCount, false);
        }

        @Override
        public int cursor(long hash) {
            int h = (int) hash;
            int next = search(h);
            if (next < 0) {
                return next;
            }
            int prev = (next == 0 ? storedCount() : next) - 1;
            int dp = h - storedHash(prev);
            int dn = storedHash(next) - h;
            return Integer.compareUnsigned(dp, dn) <= 0 ? prev : next;
        }

        @Override
        public long lineBoundary(long here, long next) {
            return Math.floorDiv(here + next, 2);
        }
    }

    /**
     * The 64-bit cursor: a point's hash is its 6-byte point's word (the high word) and its low word, 4
     * bytes a point after the points, in point order. The file stores 64-bit rings as their points
     * only (no ties, no views), so cursors are positions.
     */
    static final class Wide extends PointRing {
        private final MemorySegment low;
        /** Where a hash past the last point lands: on the first point (0) or on the last (-1, grpc-java). */
        private final int pastLast;

        private Wide(Points stored, long[] members, int featureMask, int backendCount, boolean ties, boolean wraps) {
            super(stored, members, featureMask, backendCount, ties);
            this.low = stored.low;
            this.pastLast = wraps ? 0 : -1;
        }

        /**
         * The first point whose (high, low) words are at or above the hash's; past the last point, the
         * first (wrapping) or the last. The search reads the high words as any ring's; the low words only
         * where a point's high word equals the hash's (about points / 2^32 of lookups).
         */
        @Override
        public int cursor(long hash) {
            int hi = (int) (hash >>> 32);
            int p = search(hi);
            if (p < 0) {
                return p;
            }
            int lo = (int) hash;
            int n = storedCount();
            if (p == 0 && pastLast < 0 && Long.compareUnsigned(hash, hash(n - 1)) > 0) {
                return n - 1; // the search wrapped: past the last point
            }
            while (storedHash(p) == hi && Integer.compareUnsigned(lowWord(p), lo) < 0) {
                if (++p == n) {
                    return pastLast < 0 ? n - 1 : 0;
                }
            }
            return p;
        }

        @Override
        public boolean wraps() {
            return pastLast == 0;
        }

        @Override
        public long hash(int p) {
            return Integer.toUnsignedLong(storedHash(p)) << 32 | Integer.toUnsignedLong(lowWord(p));
        }

        @Override
        public long seed(long hash) {
            return hash;
        }

        @Override
        public boolean isWide() {
            return true;
        }

        private int lowWord(int p) {
            return low.get(U32, (long) p * Integer.BYTES);
        }
    }

    /**
     * {@return the cursor of the first point whose 32-bit word (a 64-bit ring's high word) is at or after
     * {@code word}: where a position drawn on the 32-bit hash line lands (bounded load's random jumps)}
     * For a 32-bit ring it is {@link #cursor(long)} of the word; -1 as there.
     *
     * @param word a position on the 32-bit line (unsigned)
     */
    public final int lineCursor(int word) {
        int p = stored.search(word);
        return p < 0 || members == null ? p : firstMemberFrom(p);
    }

    /**
     * {@return the backend of the point at {@code cursor}, -1 if the file names one outside the backend table}
     *
     * @param cursor a cursor of this ring
     */
    public final int backend(int cursor) {
        int b = Short.toUnsignedInt(points.get(U16, (long) cursor * POINT_LENGTH + POINT_BACKEND_OFFSET));
        return b < backendCount ? b : -1;
    }

    /**
     * {@return the cursor of the ring point after the one at {@code cursor}, wrapping: what failover walks to}
     *
     * @param cursor a cursor of this ring
     */
    public final int next(int cursor) {
        if (ties) {
            return nextRingPoint(cursor);
        }
        return cursor + 1 == storedCount ? 0 : cursor + 1;
    }

    /**
     * {@return the 32-bit word of the stored point at {@code p}: its hash in a 32-bit ring, the high word of
     * its hash in a 64-bit one; what the search and the 32-bit hash line read}
     *
     * @param p a stored position, 0 ≤ p &lt; {@link #storedCount()}
     */
    public final int storedHash(int p) {
        return points.get(U32, (long) p * POINT_LENGTH + POINT_HASH_OFFSET);
    }

    /**
     * {@return the stored position of the first point at or after {@code p} (wrapping) whose backend is a
     * member, -1 if none (only in a damaged file: verify refuses a view without member points)} From the
     * first point of a hash, the first member in tie order, which is the point the ring keeps there.
     *
     * @param p a stored position
     */
    public final int firstMemberFrom(int p) {
        if (featureBits != null) {
            return firstMemberByBits(p);
        }
        long[] m = members;
        for (int walked = 0; walked < storedCount; walked++) {
            int b = Short.toUnsignedInt(points.get(U16, (long) p * POINT_LENGTH + POINT_BACKEND_OFFSET));
            if (b < backendCount && (m[b >>> 6] & (1L << b)) != 0) {
                return p;
            }
            if (++p == storedCount) {
                p = 0;
            }
        }
        return -1;
    }

    /**
     * {@link #firstMemberFrom} by the segment's feature bits: from {@code p}'s block on, the AND of the
     * view's features' words (bits before {@code p} cleared in the first) has a set bit at each member
     * point, so its lowest set bit is the answer; a block without one moves to the next. At member
     * fraction f a block has none with probability (1 − f)^64 (13 % at f = 1/32), so a lookup reads one
     * block, sometimes two. One turn of the blocks and the first block again: a set bit always ends it
     * in a file that verify accepts; a damaged one (no bit, or bits past the last point) answers -1.
     */
    private int firstMemberByBits(int p) {
        MemorySegment bits = featureBits;
        long[] words = featureWords;
        int b = p >>> 6;
        long keep = -1L << p; // the shift takes p mod 64
        for (int turn = 0; turn <= blocks; turn++) {
            long at = b * blockBytes;
            long w = keep;
            for (long word : words) {
                w &= bits.get(U64, at + word);
            }
            if (w != 0) {
                int q = b << 6 | Long.numberOfTrailingZeros(w);
                return q < storedCount ? q : -1;
            }
            keep = -1L;
            if (++b == blocks) {
                b = 0;
            }
        }
        return -1;
    }

    /**
     * {@return whether the stored point at {@code p} names a member of this ring}
     *
     * @param p a stored position
     */
    public final boolean memberAt(int p) {
        int b = Short.toUnsignedInt(points.get(U16, (long) p * POINT_LENGTH + POINT_BACKEND_OFFSET));
        return b < backendCount && (members == null || (members[b >>> 6] & (1L << b)) != 0);
    }

    /**
     * {@return whether {@code backend} is a member of this ring (always true for rings stored as points)}
     *
     * @param backend a backend index inside the table
     */
    public final boolean isMember(int backend) {
        return members == null || (members[backend >>> 6] & (1L << backend)) != 0;
    }

    /**
     * {@return the stored position of the first point with hash ≥ {@code hash} (of any backend), 0 past
     * the last; -1 when the segment is empty}
     *
     * @param hash a hash
     */
    public final int search(int hash) {
        return stored.search(hash);
    }

    /** {@return whether a view's membership applies (the ring is a view)} */
    public final boolean isView() {
        return members != null;
    }

    /** {@return points in the segment this ring reads: its own, or more with ties or as a view} */
    public final int storedCount() {
        return storedCount;
    }

    /** {@return the segment this ring reads} */
    public final MemorySegment segment() {
        return points;
    }

    /** {@return the feature bits after the points of the segment this ring reads (storage 3 or 4), null when it has none} */
    public final MemorySegment segmentFeatureBits() {
        return stored.featureBits;
    }

    /**
     * With ties kept: the stored position of the ring point after the one at {@code p} (a ring
     * point): the next member point of another hash, wrapping; {@code p} itself in a ring of one point.
     */
    private int nextRingPoint(int p) {
        int h = storedHash(p);
        int q = p;
        if (featureBits != null) { // member point to member point by the bits
            for (int i = 1; i < storedCount; i++) {
                q = firstMemberByBits(q + 1 == storedCount ? 0 : q + 1);
                if (q < 0 || q == p) {
                    return p;
                }
                if (storedHash(q) != h) {
                    return q;
                }
            }
            return p;
        }
        for (int i = 1; i < storedCount; i++) {
            if (++q == storedCount) {
                q = 0;
            }
            if (memberAt(q) && storedHash(q) != h) {
                return q;
            }
        }
        return p;
    }
}
