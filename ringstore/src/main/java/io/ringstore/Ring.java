package io.ringstore;

import io.ringstore.family.Failover;
import io.ringstore.family.KeyHash;
import io.ringstore.family.RingVersion;
import io.ringstore.internal.BackendAccess;
import io.ringstore.internal.format.PointRing;
import io.ringstore.internal.format.RingFileDescriptor;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.NoSuchElementException;
import java.util.PrimitiveIterator;
import java.util.Set;
import java.util.function.IntPredicate;
import java.util.function.Predicate;

/**
 * One feature ring of one version: sorted 6-byte points in the mapped file, or a view of its version's
 * ring of all backends (format 3, {@code build --views}), which answers exactly the same.
 *
 * <p>A view stores no points: a lookup searches the ring of all backends (kept with the points of
 * equal hashes, in tie order) and walks forward to the first point whose backend is a member, about
 * 1/f points for members holding a fraction f of the points. Methods that address points by position
 * ({@link #pointIndex}, {@link #pointHash}, {@link #pointBackend}, {@link #points}, {@link #backends},
 * {@link #lineShares}) see the view's own points; on a view or a ring kept with ties, the first such
 * call builds a table of where each point lies (4 bytes a point of heap, once per ring).
 * {@link #lookupHash}, the other lookups and {@link #select} never need it.
 *
 * <p>A key goes to the first point whose hash is at or after the key's hash by the ring's family
 * ({@link #hash(byte[])}: CRC-32 for nginx and pingora, MD5's first word for the ketama clients, XXH64
 * for Envoy and gRPC, ...), unsigned, wrapping past the last point to the first (grpc-java's search
 * stays on the last: {@link #wraps()}; its hashes are stored sign-flipped, so that unsigned order is its
 * signed order); in HAProxy's family ({@code Landing.NEAREST}) to the nearer of that point and the one
 * before it. A ring hash is one
 * {@code long} in every method that takes or returns one: a 32-bit ring's hash unsigned (of which it
 * reads the low 32 bits, so an {@code int} hash widened with its sign lands on the same point), a
 * 64-bit ring's whole ({@link #isWide()}). Lookups are thread-safe, allocate nothing, and return a
 * backend index ({@link RingStore#backend(int)}) or -1 when the ring has no backend. Even on a corrupt
 * segment a lookup returns -1 or an index inside the backend table, never anything else.
 *
 * <p>A file rewritten in place while mapped (not replaced by rename, as FORMAT.md requires; {@code cp
 * new.ring fleet.ring} does it) is outside that promise: a lookup reads whatever bytes the file has
 * now, so it may answer from the new content, and a read of a page past the file's new end throws
 * {@link InternalError} ("a fault occurred in an unsafe memory access operation": SIGBUS, as the JVM
 * reports it), the JVM itself surviving. A caller that must outlive such a file catches that error per
 * lookup; {@code io.ringstore.live.RingRouter} switches to the next good file published at the path, as
 * {@code ringstore lookup --watch} does.
 */
public final class Ring {
    /** What lookups return for a ring without backends. */
    public static final int NO_BACKEND = -1;
    /**
     * What {@link #select} returns when it walked its {@code maxPoints} points without an accepted
     * backend (nginx then picks by round robin among the servers it still may try).
     */
    public static final int GAVE_UP = -2;
    /**
     * The most points nginx's {@code hash ... consistent} looks at for one request: the key's point and
     * 20 more. {@code ngx_http_upstream_get_chash_peer} moves to the next point with
     * {@code hp->tries++} and falls back to round robin once {@code hp->tries > 20}, so the 21st point
     * is still tried; {@code select(hash, NGINX_MAX_POINTS, accept)} answers as nginx does.
     */
    public static final int NGINX_MAX_POINTS = 21;

    /** What {@link #rehashSequence} answers for a family whose failover walks from the key's point. */
    static final int WALKS = -3;

    static {
        BackendAccess.registerRings(ring -> ring.walk);
    }

    private final RingStore store;
    /** The walk over the points by cursor, 32- or 64-bit as the points are: every lookup goes through it. */
    private final PointRing walk;

    /** Points in the segment: the ring's own for stored points, more for ties and views. */
    private final int storedCount;
    /** The ring's points: its distinct hashes. */
    private final int pointCount;

    private final int backendCount;
    /** Whether ring positions differ from stored positions (ties kept, or a view). */
    private final boolean ties;

    private final int storage;
    private final RingVersion version;
    /** The version's key hash ({@link RingVersion#keyHash()}), what {@link #hash(byte[])} and the lookups hash keys with. */
    private final KeyHash keyHash;

    private final Set<String> features;
    private final int featureMask;
    private final int position;
    /** Ties only: the stored position of each ring point, built at the first positional call. */
    private volatile int[] positions;

    Ring(
            RingStore store,
            int position,
            PointRing.Points stored,
            int pointCount,
            int storage,
            long[] members,
            int backendCount,
            RingVersion version,
            Set<String> features,
            int featureMask) {
        this.store = store;
        this.position = position;
        this.storedCount = stored.count();
        this.pointCount = pointCount;
        this.storage = storage;
        this.ties = storage != RingFileDescriptor.STORAGE_POINTS;
        this.walk = PointRing.of(
                stored,
                members,
                featureMask,
                backendCount,
                ties,
                version.family().landing().wraps(),
                version.family().landing().nearest());
        this.backendCount = backendCount;
        this.version = version;
        this.keyHash = version.keyHash();
        this.features = features;
        this.featureMask = featureMask;
    }

    /**
     * {@return the key's hash as this ring looks it up, by its family's key hash ({@link #keyHash()}): what
     * {@link #lookupHash}, {@link #select(long, int, IntPredicate)} and {@link #pointIndex} take} A 32-bit
     * family's hash unsigned, a 64-bit family's whole. Allocation-free.
     *
     * @param key the key
     */
    public long hash(byte[] key) {
        return keyHash.hash64(key, 0, key.length);
    }

    /**
     * {@return the hash of the key in {@code key[offset, offset+length)} as this ring looks it up ({@link #hash(byte[])})}
     *
     * @param key    the key's array
     * @param offset where the key starts
     * @param length the key's length in bytes
     */
    public long hash(byte[] key, int offset, int length) {
        return keyHash.hash64(key, offset, length);
    }

    /**
     * {@return the hash of the key's bytes from {@code position} to {@code limit}, heap or direct, as this
     * ring looks it up ({@link #hash(byte[])})} The buffer's position, limit and mark are left as they
     * are (the buffer is never written, so a buffer shared between threads may be hashed by all of them
     * at once).
     *
     * @param key the key
     */
    public long hash(ByteBuffer key) {
        return keyHash.hash64(key);
    }

    /**
     * {@return the hash of every byte of the segment, heap or native (a confined segment from its own
     * thread), as this ring looks it up ({@link #hash(byte[])})}
     *
     * @param key the key
     */
    public long hash(MemorySegment key) {
        return keyHash.hash64(key);
    }

    /**
     * {@return the backend for {@code key}, or -1 when the ring is empty}
     *
     * @param key the key
     */
    public int lookup(byte[] key) {
        return lookupHash(keyHash.hash64(key, 0, key.length));
    }

    /**
     * {@return the backend for the key in {@code key[offset, offset+length)}, or -1 when the ring is empty}
     *
     * @param key the key
     * @param offset where the key starts in {@code key}
     * @param length the key's length in bytes
     */
    public int lookup(byte[] key, int offset, int length) {
        return lookupHash(keyHash.hash64(key, offset, length));
    }

    /**
     * {@return the backend for the key's bytes from {@code position} to {@code limit} (see {@link #hash(ByteBuffer)}), or -1}
     *
     * @param key the key
     */
    public int lookup(ByteBuffer key) {
        return lookupHash(keyHash.hash64(key));
    }

    /**
     * {@return the backend for the segment's bytes as the key, or -1 when the ring is empty}
     *
     * @param key the key
     */
    public int lookup(MemorySegment key) {
        return lookupHash(keyHash.hash64(key));
    }

    /**
     * {@return the backend for a precomputed hash of the key, or -1 when the ring is empty}
     *
     * @param hash the key's hash as this ring looks it up ({@link #hash(byte[])}; a 32-bit ring reads its low 32 bits)
     */
    public int lookupHash(long hash) {
        PointRing w = walk;
        int p = w.cursor(hash);
        return p < 0 ? NO_BACKEND : w.backend(p);
    }

    /**
     * {@return whether the ring's points are 64-bit (Envoy's and gRPC's families; FORMAT.md, "64-bit
     * rings"): then its hashes are too}
     */
    public boolean isWide() {
        return walk.isWide();
    }

    /** {@return whether a hash past the last point lands on the first, as in every family but grpc-java (on the last)} */
    public boolean wraps() {
        return walk.wraps();
    }

    int storedHash(int p) {
        return walk.storedHash(p);
    }

    /** The backend of the stored point at {@code p}, -1 if the file names one outside the backend table. */
    int storedBackend(int p) {
        return walk.backend(p);
    }

    /**
     * Failover as nginx's {@code ngx_http_upstream_get_chash_peer} does it: from the key's point (the
     * one {@link #lookupHash} answers from), walk the points in ring order, wrapping past the last, and
     * return the backend of the first point whose backend {@code accept} approves. At most
     * {@code maxPoints} points are looked at, the key's own included; it counts points, not distinct
     * backends (a backend with several points in the walk is tested at each, as nginx does), so
     * {@code accept} should answer the same for one backend during a call.
     *
     * <p>What nginx's {@code accept} is, per point: the server is not {@code down}
     * ({@link Backend#down()}), not already tried by this request ({@code tried} bit), not failed
     * ({@code max_fails} failures within {@code fail_timeout}), not at {@code max_conns}. Down servers
     * keep their points: nginx builds the points from every server, skipping down ones only here.
     * A retry by nginx ({@code proxy_next_upstream}) goes on from the point it stopped at and keeps
     * counting, which equals calling this again with the same hash and an {@code accept} that also
     * refuses the backends already tried: the bound of {@link #NGINX_MAX_POINTS} points holds for the
     * whole request. Before the walk nginx goes to round robin straight away when the upstream has a
     * single server or the key is empty; a caller mimicking nginx checks those itself.
     *
     * <p>pingora's {@code LoadBalancer::select_with(key, max_iterations, accept)} is the same walk:
     * at most {@code max_iterations} points of the ring from the key's, the first accepted backend
     * (pingora tests each distinct backend once; with an {@code accept} that answers the same per
     * backend the result is the same), {@code None} for both of this method's negative answers.
     * Envoy's and gRPC's retry is the same walk over their 64-bit points (the family's {@link Failover}).
     *
     * <p>Allocation-free and thread-safe; {@code accept} runs on the caller's thread.
     *
     * @param hash      the key's hash ({@link #hash(byte[])})
     * @param maxPoints how many points may be looked at, at least 1 ({@link #NGINX_MAX_POINTS} for nginx)
     * @param accept whether a backend may be chosen; asked once per point walked
     * @return the accepted backend; {@link #NO_BACKEND} for an empty ring; {@link #GAVE_UP} when
     *         {@code maxPoints} points were looked at without an accepted backend (nginx then uses
     *         round robin)
     */
    public int select(long hash, int maxPoints, IntPredicate accept) {
        return walkFrom(walk.cursor(hash), maxPoints, accept, null);
    }

    /**
     * {@return {@link #select(long, int, IntPredicate)} with {@code accept} given the {@link Backend}s of this
     * ring's file: the accepted backend, or null for both negative answers} For callers that keep
     * health by server rather than by index (an index belongs to one generation); allocates nothing.
     *
     * @param hash the key's hash ({@link #hash(byte[])})
     * @param maxPoints the most points to walk ({@link io.ringstore.Ring#NGINX_MAX_POINTS} as nginx)
     * @param accept whether a backend may be chosen; asked once per point walked
     */
    public Backend selectBackend(long hash, int maxPoints, Predicate<Backend> accept) {
        return backendOf(walkFrom(walk.cursor(hash), maxPoints, null, accept));
    }

    /**
     * Failover from {@code key} as the ring's family does it ({@link Failover}): nginx's and
     * pingora's walk and Envoy's next entry as {@link #select(long, int, IntPredicate)} from the key's
     * point (at most {@code maxPoints} points); spymemcached's and xmemcached's rehash sequence
     * ({@link Failover#rehashesKey()}): the key's backend, then the backend of each rehash of the
     * key, {@link Failover#lookups} lookups in all ({@code maxPoints} does not shorten the
     * client's sequence). Allocation-free.
     *
     * @param key       the key
     * @param offset    where the key starts
     * @param length    the key's length in bytes
     * @param maxPoints how many points a walk may look at, at least 1
     * @param accept    whether a backend may be chosen
     * @return the accepted backend; {@link #NO_BACKEND} for an empty ring; {@link #GAVE_UP} when none was accepted
     */
    public int select(byte[] key, int offset, int length, int maxPoints, IntPredicate accept) {
        return failover(hash(key, offset, length), key, offset, length, maxPoints, accept, null);
    }

    /**
     * {@return {@link #select(byte[], int, int, int, IntPredicate)} with {@code accept} given the
     * {@link Backend}s: the accepted backend, or null for both negative answers}
     *
     * @param key       the key
     * @param offset    where the key starts
     * @param length    the key's length in bytes
     * @param maxPoints how many points a walk may look at, at least 1
     * @param accept    whether a backend may be chosen
     */
    public Backend selectBackend(byte[] key, int offset, int length, int maxPoints, Predicate<Backend> accept) {
        return backendOf(failover(hash(key, offset, length), key, offset, length, maxPoints, null, accept));
    }

    /**
     * {@link #select(byte[], int, int, int, IntPredicate)} for a caller that has hashed the key already
     * ({@code hash} is {@link #hash(byte[], int, int)} of it), as a router does once per request. Only a
     * family that fails over by rehashing the key reads its bytes ({@link Failover#rehashesKey()}); a
     * caller holding the key elsewhere than in an array (a buffer, a segment) may pass null for every
     * other family rather than copy it: without the bytes the failover is the walk from the hash's point
     * ({@link #select(long, int, IntPredicate)}), which is theirs.
     *
     * @param hash      the key's hash ({@link #hash(byte[], int, int)})
     * @param key       the key's bytes, or null (see above)
     * @param offset    where the key starts
     * @param length    the key's length in bytes
     * @param maxPoints how many points a walk may look at, at least 1
     * @param accept    whether a backend may be chosen
     * @return as {@link #select(byte[], int, int, int, IntPredicate)}
     */
    public int select(long hash, byte[] key, int offset, int length, int maxPoints, IntPredicate accept) {
        return failover(hash, key, offset, length, maxPoints, accept, null);
    }

    /**
     * {@return {@link #select(long, byte[], int, int, int, IntPredicate)} with {@code accept} given the
     * {@link Backend}s: the accepted backend, or null for both negative answers}
     *
     * @param hash      the key's hash ({@link #hash(byte[], int, int)})
     * @param key       the key's bytes, or null for a family that does not rehash the key
     * @param offset    where the key starts
     * @param length    the key's length in bytes
     * @param maxPoints how many points a walk may look at, at least 1
     * @param accept    whether a backend may be chosen
     */
    public Backend selectBackend(
            long hash, byte[] key, int offset, int length, int maxPoints, Predicate<Backend> accept) {
        return backendOf(failover(hash, key, offset, length, maxPoints, null, accept));
    }

    private Backend backendOf(int b) {
        return b < 0 ? null : store.backend(b);
    }

    /** The family's failover from a key: its rehash sequence, or (any family without the key's bytes) the walk. */
    private int failover(
            long hash,
            byte[] key,
            int offset,
            int length,
            int maxPoints,
            IntPredicate byIndex,
            Predicate<Backend> byBackend) {
        // maxPoints < 1 goes to the walk, which refuses it.
        int b = key == null || maxPoints < 1 ? WALKS : rehashSequence(hash, key, offset, length, byIndex, byBackend);
        return b != WALKS ? b : walkFrom(walk.cursor(hash), maxPoints, byIndex, byBackend);
    }

    /**
     * The ring family's rehash sequence from a key of {@code hash} (spymemcached's and xmemcached's
     * failover, {@link Failover#rehashesKey()}): the key's backend, then the backend of each rehash of
     * the key, {@link Failover#lookups} lookups in all, each backend offered to the predicate until
     * one is accepted; {@link #WALKS} for every other family, whose failover is the walk from the key's
     * point. The one place in the library that reads a family's failover.
     *
     * @return the accepted backend, {@link #NO_BACKEND} when a try finds none, {@link #GAVE_UP}, or {@link #WALKS}
     */
    int rehashSequence(
            long hash, byte[] key, int offset, int length, IntPredicate byIndex, Predicate<Backend> byBackend) {
        Failover failover = version.family().failover();
        if (!failover.rehashesKey()) {
            return WALKS;
        }
        int h = (int) hash;
        int tries = failover.lookups(store.backendCount());
        for (int attempt = 0; attempt < tries; attempt++) {
            if (attempt > 0) {
                h = failover.rehash(h, key, offset, length, attempt);
            }
            int b = lookupHash(Integer.toUnsignedLong(h));
            if (b == NO_BACKEND) {
                return NO_BACKEND;
            }
            if (accepts(b, byIndex, byBackend)) {
                return b;
            }
        }
        return GAVE_UP;
    }

    /** Exactly one of the two predicates is given (no adapter object per call). */
    private boolean accepts(int b, IntPredicate byIndex, Predicate<Backend> byBackend) {
        return byIndex != null ? byIndex.test(b) : byBackend.test(store.backend(b));
    }

    /** The walk from cursor {@code p} (-1: an empty ring). */
    private int walkFrom(int p, int maxPoints, IntPredicate byIndex, Predicate<Backend> byBackend) {
        if (maxPoints < 1) {
            throw new IllegalArgumentException("maxPoints " + maxPoints + " must be at least 1");
        }
        PointRing w = walk;
        if (p < 0) {
            return NO_BACKEND;
        }
        for (int walked = 0; walked < maxPoints; walked++) {
            int b = w.backend(p);
            if (b >= 0 && accepts(b, byIndex, byBackend)) {
                return b;
            }
            p = w.next(p); // nginx: point[hp->hash % points->number]
        }
        return GAVE_UP;
    }

    /**
     * {@return position of the point that {@code hash} lands on: the first point with hash ≥ {@code hash}
     * (unsigned), or 0 past the last; -1 for an empty ring}
     *
     * @param hash the key's hash ({@link #hash(byte[])})
     */
    public int pointIndex(long hash) {
        int p = walk.cursor(hash);
        if (!ties || storedCount == 0) {
            return p;
        }
        int at = p < 0 ? -1 : Arrays.binarySearch(positions(), p);
        return Math.max(at, 0); // not found only in a damaged file
    }

    /**
     * With ties kept: the stored position of each ring point, the first member point of each hash.
     * Built once, at the first call that addresses points by position (4 bytes a ring point of heap);
     * lookups and {@link #select} never need it. A damaged file that yields fewer points than the
     * index says is padded with position 0, so positions stay inside the segment.
     */
    private int[] positions() {
        int[] table = positions;
        if (table == null) {
            table = new int[pointCount];
            int found = 0;
            boolean taken = false;
            int takenHash = 0;
            for (int p = 0; p < storedCount && found < pointCount; p++) {
                if (walk.memberAt(p)) {
                    int h = walk.storedHash(p);
                    if (!taken || h != takenHash) {
                        table[found++] = p;
                        taken = true;
                        takenHash = h;
                    }
                }
            }
            positions = table; // racing threads build equal tables; the volatile write publishes the elements
        }
        return table;
    }

    /**
     * {@return the hash of the point at {@code position}: a 32-bit ring's unsigned, a 64-bit ring's whole
     * (its high and low words)}
     *
     * @param position the point's position, 0 ≤ position &lt; {@link #pointCount()}
     */
    public long pointHash(int position) {
        return walk.hash(storedPosition(position));
    }

    /**
     * {@return where the point at {@code position} lies on the 32-bit hash line that {@link #lineShares}
     * and {@code RingDiff} measure: its hash in a 32-bit ring, the high word of its hash in a 64-bit one
     * (the 6-byte point's word)}
     *
     * @param position the point's position, 0 ≤ position &lt; {@link #pointCount()}
     */
    public int pointLineHash(int position) {
        return storedHash(storedPosition(position));
    }

    /**
     * {@return the backend of the point at {@code position}, or -1 if the file names one outside the backend table}
     *
     * @param position the point's position, 0 ≤ position &lt; {@link #pointCount()}
     */
    public int pointBackend(int position) {
        return storedBackend(storedPosition(position));
    }

    private int storedPosition(int position) {
        if (position < 0 || position >= pointCount) {
            throw new IndexOutOfBoundsException("point position " + position + " outside 0.." + (pointCount - 1));
        }
        return ties ? positions()[position] : position;
    }

    /**
     * {@return backends of the points from the key's point onwards, wrapping, each point once
     * ({@link #pointCount()} values): pingora-ketama's {@code node_iter} for one turn of the ring
     * (pingora's goes round forever)} Empty for an empty ring.
     *
     * @param key the key
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
     * {@return failover order: each distinct backend of the ring once, in the order its first point follows
     * the key's point} The first is {@link #lookup(byte[])}'s answer. For a family that fails over by
     * rehashing the key ({@link Failover#rehashesKey()}: spymemcached, xmemcached), the distinct
     * backends of its sequence of tries instead, in order, which need not be every backend.
     *
     * <p>Memory: besides the iterator itself, nothing for the first {@value #LINEAR_SEEN_POINTS}
     * points of the walk (more than nginx ever looks at): whether a point's backend came before is
     * answered by reading the earlier points of the walk again, at most that many. A longer walk
     * allocates one {@link java.util.BitSet} of the backend count, once, so a walk of the whole ring stays
     * O(points) instead of quadratic.
     *
     * @param key the key
     */
    public PrimitiveIterator.OfInt backends(byte[] key) {
        return new FailoverOrder(this, key);
    }

    /** How many points {@link #backends} checks again by reading them before it keeps a bit set. */
    static final int LINEAR_SEEN_POINTS = 64;

    /**
     * {@return each backend's exact share of the 32-bit hash line in this ring (index = backend index, 0 for
     * backends not in the ring): point i owns the hashes after point i-1 up to its own (in HAProxy's family
     * those from the midpoint with point i-1 to the midpoint with point i+1), the first point also the
     * wrap-around past the last (the last point, in a ring that does not wrap: grpc-java's)} Reads every
     * point: O(points).
     */
    public double[] lineShares() {
        long[] owned = new long[backendCount];
        int n = pointCount;
        if (n > 0) {
            // Point i owns the line from the boundary with point i - 1 to the boundary with point i + 1
            // (the point itself for a ring whose keys go to the next point, the midpoint for HAProxy's);
            // in a ring that does not wrap, point 0 owns the line from 0 and the last point its end.
            PointRing w = walk;
            boolean wraps = w.wraps();
            long first = Integer.toUnsignedLong(pointLineHash(0));
            long last = Integer.toUnsignedLong(pointLineHash(n - 1));
            long start = wraps ? w.lineBoundary(last - (1L << 32), first) : 0;
            for (int i = 0; i < n; i++) {
                long h = Integer.toUnsignedLong(pointLineHash(i));
                long after = i + 1 < n ? Integer.toUnsignedLong(pointLineHash(i + 1)) : first + (1L << 32);
                long end = w.lineBoundary(h, after);
                int b = pointBackend(i);
                if (b >= 0) {
                    owned[b] += end - start;
                }
                start = end;
            }
            int b = pointBackend(n - 1);
            if (!wraps && b >= 0) {
                owned[b] += (1L << 32) - last;
            }
        }
        double[] shares = new double[backendCount];
        for (int b = 0; b < backendCount; b++) {
            shares[b] = owned[b] / 4294967296.0;
        }
        return shares;
    }

    /** {@return how many points the ring has} */
    public int pointCount() {
        return pointCount;
    }

    /** {@return whether the ring has no point (no backend has its features)} */
    public boolean isEmpty() {
        return pointCount == 0;
    }

    /** {@return the version (algorithm and point multiple) this ring was built with} */
    public RingVersion version() {
        return version;
    }

    /** {@return how this ring hashes a key: its family's {@link RingVersion#keyHash()}} */
    public KeyHash keyHash() {
        return keyHash;
    }

    /** {@return the features every backend of this ring has (the empty set: all backends)} */
    public Set<String> features() {
        return features;
    }

    /** {@return the open file this ring lies in} */
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

    /** Points in the segment this ring reads: its own, or more with ties or as a view. */
    int storedCount() {
        return storedCount;
    }

    /** How the file stores this ring: {@code RingFileDescriptor.STORAGE_*}. */
    int storage() {
        return storage;
    }

    /** Whether the position table exists (tests: lookups, select and bounded load must not build it). */
    boolean positionTableBuilt() {
        return positions != null;
    }

    @Override
    public String toString() {
        return version + (features.isEmpty() ? " (all)" : " " + String.join("+", features));
    }
}
