package io.ringstore.tools;

import io.ringstore.builder.BackendList;
import io.ringstore.builder.BackendsFileException;
import io.ringstore.family.RingVersion;
import io.ringstore.internal.TextLines;
import io.ringstore.internal.format.RingFileDescriptor;
import io.ringstore.tools.analysis.CollisionModel;
import io.ringstore.tools.analysis.Recommendation;
import io.ringstore.tools.analysis.RingFileEstimate;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * {@code ringstore recommend}: the smallest v2 point multiple whose rings meet a target CV once 32-bit
 * collisions are counted, and its memory against the nginx default of 160.
 */
final class RecommendCommand extends Command {
    private static final int NGINX = RingVersion.V1.pointMultiple();

    @Override
    String name() {
        return "recommend";
    }

    @Override
    String description() {
        return "The smallest point multiple k (v2, points per weight unit) at which every ring's CV of backend load\n"
                + "is at most C, 32-bit point collisions counted (docs/math.md), and what it costs in bytes per ring and\n"
                + "for the whole ring file, against the nginx default of 160. For N equal backends or a backends file\n"
                + "(every feature ring; v2 tie order: smallest socket address).";
    }

    private static final Option BACKENDS = Option.valued("--backends", "N", "one ring of N backends of equal weight");
    private static final Option TARGET =
            Option.valued("--target-cv", "C", "the largest acceptable CV: a fraction (0.02) or a percentage (2%)");
    private static final Option JSON = json("one JSON object; top-level point_multiple is the answer");

    @Override
    List<Option> options() {
        return List.of(BACKENDS, TARGET, JSON);
    }

    @Override
    List<String> forms() {
        return List.of("({--backends} | BACKENDS_FILE) {--target-cv} [{--json}]");
    }

    /** What recommend shows, for N equal backends or for a backends file. */
    private sealed interface Report extends Result permits EqualBackends, FileRings {}

    /** The answer common to both forms: the smallest k meeting the target, and the curve it was read from. */
    private record Answer(int k, double target, Recommendation rec) {
        Json json(Json j) {
            return j.field("point_multiple", k)
                    .field("target_cv", target)
                    .field("predicted_cv", rec.worstCv(k))
                    .field("formula_cv", rec.worstFormulaCv(k));
        }

        void text(PrintStream out, String what) {
            out.println("for: " + what);
            out.printf(Locale.ROOT, "target_cv: %.4f %%%n", 100 * target);
            out.printf(Locale.ROOT, "point_multiple: %d%n", k);
            out.printf(
                    Locale.ROOT,
                    "predicted_cv: %.4f %% (formula alone %.4f %%%s)%n",
                    100 * rec.worstCv(k),
                    100 * rec.worstFormulaCv(k),
                    k > 1 ? String.format(Locale.ROOT, "; at k - 1: %.4f %%", 100 * rec.worstCv(k - 1)) : "");
        }
    }

    /**
     * One ring of {@code n} equal backends at the answer and at the nginx default.
     *
     * @param points      the points expected to survive collisions at k; {@code nginxPoints} the same at 160
     */
    private record EqualBackends(Answer answer, int n, long points, long nginxPoints) implements Report {
        long bytes() {
            return points * RingFileDescriptor.POINT_LENGTH;
        }

        long nginxBytes() {
            return nginxPoints * RingFileDescriptor.POINT_LENGTH;
        }

        @Override
        public void text(PrintStream out) {
            int k = answer.k();
            answer.text(out, n + " backends of equal weight, one ring");
            out.printf(
                    Locale.ROOT,
                    "points_per_ring: %d (%d generated, %.0f expected to collide)%n",
                    points,
                    (long) n * k,
                    (double) n * k - points);
            out.printf(Locale.ROOT, "bytes_per_ring: %d%n", bytes());
            out.printf(
                    Locale.ROOT,
                    "nginx_default: k = %d, cv %.4f %%, %d bytes per ring%n",
                    NGINX,
                    100 * answer.rec().worstCv(NGINX),
                    nginxBytes());
            out.printf(Locale.ROOT, "cost: %.2f × the bytes of the nginx default%n", (double) bytes() / nginxBytes());
        }

        @Override
        public void json(Json object) {
            Json j = answer.json(object)
                    .field("backends", n)
                    .field("points_per_ring", points)
                    .field("bytes_per_ring", bytes());
            j.beginObject("nginx_default")
                    .field("point_multiple", NGINX)
                    .field("predicted_cv", answer.rec().worstCv(NGINX))
                    .field("points_per_ring", nginxPoints)
                    .field("bytes_per_ring", nginxBytes())
                    .end();
            j.field("bytes_ratio", (double) bytes() / nginxBytes());
        }
    }

    /** Every feature ring of a backends file, estimated at the answer and at the nginx default. */
    private record FileRings(
            Answer answer, BackendList list, int distinctSets, RingFileEstimate chosen, RingFileEstimate nginx)
            implements Report {
        @Override
        public void text(PrintStream out) {
            answer.text(
                    out,
                    list.source() + ": " + list.size() + " backends, "
                            + (1 << list.features().size()) + " rings (" + distinctSets
                            + " distinct backend sets), v2");
            out.printf("%-28s %8s %12s %12s %10s %12s%n", "ring", "backends", "points", "bytes", "cv %", "bytes@160");
            for (int i = 0; i < chosen.rings().size(); i++) {
                RingFileEstimate.RingEstimate r = chosen.rings().get(i);
                String name = r.features().isEmpty() ? "(all)" : String.join("+", r.features());
                out.printf(
                        Locale.ROOT,
                        "%-28s %8d %12d %12d %10s %12d%n",
                        name,
                        r.ring().members().size(),
                        r.expectedPoints(),
                        r.bytes(),
                        r.expectedPoints() == 0
                                ? "-"
                                : String.format(
                                        Locale.ROOT,
                                        "%.4f",
                                        100 * r.ring().model().cv()),
                        nginx.rings().get(i).bytes());
            }
            out.printf(
                    Locale.ROOT,
                    "file_bytes: %d (nginx default k = %d: %d; %.2f ×)%n",
                    chosen.fileBytes(),
                    NGINX,
                    nginx.fileBytes(),
                    (double) chosen.fileBytes() / nginx.fileBytes());
            out.printf(
                    Locale.ROOT,
                    "nginx_default: k = %d, worst ring cv %.4f %%%n",
                    NGINX,
                    100 * answer.rec().worstCv(NGINX));
        }

        @Override
        public void json(Json object) {
            Json j = answer.json(object).field("file", list.source()).field("backends", list.size());
            j.beginArray("rings");
            for (RingFileEstimate.RingEstimate r : chosen.rings()) {
                j.begin().beginArray("features");
                r.features().forEach(j::value);
                j.endArray()
                        .field("backends", r.ring().members().size())
                        .field("points", r.expectedPoints())
                        .field("bytes", r.bytes());
                if (r.expectedPoints() > 0) {
                    j.field("predicted_cv", r.ring().model().cv());
                }
                j.end();
            }
            j.endArray().field("file_bytes", chosen.fileBytes());
            j.beginObject("nginx_default")
                    .field("point_multiple", NGINX)
                    .field("predicted_cv", answer.rec().worstCv(NGINX))
                    .field("file_bytes", nginx.fileBytes())
                    .end();
            j.field("bytes_ratio", (double) chosen.fileBytes() / nginx.fileBytes());
        }
    }

    @Override
    int run(Args args, InputStream in, PrintStream out, PrintStream err)
            throws UsageException, FailedException, BackendsFileException {
        boolean equal = args.has(BACKENDS.name());
        if (equal == !args.positional.isEmpty()) {
            throw new UsageException(
                    equal ? "give --backends N or a BACKENDS_FILE, not both" : "give --backends N or a BACKENDS_FILE");
        }
        if (args.positional.size() > 1) {
            throw new UsageException("expected one BACKENDS_FILE, got " + args.positional);
        }
        if (!args.has(TARGET.name())) {
            throw new UsageException("missing --target-cv C");
        }
        double target = targetCv(args.get(TARGET.name()));
        Report report = equal
                ? equalBackends((int) args.getLong(BACKENDS.name(), 1, BackendList.MAX_BACKENDS, 0), target)
                : fileRings(args.file(0), target);
        print(report, args, out);
        return Main.OK;
    }

    private static EqualBackends equalBackends(int n, double target) throws FailedException {
        long[] weights = new long[n];
        Arrays.fill(weights, 1);
        Recommendation rec = new Recommendation(List.of(weights));
        int k = answer(rec, target, n + " backends");
        return new EqualBackends(new Answer(k, target, rec), n, expectedPoints(n, k), expectedPoints(n, NGINX));
    }

    private static FileRings fileRings(Path file, double target) throws FailedException, BackendsFileException {
        BackendList list = BackendList.parse(file);
        RingFileEstimate probe = RingFileEstimate.of(list, RingVersion.v2(1));
        List<long[]> rings = new ArrayList<>();
        for (RingFileEstimate.RingEstimate s : probe.segments()) {
            rings.add(s.ring().pointsInTieOrder()); // at k = 1: the weights
        }
        Recommendation rec = new Recommendation(rings);
        int k = answer(rec, target, list.source());
        RingFileEstimate chosen = RingFileEstimate.of(list, RingVersion.v2(k));
        RingFileEstimate nginx = RingFileEstimate.of(list, RingVersion.v2(NGINX));
        return new FileRings(new Answer(k, target, rec), list, probe.segments().size(), chosen, nginx);
    }

    /** C as a fraction in (0, 1]: {@code 0.02} or {@code 2%}, read by the library's one percentage parser. */
    static double targetCv(String text) throws UsageException {
        double v = TextLines.percent(text, 100) / 100;
        if (!(v > 0 && v <= 1)) {
            throw new UsageException("--target-cv must be a fraction in (0, 1] or a percentage (2%): --target-cv="
                    + TextLines.quote(text));
        }
        return v;
    }

    private static int answer(Recommendation rec, double target, String what) throws FailedException {
        int k = rec.smallest(target);
        if (k < 0) {
            int best = rec.best();
            throw new FailedException(String.format(
                    Locale.ROOT,
                    "no point multiple reaches CV %.4f %% for %s: with 32-bit hashes "
                            + "the lowest is %.4f %% at k = %d (more points collide more)",
                    100 * target,
                    what,
                    100 * rec.worstCv(best),
                    best));
        }
        return k;
    }

    private static long expectedPoints(int n, int k) {
        long[] points = new long[n];
        Arrays.fill(points, k);
        return Math.round(CollisionModel.ring(points).expectedPoints());
    }
}
