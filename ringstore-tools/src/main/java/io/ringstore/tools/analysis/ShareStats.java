package io.ringstore.tools.analysis;

/**
 * How far a ring's measured shares are from the expected ones.
 *
 * @param cv       root mean square over the backends of (share / expected − 1): for equal weights the
 *                 population standard deviation of the shares over their mean (the mean is exactly 1/N,
 *                 the shares sum to 1), the quantity {@link LoadFormula} predicts
 * @param maxRatio the largest share over its expected share
 * @param minRatio the smallest share over its expected share
 */
public record ShareStats(double cv, double maxRatio, double minRatio) {
    /** From measured and expected shares of the line (same index = same backend). */
    public static ShareStats of(double[] shares, double[] expected) {
        if (shares.length != expected.length || shares.length == 0) {
            throw new IllegalArgumentException("need one expected share per measured share, at least one: shares="
                    + shares.length + " expected=" + expected.length);
        }
        double sum = 0;
        double max = Double.NEGATIVE_INFINITY;
        double min = Double.POSITIVE_INFINITY;
        for (int i = 0; i < shares.length; i++) {
            double ratio = shares[i] / expected[i];
            sum += (ratio - 1) * (ratio - 1);
            max = Math.max(max, ratio);
            min = Math.min(min, ratio);
        }
        return new ShareStats(Math.sqrt(sum / shares.length), max, min);
    }

    /** From arcs owned (in hashes, out of 2³²) and the point counts the expected shares follow from. */
    public static ShareStats of(long[] owned, long[] points) {
        long total = 0;
        for (long p : points) {
            total += p;
        }
        double[] shares = new double[owned.length];
        double[] expected = new double[owned.length];
        for (int i = 0; i < owned.length; i++) {
            shares[i] = owned[i] / (double) ArcShares.LINE;
            expected[i] = (double) points[i] / total;
        }
        return of(shares, expected);
    }
}
