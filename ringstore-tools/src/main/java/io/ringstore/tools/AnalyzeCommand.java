package io.ringstore.tools;

import io.ringstore.build.BackendList;
import io.ringstore.build.BackendsFileException;
import io.ringstore.build.BuildResult;
import io.ringstore.build.RingBuilder;
import io.ringstore.build.Views;

import io.ringstore.Backend;
import io.ringstore.Ring;
import io.ringstore.RingFamily;
import io.ringstore.RingFileLayout;
import io.ringstore.RingFileException;
import io.ringstore.RingStore;
import io.ringstore.RingVersion;
import io.ringstore.internal.format.RingFileDescriptor;
import io.ringstore.tools.analysis.CollisionModel;
import io.ringstore.tools.analysis.CvChart;
import io.ringstore.tools.analysis.FleetRing;
import io.ringstore.tools.analysis.RingSimulator;
import io.ringstore.tools.analysis.ShareStats;
import io.ringstore.tools.analysis.Sweep;
import io.ringstore.internal.IoErrors;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * {@code ringstore analyze}: the load formula against rings built with the real point generation,
 * either simulated for N random backends over a range of point multiples, or built from a backends file.
 */
final class AnalyzeCommand extends Command {
    static final int DEFAULT_SEEDS = 3;
    static final int DEFAULT_STEPS_PER_DECADE = 4;
    private static final double GIB = 1L << 30;
    static final String FILE_CSV_HEADER = "version,features,backends,points,dropped,birthday_estimate,bytes,predicted_cv,"
            + "predicted_cv_32bit,measured_cv,max_share_over_expected,min_share_over_expected";

    @Override
    String name() {
        return "analyze";
    }

    @Override
    String description() {
        return "The load imbalance of consistent-hash rings, predicted and measured. The CV is the standard deviation\n"
                + "of the backends' shares of the hash line over the mean share; on a continuous ring with k points per\n"
                + "backend it is sqrt((N-1)/(N*k+1)) (docs/math.md); 32-bit point hashes collide and add a bias.\n\n"
                + "With --backends N: simulates rings of N random backends with k points each for every k in --points,\n"
                + "one ring per seed, built as the ring builder builds them (CRC-32 points, equal hashes dropped), and\n"
                + "prints formula against simulation as the rows are done (progress on stderr), then where the two part.\n"
                + "With a BACKENDS_FILE: builds its rings in a temporary file and shows every feature ring's predicted and\n"
                + "measured CV and its bytes.";
    }

    private static final Option BACKENDS = Option.valued("--backends", "N", "simulate rings of N backends (random IPv4 addresses), 2 to 65535");
    private static final Option POINTS = Option.valued("--points", "K1..K2", "point multiples k from K1 to K2 in log steps; also K, or K1,K2,K3");
    private static final Option STEPS = Option.valued("--steps-per-decade", "D",
            "log steps per factor of 10 for K1..K2 (default 4: 10, 18, 32, 56, 100, ...)");
    private static final Option SEEDS = Option.valued("--seeds", "S", "rings per k, each with its own random addresses (default 3)");
    private static final Option ALGORITHM = Option.valued(Versions.ALGORITHM, "V", """
            v2 (pingora-ketama, default with --backends) or v1 (nginx: text as written,
            first listed wins a tie); for a BACKENDS_FILE a list as build takes it
            (v1, v2, v2:K, v1,v2:16; default v1)""");
    private static final Option POINT_MULTIPLE = Option.valued(Versions.POINT_MULTIPLE, "K",
            "points per weight unit of a bare v2 for a BACKENDS_FILE (default 160)");
    private static final Option SVG = Option.valued("--svg", "FILE", "write the chart: CV against k (log-log), formula, simulation, collisions");
    private static final Option CSV = Option.valued("--csv", "FILE", "write the table as CSV (header row first)");
    private static final Option QUIET = Option.flag("--quiet", "print nothing but errors (no table, no progress): for --csv and --svg");

    @Override
    List<Option> options() {
        return List.of(BACKENDS, POINTS, STEPS, SEEDS, ALGORITHM, POINT_MULTIPLE, BuildCommand.VIEWS, SVG, CSV, QUIET);
    }

    @Override
    List<String> forms() {
        return List.of("{--backends} {--points} [{--steps-per-decade}] [{--seeds}] [{--algorithm}] [{--svg}] [{--csv}] [{--quiet}]",
                "BACKENDS_FILE [{--algorithm}] [{--point-multiple}] [{--views}] [{--csv}] [{--quiet}]");
    }

    @Override
    int run(Args args, InputStream in, PrintStream stdout, PrintStream err) throws UsageException, FailedException {
        boolean quiet = args.has(QUIET.name());
        Consumer<String> progress = quiet ? s -> { } : new ThrottledProgress(err, "ringstore analyze: ");
        PrintStream out = quiet ? new PrintStream(OutputStream.nullOutputStream()) : stdout;
        if (args.has(BACKENDS.name())) {
            if (!args.positional.isEmpty()) {
                throw new UsageException("give --backends N or a BACKENDS_FILE, not both");
            }
            if (args.has(POINT_MULTIPLE.name())) {
                throw new UsageException(Versions.POINT_MULTIPLE + " is for a BACKENDS_FILE; with --backends give --points");
            }
            if (args.has(BuildCommand.VIEWS.name())) {
                throw new UsageException("--views is for a BACKENDS_FILE (how its ring file stores feature rings); a --backends sweep builds no file");
            }
            sweep(sweepSetup(args), args.get(SVG.name()), args.get(CSV.name()), out, progress);
            return Main.OK;
        }
        if (args.has(SVG.name())) {
            throw new UsageException("--svg draws CV against k over a --backends N sweep; a BACKENDS_FILE has one k per version: "
                    + "compare its rings with --csv FILE, or sweep k with --backends N --points K1..K2");
        }
        for (Option o : List.of(POINTS, SEEDS, STEPS)) {
            if (args.has(o.name())) {
                throw new UsageException(o.name() + " needs --backends N");
            }
        }
        if (args.positional.size() != 1) {
            throw new UsageException(args.positional.isEmpty() ? "give --backends N --points K1..K2, or a BACKENDS_FILE"
                    : "expected one BACKENDS_FILE, got " + args.positional);
        }
        file(Versions.forBuild(args), BuildCommand.views(args.get(BuildCommand.VIEWS.name())), args.positional.getFirst(), args.get(CSV.name()), out, progress);
        return Main.OK;
    }

    // ---- --backends N: the sweep ----

    /** What a sweep simulates: N backends, the point multiples, the rings per k, the algorithm and the threads. */
    private record SweepSetup(int n, List<Integer> ks, int seeds, RingFamily family, int threads) {
    }

    /** A finished sweep: its rows in k order and its wall time. */
    private record SweepReport(SweepSetup setup, List<Sweep.Row> rows, double seconds) {
    }

    private static SweepSetup sweepSetup(Args args) throws UsageException {
        int n = (int) args.getLong(BACKENDS.name(), 2, BackendList.MAX_BACKENDS, 0);
        if (!args.has(POINTS.name())) {
            throw new UsageException("--backends needs --points K1..K2");
        }
        int perDecade = (int) args.getLong(STEPS.name(), 1, 100, DEFAULT_STEPS_PER_DECADE);
        List<Integer> ks = pointMultiples(args.get(POINTS.name()), perDecade);
        int seeds = (int) args.getLong(SEEDS.name(), 1, 1000, DEFAULT_SEEDS);
        try {
            RingFamily family = RingFamily.forName(args.has(ALGORITHM.name()) ? args.get(ALGORITHM.name()) : "v2");
            return new SweepSetup(n, ks, seeds, family, Runtime.getRuntime().availableProcessors());
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage() + " (one algorithm with --backends)");
        }
    }

    /**
     * Runs the sweep and prints it: the table's rows go to stdout and the CSV file as each is done (a long sweep
     * can be watched), the departure summary and the chart once all are.
     */
    private static void sweep(SweepSetup setup, String svgName, String csvName, PrintStream out, Consumer<String> progress)
            throws UsageException, FailedException {
        Sweep sweep = new Sweep(setup.n(), setup.ks(), setup.seeds(), setup.family(), 32);
        long largest = sweep.largestRing();
        if (largest > RingFileDescriptor.MAX_POINTS_PER_RING) {
            throw new UsageException("N × k = " + setup.n() + " × " + setup.ks().getLast() + " = " + largest + " points, more than a ring holds ("
                    + RingFileDescriptor.MAX_POINTS_PER_RING + ")");
        }
        checkHeap(largest, setup.n(), setup.ks().getLast(), setup.threads());
        Path svg = svgName != null ? writableTarget(svgName) : null;
        SweepReport report;
        try (CsvOut csv = CsvOut.open(csvName, Sweep.Row.CSV_HEADER)) {
            textHeader(setup, out);
            report = simulate(setup, sweep, largest, progress, row -> {
                textRow(row, out);
                out.flush();
                csv.row(row.csv());
            });
        }
        textSummary(report, out);
        if (svg != null) {
            write(svg, svg(report));
            out.println("svg: " + svg);
        }
        if (csvName != null) {
            out.println("csv: " + csvName);
        }
    }

    /** Runs {@code sweep} (its largest ring {@code largest} points), handing each row to {@code done} as it is finished. */
    private static SweepReport simulate(SweepSetup setup, Sweep sweep, long largest, Consumer<String> progress, Consumer<Sweep.Row> done)
            throws FailedException {
        List<Sweep.Row> rows = new ArrayList<>();
        long start = System.nanoTime();
        RingSimulator simulator = new RingSimulator(setup.threads());
        try {
            sweep.run(simulator, progress, row -> {
                rows.add(row);
                done.accept(row);
            });
        } catch (OutOfMemoryError e) {
            throw new FailedException("out of heap memory during the sweep (largest ring " + largest + " points); "
                    + "give the JVM more with RINGSTORE_JAVA_OPTS=-Xmx" + suggestedHeapGb(largest, setup.threads()) + "g");
        }
        return new SweepReport(setup, rows, (System.nanoTime() - start) / 1e9);
    }

    private static void textHeader(SweepSetup s, PrintStream out) {
        List<Integer> ks = s.ks();
        out.printf(Locale.ROOT, "analyze: %d backends, k = %s (%s), %s per k, %s points (CRC-32, 32-bit hashes), %s%n",
                s.n(), ks.size() == 1 ? ks.getFirst().toString() : ks.getFirst() + ".." + ks.getLast(), count(ks.size(), "value", "values"),
                count(s.seeds(), "seed", "seeds"), s.family().name(), count(s.threads(), "thread", "threads"));
        out.println("predicted: formula sqrt((N-1)/(N*k+1)); pred_32bit: 32-bit model (points on equal hashes dropped in tie order)");
        out.println("CV in %; range: smallest..largest ring CV over the seeds; z: (simulated - predicted) in standard errors of the seeds");
        out.printf("%8s %11s %9s %10s %9s %17s %9s %7s %8s %8s %11s %11s %8s%n", "k", "points", "predicted", "pred_32bit", "simulated",
                "range", "deviation", "z", "max/mean", "min/mean", "collisions", "birthday", "seconds");
    }

    private static void textRow(Sweep.Row row, PrintStream out) {
        out.printf(Locale.ROOT, "%8d %11d %9.4f %10.4f %9.4f %8.4f..%-7.4f %+8.2f%% %7.1f %8.4f %8.4f %11.1f %11.1f %8.2f%n",
                row.k(), row.points(), 100 * row.predictedCv(), 100 * row.predictedCv32(), 100 * row.simulatedCv(),
                100 * row.minCv(), 100 * row.maxCv(), 100 * row.deviation(), row.z(), row.maxShare(), row.minShare(),
                row.collisions(), row.birthdayEstimate(), row.seconds());
    }

    private static void textSummary(SweepReport report, PrintStream out) {
        out.println();
        for (String line : Sweep.departure(report.rows())) {
            out.println("departure: " + line);
        }
        out.printf(Locale.ROOT, "wall_time_s: %.1f%n", report.seconds());
    }

    private static String svg(SweepReport report) {
        SweepSetup s = report.setup();
        String subtitle = String.format(Locale.ROOT, "N = %,d backends with k points each, %d random %s per k, %s CRC-32 points, 32-bit hashes",
                s.n(), s.seeds(), s.seeds() == 1 ? "fleet" : "fleets", s.family().name());
        return CvChart.render(report.rows(), CollisionModel.LINE_32, subtitle);
    }

    /** {@code K1..K2} (log steps), {@code K}, or {@code K1,K2,...}. */
    static List<Integer> pointMultiples(String spec, int perDecade) throws UsageException {
        String bad = "--points must be K1..K2, K or K1,K2,... with whole numbers from 1: --points=" + spec;
        try {
            int range = spec.indexOf("..");
            if (range >= 0) {
                int from = Integer.parseInt(spec.substring(0, range));
                int to = Integer.parseInt(spec.substring(range + 2));
                if (from < 1 || to < from) {
                    throw new UsageException("--points K1..K2 needs 1 <= K1 <= K2: --points=" + spec);
                }
                return Sweep.logSteps(from, to, perDecade);
            }
            TreeSet<Integer> ks = new TreeSet<>();
            for (String s : spec.split(",", -1)) {
                int k = Integer.parseInt(s.strip());
                if (k < 1) {
                    throw new UsageException(bad);
                }
                ks.add(k);
            }
            return List.copyOf(ks);
        } catch (NumberFormatException e) {
            throw new UsageException(bad);
        }
    }

    /** Fails before the sweep when the largest ring's point array cannot fit in the heap. */
    private static void checkHeap(long points, int n, int k, int threads) throws FailedException {
        Runtime rt = Runtime.getRuntime();
        long used = rt.totalMemory() - rt.freeMemory();
        long need = RingSimulator.heapBytes(points, threads);
        if (need > rt.maxMemory() - used) {
            throw new FailedException(String.format(Locale.ROOT, "a ring of N × k = %d × %d = %d points needs about %.1f GiB of heap, "
                    + "this JVM has %.1f GiB (max heap %.1f GiB); run with RINGSTORE_JAVA_OPTS=-Xmx%dg", n, k, points, need / GIB,
                    (rt.maxMemory() - used) / GIB, rt.maxMemory() / GIB, suggestedHeapGb(points, threads)));
        }
    }

    private static long suggestedHeapGb(long points, int threads) {
        return Math.max(4, (long) Math.ceil(RingSimulator.heapBytes(points, threads) / GIB) + 1);
    }

    // ---- BACKENDS_FILE ----

    /** One ring's numbers; rings sharing a segment share them. */
    private record RingLine(FleetRing ring, ShareStats measured, CollisionModel.Result model) {
    }

    /**
     * One ring as analyze shows it.
     *
     * @param members how many backends its features select
     * @param line    its numbers, or {@code null} for a ring without points or without backends
     */
    private record RingReport(Ring ring, int members, RingLine line) {
        /** The points generated before equal hashes were dropped. */
        long generated() {
            return line.ring().points();
        }

        long dropped() {
            return generated() - ring.pointCount();
        }

        long bytes() {
            return (long) ring.pointCount() * RingFileDescriptor.POINT_LENGTH;
        }

        double birthday() {
            return CollisionModel.birthdayEstimate(generated());
        }
    }

    /** What analyze shows for a backends file: the list, what building it did, and the open file's rings. */
    private record FileReport(BackendList list, BuildResult built, RingStore store, List<RingReport> rings) {
    }

    private static void file(List<RingVersion> versions, Views views, String source, String csvName, PrintStream out, Consumer<String> progress)
            throws FailedException {
        BackendList list;
        try {
            list = BackendList.parse(Path.of(source));
        } catch (BackendsFileException e) {
            throw new FailedException(e.getMessage());
        }
        Path dir;
        try {
            dir = Files.createTempDirectory("ringstore-analyze-");
        } catch (IOException e) {
            throw new FailedException("cannot create a temporary directory for the ring file: " + e.getMessage());
        }
        try (CsvOut csv = CsvOut.open(csvName, FILE_CSV_HEADER)) {
            Path ringFile = dir.resolve("analyze.ring");
            RingBuilder builder = RingBuilder.of(list).views(views).generation(1).progress(progress);
            versions.forEach(builder::version);
            BuildResult built = builder.build(ringFile);
            try (RingStore store = RingStore.open(ringFile)) {
                FileReport report = new FileReport(list, built, store, rings(store));
                text(report, out);
                csv(report, csv);
            }
        } catch (BackendsFileException | RingFileException e) {
            throw new FailedException(e.getMessage());
        } catch (IOException e) {
            throw new FailedException("cannot build the rings in " + dir + ": " + e.getMessage());
        } finally {
            deleteTree(dir);
        }
        if (csvName != null) {
            out.println("csv: " + csvName);
        }
    }

    private static List<RingReport> rings(RingStore store) {
        Map<Long, RingLine> bySegment = new HashMap<>();
        List<RingReport> rings = new ArrayList<>();
        for (Ring r : store.rings()) {
            List<Backend> members = FleetRing.members(store.backends(), r.features());
            if (r.isEmpty() || members.isEmpty()) {
                rings.add(new RingReport(r, 0, null));
                continue;
            }
            java.util.function.Function<Long, RingLine> measure = o -> {
                FleetRing fr = FleetRing.of(members, r.version());
                return new RingLine(fr, fr.measured(r.lineShares()), fr.model());
            };
            // A view selects its own points from the segment it reads: measured on its own.
            RingLine line = store.layout().storage(r) == RingFileLayout.Storage.VIEW ? measure.apply(-1L)
                    : bySegment.computeIfAbsent(segmentKey(r), measure);
            rings.add(new RingReport(r, members.size(), line));
        }
        return rings;
    }

    /** The only place analyze asks a ring where its segment is: rings (not views) with equal keys share their points. */
    private static long segmentKey(Ring r) {
        return r.store().layout().segmentOf(r).offset();
    }

    private static void text(FileReport report, PrintStream out) {
        BackendList list = report.list();
        RingStore store = report.store();
        out.printf(Locale.ROOT, "file: %s: %s, features: %s, versions: %s%n", list.source(), count(list.size(), "backend", "backends"),
                list.features().isEmpty() ? "(none)" : String.join(", ", list.features()),
                String.join(", ", store.versions().stream().map(RingVersion::toString).toList()));
        out.printf(Locale.ROOT, "ring_file_bytes: %d (%s, %s: rings with the same backends share one)%n",
                store.fileSize(), count(store.rings().size(), "ring", "rings"), count(store.segmentCount(), "segment", "segments"));
        out.printf(Locale.ROOT, "points: %d (%d dropped: equal hashes from two backends)%n", report.built().points(), report.built().collisions());
        out.println("predicted: formula for these weights; pred_32bit: with colliding points dropped in tie order; CV in %");
        out.printf("%-26s %8s %11s %8s %9s %12s %9s %10s %9s %8s %8s%n", "ring", "backends", "points", "dropped", "birthday",
                "bytes", "predicted", "pred_32bit", "measured", "max/exp", "min/exp");
        for (RingReport rr : report.rings()) {
            RingLine line = rr.line();
            if (line == null) {
                out.printf("%-26s %8d %11d %8s%n", rr.ring(), 0, 0, "(no backend)");
                continue;
            }
            out.printf(Locale.ROOT, "%-26s %8d %11d %8d %9.2f %12d %9.4f %10.4f %9.4f %8.4f %8.4f%n", rr.ring(), rr.members(),
                    rr.ring().pointCount(), rr.dropped(), rr.birthday(), rr.bytes(), 100 * line.ring().predictedCv(), 100 * line.model().cv(),
                    100 * line.measured().cv(), line.measured().maxRatio(), line.measured().minRatio());
        }
    }

    private static void csv(FileReport report, CsvOut csv) {
        for (RingReport rr : report.rings()) {
            Ring r = rr.ring();
            RingLine line = rr.line();
            if (line == null) {
                csv.row(String.format(Locale.ROOT, "%s,%s,0,0,0,0,0,,,,,", r.version(), String.join("+", r.features())));
                continue;
            }
            csv.row(String.format(Locale.ROOT, "%s,%s,%d,%d,%d,%.4f,%d,%.6g,%.6g,%.6g,%.6g,%.6g", r.version(), String.join("+", r.features()),
                    rr.members(), r.pointCount(), rr.dropped(), rr.birthday(), rr.bytes(), line.ring().predictedCv(), line.model().cv(),
                    line.measured().cv(), line.measured().maxRatio(), line.measured().minRatio()));
        }
    }

    // ---- output files ----

    private static void write(Path p, String text) throws FailedException {
        try {
            Files.writeString(p, text, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new FailedException(p + ": cannot write: " + IoErrors.describe(e));
        }
    }

    private static void deleteTree(Path dir) {
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.toList()) {
                Files.deleteIfExists(f);
            }
            Files.deleteIfExists(dir);
        } catch (IOException e) {
            // a leftover temporary directory is harmless; the result is already printed
        }
    }

    /** A CSV file written row by row (flushed, so a long sweep can be watched), or nothing when no file was asked for. */
    private static final class CsvOut implements AutoCloseable {
        private final BufferedWriter writer;
        private final String name;

        private CsvOut(BufferedWriter writer, String name) {
            this.writer = writer;
            this.name = name;
        }

        static CsvOut open(String name, String header) throws FailedException {
            if (name == null) {
                return new CsvOut(null, null);
            }
            Path p = writableTarget(name);
            try {
                CsvOut c = new CsvOut(Files.newBufferedWriter(p, StandardCharsets.UTF_8), name);
                c.row(header);
                return c;
            } catch (IOException e) {
                throw new FailedException(name + ": cannot write: " + IoErrors.describe(e));
            }
        }

        void row(String line) {
            if (writer == null) {
                return;
            }
            try {
                writer.write(line);
                writer.newLine();
                writer.flush();
            } catch (IOException e) {
                throw new UncheckedIOException(new IOException(name + ": " + e.getMessage(), e));
            }
        }

        @Override
        public void close() throws FailedException {
            if (writer != null) {
                try {
                    writer.close();
                } catch (IOException e) {
                    throw new FailedException(name + ": cannot write: " + IoErrors.describe(e));
                }
            }
        }
    }
}
