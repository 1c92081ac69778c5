package io.ringstore.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Predicate;
import java.util.stream.Stream;

/**
 * Turns one results directory of {@code bench/run.sh} into Markdown tables ({@code report.md} there)
 * and an SVG chart of ns per lookup against ring size: JMH's JSON results ({@code lookup-*.json},
 * {@code search-*.json}) and the measuring programs' TSV files ({@code build.tsv}, {@code heap.tsv},
 * {@code share.tsv}, {@code cache.tsv}). Missing files leave their tables out.
 *
 * <p>JMH figures are the median of the measurement iterations (all forks) ± JMH's error (half the
 * 99.9 % confidence interval of the mean); other figures are medians over their rounds.
 *
 * <pre>java -cp bench/target/benchmarks.jar io.ringstore.bench.ReportWriter RESULTS_DIR [--svg FILE]</pre>
 * The chart goes to {@code RESULTS_DIR/lookup-ns.svg} unless {@code --svg} says otherwise.
 */
public final class ReportWriter {
    private static final List<String> SIZES = List.of(BenchRings.SMALL, BenchRings.MEDIUM, BenchRings.LARGE);
    private static final Map<String, String> IMPLEMENTATIONS = linked(
            "ringstore", "ringstore (mapped, 6 B/point)",
            "treemap", "TreeMap ketama",
            "heapArrays", "heap arrays (int[] + short[])",
            "longPoints", "8-byte points (long[])");
    private static final Map<String, String> COLOURS = linked(
            "ringstore",
            "#d62728",
            "treemap",
            "#1f77b4",
            "heapArrays",
            "#2ca02c",
            "longPoints",
            "#9467bd",
            "binary",
            "#7f7f7f");

    private ReportWriter() {}

    /** One JMH result: benchmark class and method, parameters, median and error in ns. */
    record Score(
            String benchmark,
            String method,
            String size,
            int keyCount,
            double median,
            double error,
            int forks,
            int iterations) {
        String text() {
            return Double.isNaN(error) ? fmt(median) : fmt(median) + " ± " + fmt(error);
        }

        private static String fmt(double ns) {
            return String.format(Locale.ROOT, ns < 100 ? "%.1f" : "%.0f", ns);
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: ReportWriter RESULTS_DIR [--svg FILE]");
            System.exit(2);
        }
        Path dir = Path.of(args[0]);
        Path svg = args.length >= 3 && args[1].equals("--svg") ? Path.of(args[2]) : dir.resolve("lookup-ns.svg");
        List<Score> scores = readScores(dir);
        StringBuilder md = new StringBuilder();
        Path env = dir.resolve("env.txt");
        if (Files.exists(env)) {
            md.append("```\n").append(Files.readString(env).strip()).append("\n```\n\n");
        }
        lookupTables(md, scores);
        searchTable(md, scores, readTsv(dir.resolve("cache.tsv")));
        buildTables(md, readTsv(dir.resolve("build.tsv")));
        heapTable(md, readTsv(dir.resolve("heap.tsv")));
        shareTables(md, readTsv(dir.resolve("share.tsv")));
        Files.writeString(dir.resolve("report.md"), md, StandardCharsets.UTF_8);
        if (scores.stream().anyMatch(s -> s.benchmark().equals("LookupBenchmark"))) {
            if (svg.toAbsolutePath().getParent() != null) {
                Files.createDirectories(svg.toAbsolutePath().getParent());
            }
            Files.writeString(svg, chart(scores), StandardCharsets.UTF_8);
        }
        System.out.println(md);
    }

    // ---- lookups and searches

    private static void lookupTables(StringBuilder md, List<Score> scores) {
        for (String variant : List.of("Key", "Hash")) {
            List<Score> mine = scores.stream()
                    .filter(s -> s.benchmark().equals("LookupBenchmark")
                            && s.method().endsWith(variant))
                    .toList();
            if (mine.isEmpty()) {
                continue;
            }
            md.append("### Lookup, ns per lookup, ")
                    .append(
                            variant.equals("Key")
                                    ? "from the key's bytes (CRC-32 included)"
                                    : "from a precomputed hash")
                    .append("\n\n");
            md.append("| ring | points | keys |");
            IMPLEMENTATIONS.values().forEach(name -> md.append(' ').append(name).append(" |"));
            md.append(" ringstore ÷ heap arrays | TreeMap ÷ ringstore |\n|---|---:|---:|");
            md.append("---:|".repeat(IMPLEMENTATIONS.size() + 2)).append('\n');
            boolean skipped = false;
            for (String size : SIZES) {
                Map<String, Score> row = new LinkedHashMap<>();
                for (String impl : IMPLEMENTATIONS.keySet()) {
                    mine.stream()
                            .filter(s -> s.size().equals(size) && s.method().equals(impl + variant))
                            .findFirst()
                            .ifPresent(s -> row.put(impl, s));
                }
                if (row.isEmpty()) {
                    continue;
                }
                md.append("| ")
                        .append(size)
                        .append(" | ")
                        .append(points(size))
                        .append(" | ")
                        .append(String.format(
                                Locale.ROOT,
                                "%,d",
                                row.values().iterator().next().keyCount()))
                        .append(" |");
                for (String impl : IMPLEMENTATIONS.keySet()) {
                    md.append(' ')
                            .append(
                                    row.containsKey(impl)
                                            ? row.get(impl).text()
                                            : impl.equals("treemap")
                                                            && BenchRings.Shape.of(size)
                                                                            .points()
                                                                    > Baselines.TREEMAP_MAX_POINTS
                                                    ? "skipped¹"
                                                    : "–")
                            .append(" |");
                }
                md.append(' ')
                        .append(ratio(row.get("ringstore"), row.get("heapArrays")))
                        .append(" |");
                md.append(' ')
                        .append(ratio(row.get("treemap"), row.get("ringstore")))
                        .append(" |\n");
                skipped |= BenchRings.Shape.of(size).points() > Baselines.TREEMAP_MAX_POINTS;
            }
            if (skipped) {
                md.append("\n¹ not built above ")
                        .append(String.format(Locale.ROOT, "%,d", Baselines.TREEMAP_MAX_POINTS))
                        .append(
                                " points: at the 64 bytes per point measured below it would need about 13 GB of heap.\n");
            }
            md.append('\n');
        }
    }

    private static void searchTable(StringBuilder md, List<Score> scores, List<Map<String, String>> cache) {
        List<Score> mine = scores.stream()
                .filter(s -> s.benchmark().equals("SearchBenchmark"))
                .toList();
        if (mine.isEmpty() && cache.isEmpty()) {
            return;
        }
        md.append(
                "### Search: plain binary search against the library's (sliced interpolation), ns per lookup from a hash\n\n");
        md.append(
                "| ring | points | keys | binary | library | binary ÷ library |"
                        + " binary: reads | lines | misses @2 MiB | @32 MiB | library: reads | lines | misses @2 MiB | @32 MiB |\n");
        md.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (String size : SIZES) {
            Score binary = find(mine, s -> s.size().equals(size) && s.method().equals("binary"));
            Score library = find(mine, s -> s.size().equals(size) && s.method().equals("library"));
            Map<String, String> cb = findRow(
                    cache, r -> r.get("size").equals(size) && r.get("search").equals("binary"));
            Map<String, String> cl = findRow(
                    cache, r -> r.get("size").equals(size) && r.get("search").equals("library"));
            if (binary == null && library == null && cb == null) {
                continue;
            }
            md.append("| ")
                    .append(size)
                    .append(" | ")
                    .append(points(size))
                    .append(" | ")
                    .append(binary != null ? String.format(Locale.ROOT, "%,d", binary.keyCount()) : "–")
                    .append(" | ")
                    .append(binary != null ? binary.text() : "–")
                    .append(" | ")
                    .append(library != null ? library.text() : "–")
                    .append(" | ")
                    .append(ratio(binary, library))
                    .append(" |");
            for (Map<String, String> c : Arrays.asList(cb, cl)) {
                for (String col : List.of("reads", "lines", "miss2MiB", "miss32MiB")) {
                    md.append(' ')
                            .append(
                                    c == null
                                            ? "–"
                                            : String.format(Locale.ROOT, "%.2f", Double.parseDouble(c.get(col))))
                            .append(" |");
                }
            }
            md.append('\n');
        }
        md.append('\n');
    }

    private static String ratio(Score a, Score b) {
        return a == null || b == null ? "–" : String.format(Locale.ROOT, "%.2f×", a.median() / b.median());
    }

    // ---- builds, memory

    private static void buildTables(StringBuilder md, List<Map<String, String>> rows) {
        List<Map<String, String>> builds =
                rows.stream().filter(r -> r.get("what").equals("build")).toList();
        if (!builds.isEmpty()) {
            md.append("### Build (generate + sort + drop collisions + write + fsync + rename), median of rounds\n\n");
            md.append(
                    "| input | points generated | rounds | seconds | points/s | points/s, min–max | file bytes | bytes/point | beyond 6 B |"
                            + " heap at start | peak heap (sampled) | peak heap (pool peaks) | RSS at start | peak RSS |\n");
            md.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
            for (String subject : distinct(builds, "subject")) {
                List<Map<String, String>> mine = builds.stream()
                        .filter(r -> r.get("subject").equals(subject))
                        .toList();
                double bpp = median(mine, "bytesPerPoint");
                double[] speeds = mine.stream()
                        .mapToDouble(r -> Double.parseDouble(r.get("pointsPerSecond")))
                        .sorted()
                        .toArray();
                md.append(String.format(
                        Locale.ROOT,
                        "| %s | %,d | %d | %.2f | %,.0f | %,.1f–%,.1f M | %,d | %.4f | %.3f %% | %s | %s | %s | %s | %s |%n",
                        subject,
                        (long) median(mine, "points"),
                        mine.size(),
                        median(mine, "seconds"),
                        median(mine, "pointsPerSecond"),
                        speeds[0] / 1e6,
                        speeds[speeds.length - 1] / 1e6,
                        (long) median(mine, "fileBytes"),
                        bpp,
                        (bpp / 6 - 1) * 100,
                        mib(median(mine, "startHeap")),
                        mib(median(mine, "peakHeapSampled")),
                        mib(median(mine, "peakHeapPools")),
                        mib(median(mine, "startRss")),
                        mib(median(mine, "peakRss"))));
            }
            md.append(
                    "\nBuild phases, median seconds: counting points per bucket, placing them, sorting within buckets,"
                            + " writing, fsync + rename (two threads for rings of 1 M points or more).\n\n");
            md.append("| input | count | place | sort | write | fsync + rename |\n|---|---:|---:|---:|---:|---:|\n");
            for (String subject : distinct(builds, "subject")) {
                List<Map<String, String>> mine = builds.stream()
                        .filter(r -> r.get("subject").equals(subject))
                        .toList();
                md.append("| ").append(subject).append(" |");
                for (String phase : List.of("countS", "placeS", "sortS", "writeS", "syncS")) {
                    md.append(String.format(Locale.ROOT, " %.3f |", median(mine, phase)));
                }
                md.append('\n');
            }
            md.append('\n');
        }
        List<Map<String, String>> sorts =
                rows.stream().filter(r -> !r.get("what").equals("build")).toList();
        if (!sorts.isEmpty()) {
            md.append("### Sort alone, same packed longs, median of rounds (points/s; seconds)\n\n");
            md.append(
                    "| ring | points | rounds | PointGenerator (generate and sort, as build) | Arrays.sort (sign flipped) | PointSorter.sort (radix) | radix ÷ Arrays.sort speed |\n");
            md.append("|---|---:|---:|---:|---:|---:|---:|\n");
            for (String subject : distinct(sorts, "subject")) {
                List<Map<String, String>> mine = sorts.stream()
                        .filter(r -> r.get("subject").equals(subject))
                        .toList();
                Map<String, Double> speed = new LinkedHashMap<>();
                StringBuilder cells = new StringBuilder();
                for (String what : List.of("PointGenerator", "Arrays.sort", "PointSorter.sort")) {
                    List<Map<String, String>> w = mine.stream()
                            .filter(r -> r.get("what").equals(what))
                            .toList();
                    speed.put(what, median(w, "pointsPerSecond"));
                    cells.append(String.format(
                            Locale.ROOT,
                            " %,.1f M/s; %.2f s |",
                            median(w, "pointsPerSecond") / 1e6,
                            median(w, "seconds")));
                }
                md.append(String.format(
                        Locale.ROOT,
                        "| %s | %,d | %d |%s %.2f× |%n",
                        subject,
                        (long) median(mine, "points"),
                        mine.stream()
                                .filter(r -> r.get("what").equals("PointSorter.sort"))
                                .count(),
                        cells,
                        speed.get("PointSorter.sort") / speed.get("Arrays.sort")));
            }
            md.append('\n');
        }
    }

    private static void heapTable(StringBuilder md, List<Map<String, String>> rows) {
        if (rows.isEmpty()) {
            return;
        }
        md.append("### Heap retained (used after full GC, after minus before building; bytes, bytes per point)\n\n");
        md.append("| ring | points |");
        IMPLEMENTATIONS
                .values()
                .forEach(name -> md.append(' ')
                        .append(name.startsWith("ringstore") ? "ringstore (open store, slice tables)" : name)
                        .append(" |"));
        md.append("\n|---|---:|").append("---:|".repeat(IMPLEMENTATIONS.size())).append('\n');
        for (String subject : distinct(rows, "subject")) {
            List<Map<String, String>> mine =
                    rows.stream().filter(r -> r.get("subject").equals(subject)).toList();
            md.append(String.format(
                    Locale.ROOT,
                    "| %s | %,d |",
                    subject,
                    Long.parseLong(mine.getFirst().get("points"))));
            for (String impl : IMPLEMENTATIONS.keySet()) {
                Map<String, String> r = findRow(mine, x -> x.get("structure").equals(impl));
                md.append(
                        r == null
                                ? " – |"
                                : String.format(
                                        Locale.ROOT,
                                        " %,d (%.3f) |",
                                        Long.parseLong(r.get("retainedBytes")),
                                        Double.parseDouble(r.get("bytesPerPoint"))));
            }
            md.append('\n');
        }
        md.append('\n');
    }

    private static void shareTables(StringBuilder md, List<Map<String, String>> rows) {
        if (rows.isEmpty()) {
            return;
        }
        for (String ring : distinct(rows, "ring")) {
            List<Map<String, String>> mine =
                    rows.stream().filter(r -> r.get("ring").equals(ring)).toList();
            md.append(String.format(
                    Locale.ROOT,
                    "### Sharing: %s (file %,d bytes), N processes mapping it%n%n",
                    ring,
                    Long.parseLong(mine.getFirst().get("fileBytes"))));
            md.append("MiB per process; where the N processes differ, the lowest–highest of them.\n\n");
            md.append(
                    "| N | mapping Rss | mapping Pss | mapping Shared_Clean | mapping Private | process Rss | process Pss |"
                            + " process Shared_Clean | process Private | process Private_Dirty | page tables (VmPTE) | Σ mapping Pss over the N |\n");
            md.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
            for (String n : distinct(mine, "procs")) {
                List<Map<String, String>> m = mine.stream()
                        .filter(r -> r.get("procs").equals(n) && r.get("scope").equals("mapping"))
                        .toList();
                List<Map<String, String>> p = mine.stream()
                        .filter(r -> r.get("procs").equals(n) && r.get("scope").equals("process"))
                        .toList();
                double pssSum = m.stream()
                        .mapToDouble(r -> Double.parseDouble(r.get("pssKiB")))
                        .sum();
                md.append("| ").append(n).append(" |");
                for (String column : List.of("rssKiB", "pssKiB", "sharedCleanKiB", "privateKiB")) {
                    md.append(' ').append(range(m, column)).append(" |");
                }
                for (String column : List.of(
                        "rssKiB", "pssKiB", "sharedCleanKiB", "privateKiB", "privateDirtyKiB", "pageTablesKiB")) {
                    md.append(' ').append(range(p, column)).append(" |");
                }
                md.append(String.format(Locale.ROOT, " %.1f |%n", pssSum / 1024));
            }
            md.append('\n');
        }
    }

    /** The column's values over the rows, in MiB: one figure, or lowest–highest. */
    private static String range(List<Map<String, String>> rows, String column) {
        double[] v = rows.stream()
                .map(r -> r.getOrDefault(column, ""))
                .filter(x -> !x.isEmpty())
                .mapToDouble(x -> Double.parseDouble(x) / 1024)
                .sorted()
                .toArray();
        if (v.length == 0) {
            return "–";
        }
        String lo = String.format(Locale.ROOT, "%.1f", v[0]);
        String hi = String.format(Locale.ROOT, "%.1f", v[v.length - 1]);
        return lo.equals(hi) ? lo : lo + "–" + hi;
    }

    private static String mib(double bytes) {
        return String.format(Locale.ROOT, "%,.0f MiB", bytes / 1048576);
    }

    // ---- chart

    /**
     * Two panels (from the key, from a hash), log-log, one line per implementation; each point with an
     * error bar of JMH's score error (half the 99.9 % confidence interval), its value beside it on the
     * side away from its line. Only ring sizes with results get a column (quick mode has no 204.8 M).
     */
    static String chart(List<Score> scores) {
        int panelW = 440;
        int panelH = 340;
        int left = 78;
        int top = 58;
        int gap = 86;
        int width = left + 2 * panelW + gap + 20;
        int height = top + panelH + 110;
        List<Score> charted = scores.stream()
                .filter(s -> s.benchmark().equals("LookupBenchmark")
                        || s.benchmark().equals("SearchBenchmark") && s.method().equals("binary"))
                .toList();
        List<String> sizes = SIZES.stream()
                .filter(size -> charted.stream()
                        .anyMatch(s -> s.size().equals(size) && s.benchmark().equals("LookupBenchmark")))
                .toList();
        double min = charted.stream()
                .mapToDouble(s -> s.median() - errorOf(s) > 0 ? s.median() - errorOf(s) : s.median())
                .min()
                .orElse(1);
        double max =
                charted.stream().mapToDouble(s -> s.median() + errorOf(s)).max().orElse(10);
        double yLo = Math.floor(Math.log10(min));
        double yHi = Math.ceil(Math.log10(max));
        for (double m : new double[] {Math.log10(2), Math.log10(5)}) { // the lowest of 1, 2, 5 x 10^k above the data
            if (Math.floor(Math.log10(max)) + m >= Math.log10(max) && Math.floor(Math.log10(max)) + m < yHi) {
                yHi = Math.floor(Math.log10(max)) + m;
                break;
            }
        }
        double xLo = sizes.stream().mapToDouble(ReportWriter::logPoints).min().orElse(4) - 0.4;
        double xHi = sizes.stream().mapToDouble(ReportWriter::logPoints).max().orElse(8) + 0.5;
        StringBuilder svg = new StringBuilder();
        svg.append(String.format(
                Locale.ROOT,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\""
                        + " font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"12\">%n",
                width,
                height,
                width,
                height));
        svg.append(String.format(Locale.ROOT, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>%n", width, height));
        svg.append(String.format(
                Locale.ROOT,
                "<text x=\"%d\" y=\"22\" font-size=\"15\" font-weight=\"bold\">ns per lookup against ring size"
                        + " (JMH median ± score error, 1 thread; log-log; lower is better)</text>%n",
                left));
        String[] titles = {"from the key (CRC-32 of 20–120 bytes included)", "from a precomputed hash"};
        String[] variants = {"Key", "Hash"};
        for (int panel = 0; panel < 2; panel++) {
            int x0 = left + panel * (panelW + gap);
            svg.append(String.format(
                    Locale.ROOT, "<text x=\"%d\" y=\"%d\" font-size=\"13\">%s</text>%n", x0, top - 10, titles[panel]));
            svg.append(String.format(
                    Locale.ROOT,
                    "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#444\"/>%n",
                    x0,
                    top,
                    panelW,
                    panelH));
            svg.append(String.format(
                    Locale.ROOT,
                    "<text transform=\"translate(%d %d) rotate(-90)\" text-anchor=\"middle\" fill=\"#333\">ns per lookup (log scale)</text>%n",
                    x0 - 46,
                    top + panelH / 2));
            for (int d = (int) yLo; d <= (int) Math.ceil(yHi); d++) {
                for (int m = 1; m <= 9; m++) {
                    double v = Math.log10(m) + d;
                    if (v > yHi + 1e-9) {
                        break;
                    }
                    double y = top + panelH - (v - yLo) / (yHi - yLo) * panelH;
                    svg.append(String.format(
                            Locale.ROOT,
                            "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\"/>%n",
                            x0,
                            y,
                            x0 + panelW,
                            y,
                            m == 1 ? "#bbb" : "#eee"));
                    if (m == 1 || m == 2 || m == 5) {
                        svg.append(String.format(
                                Locale.ROOT,
                                "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" fill=\"#333\">%s</text>%n",
                                x0 - 5,
                                y + 4,
                                (long) (m * Math.pow(10, d))));
                    }
                }
            }
            for (String size : sizes) {
                double x = x0 + (logPoints(size) - xLo) / (xHi - xLo) * panelW;
                svg.append(String.format(
                        Locale.ROOT,
                        "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>%n",
                        x,
                        top,
                        x,
                        top + panelH));
                svg.append(String.format(
                        Locale.ROOT,
                        "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"#333\">%s</text>%n",
                        x,
                        top + panelH + 16,
                        points(size)));
            }
            svg.append(String.format(
                    Locale.ROOT,
                    "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#333\">ring size (points)</text>%n",
                    x0 + panelW / 2,
                    top + panelH + 34));
            List<String> lines = new ArrayList<>(IMPLEMENTATIONS.keySet());
            if (variants[panel].equals("Hash")) {
                lines.add("binary");
            }
            List<Label> labels = new ArrayList<>();
            for (String impl : lines) {
                List<double[]> pts = new ArrayList<>(); // x, y, median, y of median - error, y of median + error
                for (String size : sizes) {
                    String v = variants[panel];
                    Score s = impl.equals("binary")
                            ? find(
                                    charted,
                                    x -> x.benchmark().equals("SearchBenchmark")
                                            && x.method().equals("binary")
                                            && x.size().equals(size))
                            : find(
                                    charted,
                                    x -> x.benchmark().equals("LookupBenchmark")
                                            && x.method().equals(impl + v)
                                            && x.size().equals(size));
                    if (s != null) {
                        double x = x0 + (logPoints(size) - xLo) / (xHi - xLo) * panelW;
                        double low = s.median() - errorOf(s);
                        pts.add(new double[] {
                            x,
                            yOf(s.median(), yLo, yHi, top, panelH),
                            s.median(),
                            low > 0 ? yOf(low, yLo, yHi, top, panelH) : top + panelH,
                            yOf(s.median() + errorOf(s), yLo, yHi, top, panelH)
                        });
                    }
                }
                String colour = COLOURS.get(impl);
                StringBuilder path = new StringBuilder();
                for (double[] p : pts) {
                    path.append(path.isEmpty() ? "M" : " L")
                            .append(String.format(Locale.ROOT, "%.1f %.1f", p[0], p[1]));
                }
                if (!pts.isEmpty()) {
                    svg.append(String.format(
                            Locale.ROOT,
                            "<path d=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"%s\"%s/>%n",
                            path,
                            colour,
                            impl.equals("ringstore") ? "3" : "2",
                            impl.equals("binary") ? " stroke-dasharray=\"6 4\"" : ""));
                }
                for (int i = 0; i < pts.size(); i++) {
                    double[] p = pts.get(i);
                    if (p[4] < p[3]) { // an error bar with caps
                        svg.append(String.format(
                                Locale.ROOT,
                                "<path d=\"M%.1f %.1f V%.1f M%.1f %.1f H%.1f M%.1f %.1f H%.1f\" stroke=\"%s\" stroke-width=\"1.5\" fill=\"none\"/>%n",
                                p[0],
                                p[3],
                                p[4],
                                p[0] - 4,
                                p[3],
                                p[0] + 4,
                                p[0] - 4,
                                p[4],
                                p[0] + 4,
                                colour));
                    }
                    svg.append(String.format(
                            Locale.ROOT,
                            "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"/>%n",
                            p[0],
                            p[1],
                            colour));
                    // The label goes right of the point, above its line where the line falls to the right
                    // (or rises into the point from the left) and below it otherwise, so it never sits on it.
                    double rise = i + 1 < pts.size() ? pts.get(i + 1)[1] - p[1] : i > 0 ? p[1] - pts.get(i - 1)[1] : 0;
                    labels.add(new Label(p[0] + 8, rise >= 0 ? p[1] - 7 : p[1] + 15, p[2], colour));
                }
            }
            // Labels of one column pushed apart vertically (12 px a line) where they would overlap.
            labels.sort(java.util.Comparator.comparingDouble(Label::x).thenComparingDouble(Label::y));
            double previousX = Double.NaN;
            double previousY = Double.NEGATIVE_INFINITY;
            for (Label l : labels) {
                double y = l.x() == previousX ? Math.max(l.y(), previousY + 12) : l.y();
                previousX = l.x();
                previousY = y;
                svg.append(String.format(
                        Locale.ROOT,
                        "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"%s\" stroke=\"white\" stroke-width=\"3\" paint-order=\"stroke\">%s</text>%n",
                        l.x(),
                        y,
                        l.colour(),
                        l.value() < 100
                                ? String.format(Locale.ROOT, "%.1f", l.value())
                                : String.format(Locale.ROOT, "%.0f", l.value())));
            }
        }
        int ly = top + panelH + 58;
        Map<String, String> legend = new LinkedHashMap<>(IMPLEMENTATIONS);
        legend.put("binary", "plain binary search, mapped (right panel)");
        int i = 0;
        for (Map.Entry<String, String> e : legend.entrySet()) {
            int x = left + (i % 3) * 300;
            int y = ly + (i / 3) * 20;
            svg.append(String.format(
                    Locale.ROOT,
                    "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"3\"%s/>%n",
                    x,
                    y - 4,
                    x + 24,
                    y - 4,
                    COLOURS.get(e.getKey()),
                    e.getKey().equals("binary") ? " stroke-dasharray=\"6 4\"" : ""));
            svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\">%s</text>%n", x + 30, y, e.getValue()));
            i++;
        }
        svg.append("</svg>\n");
        return svg.toString();
    }

    /** A value printed beside its point. */
    private record Label(double x, double y, double value, String colour) {}

    /** JMH's score error, 0 where it has none (one iteration: NaN). */
    private static double errorOf(Score s) {
        return Double.isNaN(s.error()) ? 0 : s.error();
    }

    private static double logPoints(String size) {
        return Math.log10(BenchRings.Shape.of(size).points());
    }

    private static double yOf(double ns, double yLo, double yHi, int top, int panelH) {
        return top + panelH - (Math.log10(ns) - yLo) / (yHi - yLo) * panelH;
    }

    // ---- input

    static List<Score> readScores(Path dir) throws IOException {
        List<Score> scores = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path file : files.filter(f -> f.getFileName().toString().endsWith(".json"))
                    .sorted()
                    .toList()) {
                for (Object o : (List<?>) Json.parse(Files.readString(file))) {
                    Map<?, ?> r = (Map<?, ?>) o;
                    String full = (String) r.get("benchmark");
                    String[] parts = full.split("\\.");
                    Map<?, ?> params = (Map<?, ?>) r.get("params");
                    Map<?, ?> metric = (Map<?, ?>) r.get("primaryMetric");
                    Map<?, ?> percentiles = (Map<?, ?>) metric.get("scorePercentiles");
                    if (!"ns/op".equals(metric.get("scoreUnit"))) {
                        throw new IllegalStateException(
                                file + ": " + full + " is in " + metric.get("scoreUnit") + ", not ns/op");
                    }
                    scores.add(new Score(
                            parts[parts.length - 2],
                            parts[parts.length - 1],
                            (String) params.get("size"),
                            Integer.parseInt((String) params.get("keyCount")),
                            number(percentiles.get("50.0")),
                            number(metric.get("scoreError")),
                            (int) number(r.get("forks")),
                            (int) number(r.get("measurementIterations"))));
                }
            }
        }
        return scores;
    }

    private static double number(Object o) {
        return o instanceof Double d ? d : Double.parseDouble(String.valueOf(o)); // JMH writes NaN as "NaN"
    }

    static List<Map<String, String>> readTsv(Path file) throws IOException {
        List<Map<String, String>> rows = new ArrayList<>();
        if (!Files.exists(file)) {
            return rows;
        }
        List<String> lines = Files.readAllLines(file);
        String[] header = lines.getFirst().split("\t", -1);
        for (String line : lines.subList(1, lines.size())) {
            String[] cells = line.split("\t", -1);
            Map<String, String> row = new LinkedHashMap<>();
            for (int i = 0; i < header.length; i++) {
                row.put(header[i], i < cells.length ? cells[i] : "");
            }
            rows.add(row);
        }
        return rows;
    }

    private static Score find(List<Score> scores, Predicate<Score> p) {
        return scores.stream().filter(p).findFirst().orElse(null);
    }

    private static Map<String, String> findRow(List<Map<String, String>> rows, Predicate<Map<String, String>> p) {
        return rows.stream().filter(p).findFirst().orElse(null);
    }

    private static List<String> distinct(List<Map<String, String>> rows, String column) {
        return rows.stream().map(r -> r.get(column)).distinct().toList();
    }

    private static double median(List<Map<String, String>> rows, String column) {
        double[] v = rows.stream()
                .map(r -> r.get(column))
                .filter(s -> s != null && !s.isEmpty())
                .mapToDouble(Double::parseDouble)
                .sorted()
                .toArray();
        if (v.length == 0) {
            return Double.NaN;
        }
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    private static String points(String size) {
        long n = BenchRings.Shape.of(size).points();
        return n >= 1_000_000 ? String.format(Locale.ROOT, "%.1f M", n / 1e6) : String.format(Locale.ROOT, "%,d", n);
    }

    private static Map<String, String> linked(String... keysAndValues) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            m.put(keysAndValues[i], keysAndValues[i + 1]);
        }
        return m;
    }

    /** Just enough JSON for JMH's result files: objects, arrays, strings, numbers, literals. */
    static final class Json {
        private final String s;
        private int i;

        private Json(String s) {
            this.s = s;
        }

        static Object parse(String text) {
            Json j = new Json(text);
            Object v = j.value();
            j.space();
            if (j.i != text.length()) {
                throw j.error("trailing characters");
            }
            return v;
        }

        private Object value() {
            space();
            if (i >= s.length()) {
                throw error("unexpected end");
            }
            char c = s.charAt(i);
            switch (c) {
                case '{' -> {
                    i++;
                    Map<String, Object> m = new LinkedHashMap<>();
                    space();
                    if (s.charAt(i) == '}') {
                        i++;
                        return m;
                    }
                    while (true) {
                        space();
                        String key = string();
                        space();
                        expect(':');
                        m.put(key, value());
                        space();
                        if (s.charAt(i) == ',') {
                            i++;
                        } else {
                            expect('}');
                            return m;
                        }
                    }
                }
                case '[' -> {
                    i++;
                    List<Object> a = new ArrayList<>();
                    space();
                    if (s.charAt(i) == ']') {
                        i++;
                        return a;
                    }
                    while (true) {
                        a.add(value());
                        space();
                        if (s.charAt(i) == ',') {
                            i++;
                        } else {
                            expect(']');
                            return a;
                        }
                    }
                }
                case '"' -> {
                    return string();
                }
                default -> {
                    for (String literal : List.of("true", "false", "null")) {
                        if (s.startsWith(literal, i)) {
                            i += literal.length();
                            return literal.equals("null") ? null : Boolean.valueOf(literal);
                        }
                    }
                    int start = i;
                    while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) {
                        i++;
                    }
                    if (start == i) {
                        throw error("unexpected '" + c + "'");
                    }
                    return Double.parseDouble(s.substring(start, i));
                }
            }
        }

        private String string() {
            expect('"');
            StringBuilder b = new StringBuilder();
            while (s.charAt(i) != '"') {
                char c = s.charAt(i++);
                if (c == '\\') {
                    char e = s.charAt(i++);
                    switch (e) {
                        case 'n' -> b.append('\n');
                        case 't' -> b.append('\t');
                        case 'r' -> b.append('\r');
                        case 'b' -> b.append('\b');
                        case 'f' -> b.append('\f');
                        case 'u' -> {
                            b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                            i += 4;
                        }
                        default -> b.append(e);
                    }
                } else {
                    b.append(c);
                }
            }
            i++;
            return b.toString();
        }

        private void expect(char c) {
            if (i >= s.length() || s.charAt(i) != c) {
                throw error("expected '" + c + "'");
            }
            i++;
        }

        private void space() {
            while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
                i++;
            }
        }

        private IllegalArgumentException error(String what) {
            return new IllegalArgumentException("JSON: " + what + " at offset " + i);
        }
    }
}
