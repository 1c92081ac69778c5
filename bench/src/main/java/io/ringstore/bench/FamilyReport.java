package io.ringstore.bench;

import io.ringstore.Ring;
import io.ringstore.RingStore;
import io.ringstore.family.RingVersion;
import java.lang.ref.Reference;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The table of {@link FamilyLookupBenchmark}: for each version and server count in its JMH results,
 * the points of the ring, the median ns of {@code keyHash}, {@code lookup} and {@code treemap}, TreeMap
 * over lookup, and bytes per point of the ring file and of the TreeMap, measured here. (No "search
 * only" column: lookup minus key hash subtracts figures of two forks, which on a shared machine can
 * come out negative where the hash is most of the lookup.)
 *
 * <ul>
 *   <li>Ring file: the bytes of the ring's segment ({@link io.ringstore.RingFileLayout#segmentOf}) over
 *       its points: 6, or 10 for a ring of 64-bit points (a 4-byte low word after the 6-byte points).
 *       Exact; the router's heap for a ring (its slice table, 4 bytes per 128 points) is not counted.
 *   <li>TreeMap: measured, not computed: heap used after full collections
 *       ({@link HeapMeasure#usedHeapAfterGc}) before and after building {@code copies} TreeMaps of the
 *       ring ({@link Baselines.TreeMapRing}; enough copies for 2,000,000 entries, 1 to 20), kept
 *       reachable, over copies × points. It counts the entries, the {@code Long} keys and each map's
 *       {@code Integer} per backend, which its points share.
 * </ul>
 *
 * <pre>
 * java -Xmx4g -cp bench/target/benchmarks.jar io.ringstore.bench.FamilyReport families.json [--tsv FILE]
 * </pre>
 * Prints the Markdown table; {@code --tsv} writes the same rows tab-separated.
 */
public final class FamilyReport {
    private static final long ENTRIES_MEASURED = 2_000_000;
    private static final int MAX_COPIES = 20;

    private FamilyReport() {}

    /** The three medians of one version and server count, in ns; NaN where the results have none. */
    private record Row(String version, int servers, double keyHash, double lookup, double treemap) {}

    public static void main(String[] args) throws Exception {
        if (args.length != 1 && !(args.length == 3 && args[1].equals("--tsv"))) {
            System.err.println("usage: FamilyReport JMH_JSON [--tsv FILE]");
            System.exit(2);
        }
        List<Row> rows = read(Path.of(args[0]));
        StringBuilder md = new StringBuilder();
        md.append(
                "| family | servers | points | key hash ns | lookup ns | TreeMap ns | TreeMap ÷ lookup | ring file B/point | TreeMap B/point |\n");
        md.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        try (Tsv tsv = Tsv.create(
                args.length == 3 ? args[2] : null,
                "version",
                "servers",
                "points",
                "keyHashNs",
                "lookupNs",
                "treemapNs",
                "ringBytesPerPoint",
                "treemapBytesPerPoint")) {
            for (Row r : rows) {
                Footprint f = footprint(RingVersion.parse(r.version()), r.servers());
                md.append(String.format(
                        Locale.ROOT,
                        "| %s | %,d | %,d | %s | %s | %s | %s | %.0f | %.1f |%n",
                        r.version(),
                        r.servers(),
                        f.points(),
                        ns(r.keyHash()),
                        ns(r.lookup()),
                        ns(r.treemap()),
                        ratio(r.treemap(), r.lookup()),
                        f.ringBytesPerPoint(),
                        f.treemapBytesPerPoint()));
                tsv.row(
                        r.version(),
                        r.servers(),
                        f.points(),
                        r.keyHash(),
                        r.lookup(),
                        r.treemap(),
                        f.ringBytesPerPoint(),
                        f.treemapBytesPerPoint());
            }
        }
        System.out.print(md);
    }

    /** Reads the benchmark's scores (median of the measurement iterations) in the order JMH ran them. */
    private static List<Row> read(Path json) throws Exception {
        Map<String, Map<String, Double>> byRing = new LinkedHashMap<>();
        for (Object o : (List<?>) ReportWriter.Json.parse(Files.readString(json))) {
            Map<?, ?> r = (Map<?, ?>) o;
            String benchmark = (String) r.get("benchmark");
            if (!benchmark.contains(FamilyLookupBenchmark.class.getSimpleName() + ".")) {
                continue;
            }
            Map<?, ?> params = (Map<?, ?>) r.get("params");
            Map<?, ?> metric = (Map<?, ?>) r.get("primaryMetric");
            if (!"ns/op".equals(metric.get("scoreUnit"))) {
                throw new IllegalStateException(
                        json + ": " + benchmark + " is in " + metric.get("scoreUnit") + ", not ns/op");
            }
            double median = ((Number) ((Map<?, ?>) metric.get("scorePercentiles")).get("50.0")).doubleValue();
            String ring = params.get("version") + " " + params.get("servers");
            byRing.computeIfAbsent(ring, k -> new LinkedHashMap<>())
                    .put(benchmark.substring(benchmark.lastIndexOf('.') + 1), median);
        }
        List<Row> rows = new ArrayList<>();
        for (Map.Entry<String, Map<String, Double>> e : byRing.entrySet()) {
            String[] ring = e.getKey().split(" ");
            Map<String, Double> m = e.getValue();
            rows.add(new Row(
                    ring[0],
                    Integer.parseInt(ring[1]),
                    m.getOrDefault("keyHash", Double.NaN),
                    m.getOrDefault("lookup", Double.NaN),
                    m.getOrDefault("treemap", Double.NaN)));
        }
        return rows;
    }

    private record Footprint(int points, double ringBytesPerPoint, double treemapBytesPerPoint) {}

    private static Footprint footprint(RingVersion version, int servers) throws Exception {
        Path dir = Files.createTempDirectory("family-report");
        Path file = dir.resolve("ring");
        try (RingStore store = FamilyRings.build(version, servers, file)) {
            Ring ring = store.ring(Set.of(), version);
            int points = ring.pointCount();
            double ringBytes = (double) store.layout().segmentOf(ring).length() / points;
            new Baselines.TreeMapRing(ring, store.backendCount()); // loads and initialises what it uses
            int copies = (int) Math.max(1, Math.min(MAX_COPIES, ENTRIES_MEASURED / points));
            long before = HeapMeasure.usedHeapAfterGc();
            Object[] maps = new Object[copies];
            for (int c = 0; c < copies; c++) {
                maps[c] = new Baselines.TreeMapRing(ring, store.backendCount());
            }
            long after = HeapMeasure.usedHeapAfterGc();
            Reference.reachabilityFence(maps);
            return new Footprint(points, ringBytes, (double) (after - before) / ((long) copies * points));
        } finally {
            Files.deleteIfExists(file);
            Files.delete(dir);
        }
    }

    private static String ns(double ns) {
        return Double.isNaN(ns) ? "–" : String.format(Locale.ROOT, "%.1f", ns);
    }

    private static String ratio(double a, double b) {
        return Double.isNaN(a) || Double.isNaN(b) ? "–" : String.format(Locale.ROOT, "%.2f", a / b);
    }
}
