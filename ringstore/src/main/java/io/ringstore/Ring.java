package io.ringstore;

import io.ringstore.internal.PointSearch;

import java.lang.foreign.MemorySegment;
import java.util.BitSet;
import java.util.NoSuchElementException;
import java.util.PrimitiveIterator;
import java.util.Set;
import java.util.zip.CRC32;

import static io.ringstore.internal.format.RingFileDescriptor.POINT_BACKEND_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.POINT_HASH_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.POINT_LENGTH;
import static io.ringstore.internal.format.RingFileDescriptor.U16;
import static io.ringstore.internal.format.RingFileDescriptor.U32;

/**
 * One feature ring of one version: sorted 6-byte points in the mapped file.
 *
 * <p>A key goes to the first point whose hash is at or after CRC-32(key), unsigned, wrapping past the
 * last point to the first. Lookups are thread-safe, allocate nothing, and return a backend index
 * ({@link RingStore#backend(int)}) or -1 when the ring has no backend. Even on a corrupt segment a
 * lookup returns -1 or an index inside the backend table, never anything else.
 *
 * <p>A file rewritten in place while mapped (not replaced by rename, as FORMAT.md requires; {@code cp
 * new.ring fleet.ring} does it) is outside that promise: a lookup reads whatever bytes the file has
 * now, so it may answer from the new content, and a read of a page past the file's new end throws
 * {@link InternalError} ("a fault occurred in an unsafe memory access operation": SIGBUS, as the JVM
 * reports it), the JVM itself surviving. A caller that must outlive such a file catches that error per
 * lookup; {@link WatchedRingStore} switches to the next good file published at the path, as
 * {@code ringstore lookup --watch} does.
 */
public final class Ring {
    /** What lookups return for a ring without backends. */
    public static final int NO_BACKEND = -1;

    private final RingStore store;
    private final MemorySegment points;
    private final int pointCount;
    private final int backendCount;
    private final RingVersion version;
    private final Set<String> features;
    private final int featureMask;
    private final int position;
    private PointSearch.Index searchIndex;

    Ring(RingStore store, int position, MemorySegment points, int pointCount, int backendCount, RingVersion version,
         Set<String> features, int featureMask) {
        this.store = store;
        this.position = position;
        this.points = points;
        this.pointCount = pointCount;
        this.backendCount = backendCount;
        this.version = version;
        this.features = features;
        this.featureMask = featureMask;
    }

    /** CRC-32 (IEEE) of the key's bytes: the hash nginx and pingora-ketama look keys up by. */
    public static int hash(byte[] key, int offset, int length) {
        CRC32 crc = new CRC32(); // scalar-replaced by the JIT: no allocation on the hot path
        crc.update(key, offset, length);
        return (int) crc.getValue();
    }

    public static int hash(byte[] key) {
        return hash(key, 0, key.length);
    }

    /** The backend for {@code key}, or -1 when the ring is empty. */
    public int lookup(byte[] key) {
        return lookupHash(hash(key, 0, key.length));
    }

    /** The backend for the key in {@code key[offset, offset+length)}, or -1 when the ring is empty. */
    public int lookup(byte[] key, int offset, int length) {
        return lookupHash(hash(key, offset, length));
    }

    /** The backend for a precomputed CRC-32 of the key, or -1 when the ring is empty. */
    public int lookupHash(int hash) {
        int p = pointIndex(hash);
        return p < 0 ? NO_BACKEND : pointBackend(p);
    }

    /**
     * Position of the point that {@code hash} lands on: the first point with hash ≥ {@code hash}
     * (unsigned), or 0 past the last; -1 for an empty ring.
     */
    public int pointIndex(int hash) {
        PointSearch.Index index = searchIndex;
        if (index == null) {
            // First lookup: build the ring's small slice table. Threads racing here build equal
            // tables; the object's final fields make publishing it without a lock safe.
            index = PointSearch.index(points, pointCount);
            searchIndex = index;
        }
        return PointSearch.pointIndex(points, pointCount, index, hash);
    }

    /** The hash of the point at {@code position} (0 ≤ position &lt; {@link #pointCount()}). */
    public int pointHash(int position) {
        return points.get(U32, checkedOffset(position) + POINT_HASH_OFFSET);
    }

    /** The backend of the point at {@code position}, or -1 if the file names one outside the backend table. */
    public int pointBackend(int position) {
        int b = Short.toUnsignedInt(points.get(U16, checkedOffset(position) + POINT_BACKEND_OFFSET));
        return b < backendCount ? b : NO_BACKEND;
    }

    private long checkedOffset(int position) {
        if (position < 0 || position >= pointCount) {
            throw new IndexOutOfBoundsException("point position " + position + " outside 0.." + (pointCount - 1));
        }
        return (long) position * POINT_LENGTH;
    }

    /**
     * Backends of the points from the key's point onwards, wrapping, each point once
     * ({@link #pointCount()} values): pingora-ketama's {@code node_iter} for one turn of the ring
     * (pingora's goes round forever). Empty for an empty ring.
     */
    public PrimitiveIterator.OfInt points(byte[] key) {
        int start = pointIndex(hash(key));
        return new PrimitiveIterator.OfInt() {
            int done;

            @Override
            public boolean hasNext() {
                return start >= 0 && done < pointCount;
            }

            @Override
            public int nextInt() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                int p = start + done++;
                return pointBackend(p >= pointCount ? p - pointCount : p);
            }
        };
    }

    /**
     * Failover order: each distinct backend of the ring once, in the order its first point follows
     * the key's point. The first is {@link #lookup(byte[])}'s answer.
     */
    public PrimitiveIterator.OfInt backends(byte[] key) {
        PrimitiveIterator.OfInt all = points(key);
        BitSet seen = new BitSet(backendCount);
        return new PrimitiveIterator.OfInt() {
            int next = advance();

            private int advance() {
                while (all.hasNext()) {
                    int b = all.nextInt();
                    if (b >= 0 && !seen.get(b)) {
                        seen.set(b);
                        return b;
                    }
                }
                return -1;
            }

            @Override
            public boolean hasNext() {
                return next >= 0;
            }

            @Override
            public int nextInt() {
                if (next < 0) {
                    throw new NoSuchElementException();
                }
                int b = next;
                next = advance();
                return b;
            }
        };
    }

    /**
     * Each backend's exact share of the 32-bit hash line in this ring (index = backend index, 0 for
     * backends not in the ring): point i owns the hashes after point i-1 up to its own, the first point
     * also the wrap-around past the last. Reads every point: O(points).
     */
    public double[] lineShares() {
        long[] owned = new long[backendCount];
        int n = pointCount;
        if (n > 0) {
            long previous = Integer.toUnsignedLong(pointHash(n - 1)) - (1L << 32);
            for (int i = 0; i < n; i++) {
                long h = Integer.toUnsignedLong(pointHash(i));
                int b = pointBackend(i);
                if (b >= 0) {
                    owned[b] += h - previous;
                }
                previous = h;
            }
        }
        double[] shares = new double[backendCount];
        for (int b = 0; b < backendCount; b++) {
            shares[b] = owned[b] / 4294967296.0;
        }
        return shares;
    }

    public int pointCount() {
        return pointCount;
    }

    public boolean isEmpty() {
        return pointCount == 0;
    }

    public RingVersion version() {
        return version;
    }

    /** The features every backend of this ring has (the empty set: all backends). */
    public Set<String> features() {
        return features;
    }

    public RingStore store() {
        return store;
    }

    /** This ring's index in {@link RingStore#rings()}. */
    int position() {
        return position;
    }

    int featureMask() {
        return featureMask;
    }

    MemorySegment points() {
        return points;
    }

    @Override
    public String toString() {
        return version + (features.isEmpty() ? " (all)" : " " + String.join("+", features));
    }
}
