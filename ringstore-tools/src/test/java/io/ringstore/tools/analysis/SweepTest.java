package io.ringstore.tools.analysis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.family.Families;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class SweepTest {
    @Test
    void logStepsAreRoundAndEven() {
        List<Integer> ks = Sweep.logSteps(10, 100_000, 4);
        assertEquals(17, ks.size(), ks::toString);
        assertEquals(10, ks.getFirst());
        assertEquals(100_000, ks.getLast());
        for (int i = 1; i < ks.size(); i++) {
            double ratio = (double) ks.get(i) / ks.get(i - 1);
            assertTrue(ratio > 1.5 && ratio < 1.95, "about 10^(1/4) apart: " + ks);
            String digits = String.valueOf(ks.get(i)).replaceAll("0+$", "");
            assertTrue(digits.length() <= 2, "two significant digits: " + ks.get(i));
        }
        assertEquals(List.of(7), Sweep.logSteps(7, 7, 4));
        assertEquals(List.of(10, 100), Sweep.logSteps(10, 100, 1));
    }

    /** A small sweep: rows arrive in k order, one per k, with the formula as predicted and sane spreads. */
    @Test
    void rowsStreamInOrder() {
        List<Integer> ks = List.of(3, 30, 300);
        Sweep sweep = new Sweep(40, ks, 2, Families.NGINX, 32);
        List<Sweep.Row> rows = new ArrayList<>();
        List<String> progress = new ArrayList<>();
        RingSimulator simulator = new RingSimulator(2);
        sweep.run(simulator, progress::add, rows::add);
        assertEquals(ks, rows.stream().map(Sweep.Row::k).toList());
        for (Sweep.Row r : rows) {
            assertEquals(Math.sqrt(39.0 / (40.0 * r.k() + 1)), r.predictedCv(), 1e-12);
            assertTrue(r.minCv() <= r.simulatedCv() && r.simulatedCv() <= r.maxCv(), r.toString());
            assertTrue(r.maxShare() > 1 && r.minShare() < 1, r.toString());
            assertEquals(40L * r.k() * 40L * r.k() / 8589934592.0, r.birthdayEstimate(), 1e-12);
            assertEquals(Sweep.Row.CSV_HEADER.split(",").length, r.csv().split(",").length, r.csv());
        }
        List<String> rings = progress.stream()
                .map(s -> s.substring(0, s.indexOf(':')))
                .distinct()
                .toList();
        assertEquals(
                List.of(
                        "ring 1/6 (k=3, seed 1)",
                        "ring 2/6 (k=3, seed 2)",
                        "ring 3/6 (k=30, seed 1)",
                        "ring 4/6 (k=30, seed 2)",
                        "ring 5/6 (k=300, seed 1)",
                        "ring 6/6 (k=300, seed 2)"),
                rings,
                "one ring at a time, each announced");
    }

    @Test
    void departureNamesTheKFromWhichTheSimulationStaysOff() {
        List<Sweep.Row> rows = new ArrayList<>();
        int n = 2048;
        int seeds = 3;
        for (int k : new int[] {10, 100, 1000, 10_000, 100_000}) {
            double p = LoadFormula.cv(n, k);
            double off =
                    k >= 10_000 ? p * (k == 10_000 ? 1.2 : 4) : p * 1.001; // far outside the error from k = 10,000 on
            rows.add(new Sweep.Row(k, n, seeds, (long) n * k, p, off, off, off, off, 1.1, 0.9, 0, 0, 0, 0));
        }
        List<String> lines = Sweep.departure(rows);
        assertTrue(lines.getFirst().contains("from k = 10000 on"), lines::toString);
        assertTrue(lines.get(1).contains("+300 %"), lines::toString);
        assertTrue(
                lines.stream().anyMatch(l -> l.contains("5 of 5 k")),
                "the 32-bit column (equal to the simulation here) is within: " + lines);
    }
}
