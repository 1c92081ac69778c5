package io.ringstore.tools;

import static io.ringstore.tools.Command.count;

import io.ringstore.Backend;
import io.ringstore.Ring;
import io.ringstore.RingFileException;
import io.ringstore.RingFileLayout;
import io.ringstore.RingStore;
import io.ringstore.builder.BackendList;
import io.ringstore.builder.BackendsFileException;
import io.ringstore.builder.BuildResult;
import io.ringstore.builder.RingBuilder;
import io.ringstore.builder.Views;
import io.ringstore.family.RingVersion;
import io.ringstore.internal.format.RingFileDescriptor;
import io.ringstore.tools.Command.FailedException;
import io.ringstore.tools.Command.UsageException;
import io.ringstore.tools.analysis.CollisionModel;
import io.ringstore.tools.analysis.FleetRing;
import io.ringstore.tools.analysis.ShareStats;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * {@code ringstore analyze BACKENDS_FILE}: builds the file's rings in a temporary ring file, as build
 * would, and shows every feature ring's predicted and measured CV and its bytes.
 */
final class AnalyzeFileCommand implements AnalyzeCommand.Mode {
    static final String CSV_HEADER = "version,features,backends,points,dropped,birthday_estimate,bytes,predicted_cv,"
            + "predicted_cv_32bit,measured_cv,max_share_over_expected,min_share_over_expected";

    @Override
    public String form() {
        return "BACKENDS_FILE [{--from} [{--pool} | {--backend}]] [{--algorithm}] [{--point-multiple}] [{--views}] [{--csv}] [{--quiet}]";
    }

    @Override
    public void run(Args args, PrintStream out, Consumer<String> progress)
            throws UsageException, FailedException, BackendsFileException, RingFileException {
        if (args.has(AnalyzeSweepCommand.SVG.name())) {
            throw new UsageException(
                    "--svg draws CV against k over a --backends N sweep; a BACKENDS_FILE has one k per version: "
                            + "compare its rings with --csv FILE, or sweep k with --backends N --points K1..K2");
        }
        for (Option o : List.of(AnalyzeSweepCommand.POINTS, AnalyzeSweepCommand.SEEDS, AnalyzeSweepCommand.STEPS)) {
            if (args.has(o.name())) {
                throw new UsageException(o.name() + " needs --backends N");
            }
        }
        if (args.positional.size() != 1) {
            throw new UsageException(
                    args.positional.isEmpty()
                            ? "give --backends N --points K1..K2, or a BACKENDS_FILE"
                            : "expected one BACKENDS_FILE, got " + args.positional);
        }
        InputFormat format = InputFormat.of(args);
        Views views = BuildCommand.views(args.get(BuildCommand.VIEWS.name()));
        InputFormat.Input input = format.read(args, args.file(0));
        file(input.backends(), input.versions(), views, args.file(AnalyzeCommand.CSV.name()), out, progress);
    }

    /** One ring's numbers; rings sharing a segment share them. */
    private record RingLine(FleetRing ring, ShareStats measured, CollisionModel.Result model) {}

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
    private record FileReport(BackendList list, BuildResult built, RingStore store, List<RingReport> rings) {}

    private static void file(
            BackendList list,
            List<RingVersion> versions,
            Views views,
            Path csvName,
            PrintStream out,
            Consumer<String> progress)
            throws FailedException, BackendsFileException, RingFileException {
        Path dir;
        try {
            dir = Files.createTempDirectory("ringstore-analyze-");
        } catch (IOException e) {
            throw new FailedException("cannot create a temporary directory for the ring file: " + e.getMessage());
        }
        try (OutputFiles.Csv csv = OutputFiles.Csv.open(csvName, CSV_HEADER)) {
            Path ringFile = dir.resolve("analyze.ring");
            RingBuilder builder =
                    RingBuilder.of(list).views(views).generation(1).progress(progress);
            versions.forEach(builder::version);
            BuildResult built = builder.build(ringFile);
            try (RingStore store = RingStore.open(ringFile)) {
                FileReport report = new FileReport(list, built, store, rings(store));
                text(report, out);
                csv(report, csv);
            }
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
            RingLine line = store.layout().storage(r) == RingFileLayout.Storage.VIEW
                    ? measure.apply(-1L)
                    : bySegment.computeIfAbsent(segmentKey(r), measure);
            rings.add(new RingReport(r, line.ring().members().size(), line));
        }
        return rings;
    }

    /**
     * The only place analyze asks a ring where its segment is: rings (not views) with equal keys share their points.
     */
    private static long segmentKey(Ring r) {
        return r.store().layout().segmentOf(r).offset();
    }

    private static void text(FileReport report, PrintStream out) {
        BackendList list = report.list();
        RingStore store = report.store();
        out.printf(
                Locale.ROOT,
                "file: %s: %s, features: %s, versions: %s%n",
                list.source(),
                count(list.size(), "backend", "backends"),
                list.features().isEmpty() ? "(none)" : String.join(", ", list.features()),
                String.join(
                        ", ",
                        store.versions().stream().map(RingVersion::toString).toList()));
        out.printf(
                Locale.ROOT,
                "ring_file_bytes: %d (%s, %s: rings with the same backends share one)%n",
                store.fileSize(),
                count(store.rings().size(), "ring", "rings"),
                count(store.segmentCount(), "segment", "segments"));
        out.printf(
                Locale.ROOT,
                "points: %d (%d dropped: equal hashes from two backends)%n",
                report.built().points(),
                report.built().collisions());
        out.println(
                "predicted: formula for these weights; pred_32bit: with colliding points dropped in tie order; CV in %");
        out.printf(
                "%-26s %8s %11s %8s %9s %12s %9s %10s %9s %8s %8s%n",
                "ring",
                "backends",
                "points",
                "dropped",
                "birthday",
                "bytes",
                "predicted",
                "pred_32bit",
                "measured",
                "max/exp",
                "min/exp");
        for (RingReport rr : report.rings()) {
            RingLine line = rr.line();
            if (line == null) {
                out.printf("%-26s %8d %11d %8s%n", rr.ring(), 0, 0, "(no backend)");
                continue;
            }
            out.printf(
                    Locale.ROOT,
                    "%-26s %8d %11d %8d %9.2f %12d %9.4f %10.4f %9.4f %8.4f %8.4f%n",
                    rr.ring(),
                    rr.members(),
                    rr.ring().pointCount(),
                    rr.dropped(),
                    rr.birthday(),
                    rr.bytes(),
                    100 * line.ring().predictedCv(),
                    100 * line.model().cv(),
                    100 * line.measured().cv(),
                    line.measured().maxRatio(),
                    line.measured().minRatio());
        }
    }

    private static void csv(FileReport report, OutputFiles.Csv csv) {
        for (RingReport rr : report.rings()) {
            Ring r = rr.ring();
            RingLine line = rr.line();
            if (line == null) {
                csv.row(String.format(
                        Locale.ROOT, "%s,%s,0,0,0,0,0,,,,,", r.version(), String.join("+", r.features())));
                continue;
            }
            csv.row(String.format(
                    Locale.ROOT,
                    "%s,%s,%d,%d,%d,%.4f,%d,%.6g,%.6g,%.6g,%.6g,%.6g",
                    r.version(),
                    String.join("+", r.features()),
                    rr.members(),
                    r.pointCount(),
                    rr.dropped(),
                    rr.birthday(),
                    rr.bytes(),
                    line.ring().predictedCv(),
                    line.model().cv(),
                    line.measured().cv(),
                    line.measured().maxRatio(),
                    line.measured().minRatio()));
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
}
