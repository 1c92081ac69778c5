package io.ringstore.tools.analysis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.family.Families;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class CollisionModelTest {
    @Test
    void birthdayEstimateIsNSquaredOver2To33() {
        assertEquals(0.5, CollisionModel.birthdayEstimate(1L << 16), 0);
        assertEquals(2048.0 * 2048 * 1e10 / 8589934592.0, CollisionModel.birthdayEstimate(2048L * 100_000), 1e-6);
    }

    @Test
    void onAnEndlessLineItIsTheFormula() {
        for (long[] points : new long[][] {{160, 160, 160}, {1, 2, 3, 4, 5}, {1000, 10, 10}}) {
            CollisionModel.Result r = CollisionModel.ring(points, 1e30);
            assertEquals(
                    LoadFormula.ringCv(points), r.cv(), 1e-9 * LoadFormula.ringCv(points), Arrays.toString(points));
            assertEquals(0, r.expectedCollisions(), 1e-6);
        }
    }

    @Test
    void smallRingsOn32BitsAreTheFormula() {
        assertEquals(LoadFormula.cv(100, 160), CollisionModel.equal(100, 160).cv(), 1e-6 * LoadFormula.cv(100, 160));
    }

    @Test
    void expectedCollisionsFollowTheOccupancyFormula() {
        // n uniform hashes on M slots leave M(1 - e^(-n/M)) distinct; the model counts per tie rank.
        for (int k : new int[] {1000, 10_000, 100_000}) {
            double n = 2048.0 * k;
            double lambda = n / CollisionModel.LINE_32;
            double occupancy = CollisionModel.LINE_32 * (lambda - 1 + Math.exp(-lambda));
            assertEquals(occupancy, CollisionModel.equal(2048, k).expectedCollisions(), 1e-3 * occupancy, "k=" + k);
        }
    }

    @Test
    void tieOrderMakesLateBackendsLoseShare() {
        // Equal backends: only the tie order differs, so the bias term alone lifts the CV above the formula once
        // collisions matter.
        CollisionModel.Result r = CollisionModel.equal(2048, 100_000);
        double lambda = 2048.0 * 100_000 / CollisionModel.LINE_32;
        double bias =
                Math.sqrt(lambda / 2 / Math.tanh(lambda / 2) - 1); // sd of e^-x over x uniform in [0, λ], over its mean
        assertEquals(Math.sqrt(Math.pow(LoadFormula.cv(2048, 100_000), 2) + bias * bias), r.cv(), 0.02 * r.cv());
        assertTrue(r.cv() > 4 * LoadFormula.cv(2048, 100_000), "collisions dominate at 204.8 M points");
    }

    /**
     * The collision regime at test size: keep the top 16 to 20 bits of each hash, so a few hundred
     * thousand points collide as much as 2048 × 100,000 do on 32 bits. The pooled CV² over the seeds must
     * be within 4 standard errors (from the seeds themselves) of the model, and far from the formula.
     */
    @Test
    void modelMatchesSimulationWhereCollisionsDominate() {
        int[][] cases = {{64, 2000, 18}, {200, 500, 20}, {16, 4000, 16}};
        int seeds = 12;
        RingSimulator simulator = new RingSimulator(2);
        for (int[] c : cases) {
            int n = c[0];
            int k = c[1];
            int bits = c[2];
            double sum = 0;
            double sumSq = 0;
            CollisionModel.Result model = null;
            for (int s = 1; s <= seeds; s++) {
                SimulatedRing ring = SimulatedRing.equal(SimulatedRing.randomAddresses(n, s), Families.PINGORA, k);
                model = CollisionModel.ring(ring.pointsInTieOrder(), Math.pow(2, bits));
                RingSimulator.Measurement m = simulator.simulate(ring, bits, "test", x -> {});
                double cv = ShareStats.of(m.owned(), ring.pointCounts()).cv();
                sum += cv * cv;
                sumSq += cv * cv * cv * cv;
            }
            double mean = sum / seeds;
            double se = Math.sqrt((sumSq / seeds - mean * mean) / (seeds - 1));
            String what = "N=" + n + " k=" + k + " bits=" + bits + ": simulated CV " + Math.sqrt(mean) + ", model "
                    + model.cv();
            assertTrue(Math.abs(mean - model.cv() * model.cv()) < 4 * se, what);
            double formula = LoadFormula.cv(n, k);
            assertTrue(mean - formula * formula > 8 * se, what + ", formula " + formula);
        }
    }
}
