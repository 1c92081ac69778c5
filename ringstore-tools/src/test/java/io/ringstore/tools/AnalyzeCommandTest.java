package io.ringstore.tools;

import static io.ringstore.tools.CliJson.array;
import static io.ringstore.tools.CliJson.number;
import static io.ringstore.tools.CliJson.object;
import static io.ringstore.tools.CliRun.backends;
import static io.ringstore.tools.CliRun.build;
import static io.ringstore.tools.CliRun.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.ringstore.Backend;
import io.ringstore.Ring;
import io.ringstore.RingStore;
import io.ringstore.internal.Crc32;
import io.ringstore.internal.ServerAddress;
import io.ringstore.tools.analysis.SimulatedRing;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;

class AnalyzeCommandTest {
    private static final String SVG_NS = "http://www.w3.org/2000/svg";
    private static final Pattern CV_LINE = Pattern.compile(
            "cv: measured ([0-9.]+) %, predicted ([0-9.]+) % \\(formula\\), ([0-9.]+) % \\(with 32-bit collisions\\)");

    /** A CSV file as header → column index and rows of cells. */
    private record Csv(Map<String, Integer> columns, List<String[]> rows) {
        static Csv read(Path p) throws Exception {
            List<String> lines = Files.readAllLines(p);
            Map<String, Integer> columns = new HashMap<>();
            String[] header = lines.getFirst().split(",", -1);
            for (int i = 0; i < header.length; i++) {
                columns.put(header[i], i);
            }
            List<String[]> rows = new ArrayList<>();
            for (String line : lines.subList(1, lines.size())) {
                String[] cells = line.split(",", -1);
                assertEquals(header.length, cells.length, "cells in row: " + line);
                rows.add(cells);
            }
            return new Csv(columns, rows);
        }

        double number(String[] row, String column) {
            return Double.parseDouble(row[columns.get(column)]);
        }

        String cell(String[] row, String column) {
            return row[columns.get(column)];
        }
    }

    // ---- --backends N: the sweep ----
    @Tag("slow") // an exhaustive sweep of several seconds: the full lane runs it
    @Test
    void sweepWritesTheTableTheCsvAndTheChart(@TempDir Path dir) throws Exception {
        int n = 2000;
        int seeds = 2;
        Path csvFile = dir.resolve("sweep.csv");
        Path svgFile = dir.resolve("sweep.svg");
        CliRun r = run(
                        "analyze",
                        "--backends",
                        String.valueOf(n),
                        "--points",
                        "5..500",
                        "--seeds",
                        String.valueOf(seeds),
                        "--csv",
                        csvFile.toString(),
                        "--svg",
                        svgFile.toString(),
                        "--quiet")
                .assertOk();
        assertEquals("", r.stderr(), "--quiet: nothing on stderr");
        assertEquals("", r.out(), "--quiet: nothing on stdout, the results are in the files");

        Csv csv = Csv.read(csvFile);
        for (String c : List.of("k", "predicted_cv", "simulated_cv", "collisions", "birthday_estimate")) {
            assertTrue(
                    csv.columns().containsKey(c),
                    "CSV column " + c + " in " + csv.columns().keySet());
        }
        List<Integer> ks = csv.rows().stream()
                .map(row -> Integer.parseInt(csv.cell(row, "k")))
                .toList();
        assertEquals(5, ks.getFirst());
        assertEquals(500, ks.getLast());
        assertTrue(ks.size() >= 8 && ks.size() <= 10, "two decades at 4 steps each: " + ks);
        for (int i = 1; i < ks.size(); i++) {
            assertTrue(ks.get(i) > ks.get(i - 1), "increasing: " + ks);
        }
        for (String[] row : csv.rows()) {
            int k = Integer.parseInt(csv.cell(row, "k"));
            double formula = Math.sqrt((n - 1.0) / (n * (double) k + 1));
            assertEquals(formula, csv.number(row, "predicted_cv"), 1e-5 * formula, "predicted_cv at k=" + k);
            // At most 10^6 points a ring: collisions do not matter, the simulation must agree within 5 standard errors.
            double simulated = csv.number(row, "simulated_cv");
            double se = formula * formula * Math.sqrt((2 + 6.0 / k) / (n * seeds));
            assertTrue(
                    Math.abs(simulated * simulated - formula * formula) < 5 * se,
                    "k=" + k + ": " + simulated + " vs " + formula);
            assertEquals((double) n * k * n * k / 8589934592.0, csv.number(row, "birthday_estimate"), 1e-3);
        }
        String[] last = csv.rows().getLast();
        assertEquals(
                directCollisions(n, 500, seeds),
                csv.number(last, "collisions"),
                1e-3,
                "collisions at k=500 against direct counting");

        Document svg =
                DocumentBuilderFactory.newNSInstance().newDocumentBuilder().parse(svgFile.toFile());
        assertEquals("svg", svg.getDocumentElement().getLocalName());
        assertEquals(
                ks.size() + 1,
                svg.getElementsByTagNameNS(SVG_NS, "circle").getLength(),
                "a marker per k plus the legend's");
    }

    /** Colliding points of the seeds' random fleets (v2 hash input), counted by sorting every hash, averaged over seeds. */
    private static double directCollisions(int n, int k, int seeds) {
        long total = 0;
        for (int s = 1; s <= seeds; s++) {
            int[] hashes = new int[n * k];
            int at = 0;
            for (ServerAddress a : SimulatedRing.randomAddresses(n, s)) {
                int base = Crc32.update(Crc32.INITIAL, a.pingoraHashInput());
                int prev = 0;
                for (int j = 0; j < k; j++) {
                    prev = Crc32.nextPoint(base, prev);
                    hashes[at++] = prev;
                }
            }
            Arrays.sort(hashes);
            for (int i = 1; i < hashes.length; i++) {
                if (hashes[i] == hashes[i - 1]) {
                    total++;
                }
            }
        }
        return (double) total / seeds;
    }

    @Test
    void aListOfKAndV1() {
        CliRun r = run("analyze", "--backends", "30", "--points", "160,20", "--seeds", "1", "--algorithm", "v1")
                .assertOk();
        assertTrue(r.out().contains("k = 20..160 (2 values)"), r.out());
        assertTrue(r.outLines().stream().anyMatch(l -> l.startsWith("departure: ")), r.out());
        assertTrue(r.outLines().stream().anyMatch(l -> l.startsWith("wall_time_s: ")), r.out());
        assertTrue(r.out().contains("v1 points"), r.out());
    }

    @Test
    void wrongArguments(@TempDir Path dir) throws Exception {
        Path file = backends(dir, "fleet.conf", CliFleet.text(CliFleet.FEATURED));
        String f = file.toString();
        for (String[] args : List.of(
                new String[] {"analyze"},
                new String[] {"analyze", "--backends", "10"},
                new String[] {"analyze", "--backends", "1", "--points", "10"},
                new String[] {"analyze", "--backends", "70000", "--points", "10"},
                new String[] {"analyze", "--backends", "10", "--points", "0..10"},
                new String[] {"analyze", "--backends", "10", "--points", "10..5"},
                new String[] {"analyze", "--backends", "10", "--points", "ten"},
                new String[] {"analyze", "--backends", "10", "--points", "10..100", "--seeds", "0"},
                new String[] {"analyze", "--backends", "10", "--points", "10", "--algorithm", "v3"},
                new String[] {"analyze", "--backends", "10", "--points", "10", "--point-multiple", "5"},
                new String[] {"analyze", "--backends", "10", "--points", "10", f},
                new String[] {"analyze", f, "--svg", dir.resolve("x.svg").toString()},
                new String[] {"analyze", f, "--points", "10"},
                new String[] {"analyze", f, f},
                new String[] {"analyze", "--backends", "65535", "--points", "40000"})) {
            run(args).assertError(Main.USAGE, "analyze");
        }
        // A family with its parameters: the sweep takes none, and says so (it said "unknown algorithm").
        CliRun withParameters = run("analyze", "--backends", "10", "--points", "10", "--algorithm", "grpc:8388608");
        withParameters.assertError(Main.USAGE, "analyze");
        assertTrue(
                withParameters
                        .stderr()
                        .contains("--backends N takes an algorithm without parameters (--points gives k):"
                                + " 'grpc:8388608' (write grpc)"),
                withParameters.stderr());
        run("analyze", dir.resolve("missing.conf").toString()).assertError(Main.FAILED, "analyze");
        run(
                        "analyze",
                        "--backends",
                        "10",
                        "--points",
                        "10",
                        "--csv",
                        dir.resolve("no/such/dir/x.csv").toString())
                .assertError(Main.FAILED, "analyze");
    }

    @Test
    void tooLittleHeapIsOneLineWithTheFix() {
        long need = 65_535L * 30_000 * 8;
        assumeTrue(Runtime.getRuntime().maxMemory() < need, "this JVM could hold a 15.7 GB ring");
        String error =
                run("analyze", "--backends", "65535", "--points", "30000").assertError(Main.FAILED, "analyze");
        assertTrue(error.contains("RINGSTORE_JAVA_OPTS=-Xmx"), error);
        assertTrue(error.contains("1966050000 points"), error);
    }

    // ---- BACKENDS_FILE ----

    @Test
    void fileShowsEveryRingsPredictedAndMeasuredCv(@TempDir Path dir) throws Exception {
        Path file = backends(dir, "fleet.conf", CliFleet.text(CliFleet.FEATURED));
        Path csvFile = dir.resolve("rings.csv");
        CliRun r = run(
                        "analyze",
                        file.toString(),
                        "--algorithm",
                        "v2",
                        "--point-multiple",
                        "40",
                        "--csv",
                        csvFile.toString())
                .assertOk();
        Path ring = dir.resolve("fleet.ring");
        build(file, ring, "--algorithm", "v2", "--point-multiple", "40", "--quiet");
        Csv csv = Csv.read(csvFile);
        try (RingStore store = RingStore.open(ring)) {
            assertEquals(store.rings().size(), csv.rows().size(), "a row per ring");
            assertTrue(
                    r.out().contains("ring_file_bytes: " + Files.size(ring)),
                    "the temporary file is the file build writes:\n" + r.out());
            for (int i = 0; i < csv.rows().size(); i++) {
                String[] row = csv.rows().get(i);
                Ring x = store.rings().get(i);
                assertEquals(String.join("+", x.features()), csv.cell(row, "features"));
                assertEquals(x.pointCount(), (long) csv.number(row, "points"), "points of " + x);
                assertEquals(6L * x.pointCount(), (long) csv.number(row, "bytes"), "bytes of " + x);
                if (x.isEmpty()) {
                    assertEquals("", csv.cell(row, "measured_cv"));
                    continue;
                }
                List<Backend> members = store.backends().stream()
                        .filter(b -> b.features().containsAll(x.features()))
                        .toList();
                assertEquals(
                        measuredCv(x, members),
                        csv.number(row, "measured_cv"),
                        1e-5 * csv.number(row, "measured_cv"),
                        "measured " + x);
                assertEquals(
                        formulaCv(members, 40),
                        csv.number(row, "predicted_cv"),
                        1e-5 * formulaCv(members, 40),
                        "predicted " + x);
            }
        }
    }

    @Test
    void viewsMeasureExactlyAsRingsStoredAsPoints(@TempDir Path dir) throws Exception {
        Path file = backends(dir, "fleet.conf", CliFleet.text(CliFleet.FEATURED));
        Path stored = dir.resolve("stored.csv");
        Path viewed = dir.resolve("viewed.csv");
        CliRun a = run(
                        "analyze",
                        file.toString(),
                        "--algorithm",
                        "v1,v2",
                        "--csv",
                        stored.toString(),
                        "--views",
                        "none")
                .assertOk();
        CliRun b = run("analyze", file.toString(), "--algorithm", "v1,v2", "--csv", viewed.toString(), "--views", "all")
                .assertOk();
        assertEquals(Files.readString(stored), Files.readString(viewed), "every ring's row, views or not");
        assertTrue(Csv.read(stored).rows().size() > 8, "rows compared");
        long bytesStored = Long.parseLong(a.out()
                .lines()
                .filter(l -> l.startsWith("ring_file_bytes: "))
                .findFirst()
                .orElseThrow()
                .split(" ")[1]);
        long bytesViewed = Long.parseLong(b.out()
                .lines()
                .filter(l -> l.startsWith("ring_file_bytes: "))
                .findFirst()
                .orElseThrow()
                .split(" ")[1]);
        assertTrue(bytesViewed < bytesStored, bytesViewed + " < " + bytesStored);
        CliRun refused = run("analyze", "--backends", "10", "--points", "10", "--views", "all");
        assertEquals(2, refused.exit());
        assertTrue(refused.stderr().contains("--views is for a BACKENDS_FILE"), refused.stderr());
    }

    /** RMS over the members of (line share / weight share − 1), from the library's exact line shares. */
    static double measuredCv(Ring ring, List<Backend> members) {
        double[] shares = ring.lineShares();
        long total = members.stream().mapToLong(Backend::weight).sum();
        double sum = 0;
        for (Backend b : members) {
            double ratio = shares[b.index()] / ((double) b.weight() / total) - 1;
            sum += ratio * ratio;
        }
        return Math.sqrt(sum / members.size());
    }

    /** The weighted formula: each backend's share is Beta(k_i, K − k_i), CV² = (K − k_i)/(k_i (K + 1)); RMS over the members. */
    static double formulaCv(List<Backend> members, int pointMultiple) {
        long total = members.stream().mapToLong(b -> b.weight() * pointMultiple).sum();
        double sum = 0;
        for (Backend b : members) {
            double k = b.weight() * pointMultiple;
            sum += (total - k) / (k * (total + 1));
        }
        return Math.sqrt(sum / members.size());
    }

    // ---- dump ----

    @Test
    void dumpShowsTheMeasuredCvBesideTheFormula(@TempDir Path dir) throws Exception {
        Path file = backends(dir, "fleet.conf", CliFleet.text(CliFleet.FEATURED));
        Path ring = dir.resolve("fleet.ring");
        build(file, ring, "--algorithm", "v1,v2", "--point-multiple", "40", "--quiet");
        Map<String, Object> root = object(
                CliJson.parse(run("dump", ring.toString(), "--json").assertOk().out()));
        List<String> text = run("dump", ring.toString()).assertOk().outLines();
        try (RingStore store = RingStore.open(ring)) {
            List<Object> rings = array(root.get("rings"));
            for (int i = 0; i < rings.size(); i++) {
                Ring x = store.rings().get(i);
                Map<String, Object> j = object(rings.get(i));
                if (x.isEmpty()) {
                    assertTrue(!j.containsKey("measured_cv"), "no CV for empty ring " + x);
                    continue;
                }
                List<Backend> members = store.backends().stream()
                        .filter(b -> b.features().containsAll(x.features()))
                        .toList();
                double measured = measuredCv(x, members);
                double predicted = formulaCv(members, x.version().pointMultiple());
                assertEquals(
                        measured, number(j.get("measured_cv")).doubleValue(), 1e-7 * measured, "measured_cv of " + x);
                assertEquals(
                        predicted,
                        number(j.get("predicted_cv")).doubleValue(),
                        1e-7 * predicted,
                        "predicted_cv of " + x);
                assertEquals(
                        predicted,
                        number(j.get("predicted_cv_32bit")).doubleValue(),
                        1e-3 * predicted,
                        "few points: no collisions");
                String head = "ring " + x + ": ";
                String line = text.get(text.indexOf(text.stream()
                                .filter(l -> l.startsWith(head))
                                .findFirst()
                                .orElseThrow())
                        + 1);
                Matcher m = CV_LINE.matcher(line.strip());
                assertTrue(m.matches(), "cv line after '" + head + "': " + line);
                // Text shows the CV as a percentage with 4 decimals (issue 13: one unit in text), JSON the fraction.
                assertEquals(100 * measured, Double.parseDouble(m.group(1)), 0.6e-4, "text measured of " + x);
                assertEquals(100 * predicted, Double.parseDouble(m.group(2)), 0.6e-4, "text predicted of " + x);
            }
        }
    }
}
