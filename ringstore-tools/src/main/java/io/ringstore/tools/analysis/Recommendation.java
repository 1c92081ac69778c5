package io.ringstore.tools.analysis;

import io.ringstore.internal.format.RingFileDescriptor;
import java.util.List;

/**
 * The smallest point multiple k at which every ring's CV, 32-bit collisions counted
 * ({@link CollisionModel}), is at most a target. Rings are given by their backends' weights in tie
 * order; backend i gets weight × k points.
 *
 * <p>A ring's CV falls with k until collisions take over, then rises (docs/math.md); the search walks k
 * up in steps of 2 % to the first k that meets the target, then narrows the last step by bisection.
 */
public final class Recommendation {
    private static final double STEP = 1.02;

    private final List<long[]> weightsInTieOrder;
    private final int maxK;

    public Recommendation(List<long[]> weightsInTieOrder) {
        this.weightsInTieOrder = List.copyOf(weightsInTieOrder);
        long heaviest = 1;
        for (long[] ring : weightsInTieOrder) {
            long total = 0;
            for (long w : ring) {
                total += w;
            }
            heaviest = Math.max(heaviest, total);
        }
        this.maxK = (int) Math.min(Integer.MAX_VALUE, RingFileDescriptor.MAX_POINTS_PER_RING / heaviest);
    }

    /**
     * The largest k every ring can hold (a ring holds at most {@link RingFileDescriptor#MAX_POINTS_PER_RING} points).
     */
    public int maxPointMultiple() {
        return maxK;
    }

    /** The largest CV over the rings at point multiple {@code k}, collisions counted. */
    public double worstCv(int k) {
        double worst = 0;
        for (long[] w : weightsInTieOrder) {
            worst = Math.max(worst, CollisionModel.ring(scale(w, k)).cv());
        }
        return worst;
    }

    /** The same on a continuous ring (no collisions). */
    public double worstFormulaCv(int k) {
        double worst = 0;
        for (long[] w : weightsInTieOrder) {
            worst = Math.max(worst, LoadFormula.ringCv(scale(w, k)));
        }
        return worst;
    }

    /** The smallest k with {@link #worstCv(int)} ≤ {@code target}, or -1 when no k up to the limit reaches it. */
    public int smallest(double target) {
        int previous = 0;
        for (double step = 1; step <= maxK; step *= STEP) {
            int k = (int) Math.ceil(step);
            if (k <= previous) {
                continue;
            }
            if (worstCv(k) <= target) {
                int lo = previous; // fails (or 0)
                int hi = k; // meets
                while (hi - lo > 1) {
                    int mid = (lo + hi) >>> 1;
                    if (worstCv(mid) <= target) {
                        hi = mid;
                    } else {
                        lo = mid;
                    }
                }
                return hi;
            }
            previous = k;
        }
        return -1;
    }

    /**
     * The k with the lowest {@link #worstCv(int)}: the best 32-bit points can do. The 2 % grid brackets
     * the minimum; a ternary search between the grid neighbours then finds the k itself (the model's CV
     * is smooth and has one minimum there), so this agrees with the closed form of docs/math.md §2
     * (k* = (6 N M²)^(1/3) / N for N equal backends) instead of naming the nearest grid point.
     */
    public int best() {
        int below = 1; // the grid point before the lowest so far
        int bestK = 1;
        int above = -1; // the grid point after it, once seen
        double bestCv = Double.POSITIVE_INFINITY;
        int previous = 1;
        for (double step = 1; step <= maxK; step *= STEP) {
            int k = (int) Math.ceil(step);
            double cv = worstCv(k);
            if (cv < bestCv) {
                bestCv = cv;
                below = previous;
                bestK = k;
                above = -1;
            } else if (above < 0 && k > bestK) {
                above = k;
            }
            if (cv > bestCv * 1.5) {
                break; // well past the minimum: collisions only grow from here
            }
            previous = k;
        }
        int lo = below;
        int hi = above < 0 ? maxK : above;
        while (hi - lo > 2) {
            int m1 = lo + (hi - lo) / 3;
            int m2 = hi - (hi - lo) / 3;
            if (worstCv(m1) <= worstCv(m2)) {
                hi = m2;
            } else {
                lo = m1;
            }
        }
        int argmin = lo;
        for (int k = lo + 1; k <= hi; k++) {
            if (worstCv(k) < worstCv(argmin)) {
                argmin = k;
            }
        }
        return argmin;
    }

    private static long[] scale(long[] weights, int k) {
        long[] points = new long[weights.length];
        for (int i = 0; i < points.length; i++) {
            points[i] = weights[i] * k;
        }
        return points;
    }
}
