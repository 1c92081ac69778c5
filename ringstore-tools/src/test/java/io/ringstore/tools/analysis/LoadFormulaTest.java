package io.ringstore.tools.analysis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class LoadFormulaTest {
    private static final int[] NS = {1, 2, 3, 10, 100, 2048, 65535};

    @Test
    void oneVirtualNodeIsSqrtOfNMinusOneOverNPlusOne() {
        for (int n : NS) {
            assertEquals(Math.sqrt((n - 1.0) / (n + 1.0)), LoadFormula.cv(n, 1), 1e-15, "N=" + n);
        }
        assertEquals(0.99, LoadFormula.cv(100, 1), 0.01, "about 99 % at N = 100 (the issue's number)");
        assertEquals(0.08, LoadFormula.cv(100, 160), 0.005, "about 8 % at N = 100, k = 160");
    }

    @Test
    void largeKFallsLikeOneOverSqrtK() {
        for (int n : NS) {
            long k = 1_000_000_000L;
            // (N-1)/(N k + 1) -> (N-1)/(N k): cv * sqrt(k) -> sqrt((N-1)/N)
            assertEquals(Math.sqrt((n - 1.0) / n), LoadFormula.cv(n, k) * Math.sqrt(k), 1e-9, "N=" + n);
        }
    }

    @Test
    void sdIsTheIssuesExpressionAndCvIsSdOverExp() {
        for (int n : NS) {
            for (long k : new long[] {1, 2, 10, 160, 100_000}) {
                double sd = Math.sqrt((k + 1.0) / (n * (k * (double) n + 1)) - 1.0 / ((double) n * n));
                assertEquals(sd, LoadFormula.sd(n, k), 1e-12 * Math.max(1, sd), "SD N=" + n + " k=" + k);
                assertEquals(
                        sd / LoadFormula.expectedShare(n),
                        LoadFormula.cv(n, k),
                        1e-6 * Math.max(1e-6, LoadFormula.cv(n, k)),
                        "CV = SD/Exp, N=" + n + " k=" + k);
            }
        }
    }

    @Test
    void weightedReducesToEqualWeights() {
        for (int n : new int[] {2, 7, 100}) {
            for (long k : new long[] {1, 40, 160}) {
                long[] points = new long[n];
                Arrays.fill(points, k);
                assertEquals(LoadFormula.cv(n, k), LoadFormula.ringCv(points), 1e-12, "N=" + n + " k=" + k);
                assertEquals(LoadFormula.cv(n, k), LoadFormula.backendCv(k, n * k), 1e-12, "N=" + n + " k=" + k);
            }
        }
    }

    @Test
    void twoBackendsHaveTheSameShareVariance() {
        // s2 = 1 - s1, so both shares have one standard deviation, whatever the weights.
        for (long[] p : new long[][] {{1, 1}, {1, 5}, {160, 480}, {7, 1000}}) {
            long total = p[0] + p[1];
            double sd0 = LoadFormula.backendCv(p[0], total) * p[0] / total;
            double sd1 = LoadFormula.backendCv(p[1], total) * p[1] / total;
            assertEquals(sd0, sd1, 1e-12, Arrays.toString(p));
        }
    }

    /** The Beta derivation against a direct simulation of the continuous model: uniform points, arcs ending at each point. */
    @Test
    void weightedSharesMatchAContinuousMonteCarlo() {
        long[] points = {3, 6, 15}; // weights 1, 2, 5 at k = 3
        int total = 24;
        int trials = 40_000;
        SplittableRandom random = new SplittableRandom(7);
        double[] sum = new double[points.length];
        double[] sumSq = new double[points.length];
        double[] positions = new double[total];
        int[] owner = new int[total];
        for (int t = 0; t < trials; t++) {
            for (int i = 0; i < total; i++) {
                positions[i] = random.nextDouble();
            }
            Integer[] order = new Integer[total];
            Arrays.setAll(order, i -> i);
            Arrays.sort(order, (a, b) -> Double.compare(positions[a], positions[b]));
            for (int i = 0, b = 0, left = (int) points[0]; i < total; i++) {
                while (left == 0) {
                    left = (int) points[++b];
                }
                owner[i] = b;
                left--;
            }
            double[] share = new double[points.length];
            for (int r = 0; r < total; r++) {
                double previous = r == 0 ? positions[order[total - 1]] - 1 : positions[order[r - 1]];
                share[owner[order[r]]] += positions[order[r]] - previous;
            }
            for (int b = 0; b < points.length; b++) {
                sum[b] += share[b];
                sumSq[b] += share[b] * share[b];
            }
        }
        for (int b = 0; b < points.length; b++) {
            double mean = sum[b] / trials;
            double variance = sumSq[b] / trials - mean * mean;
            double expected = LoadFormula.expectedShare(points[b], total);
            double cv = LoadFormula.backendCv(points[b], total);
            assertEquals(expected, mean, 4 * cv * expected / Math.sqrt(trials), "mean share of backend " + b);
            // The variance of a sample variance is about 2 var^2 / trials for near-normal shares; 5 % is > 5 standard
            // errors.
            assertEquals(cv * cv, variance / (mean * mean), 0.05 * cv * cv, "CV² of backend " + b);
        }
    }

    @Test
    void refusesNonsense() {
        assertThrows(IllegalArgumentException.class, () -> LoadFormula.cv(0, 1));
        assertThrows(IllegalArgumentException.class, () -> LoadFormula.cv(2, 0));
        assertThrows(IllegalArgumentException.class, () -> LoadFormula.backendCv(5, 4));
        assertTrue(LoadFormula.ringCv(new long[0]) == 0);
    }
}
