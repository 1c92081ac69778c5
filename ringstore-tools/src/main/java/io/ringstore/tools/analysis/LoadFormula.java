package io.ringstore.tools.analysis;

/**
 * The load of a backend on a continuous consistent-hash ring: K points placed independently and
 * uniformly on a circle, each owning the arc that ends at it. The K arcs are exchangeable
 * (Dirichlet(1, …, 1)), so a backend holding k of the points owns the sum of k of them: a
 * Beta(k, K − k) share, with mean k/K and variance k(K − k)/(K²(K + 1)). docs/math.md has the
 * derivation; {@link CollisionModel} adds what 32-bit hashes change.
 */
public final class LoadFormula {
    private LoadFormula() {}

    /** Exp_k: a backend's expected share when all {@code n} backends have the same number of points. */
    public static double expectedShare(int n) {
        requirePositive(n, "n");
        return 1.0 / n;
    }

    /** SD_k = sqrt((k+1)/(N(kN+1)) − 1/N²): the standard deviation of a backend's share, N backends of k points. */
    public static double sd(int n, long k) {
        requirePositive(n, "n");
        requirePositive(k, "k");
        double nk = (double) n * k;
        return Math.sqrt(Math.max(0, (k + 1.0) / (n * (nk + 1)) - 1.0 / ((double) n * n)));
    }

    /** CV_k = SD_k / Exp_k = sqrt((N−1)/(N·k+1)). */
    public static double cv(int n, long k) {
        requirePositive(n, "n");
        requirePositive(k, "k");
        return Math.sqrt((n - 1.0) / ((double) n * k + 1));
    }

    /** A backend with {@code points} of the ring's {@code totalPoints}: its expected share k/K. */
    public static double expectedShare(long points, long totalPoints) {
        requirePositive(points, "points");
        if (totalPoints < points) {
            throw new IllegalArgumentException(
                    "totalPoints must be at least points: points=" + points + " totalPoints=" + totalPoints);
        }
        return (double) points / totalPoints;
    }

    /** The CV of that backend's share: sqrt((K − k)/(k(K + 1))). */
    public static double backendCv(long points, long totalPoints) {
        expectedShare(points, totalPoints);
        return Math.sqrt((double) (totalPoints - points) / (points * (totalPoints + 1.0)));
    }

    /**
     * A ring's CV: the root mean square over its backends of each backend's CV (for equal point
     * counts, {@link #cv(int, long)}). What {@link ShareStats#cv} measures, in expectation.
     */
    public static double ringCv(long[] points) {
        if (points.length == 0) {
            return 0;
        }
        long total = 0;
        for (long p : points) {
            total += p;
        }
        double sum = 0;
        for (long p : points) {
            double c = backendCv(p, total);
            sum += c * c;
        }
        return Math.sqrt(sum / points.length);
    }

    private static void requirePositive(long v, String name) {
        if (v < 1) {
            throw new IllegalArgumentException(name + " must be at least 1: " + name + "=" + v);
        }
    }
}
