package io.ringstore.tools;

import static io.ringstore.tools.Command.count;

import io.ringstore.builder.BackendList;
import io.ringstore.family.RingFamily;
import io.ringstore.internal.format.RingFileDescriptor;
import io.ringstore.tools.Command.FailedException;
import io.ringstore.tools.Command.UsageException;
import io.ringstore.tools.analysis.CollisionModel;
import io.ringstore.tools.analysis.CvChart;
import io.ringstore.tools.analysis.RingSimulator;
import io.ringstore.tools.analysis.Sweep;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TreeSet;
import java.util.function.Consumer;

/**
 * {@code ringstore analyze --backends N --points K1..K2}: the load formula against rings of N random
 * backends with k points each, for every k in the range, built as the ring builder builds them; the
 * rows printed as they are done, then where formula and simulation part.
 */
final class AnalyzeSweepCommand implements AnalyzeCommand.Mode {
    static final int DEFAULT_SEEDS = 3;
    static final int DEFAULT_STEPS_PER_DECADE = 4;
    private static final double GIB = 1L << 30;

    static final Option BACKENDS =
            Option.valued("--backends", "N", "simulate rings of N backends (random IPv4 addresses), 2 to 65535");
    static final Option POINTS =
            Option.valued("--points", "K1..K2", "point multiples k from K1 to K2 in log steps; also K, or K1,K2,K3");
    static final Option STEPS = Option.valued(
            "--steps-per-decade", "D", "log steps per factor of 10 for K1..K2 (default 4: 10, 18, 32, 56, 100, ...)");
    static final Option SEEDS =
            Option.valued("--seeds", "S", "rings per k, each with its own random addresses (default 3)");
    static final Option SVG =
            Option.valued("--svg", "FILE", "write the chart: CV against k (log-log), formula, simulation, collisions");

    @Override
    public String form() {
        return "{--backends} {--points} [{--steps-per-decade}] [{--seeds}] [{--algorithm}] [{--svg}] [{--csv}] [{--quiet}]";
    }

    @Override
    public void run(Args args, PrintStream out, Consumer<String> progress) throws UsageException, FailedException {
        if (!args.positional.isEmpty()) {
            throw new UsageException("give --backends N or a BACKENDS_FILE, not both");
        }
        if (args.has(AnalyzeCommand.ALGORITHM.pointMultiple.name())) {
            throw new UsageException(
                    AlgorithmOption.POINT_MULTIPLE + " is for a BACKENDS_FILE; with --backends give --points");
        }
        for (Option o : List.of(InputFormat.FROM, InputFormat.POOL, InputFormat.BACKEND)) {
            if (args.has(o.name())) {
                throw new UsageException(o.name() + " says what a BACKENDS_FILE is; a --backends sweep reads none");
            }
        }
        if (args.has(BuildCommand.VIEWS.name())) {
            throw new UsageException(
                    "--views is for a BACKENDS_FILE (how its ring file stores feature rings); a --backends sweep builds no file");
        }
        sweep(sweepSetup(args), args.file(SVG.name()), args.file(AnalyzeCommand.CSV.name()), out, progress);
    }

    /** What a sweep simulates: N backends, the point multiples, the rings per k, the algorithm and the threads. */
    private record SweepSetup(int n, List<Integer> ks, int seeds, RingFamily family, int threads) {}

    /** A finished sweep: its rows in k order and its wall time. */
    private record SweepReport(SweepSetup setup, List<Sweep.Row> rows, double seconds) {}

    private static SweepSetup sweepSetup(Args args) throws UsageException {
        int n = (int) args.getLong(BACKENDS.name(), 2, BackendList.MAX_BACKENDS, 0);
        if (!args.has(POINTS.name())) {
            throw new UsageException("--backends needs --points K1..K2");
        }
        int perDecade = (int) args.getLong(STEPS.name(), 1, 100, DEFAULT_STEPS_PER_DECADE);
        List<Integer> ks = pointMultiples(args.get(POINTS.name()), perDecade);
        int seeds = (int) args.getLong(SEEDS.name(), 1, 1000, DEFAULT_SEEDS);
        RingFamily family = AnalyzeCommand.ALGORITHM.forSweep(args);
        return new SweepSetup(n, ks, seeds, family, Runtime.getRuntime().availableProcessors());
    }

    /**
     * Runs the sweep and prints it: the table's rows go to stdout and the CSV file as each is done (a long sweep
     * can be watched), the departure summary and the chart once all are.
     */
    private static void sweep(SweepSetup setup, Path svgName, Path csvName, PrintStream out, Consumer<String> progress)
            throws UsageException, FailedException {
        Sweep sweep = new Sweep(setup.n(), setup.ks(), setup.seeds(), setup.family(), 32);
        long largest = sweep.largestRing();
        if (largest > RingFileDescriptor.MAX_POINTS_PER_RING) {
            throw new UsageException("N × k = " + setup.n() + " × " + setup.ks().getLast() + " = " + largest
                    + " points, more than a ring holds (" + RingFileDescriptor.MAX_POINTS_PER_RING + ")");
        }
        checkHeap(largest, setup.n(), setup.ks().getLast(), setup.threads());
        Path svg = svgName != null ? OutputFiles.writableTarget(svgName) : null;
        SweepReport report;
        try (OutputFiles.Csv csv = OutputFiles.Csv.open(csvName, Sweep.Row.CSV_HEADER)) {
            textHeader(setup, out);
            report = simulate(setup, sweep, largest, progress, row -> {
                textRow(row, out);
                out.flush();
                csv.row(row.csv());
            });
        }
        textSummary(report, out);
        if (svg != null) {
            OutputFiles.write(svg, svg(report));
            out.println("svg: " + svg);
        }
        if (csvName != null) {
            out.println("csv: " + csvName);
        }
    }

    /**
     * Runs {@code sweep} (its largest ring {@code largest} points), handing each row to {@code done} as it is finished.
     */
    private static SweepReport simulate(
            SweepSetup setup, Sweep sweep, long largest, Consumer<String> progress, Consumer<Sweep.Row> done)
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
                    + "give the JVM more with RINGSTORE_JAVA_OPTS=-Xmx" + suggestedHeapGb(largest, setup.threads())
                    + "g");
        }
        return new SweepReport(setup, rows, (System.nanoTime() - start) / 1e9);
    }

    private static void textHeader(SweepSetup s, PrintStream out) {
        List<Integer> ks = s.ks();
        out.printf(
                Locale.ROOT,
                "analyze: %d backends, k = %s (%s), %s per k, %s points (CRC-32, 32-bit hashes), %s%n",
                s.n(),
                ks.size() == 1 ? ks.getFirst().toString() : ks.getFirst() + ".." + ks.getLast(),
                count(ks.size(), "value", "values"),
                count(s.seeds(), "seed", "seeds"),
                s.family(),
                count(s.threads(), "thread", "threads"));
        out.println(
                "predicted: formula sqrt((N-1)/(N*k+1)); pred_32bit: 32-bit model (points on equal hashes dropped in tie order)");
        out.println(
                "CV in %; range: smallest..largest ring CV over the seeds; z: (simulated - predicted) in standard errors of the seeds");
        out.printf(
                "%8s %11s %9s %10s %9s %17s %9s %7s %8s %8s %11s %11s %8s%n",
                "k",
                "points",
                "predicted",
                "pred_32bit",
                "simulated",
                "range",
                "deviation",
                "z",
                "max/mean",
                "min/mean",
                "collisions",
                "birthday",
                "seconds");
    }

    private static void textRow(Sweep.Row row, PrintStream out) {
        out.printf(
                Locale.ROOT,
                "%8d %11d %9.4f %10.4f %9.4f %8.4f..%-7.4f %+8.2f%% %7.1f %8.4f %8.4f %11.1f %11.1f %8.2f%n",
                row.k(),
                row.points(),
                100 * row.predictedCv(),
                100 * row.predictedCv32(),
                100 * row.simulatedCv(),
                100 * row.minCv(),
                100 * row.maxCv(),
                100 * row.deviation(),
                row.z(),
                row.maxShare(),
                row.minShare(),
                row.collisions(),
                row.birthdayEstimate(),
                row.seconds());
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
        String subtitle = String.format(
                Locale.ROOT,
                "N = %,d backends with k points each, %d random %s per k, %s CRC-32 points, 32-bit hashes",
                s.n(),
                s.seeds(),
                s.seeds() == 1 ? "fleet" : "fleets",
                s.family());
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
            throw new FailedException(String.format(
                    Locale.ROOT,
                    "a ring of N × k = %d × %d = %d points needs about %.1f GiB of heap, "
                            + "this JVM has %.1f GiB (max heap %.1f GiB); run with RINGSTORE_JAVA_OPTS=-Xmx%dg",
                    n,
                    k,
                    points,
                    need / GIB,
                    (rt.maxMemory() - used) / GIB,
                    rt.maxMemory() / GIB,
                    suggestedHeapGb(points, threads)));
        }
    }

    private static long suggestedHeapGb(long points, int threads) {
        return Math.max(4, (long) Math.ceil(RingSimulator.heapBytes(points, threads) / GIB) + 1);
    }
}
