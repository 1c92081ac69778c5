package io.ringstore.tools;

import io.ringstore.build.BackendList;
import io.ringstore.build.BackendsFileException;

import io.ringstore.Algorithm;
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
import java.util.Set;

/**
 * {@code ringstore recommend}: the smallest v2 point multiple whose rings meet a target CV once 32-bit
 * collisions are counted, and its memory against the nginx default of 160.
 */
final class RecommendCommand extends Command {
    private static final String BACKENDS = "--backends";
    private static final String TARGET = "--target-cv";
    private static final int NGINX = Algorithm.NGINX_POINT_MULTIPLE;

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

    @Override
    String synopsis() {
        return "(--backends N | BACKENDS_FILE) --target-cv C [--json]";
    }

    @Override
    String options() {
        return """
                  --backends N          one ring of N backends of equal weight
                  --target-cv C         the largest acceptable CV: a fraction (0.02) or a percentage (2%)
                  --json                one JSON object; top-level point_multiple is the answer
                """;
    }

    @Override
    Set<String> valueOptions() {
        return Set.of(BACKENDS, TARGET);
    }

    @Override
    Set<String> flagOptions() {
        return Set.of("--json");
    }

    @Override
    int run(Args args, InputStream in, PrintStream out, PrintStream err) throws UsageException, FailedException {
        if (args.has(BACKENDS) == !args.positional.isEmpty()) {
            throw new UsageException(args.has(BACKENDS) ? "give --backends N or a BACKENDS_FILE, not both" : "give --backends N or a BACKENDS_FILE");
        }
        if (args.positional.size() > 1) {
            throw new UsageException("expected one BACKENDS_FILE, got " + args.positional);
        }
        if (!args.has(TARGET)) {
            throw new UsageException("missing --target-cv C");
        }
        double target = targetCv(args.get(TARGET));
        if (args.has(BACKENDS)) {
            int n = (int) args.getLong(BACKENDS, 1, BackendList.MAX_BACKENDS, 0);
            long[] weights = new long[n];
            Arrays.fill(weights, 1);
            Recommendation rec = new Recommendation(List.of(weights));
            int k = answer(rec, target, n + " backends");
            if (args.has("--json")) {
                Json j = common(new Json().begin(), k, target, rec).field("backends", n)
                        .field("points_per_ring", expectedPoints(n, k)).field("bytes_per_ring", bytes(n, k));
                j.beginObject("nginx_default").field("point_multiple", NGINX).field("predicted_cv", rec.worstCv(NGINX))
                        .field("points_per_ring", expectedPoints(n, NGINX)).field("bytes_per_ring", bytes(n, NGINX)).end();
                out.println(j.field("bytes_ratio", (double) bytes(n, k) / bytes(n, NGINX)).end());
            } else {
                text(out, k, target, rec, n + " backends of equal weight, one ring");
                out.printf(Locale.ROOT, "points_per_ring: %d (%d generated, %.0f expected to collide)%n", expectedPoints(n, k), (long) n * k,
                        (double) n * k - expectedPoints(n, k));
                out.printf(Locale.ROOT, "bytes_per_ring: %d%n", bytes(n, k));
                out.printf(Locale.ROOT, "nginx_default: k = %d, cv %.4f %%, %d bytes per ring%n", NGINX, 100 * rec.worstCv(NGINX), bytes(n, NGINX));
                out.printf(Locale.ROOT, "cost: %.2f × the bytes of the nginx default%n", (double) bytes(n, k) / bytes(n, NGINX));
            }
            return Main.OK;
        }
        BackendList list;
        try {
            list = BackendList.parse(Path.of(args.positional.getFirst()));
        } catch (BackendsFileException e) {
            throw new FailedException(e.getMessage());
        }
        RingFileEstimate probe = RingFileEstimate.of(list, Algorithm.V2, 1);
        List<long[]> rings = new ArrayList<>();
        for (RingFileEstimate.RingEstimate s : probe.segments()) {
            rings.add(s.ring().pointsInTieOrder()); // at k = 1: the weights
        }
        Recommendation rec = new Recommendation(rings);
        int k = answer(rec, target, list.source());
        RingFileEstimate chosen = RingFileEstimate.of(list, Algorithm.V2, k);
        RingFileEstimate nginx = RingFileEstimate.of(list, Algorithm.V2, NGINX);
        if (args.has("--json")) {
            Json j = common(new Json().begin(), k, target, rec).field("file", list.source()).field("backends", list.size());
            j.beginArray("rings");
            for (RingFileEstimate.RingEstimate r : chosen.rings()) {
                j.begin().beginArray("features");
                r.features().forEach(j::value);
                j.endArray().field("backends", r.ring().members().size()).field("points", r.expectedPoints()).field("bytes", r.bytes());
                if (r.expectedPoints() > 0) {
                    j.field("predicted_cv", r.ring().model().cv());
                }
                j.end();
            }
            j.endArray().field("file_bytes", chosen.fileBytes());
            j.beginObject("nginx_default").field("point_multiple", NGINX).field("predicted_cv", rec.worstCv(NGINX))
                    .field("file_bytes", nginx.fileBytes()).end();
            out.println(j.field("bytes_ratio", (double) chosen.fileBytes() / nginx.fileBytes()).end());
        } else {
            text(out, k, target, rec, list.source() + ": " + list.size() + " backends, " + (1 << list.features().size()) + " rings ("
                    + probe.segments().size() + " distinct backend sets), v2");
            out.printf("%-28s %8s %12s %12s %10s %12s%n", "ring", "backends", "points", "bytes", "cv %", "bytes@160");
            for (int i = 0; i < chosen.rings().size(); i++) {
                RingFileEstimate.RingEstimate r = chosen.rings().get(i);
                String name = r.features().isEmpty() ? "(all)" : String.join("+", r.features());
                out.printf(Locale.ROOT, "%-28s %8d %12d %12d %10s %12d%n", name, r.ring().members().size(), r.expectedPoints(), r.bytes(),
                        r.expectedPoints() == 0 ? "-" : String.format(Locale.ROOT, "%.4f", 100 * r.ring().model().cv()), nginx.rings().get(i).bytes());
            }
            out.printf(Locale.ROOT, "file_bytes: %d (nginx default k = %d: %d; %.2f ×)%n", chosen.fileBytes(), NGINX, nginx.fileBytes(),
                    (double) chosen.fileBytes() / nginx.fileBytes());
            out.printf(Locale.ROOT, "nginx_default: k = %d, worst ring cv %.4f %%%n", NGINX, 100 * rec.worstCv(NGINX));
        }
        return Main.OK;
    }

    /** C as a fraction in (0, 1]: {@code 0.02} or {@code 2%}. */
    static double targetCv(String text) throws UsageException {
        String s = text.strip();
        boolean percent = s.endsWith("%");
        try {
            double v = Double.parseDouble(percent ? s.substring(0, s.length() - 1).strip() : s);
            v = percent ? v / 100 : v;
            if (!(v > 0 && v <= 1)) {
                throw new NumberFormatException();
            }
            return v;
        } catch (NumberFormatException e) {
            throw new UsageException("--target-cv must be a fraction in (0, 1] or a percentage (2%): --target-cv=" + text);
        }
    }

    private static int answer(Recommendation rec, double target, String what) throws FailedException {
        int k = rec.smallest(target);
        if (k < 0) {
            int best = rec.best();
            throw new FailedException(String.format(Locale.ROOT, "no point multiple reaches CV %.4f %% for %s: with 32-bit hashes "
                    + "the lowest is %.4f %% at k = %d (more points collide more)", 100 * target, what, 100 * rec.worstCv(best), best));
        }
        return k;
    }

    private static Json common(Json j, int k, double target, Recommendation rec) {
        return j.field("point_multiple", k).field("target_cv", target).field("predicted_cv", rec.worstCv(k))
                .field("formula_cv", rec.worstFormulaCv(k));
    }

    private static void text(PrintStream out, int k, double target, Recommendation rec, String what) {
        out.println("for: " + what);
        out.printf(Locale.ROOT, "target_cv: %.4f %%%n", 100 * target);
        out.printf(Locale.ROOT, "point_multiple: %d%n", k);
        out.printf(Locale.ROOT, "predicted_cv: %.4f %% (formula alone %.4f %%; at k - 1: %.4f %%)%n", 100 * rec.worstCv(k),
                100 * rec.worstFormulaCv(k), k > 1 ? 100 * rec.worstCv(k - 1) : Double.NaN);
    }

    private static long expectedPoints(int n, int k) {
        long[] points = new long[n];
        Arrays.fill(points, k);
        return Math.round(CollisionModel.ring(points).expectedPoints());
    }

    private static long bytes(int n, int k) {
        return expectedPoints(n, k) * RingFileDescriptor.POINT_LENGTH;
    }
}
