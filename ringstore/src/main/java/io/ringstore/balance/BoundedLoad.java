package io.ringstore.balance;

import io.ringstore.Ring;
import io.ringstore.internal.BackendAccess;
import io.ringstore.internal.format.PointRing;

/**
 * Consistent hashing with bounded loads (Mirrokni, Thorup and Zadimoghaddam, 2017): a key goes to its
 * ring backend unless that backend is unavailable or already at capacity, and then to the next
 * candidate of a bounded, per-key deterministic sequence.
 *
 * <p><b>Capacity.</b> With m = {@link LoadView#totalInFlight()} (requests in flight on the pool, not
 * counting the one being placed) and n = {@link LoadView#availableBackends()}, every backend's capacity
 * is ⌈c · (m + 1) / n⌉: the paper's bound, the mean taken over the available backends and including
 * the request being placed. A backend takes the request when it is available and has fewer than
 * capacity requests in flight, so it holds at most capacity afterwards. Since n · capacity ≥ c · (m + 1)
 * &gt; m, some available backend always has room. c is kept in thousandths and the bound computed in
 * integers (1.1 × 10 / 11 is exactly 1, not 1.0000000000000002 rounded up to 2); m is clamped to
 * [0, 2^40] and n to at least 1, so a nonsensical view cannot overflow it.
 *
 * <p><b>Candidates.</b> The first candidate is the key's own point ({@link Ring#lookupHash(long)}'s
 * answer). Then, with the default {@link Walk#RANDOM_JUMP}, the points that a SplitMix64 sequence
 * seeded by the key's hash lands on, draw after draw (Chen, Coleman and Shrivastava, "Revisiting
 * consistent hashing with bounded loads", AAAI 2021): each key's overflow goes to its own pseudo-random
 * backends anywhere on the ring. {@link Walk#CLOCKWISE} (HAProxy's {@code hash-balance-factor}) takes
 * the points that follow instead, so every key overflowing near a hot key lands on the same few
 * backends: measured, the backends after the hottest key's point sit at capacity all the time (c × the
 * mean), against about the mean with random jumps, for the same peak, affinity and probes
 * (bench/results/2026-12-01-xeon.md, "Bounded load").
 *
 * <p><b>Bound.</b> At most {@link #maxProbes()} distinct backends are examined per request (16 by
 * default; fewer when the ring's file has fewer backends), each once: {@link LoadView#available(int)},
 * then {@link LoadView#inFlight(int)}. A drawn point whose backend was already examined is skipped
 * without reading the view, remembered as a bit of the backend's index mod 128 in two longs: exact up
 * to 128 backends; above, a backend sharing a bit with one examined is skipped for this request (it
 * stays reachable through other draws and by the sweep below). Points drawn are bounded too, at
 * {@value #DRAWS_PER_PROBE} × maxProbes, for rings whose walk keeps meeting the same backends. If no
 * candidate examined has room (only possible when the view changes under the request or is
 * inconsistent, or when a key's own sequence is full, as for a single key hotter than maxProbes
 * backends can hold), the least loaded available candidate is returned, over capacity. If no
 * candidate examined was available at all, the ring is swept clockwise from the key's point for the
 * first available backend (at most one turn of the ring, and only when the view counts an available
 * backend), so an unavailable backend is never chosen while another is available.
 *
 * <p><b>Strict.</b> {@link #choose} reads the counts and answers; the caller then counts the request,
 * so requests racing for a backend's last place can all take it. {@link #chooseAndAcquire} reserves,
 * then checks, and counts the request itself: no request is ever taken above the bound (see there).
 *
 * <p>Immutable and thread-safe; {@link #choose} and {@link #chooseAndAcquire} allocate nothing.
 */
public final class BoundedLoad {
    /** How the next candidate after the key's own point is found. */
    public enum Walk {
        /** Points drawn by a pseudo-random sequence seeded by the key's hash: the default. */
        RANDOM_JUMP,
        /**
         * The points that follow the key's point on the ring, in order, wrapping: HAProxy's order, kept for
         * comparison (the measuring program runs both) and where a probe must cost no point search.
         */
        CLOCKWISE
    }

    /** The usual c (HAProxy's {@code hash-balance-factor 125}, the paper's and Vimeo's choice). */
    public static final double DEFAULT_C = 1.25;
    /** Walks by cursor, not by position: a view then needs no position table. */
    private static final BackendAccess.RingOperations RINGS = BackendAccess.rings();
    /** The smallest c: every backend at the mean (the tightest bound). */
    public static final double MIN_C = 1.0;
    /** The largest c accepted: in practice, no bound. */
    public static final double MAX_C = 100.0;
    /** Distinct backends examined per request unless told otherwise. */
    public static final int DEFAULT_MAX_PROBES = 16;
    /** The most distinct backends a request may examine. */
    public static final int MAX_PROBES_LIMIT = 1024;

    private static final long C_SCALE = 1000;
    /** Far above any real in-flight count, far below overflow of c_thousandths × (m + 1). */
    private static final long MAX_TOTAL = 1L << 40;

    private static final long GOLDEN_GAMMA = 0x9E3779B97F4A7C15L;
    /** Draws allowed per probe: room for the repeats of a walk over a ring with few backends or many points per backend. */
    private static final int DRAWS_PER_PROBE = 4;
    /** Clockwise sweeps of the ring, each backend once, before a strict request goes over the bound. */
    private static final int SWEEPS = 4;

    private final long cThousandths;
    private final Walk walk;
    private final int maxProbes;

    private BoundedLoad(long cThousandths, Walk walk, int maxProbes) {
        this.cThousandths = cThousandths;
        this.walk = walk;
        this.maxProbes = maxProbes;
    }

    /**
     * {@return the random-jump walk, {@value #DEFAULT_MAX_PROBES} probes, and {@code c} (rounded to thousandths)}
     *
     * @param c the balance factor, from {@value #MIN_C} to {@value #MAX_C} (1.25: at most 25 % above the mean)
     */
    public static BoundedLoad of(double c) {
        if (!(c >= MIN_C && c <= MAX_C)) {
            throw new IllegalArgumentException("c must be between " + MIN_C + " and " + MAX_C + ": c=" + c);
        }
        return new BoundedLoad(Math.round(c * C_SCALE), Walk.RANDOM_JUMP, DEFAULT_MAX_PROBES);
    }

    /**
     * {@return the same bound with another walk}
     *
     * @param walk the order in which backends past the key's own are tried
     */
    public BoundedLoad walk(Walk walk) {
        if (walk == null) {
            throw new IllegalArgumentException("walk must not be null");
        }
        return new BoundedLoad(cThousandths, walk, maxProbes);
    }

    /**
     * {@return the same bound examining at most {@code maxProbes} distinct backends per request (1 = only the key's own)}
     *
     * @param maxProbes the most distinct backends examined per request, 1 to {@value #MAX_PROBES_LIMIT}
     */
    public BoundedLoad maxProbes(int maxProbes) {
        if (maxProbes < 1 || maxProbes > MAX_PROBES_LIMIT) {
            throw new IllegalArgumentException(
                    "maxProbes must be between 1 and " + MAX_PROBES_LIMIT + ": maxProbes=" + maxProbes);
        }
        return new BoundedLoad(cThousandths, walk, maxProbes);
    }

    /** {@return the balance factor c} */
    public double c() {
        return cThousandths / (double) C_SCALE;
    }

    /** {@return the order in which backends past the key's own are tried} */
    public Walk walk() {
        return walk;
    }

    /** {@return the most distinct backends examined per request} */
    public int maxProbes() {
        return maxProbes;
    }

    /**
     * {@return ⌈c · (m + 1) / n⌉ for the view as it is now: the most requests a backend may hold after taking one}
     *
     * @param load the host's load and availability
     */
    public long capacity(LoadView load) {
        long m = Math.clamp(load.totalInFlight(), 0, MAX_TOTAL);
        long n = Math.max(1, load.availableBackends());
        return Math.ceilDiv(cThousandths * (m + 1), C_SCALE * n);
    }

    /**
     * {@return the backend for a key of {@code hash} under the bound, or {@link Ring#NO_BACKEND} when the
     * ring is empty or none of its backends is available} With no load and every backend available it
     * is {@code ring.lookupHash(hash)}; for the same ring and the same view it is always the same.
     *
     * @param ring the ring to walk
     * @param hash the key's hash ({@link Ring#hash(byte[])})
     * @param load the host's load and availability
     */
    public int choose(Ring ring, long hash, LoadView load) {
        PointRing cursor = RINGS.walk(ring);
        return choose(ring, cursor, cursor.cursor(hash), cursor.seed(hash), load, false);
    }

    /**
     * {@link #choose(Ring, long, LoadView)}, and the request counted in flight on the backend chosen
     * ({@link LoadView#acquire}), in one step that keeps the bound strict under concurrency: reserve,
     * then check. A candidate that reads as having room (fewer than the capacity ⌈c · (m + 1) / n⌉, m
     * the total read as the walk begins) is reserved first (its count goes up by this request), then
     * its count q is read again, now including the reservation, and it is taken only if q is at most
     * that capacity; else the reservation is given back ({@link LoadView#release}) and the walk goes on. Of two requests racing for a backend's last
     * place, the one that reserves second reads the first's reservation (each reserves with an atomic
     * read-modify-write before it reads the counts), so they cannot both pass: whenever a request is
     * taken, its backend holds, counting it and every request taken before and not yet released, at
     * most ⌈c · (m + 1) / n⌉ for the m it read. With {@link #choose}, two requests can both read the last
     * place free and both take it: the bound plus one, or more.
     *
     * <p>If none of the key's candidates has room, the ring is swept clockwise from the key's point, each
     * backend not yet examined once (exact up to 128 backends, as the candidates' record), for one with
     * room, reserved the same way; only if that finds none either (when every backend is full at its own
     * instant of reading, which takes other requests arriving meanwhile) is the least loaded available
     * candidate taken, over the bound, as {@link #choose} returns it. The backend returned is counted:
     * the caller releases it when the request is done; {@link Ring#NO_BACKEND}: nothing counted.
     *
     * @param ring the ring to walk
     * @param hash the key's hash ({@link Ring#hash(byte[])})
     * @param load the host's load and availability; it counts ({@link LoadView#acquire})
     * @return the backend, counted in flight, or {@link Ring#NO_BACKEND}
     */
    public int chooseAndAcquire(Ring ring, long hash, LoadView load) {
        PointRing cursor = RINGS.walk(ring);
        return choose(ring, cursor, cursor.cursor(hash), cursor.seed(hash), load, true);
    }

    /** The walk of {@link #choose} and, with {@code reserve}, of {@link #chooseAndAcquire}. */
    private int choose(Ring ring, PointRing cursor, int home, long seed, LoadView load, boolean reserve) {
        if (home < 0) {
            return Ring.NO_BACKEND;
        }
        long capacity = capacity(load);
        int probeLimit = Math.min(maxProbes, ring.store().backendCount());
        int point = home;
        long sequence = seed;
        long examinedLow = 0; // backends examined, as bits of their index mod 128: exact up to 128 backends
        long examinedHigh = 0;
        int best = Ring.NO_BACKEND;
        long bestInFlight = Long.MAX_VALUE;
        for (int probes = 0, draws = 1; ; draws++) {
            int b = cursor.backend(point);
            long bit = 1L << b; // the shift takes b mod 64
            boolean high = (b & 64) != 0;
            if (b >= 0 && ((high ? examinedHigh : examinedLow) & bit) == 0) {
                if (high) {
                    examinedHigh |= bit;
                } else {
                    examinedLow |= bit;
                }
                probes++;
                if (load.available(b)) {
                    long inFlight = load.inFlight(b);
                    if (inFlight < capacity && (!reserve || reserved(b, capacity, load))) {
                        return b;
                    }
                    if (inFlight < bestInFlight) {
                        best = b;
                        bestInFlight = inFlight;
                    }
                }
            }
            if (probes == probeLimit || draws == DRAWS_PER_PROBE * maxProbes) {
                break;
            }
            if (walk == Walk.CLOCKWISE) {
                point = cursor.next(point);
            } else {
                sequence += GOLDEN_GAMMA;
                point = cursor.lineCursor((int) (mix64(sequence) >>> 32));
            }
        }
        if (!reserve) {
            return best >= 0 || load.availableBackends() <= 0 ? best : firstAvailable(ring, home, load, cursor);
        }
        int points = ring.pointCount();
        // Every backend can read as full one by one while there is room (requests come and go during the
        // sweep, and a racing request's reservation is visible until it is given back): the sweep is made
        // again, each backend once per sweep, before the request goes over the bound.
        for (int sweep = 0; sweep < SWEEPS; sweep++) {
            for (int i = 0, p = home; i < points; i++, p = cursor.next(p)) {
                int b = cursor.backend(p);
                long bit = 1L << b;
                boolean high = (b & 64) != 0;
                if (b >= 0 && ((high ? examinedHigh : examinedLow) & bit) == 0) {
                    if (high) {
                        examinedHigh |= bit;
                    } else {
                        examinedLow |= bit;
                    }
                    if (load.available(b)) {
                        long inFlight = load.inFlight(b);
                        long now = capacity(load);
                        if (inFlight < now && reserved(b, now, load)) {
                            return b;
                        }
                        if (inFlight < bestInFlight) {
                            best = b;
                            bestInFlight = inFlight;
                        }
                    }
                }
            }
            examinedLow = 0;
            examinedHigh = 0;
            Thread.onSpinWait();
        }
        if (best >= 0) {
            load.acquire(best); // every backend full as read: over the bound, as choose() answers
        }
        return best;
    }

    /**
     * Reserves a place on {@code b}, then checks it: b's count read after the reservation (which counts
     * it) must be at most {@code capacity}, the bound for the total read when the walk began; else the
     * reservation is given back.
     */
    private static boolean reserved(int b, long capacity, LoadView load) {
        load.acquire(b); // an atomic read-modify-write: the read below is ordered after it
        if (load.inFlight(b) <= capacity) {
            return true;
        }
        load.release(b);
        return false;
    }

    /** The first available backend clockwise from the point at {@code home}, or {@link Ring#NO_BACKEND}. */
    private static int firstAvailable(Ring ring, int home, LoadView load, PointRing cursor) {
        int points = ring.pointCount();
        for (int i = 0, point = home; i < points; i++, point = cursor.next(point)) {
            int b = cursor.backend(point);
            if (b >= 0 && load.available(b)) {
                return b;
            }
        }
        return Ring.NO_BACKEND;
    }

    /** SplitMix64's finaliser (Steele, Lea and Flood, 2014): each step of the sequence, well mixed. */
    private static long mix64(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    @Override
    public String toString() {
        return "BoundedLoad[c=" + c() + ", walk=" + walk + ", maxProbes=" + maxProbes + "]";
    }
}
