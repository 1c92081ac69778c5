package io.ringstore.tools.analysis;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.Ring;
import io.ringstore.RingStore;
import io.ringstore.builder.BackendList;
import io.ringstore.builder.RingBuilder;
import io.ringstore.family.Families;
import io.ringstore.family.RingVersion;
import io.ringstore.internal.Crc32;
import io.ringstore.internal.ServerAddress;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RingSimulatorTest {
    private static final double LINE = 4294967296.0;

    /**
     * The simulated ring is the ring the library builds: same points, same tie rule, so every backend's
     * arc equals {@link Ring#lineShares()} of the built file exactly, and the points kept equal the
     * file's point count. Big enough that hundreds of points collide, with weights, for v1 and v2, on
     * one thread and two.
     */
    @Test
    void simulationIsTheBuiltRing(@TempDir Path dir) throws Exception {
        SplittableRandom random = new SplittableRandom(3);
        List<ServerAddress> addresses = SimulatedRing.randomAddresses(400, 99);
        int[] weights = new int[addresses.size()];
        StringBuilder file = new StringBuilder("upstream pool {\n");
        for (int i = 0; i < weights.length; i++) {
            weights[i] = 1 + random.nextInt(3);
            file.append("    server ")
                    .append(addresses.get(i).text())
                    .append(" weight=")
                    .append(weights[i])
                    .append(";\n");
        }
        BackendList list = BackendList.parse("pool.conf", file.append("}\n").toString());
        RingVersion v2 = RingVersion.v2(2000);
        Path ringFile = dir.resolve("pool.ring");
        RingBuilder.of(list).version(RingVersion.V1).version(v2).build(ringFile);
        try (RingStore store = RingStore.open(ringFile)) {
            for (RingVersion version : List.of(RingVersion.V1, v2)) {
                int[] points = Arrays.stream(weights)
                        .map(w -> w * version.pointMultiple())
                        .toArray();
                SimulatedRing sim = SimulatedRing.of(addresses, version.family(), points);
                Ring ring = store.ring(Set.of(), version);
                double[] shares = ring.lineShares();
                for (int threads : new int[] {1, 2}) {
                    RingSimulator simulator = new RingSimulator(threads);
                    RingSimulator.Measurement m = simulator.simulate(sim, 32, "test", s -> {});
                    String what = version + " on " + threads + " threads";
                    assertEquals(sim.totalPoints(), m.points(), what);
                    assertEquals(ring.pointCount(), m.points() - m.dropped(), what + ": points kept");
                    for (int b = 0; b < shares.length; b++) {
                        assertEquals(shares[b] * LINE, (double) m.owned()[b], 0, what + ": arc of backend " + b);
                    }
                }
                if (version == v2) {
                    assertTrue(
                            sim.totalPoints() - ring.pointCount() > 100,
                            "the v2 ring has collisions to resolve: " + (sim.totalPoints() - ring.pointCount()));
                }
            }
        }
    }

    /** Dropped points against direct counting: every hash generated into one array, sorted, equal neighbours counted. */
    @Test
    void droppedPointsAreTheCollisionsCountedDirectly() {
        int n = 256;
        int k = 4000;
        List<ServerAddress> addresses = SimulatedRing.randomAddresses(n, 5);
        int[] hashes = new int[n * k];
        int at = 0;
        for (ServerAddress a : addresses) {
            int base = Crc32.update(Crc32.INITIAL, a.pingoraHashInput());
            int prev = 0;
            for (int j = 0; j < k; j++) {
                prev = Crc32.nextPoint(base, prev);
                hashes[at++] = prev;
            }
        }
        Arrays.sort(hashes); // signed order groups equal values just as well
        long direct = 0;
        for (int i = 1; i < hashes.length; i++) {
            if (hashes[i] == hashes[i - 1]) {
                direct++;
            }
        }
        RingSimulator simulator = new RingSimulator(2);
        RingSimulator.Measurement m =
                simulator.simulate(SimulatedRing.equal(addresses, Families.PINGORA, k), 32, "test", s -> {});
        assertEquals(direct, m.dropped());
        double birthday = CollisionModel.birthdayEstimate((long) n * k);
        assertTrue(
                Math.abs(direct - birthday) < 5 * Math.sqrt(birthday),
                "collisions " + direct + " vs birthday estimate " + birthday);
    }

    /**
     * Where collisions are negligible (at most 64 × 100 points per ring) the simulated CV matches the
     * formula within 4 standard errors of the pooled CV² over 30 seeds; the error of a CV² averaged over
     * N backends of near-Gamma shares is CV² sqrt((2 + 6/k)/(N·seeds)).
     */
    @Test
    void simulationMatchesTheFormulaWithoutCollisions() {
        int n = 100;
        int seeds = 30;
        RingSimulator simulator = new RingSimulator(2);
        for (int k : new int[] {1, 4, 16, 64}) {
            double sum = 0;
            for (int s = 1; s <= seeds; s++) {
                SimulatedRing ring = SimulatedRing.equal(SimulatedRing.randomAddresses(n, s), Families.PINGORA, k);
                RingSimulator.Measurement m = simulator.simulate(ring, 32, "test", x -> {});
                double cv = ShareStats.of(m.owned(), ring.pointCounts()).cv();
                sum += cv * cv;
            }
            double predicted = LoadFormula.cv(n, k);
            double p2 = predicted * predicted;
            double se = p2 * Math.sqrt((2 + 6.0 / k) / (n * seeds));
            double simulated = sum / seeds;
            assertTrue(
                    Math.abs(simulated - p2) < 4 * se,
                    "k=" + k + ": simulated CV " + Math.sqrt(simulated) + ", formula " + predicted + ", z "
                            + (simulated - p2) / se);
        }
    }

    @Test
    void v1AndV2TieRanks() {
        List<ServerAddress> a = List.of(
                ServerAddress.parse("10.0.0.9:80"),
                ServerAddress.parse("10.0.0.1:80"),
                ServerAddress.parse("10.0.0.5:80"));
        assertArrayEquals(
                new int[] {0, 1, 2},
                SimulatedRing.of(a, Families.NGINX, new int[] {1, 1, 1}).ranks(),
                "v1: listing order");
        assertArrayEquals(
                new int[] {2, 0, 1},
                SimulatedRing.of(a, Families.PINGORA, new int[] {1, 1, 1}).ranks(),
                "v2: address order");
        assertArrayEquals(
                new long[] {3, 5, 4},
                SimulatedRing.of(a, Families.PINGORA, new int[] {4, 3, 5}).pointsInTieOrder());
    }
}
