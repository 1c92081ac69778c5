package io.ringstore.tools.analysis;

import java.util.Arrays;

/**
 * What 32-bit point hashes change in {@link LoadFormula}: points land on M = 2³² slots, so some
 * share a slot; the ring keeps one point per slot (the backend first in tie order: listed first for
 * v1, smallest socket address for v2) and drops the others. Three effects follow (docs/math.md):
 * <ol>
 *   <li>a backend of tie rank r keeps each point with probability q = (1 − 1/M)^L, L the points of the
 *       backends before it, so late backends keep fewer points: a bias that grows with the ring;</li>
 *   <li>the kept points are a random D-subset of M slots, which shrinks the arc variance by 1 − D/M;</li>
 *   <li>the number of kept points is itself random (binomial).</li>
 * </ol>
 * With M → ∞ every result equals the continuous formula.
 */
public final class CollisionModel {
    /** The 32-bit hash line. */
    public static final double LINE_32 = 4294967296.0;

    private CollisionModel() {}

    /** The birthday estimate of colliding points among {@code n} uniform 32-bit hashes: n²/2³³. */
    public static double birthdayEstimate(long n) {
        return birthdayEstimate(n, LINE_32);
    }

    /** The same on a line of {@code line} hashes: n²/(2·line). */
    public static double birthdayEstimate(long n, double line) {
        return (double) n * n / (2 * line);
    }

    /** The expected model of one ring: backends' point counts in tie order (first wins a shared slot). */
    public static Result ring(long[] pointsInTieOrder, double line) {
        int n = pointsInTieOrder.length;
        if (n == 0) {
            return new Result(0, 0, 0);
        }
        long total = 0;
        for (long k : pointsInTieOrder) {
            if (k < 1) {
                throw new IllegalArgumentException("every backend needs at least one point: points=" + k);
            }
            total += k;
        }
        double logMiss = Math.log1p(-1 / line);
        double[] kept = new double[n];
        double[] keep = new double[n];
        double distinct = 0;
        long before = 0;
        for (int i = 0; i < n; i++) {
            keep[i] = Math.exp(before * logMiss);
            kept[i] = pointsInTieOrder[i] * keep[i];
            distinct += kept[i];
            before += pointsInTieOrder[i];
        }
        double discrete = 1 - distinct / line;
        double sum = 0;
        for (int i = 0; i < n; i++) {
            double expected = (double) pointsInTieOrder[i] / total;
            double mean = kept[i] / distinct;
            double variance = kept[i] * (distinct - kept[i]) * discrete / (distinct * distinct * (distinct + 1))
                    + pointsInTieOrder[i] * keep[i] * (1 - keep[i]) / (distinct * distinct);
            double bias = mean / expected - 1;
            sum += bias * bias + variance / (expected * expected);
        }
        return new Result(Math.sqrt(sum / n), total - distinct, distinct);
    }

    /** {@link #ring(long[], double)} on the 32-bit line. */
    public static Result ring(long[] pointsInTieOrder) {
        return ring(pointsInTieOrder, LINE_32);
    }

    /** {@code n} backends of {@code k} points each on the 32-bit line. */
    public static Result equal(int n, long k) {
        long[] points = new long[n];
        Arrays.fill(points, k);
        return ring(points, LINE_32);
    }

    /**
     * @param cv                 the ring's expected CV (root mean square of the relative deviation of each share)
     * @param expectedCollisions points expected to be dropped because an earlier backend holds their slot
     * @param expectedPoints     points expected to remain (distinct slots)
     */
    public record Result(double cv, double expectedCollisions, double expectedPoints) {}
}
