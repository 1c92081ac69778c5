package io.ringstore.tools.analysis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class RecommendationTest {
    private static long[] equal(int n) {
        long[] w = new long[n];
        Arrays.fill(w, 1);
        return w;
    }

    @Test
    void withoutCollisionsItIsTheFormulaSolvedForK() {
        // CV ≤ C ⇔ (N−1)/(N·k+1) ≤ C² ⇔ k ≥ ((N−1)/C² − 1)/N; small N·k, so collisions do not move it.
        for (int n : new int[] {2, 10, 100}) {
            for (double c : new double[] {0.21, 0.093, 0.047}) {
                int expected = (int) Math.ceil(((n - 1) / (c * c) - 1) / n);
                assertEquals(
                        Math.max(1, expected), new Recommendation(List.of(equal(n))).smallest(c), "N=" + n + " C=" + c);
            }
        }
    }

    @Test
    void theAnswerIsTheSmallestThatMeetsTheTarget() {
        List<long[]> rings = List.of(new long[] {1, 2, 3, 1, 5}, equal(2048), new long[] {7});
        Recommendation r = new Recommendation(rings);
        for (double c : new double[] {0.3, 0.05, 0.02, 0.01, 0.008}) {
            int k = r.smallest(c);
            assertTrue(k >= 1, "C=" + c);
            assertTrue(r.worstCv(k) <= c, "meets at k=" + k);
            assertTrue(k == 1 || r.worstCv(k - 1) > c, "fails at k-1=" + (k - 1));
        }
    }

    @Test
    void collisionsPutAFloorUnderTheCv() {
        Recommendation r = new Recommendation(List.of(equal(2048)));
        int best = r.best();
        double floor = r.worstCv(best);
        assertTrue(best > 10_000 && best < 60_000, "the minimum lies between 10^4 and 6·10^4 at N = 2048: " + best);
        assertTrue(r.worstCv(best * 2) > floor && r.worstCv(best / 2) > floor, "a minimum");
        assertTrue(
                r.worstCv(best - 1) >= floor && r.worstCv(best + 1) >= floor,
                "the minimum itself, not a grid point near it: " + best);
        // docs/math.md §2: k* = (6 N M²)^(1/3) / N ≈ 29,772 for N = 2048 (its CV² drops the 1/N of (N - 1)/N
        // and the collision model's finer terms, so the two may differ by a few tenths of a percent).
        double closedForm = Math.cbrt(6.0 * 2048 * 0x1p32 * 0x1p32) / 2048;
        assertEquals(closedForm, best, closedForm * 0.005, "the model's minimum against the closed form");
        assertEquals(-1, r.smallest(floor * 0.9), "below the floor nothing helps");
        assertTrue(
                r.smallest(0.01) > new Recommendation(List.of(equal(2048))).smallest(0.0101), "monotone in the target");
        // At 1 % the 32-bit answer is above the continuous one: collisions cost points.
        int continuous = (int) Math.ceil((2047 / 1e-4 - 1) / 2048);
        assertTrue(r.smallest(0.01) > continuous, r.smallest(0.01) + " vs " + continuous);
    }

    @Test
    void singleBackendRingsNeedOnePoint() {
        assertEquals(1, new Recommendation(List.of(new long[] {3}, new long[] {1})).smallest(0.001));
    }
}
