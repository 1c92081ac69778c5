package io.ringstore.migration;

import io.ringstore.Ring;
import io.ringstore.RingStore;
import io.ringstore.internal.BackendAccess;
import io.ringstore.internal.format.PointRing;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The exact difference between two rings: which part of the 32-bit hash line changes backend.
 * Computed by one sweep over both sorted point lists (O(points of both)), not by sampling. Backends
 * are matched by endpoint (address, port, scope), so the two rings may come from different files,
 * for example two generations of a backend list.
 *
 * <p>Two rings whose families hash keys differently (v1's CRC-32 and libketama's MD5, say) place a
 * key at unrelated points of the line, so the line's backends side by side say nothing about a key's:
 * then a key's two hashes are taken as independent, and a key keeps its backend with probability
 * Σ share_A(e) × share_B(e) over the endpoints e (the sweep would give a number of the same size but
 * off by up to a few percent, depending on how the two rings' arcs happen to overlap).
 *
 * @param movedFraction the fraction of the hash line (so of uniformly hashed keys) whose backend
 *                      differs; for two key hashes, the expected fraction of keys
 * @param before        each endpoint's share of the line in ring A (socket address → share)
 * @param after         each endpoint's share in ring B
 * @param movedOut      per endpoint of A: the share it loses (keys that leave it)
 * @param movedIn       per endpoint of B: the share it gains (keys that arrive)
 */
public record RingDiff(
        double movedFraction,
        Map<String, Double> before,
        Map<String, Double> after,
        Map<String, Double> movedOut,
        Map<String, Double> movedIn) {
    private static final double LINE = 4294967296.0;

    /**
     * {@return the fraction a rollout of {@code percent} % moves: keys migrate at random, independent of the ring}
     *
     * @param percent the rollout, 0 to 100
     */
    public double movedAtRollout(double percent) {
        return movedFraction * percent / 100.0;
    }

    /**
     * {@return the exact difference between two rings: each backend's share of the hash line before and after, and
     * what moved}
     *
     * @param a the ring keys leave
     * @param b the ring keys move to
     */
    public static RingDiff between(Ring a, Ring b) {
        String[] endpointA = endpoints(a);
        String[] endpointB = endpoints(b);
        Map<String, Long> before = new LinkedHashMap<>();
        Map<String, Long> after = new LinkedHashMap<>();
        Map<String, Long> out = new LinkedHashMap<>();
        Map<String, Long> in = new LinkedHashMap<>();
        long moved = 0;
        int na = a.pointCount();
        int nb = b.pointCount();
        if (na == 0 || nb == 0) {
            // One side has no backend: every key changes (unless both are empty).
            accumulateAll(a, endpointA, before, out);
            accumulateAll(b, endpointB, after, in);
            double f = na == 0 && nb == 0 ? 0.0 : 1.0;
            return new RingDiff(f, shares(before), shares(after), shares(out), shares(in));
        }
        if (!a.keyHash().name().equals(b.keyHash().name())) {
            return independent(a, endpointA, b, endpointB);
        }
        // Sweep the union of boundaries: each ring's line is a run of segments (prev, cur], each the keys
        // of one point (the first point at or after them, or for HAProxy's the nearer one, or past a last point that
        // does not wrap that last point (grpc-java's): the ring's
        // walk says where one point's keys end, PointRing.lineBoundary).
        Segments sa = new Segments(a);
        Segments sb = new Segments(b);
        long prev = -1; // exclusive lower end; -1 = start of line
        while (prev < LAST) {
            long cur = Math.min(sa.end, sb.end);
            String ea = endpointA[a.pointBackend(sa.point) + 1];
            String eb = endpointB[b.pointBackend(sb.point) + 1];
            moved += account(ea, eb, cur - prev, before, after, out, in);
            prev = cur;
            if (sa.end == cur) {
                sa.next();
            }
            if (sb.end == cur) {
                sb.next();
            }
        }
        return new RingDiff(moved / LINE, shares(before), shares(after), shares(out), shares(in));
    }

    /** The last position of the 32-bit line. */
    private static final long LAST = 0xFFFF_FFFFL;

    /**
     * A ring's line in order as segments, each ending at {@link #end} (inclusive) and holding the keys of
     * point {@link #point}: where the last point's keys run past the end of the line they wrap to its
     * start (a head segment), and where they stop before it, point 0's keys fill the tail (the last
     * point's, in a ring that does not wrap: grpc-java's). O(1) memory.
     */
    private static final class Segments {
        private final Ring ring;
        private final PointRing walk;
        private final int n;
        /** The next segment: -1 the head, 0 to n-1 the points', n the tail. */
        private int k;

        long end;
        int point;

        Segments(Ring ring) {
            this.ring = ring;
            this.walk = BackendAccess.rings().walk(ring);
            this.n = ring.pointCount();
            this.k = boundary(n - 1) > LAST ? -1 : 0;
            next();
        }

        /** The unwrapped last position whose keys land on point i. */
        private long boundary(int i) {
            long here = Integer.toUnsignedLong(ring.pointLineHash(i));
            long after = i + 1 < n ? Integer.toUnsignedLong(ring.pointLineHash(i + 1)) : firstHash() + (LAST + 1);
            return walk.lineBoundary(here, after);
        }

        private long firstHash() {
            return Integer.toUnsignedLong(ring.pointLineHash(0));
        }

        /** Moves to the next segment; past the line's end it stays at the last. */
        void next() {
            if (k == -1) {
                end = boundary(n - 1) - (LAST + 1);
                point = n - 1;
            } else if (k < n) {
                end = Math.min(boundary(k), LAST);
                point = k;
            } else {
                end = LAST;
                point = ring.wraps() ? 0 : n - 1; // past the last point: the first, or the last (grpc-java's)
            }
            k++;
        }
    }

    /**
     * Rings that hash a key by different functions: the key's backend in each is its own draw, by that
     * ring's shares, so a backend keeps share_A × share_B of the keys and moves the rest of its own.
     */
    private static RingDiff independent(Ring a, String[] endpointA, Ring b, String[] endpointB) {
        Map<String, Double> before = endpointShares(a, endpointA);
        Map<String, Double> after = endpointShares(b, endpointB);
        Map<String, Double> out = new LinkedHashMap<>();
        Map<String, Double> in = new LinkedHashMap<>();
        double kept = 0;
        for (Map.Entry<String, Double> e : before.entrySet()) {
            double both = e.getValue() * after.getOrDefault(e.getKey(), 0.0);
            kept += both;
            if (e.getValue() > both) {
                out.put(e.getKey(), e.getValue() - both);
            }
        }
        for (Map.Entry<String, Double> e : after.entrySet()) {
            double both = e.getValue() * before.getOrDefault(e.getKey(), 0.0);
            if (e.getValue() > both) {
                in.put(e.getKey(), e.getValue() - both);
            }
        }
        return new RingDiff(Math.clamp(1 - kept, 0.0, 1.0), before, after, out, in);
    }

    /** Each endpoint's share of the line in {@code r} (its backends' {@link Ring#lineShares()}, summed by endpoint). */
    private static Map<String, Double> endpointShares(Ring r, String[] endpoints) {
        double[] s = r.lineShares();
        Map<String, Double> shares = new LinkedHashMap<>();
        for (int k = 0; k < s.length; k++) {
            if (s[k] > 0) {
                shares.merge(endpoints[k + 1], s[k], Double::sum);
            }
        }
        return shares;
    }

    private static long account(
            String ea,
            String eb,
            long len,
            Map<String, Long> before,
            Map<String, Long> after,
            Map<String, Long> out,
            Map<String, Long> in) {
        before.merge(ea, len, Long::sum);
        after.merge(eb, len, Long::sum);
        if (ea.equals(eb)) {
            return 0;
        }
        out.merge(ea, len, Long::sum);
        in.merge(eb, len, Long::sum);
        return len;
    }

    private static void accumulateAll(Ring r, String[] endpoints, Map<String, Long> share, Map<String, Long> moved) {
        double[] s = r.lineShares();
        for (int k = 0; k < s.length; k++) {
            if (s[k] > 0) {
                long v = Math.round(s[k] * LINE);
                share.merge(endpoints[k + 1], v, Long::sum);
                moved.merge(endpoints[k + 1], v, Long::sum);
            }
        }
    }

    /** Index b + 1 → the endpoint of backend b; index 0 ("-") for a corrupt point's -1. */
    private static String[] endpoints(Ring r) {
        RingStore s = r.store();
        String[] e = new String[s.backendCount() + 1];
        e[0] = "-";
        for (int k = 0; k < s.backendCount(); k++) {
            e[k + 1] = s.backend(k).socketAddress();
        }
        return e;
    }

    private static Map<String, Double> shares(Map<String, Long> lengths) {
        Map<String, Double> m = new LinkedHashMap<>();
        lengths.forEach((k, v) -> m.put(k, v / LINE));
        return m;
    }
}
