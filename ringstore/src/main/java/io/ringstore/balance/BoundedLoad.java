package io.ringstore.balance;

import io.ringstore.Ring;

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
 * <p><b>Candidates.</b> The first candidate is the key's own point ({@link Ring#lookupHash(int)}'s
 * answer). Then, with the default {@link Walk#RANDOM_JUMP}, the point that a SplitMix64 sequence seeded
 * by the key's hash lands on, draw after draw (Chen, Coleman and Shrivastava, "Revisiting consistent
 * hashing with bounded loads", AAAI 2021): each key's overflow goes to its own pseudo-random backends,
 * so a hot backend's overflow is spread over the whole pool instead of piling onto the backends that
 * follow it on the ring, which {@link Walk#CLOCKWISE} (HAProxy's {@code hash-balance-factor}) does.
 * BENCHMARKS.md ("Bounded load") has the measured comparison.
 *
 * <p><b>Bound.</b> At most {@link #maxProbes()} candidate points are drawn per request (16 by default),
 * each read once and its backend examined once ({@link LoadView#available(int)}, then
 * {@link LoadView#inFlight(int)}): a backend drawn twice is examined twice, two loads from lines just
 * read, as cheap as remembering it and needing no storage. If none of them has room (only possible
 * when the view changes under the request or is inconsistent, or when the draws miss every backend
 * with room), the least loaded available candidate drawn is returned, over capacity. If no candidate
 * drawn was available, the backends are swept clockwise from the key's point for the first available
 * one (at most one turn of the ring, and only when the view counts an available backend at all).
 *
 * <p>Immutable and thread-safe; {@link #choose} allocates nothing.
 */
public final class BoundedLoad {
    /** How the next candidate after the key's own point is found. */
    public enum Walk {
        /** Points drawn by a pseudo-random sequence seeded by the key's hash: the default. */
        RANDOM_JUMP,
        /** The points that follow the key's point on the ring, in order, wrapping. */
        CLOCKWISE
    }

    public static final double DEFAULT_C = 1.25;
    public static final double MIN_C = 1.0;
    public static final double MAX_C = 100.0;
    public static final int DEFAULT_MAX_PROBES = 16;
    public static final int MAX_PROBES_LIMIT = 1024;

    private static final long C_SCALE = 1000;
    /** Far above any real in-flight count, far below overflow of c_thousandths × (m + 1). */
    private static final long MAX_TOTAL = 1L << 40;
    private static final long GOLDEN_GAMMA = 0x9E3779B97F4A7C15L;

    private final long cThousandths;
    private final Walk walk;
    private final int maxProbes;

    private BoundedLoad(long cThousandths, Walk walk, int maxProbes) {
        this.cThousandths = cThousandths;
        this.walk = walk;
        this.maxProbes = maxProbes;
    }

    /** The random-jump walk, {@value #DEFAULT_MAX_PROBES} probes, and {@code c} (rounded to thousandths). */
    public static BoundedLoad of(double c) {
        if (!(c >= MIN_C && c <= MAX_C)) {
            throw new IllegalArgumentException("c must be between " + MIN_C + " and " + MAX_C + ": c=" + c);
        }
        return new BoundedLoad(Math.round(c * C_SCALE), Walk.RANDOM_JUMP, DEFAULT_MAX_PROBES);
    }

    /** The same bound with another walk. */
    public BoundedLoad walk(Walk walk) {
        if (walk == null) {
            throw new IllegalArgumentException("walk must not be null");
        }
        return new BoundedLoad(cThousandths, walk, maxProbes);
    }

    /** The same bound drawing at most {@code maxProbes} candidate points (1 = only the key's own point). */
    public BoundedLoad maxProbes(int maxProbes) {
        if (maxProbes < 1 || maxProbes > MAX_PROBES_LIMIT) {
            throw new IllegalArgumentException("maxProbes must be between 1 and " + MAX_PROBES_LIMIT + ": maxProbes=" + maxProbes);
        }
        return new BoundedLoad(cThousandths, walk, maxProbes);
    }

    public double c() {
        return cThousandths / (double) C_SCALE;
    }

    public Walk walk() {
        return walk;
    }

    public int maxProbes() {
        return maxProbes;
    }

    /** ⌈c · (m + 1) / n⌉ for the view as it is now: the most requests a backend may hold after taking one. */
    public long capacity(LoadView load) {
        long m = Math.clamp(load.totalInFlight(), 0, MAX_TOTAL);
        long n = Math.max(1, load.availableBackends());
        return Math.ceilDiv(cThousandths * (m + 1), C_SCALE * n);
    }

    /**
     * The backend for a key of CRC-32 {@code hash} under the bound, or {@link Ring#NO_BACKEND} when the
     * ring is empty or none of its backends is available. With no load and every backend available it
     * is {@code ring.lookupHash(hash)}; for the same ring and the same view it is always the same.
     */
    public int choose(Ring ring, int hash, LoadView load) {
        int home = ring.pointIndex(hash);
        if (home < 0) {
            return Ring.NO_BACKEND;
        }
        long capacity = capacity(load);
        int points = ring.pointCount();
        int point = home;
        long sequence = hash;
        int best = Ring.NO_BACKEND;
        long bestInFlight = Long.MAX_VALUE;
        for (int probe = 1; ; probe++) {
            int b = ring.pointBackend(point);
            if (b >= 0 && load.available(b)) {
                long inFlight = load.inFlight(b);
                if (inFlight < capacity) {
                    return b;
                }
                if (inFlight < bestInFlight) {
                    best = b;
                    bestInFlight = inFlight;
                }
            }
            if (probe == maxProbes) {
                break;
            }
            if (walk == Walk.CLOCKWISE) {
                point = point + 1 == points ? 0 : point + 1;
            } else {
                sequence += GOLDEN_GAMMA;
                point = ring.pointIndex((int) (mix64(sequence) >>> 32));
            }
        }
        if (best >= 0 || load.availableBackends() <= 0) {
            return best;
        }
        return firstAvailable(ring, home, load);
    }

    /** The first available backend clockwise from the point at {@code home}, or {@link Ring#NO_BACKEND}. */
    private static int firstAvailable(Ring ring, int home, LoadView load) {
        int points = ring.pointCount();
        for (int i = 0, point = home; i < points; i++, point = point + 1 == points ? 0 : point + 1) {
            int b = ring.pointBackend(point);
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
