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
import java.util.BitSet;
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

    static {
        BackendAccess.registerRings(ring -> ring.walk);
    }

    private final RingStore store;
    /** The walk over the points by cursor: every lookup goes through it. */
    private final PointRing walk;

    /** Whether the ring's points (and its family's key hash) are 64-bit: lookups by key then search by {@link PointRing#cursor64}. */
    private final boolean wide;
    /** Points in the segment: the ring's own for stored points, more for ties and views. */
    private final int storedCount;
    /** The ring's points: its distinct hashes. */
    private final int pointCount;

    private final int backendCount;
    /** Whether ring positions differ from stored positions (ties kept, or a view). */
    private final boolean ties;

    private final int storage;
    private final RingVersion version;
    /** The version's key hash ({@link RingVersion#keyHash()}), what {@link #lookup(byte[])} and its overloads hash keys with. */
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
        this.walk = new PointRing(stored, members, featureMask, backendCount, ties);
        this.wide = stored.low() != null;
        this.backendCount = backendCount;
        this.version = version;
        this.keyHash = version.keyHash();
        this.features = features;
        this.featureMask = featureMask;
    }

    /**
     * {@return CRC-32 (IEEE) of the key's bytes: the hash nginx and pingora-ketama look keys up by}
     *
     * @param key the key
     * @param offset where the key starts in {@code key}
     * @param length the key's length in bytes
     */
    public static int hash(byte[] key, int offset, int length) {
        return KeyHash.CRC32.hash(key, offset, length);
    }

    /**
     * CRC-32 (IEEE) of all of {@code key}: {@link #hash(byte[], int, int)} of the whole array.
     *
     * @param key the key
     * @return the hash lookups use
     */
    public static int hash(byte[] key) {
        return hash(key, 0, key.length);
    }

    /**
     * {@return CRC-32 of the key's bytes from {@code position} to {@code limit}, heap or direct; the buffer's
     * position, limit and mark are left as they are (the buffer is never written, so a buffer shared
     * between threads may be hashed by all of them at once)}
     *
     * @param key the key
     */
    public static int hash(ByteBuffer key) {
        return KeyHash.CRC32.hash(key);
    }

    /**
     * {@return CRC-32 of every byte of the segment, heap or native (a confined segment from its own thread)}
     *
     * @param key the key
     */
    public static int hash(MemorySegment key) {
        return KeyHash.CRC32.hash(key);
    }

    /**
     * {@return the backend for {@code key}, or -1 when the ring is empty}
     *
     * @param key the key
     */
    public int lookup(byte[] key) {
        return wide ? lookupHash64(keyHash.hash64(key, 0, key.length)) : lookupHash(keyHash.hash(key, 0, key.length));
    }

    /**
     * {@return the backend for the key in {@code key[offset, offset+length)}, or -1 when the ring is empty}
     *
     * @param key the key
     * @param offset where the key starts in {@code key}
     * @param length the key's length in bytes
     */
    public int lookup(byte[] key, int offset, int length) {
        return wide ? lookupHash64(keyHash.hash64(key, offset, length)) : lookupHash(keyHash.hash(key, offset, length));
    }

    /**
     * {@return the backend for the key's bytes from {@code position} to {@code limit} (see {@link #hash(ByteBuffer)}), or -1}
     *
     * @param key the key
     */
    public int lookup(ByteBuffer key) {
        return wide ? lookupHash64(keyHash.hash64(key)) : lookupHash(keyHash.hash(key));
    }

    /**
     * {@return the backend for the segment's bytes as the key, or -1 when the ring is empty}
     *
     * @param key the key
     */
    public int lookup(MemorySegment key) {
        return wide ? lookupHash64(keyHash.hash64(key)) : lookupHash(keyHash.hash(key));
    }

    /**
     * {@return the backend for a precomputed hash of the key, or -1 when the ring is empty}
     *
     * @param hash the key's hash by the ring's {@link #keyHash()} (CRC-32 for nginx v1 and pingora v2)
     */
    public int lookupHash(int hash) {
        PointRing w = walk;
        int p = w.cursor(hash);
        return p < 0 ? NO_BACKEND : w.backend(p);
    }

    /**
     * {@return the backend for a precomputed 64-bit hash of the key in a ring of 64-bit points (Envoy's,
     * gRPC's), or -1 when the ring is empty} In a 32-bit ring, the hash's low 32 bits are looked up.
     *
     * @param hash the key's hash by the ring's {@link #keyHash()} ({@link KeyHash#hash64})
     */
    public int lookupHash64(long hash) {
        PointRing w = walk;
        int p = wide ? w.cursor64(hash) : w.cursor((int) hash);
        return p < 0 ? NO_BACKEND : w.backend(p);
    }

    /** {@return whether the ring's points are 64-bit (Envoy's and gRPC's families; FORMAT.md, "64-bit rings")} */
    public boolean isWide() {
        return wide;
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
     *
     * <p>Allocation-free and thread-safe; {@code accept} runs on the caller's thread.
     *
     * @param hash      the key's CRC-32 ({@link #hash(byte[])})
     * @param maxPoints how many points may be looked at, at least 1 ({@link #NGINX_MAX_POINTS} for nginx)
     * @param accept whether a backend may be chosen; asked once per point walked
     * @return the accepted backend; {@link #NO_BACKEND} for an empty ring; {@link #GAVE_UP} when
     *         {@code maxPoints} points were looked at without an accepted backend (nginx then uses
     *         round robin)
     */
    public int select(int hash, int maxPoints, IntPredicate accept) {
        return walk(hash, maxPoints, accept, null);
    }

    /**
     * {@return {@link #select(int, int, IntPredicate)} with {@code accept} given the {@link Backend}s of this
     * ring's file: the accepted backend, or null for both negative answers} For callers that keep
     * health by server rather than by index (an index belongs to one generation); allocates nothing.
     *
     * @param hash the key's CRC-32 ({@link io.ringstore.Ring#hash(byte[])})
     * @param maxPoints the most points to walk ({@link io.ringstore.Ring#NGINX_MAX_POINTS} as nginx)
     * @param accept whether a backend may be chosen; asked once per point walked
     */
    public Backend selectBackend(int hash, int maxPoints, Predicate<Backend> accept) {
        int b = walk(hash, maxPoints, null, accept);
        return b < 0 ? null : store.backend(b);
    }

    /**
     * Failover from {@code key} as the ring's family does it ({@link Failover}): nginx's and
     * pingora's walk and Envoy's next entry as {@link #select(int, int, IntPredicate)} from the key's
     * point (at most {@code maxPoints} points); spymemcached's and xmemcached's rehash sequence: the
     * key's backend, then the backend of each rehash of the key, {@link Failover#lookups} lookups in all
     * ({@code maxPoints} does not shorten the client's sequence). Allocation-free.
     *
     * @param key       the key
     * @param offset    where the key starts
     * @param length    the key's length in bytes
     * @param maxPoints how many points a walk may look at, at least 1
     * @param accept    whether a backend may be chosen
     * @return the accepted backend; {@link #NO_BACKEND} for an empty ring; {@link #GAVE_UP} when none was accepted
     */
    public int select(byte[] key, int offset, int length, int maxPoints, IntPredicate accept) {
        return selectKey(key, offset, length, maxPoints, accept, null);
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
        int b = selectKey(key, offset, length, maxPoints, null, accept);
        return b < 0 ? null : store.backend(b);
    }

    private int selectKey(
            byte[] key, int offset, int length, int maxPoints, IntPredicate byIndex, Predicate<Backend> byBackend) {
        if (maxPoints < 1) {
            throw new IllegalArgumentException("maxPoints " + maxPoints + " must be at least 1");
        }
        // The family's failover: a walk from the key's point, or a lookup of each try's hash in turn.
        Failover failover = version.family().failover();
        int lookups = failover.lookups(store.backendCount());
        int points = failover.pointsPerLookup(maxPoints);
        int h = wide ? 0 : keyHash.hash(key, offset, length);
        int p = wide ? walk.cursor64(keyHash.hash64(key, offset, length)) : walk.cursor(h);
        for (int attempt = 1; ; attempt++) {
            int b = walkFrom(p, points, byIndex, byBackend);
            if (b != GAVE_UP || attempt == lookups) {
                return b;
            }
            h = failover.rehash(h, key, offset, length, attempt);
            p = walk.cursor(h);
        }
    }

    /**
     * {@link #select(int, int, IntPredicate)} for a 64-bit hash ({@link KeyHash#hash64}): in a ring of
     * 64-bit points the walk starts from the point the whole hash lands on, in a 32-bit ring from its low
     * 32 bits' point.
     *
     * @param hash      the key's hash by the ring's {@link #keyHash()}
     * @param maxPoints how many points may be looked at, at least 1
     * @param accept    whether a backend may be chosen; asked once per point walked
     * @return as {@link #select(int, int, IntPredicate)}
     */
    public int select64(long hash, int maxPoints, IntPredicate accept) {
        return walkFrom(wide ? walk.cursor64(hash) : walk.cursor((int) hash), maxPoints, accept, null);
    }

    /**
     * {@return {@link #select64} with {@code accept} given the {@link Backend}s: the accepted backend, or null for both negative answers}
     *
     * @param hash      the key's hash by the ring's {@link #keyHash()}
     * @param maxPoints how many points may be looked at, at least 1
     * @param accept    whether a backend may be chosen
     */
    public Backend selectBackend64(long hash, int maxPoints, Predicate<Backend> accept) {
        int b = walkFrom(wide ? walk.cursor64(hash) : walk.cursor((int) hash), maxPoints, null, accept);
        return b < 0 ? null : store.backend(b);
    }

    /** The one failover walk; exactly one of the two predicates is given (no adapter object per call). */
    private int walk(int hash, int maxPoints, IntPredicate byIndex, Predicate<Backend> byBackend) {
        return walkFrom(walk.cursor(hash), maxPoints, byIndex, byBackend);
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
            if (b >= 0 && (byIndex != null ? byIndex.test(b) : byBackend.test(store.backend(b)))) {
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
     * @param hash the key's CRC-32 ({@link io.ringstore.Ring#hash(byte[])})
     */
    public int pointIndex(int hash) {
        int p = walk.search(hash);
        if (p < 0 || !ties) {
            return p;
        }
        int q = walk.isView() ? walk.firstMemberFrom(p) : p;
        int at = q < 0 ? -1 : Arrays.binarySearch(positions(), q);
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
     * {@return the hash of the point at {@code position} (0 ≤ position &lt; {@link #pointCount()})}
     *
     * @param position the point's position, 0 ≤ position &lt; {@link #pointCount()}
     */
    public int pointHash(int position) {
        return storedHash(storedPosition(position));
    }

    /**
     * {@return the whole hash of the point at {@code position}: a 64-bit ring's (high and low words), a
     * 32-bit ring's zero-extended}
     *
     * @param position the point's position, 0 ≤ position &lt; {@link #pointCount()}
     */
    public long pointHash64(int position) {
        return walk.storedHash64(storedPosition(position));
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
        int start = startPosition(key);
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
     * allocates one {@link BitSet} of the backend count, once, so a walk of the whole ring stays
     * O(points) instead of quadratic.
     *
     * @param key the key
     */
    public PrimitiveIterator.OfInt backends(byte[] key) {
        if (version.family().failover().rehashesKey()) {
            return rehashSequence(key);
        }
        int start = startPosition(key);
        return new PrimitiveIterator.OfInt() {
            int walked; // points of the walk read so far
            BitSet seen; // backends of those points, once walked > LINEAR_SEEN_POINTS
            int next = advance();

            private int advance() {
                while (start >= 0 && walked < pointCount) {
                    int b = pointBackend(wrap(start + walked));
                    boolean first = b >= 0 && !seenBefore(b);
                    walked++;
                    if (seen != null && b >= 0) {
                        seen.set(b);
                    }
                    if (first) {
                        return b;
                    }
                }
                return NO_BACKEND;
            }

            private boolean seenBefore(int b) {
                if (seen == null && walked > LINEAR_SEEN_POINTS) {
                    seen = new BitSet(backendCount);
                    for (int i = 0; i < walked; i++) {
                        int earlier = pointBackend(wrap(start + i));
                        if (earlier >= 0) {
                            seen.set(earlier);
                        }
                    }
                }
                if (seen != null) {
                    return seen.get(b);
                }
                for (int i = 0; i < walked; i++) {
                    if (pointBackend(wrap(start + i)) == b) {
                        return true;
                    }
                }
                return false;
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

    /** The ring position {@code key} lands on (by the family's key hash), -1 for an empty ring. */
    private int startPosition(byte[] key) {
        return wide ? walk.cursor64(keyHash.hash64(key, 0, key.length)) : pointIndex(keyHash.hash(key, 0, key.length));
    }

    /** A rehash family's failover order: the distinct backends of its tries, in order. */
    private PrimitiveIterator.OfInt rehashSequence(byte[] key) {
        Failover failover = version.family().failover();
        int tries = failover.lookups(store.backendCount());
        int[] order = new int[tries];
        int n = 0;
        int h = keyHash.hash(key, 0, key.length);
        for (int attempt = 0; attempt < tries; attempt++) {
            if (attempt > 0) {
                h = failover.rehash(h, key, 0, key.length, attempt);
            }
            int b = lookupHash(h);
            boolean seen = b < 0;
            for (int i = 0; i < n && !seen; i++) {
                seen = order[i] == b;
            }
            if (!seen) {
                order[n++] = b;
            }
        }
        return java.util.Arrays.stream(order, 0, n).iterator();
    }

    /** How many points {@link #backends} checks again by reading them before it keeps a bit set. */
    static final int LINEAR_SEEN_POINTS = 64;

    private int wrap(int p) {
        return p >= pointCount ? p - pointCount : p;
    }

    /**
     * {@return each backend's exact share of the 32-bit hash line in this ring (index = backend index, 0 for
     * backends not in the ring): point i owns the hashes after point i-1 up to its own, the first point
     * also the wrap-around past the last} Reads every point: O(points).
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
