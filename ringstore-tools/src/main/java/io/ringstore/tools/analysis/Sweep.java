package io.ringstore.tools.analysis;

import io.ringstore.family.RingFamily;
import io.ringstore.internal.ServerAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TreeSet;
import java.util.function.Consumer;

/**
 * The study: for each point multiple k, rings of N random backends with k points each, one per seed,
 * simulated one at a time; each k's rings reduce to one {@link Row} before the next k starts. Seed s
 * uses the same N addresses at every k, so the curve is not noisier than the rings themselves.
 */
public final class Sweep {
    /** |z| above this: the simulation departs from a prediction (more than chance over the seeds would do). */
    public static final double DEPARTURE_Z = 3;

    private final int backends;
    private final List<Integer> ks;
    private final int seeds;
    private final RingFamily family;
    private final int hashBits;

    public Sweep(int backends, List<Integer> ks, int seeds, RingFamily family, int hashBits) {
        if (backends < 2 || backends > 65_535) {
            throw new IllegalArgumentException("backends must be from 2 to 65535: backends=" + backends);
        }
        if (ks.isEmpty() || seeds < 1) {
            throw new IllegalArgumentException("need at least one k and one seed: ks=" + ks + " seeds=" + seeds);
        }
        this.backends = backends;
        this.ks = List.copyOf(ks);
        this.seeds = seeds;
        this.family = family;
        this.hashBits = hashBits;
    }

    /**
     * One k of the sweep.
     *
     * @param simulatedCv        sqrt of the mean over the seeds of each ring's CV² (pooled)
     * @param minCv              the smallest ring CV among the seeds
     * @param maxCv              the largest
     * @param maxShare           the largest share over the mean share, over all rings of this k
     * @param minShare           the smallest
     * @param collisions         points dropped by dedup, mean over the seeds
     * @param birthdayEstimate   n²/(2·line), n = N·k: n²/2³³ on the 32-bit line
     * @param expectedCollisions points the collision model expects to be dropped
     * @param seconds            wall time of this k's rings
     */
    public record Row(
            int k,
            int backends,
            int seeds,
            long points,
            double predictedCv,
            double predictedCv32,
            double simulatedCv,
            double minCv,
            double maxCv,
            double maxShare,
            double minShare,
            double collisions,
            double birthdayEstimate,
            double expectedCollisions,
            double seconds) {
        /** CSV header; {@link #csv()} writes the values in this order. */
        public static final String CSV_HEADER = "k,backends,seeds,points,predicted_cv,predicted_cv_32bit,simulated_cv,"
                + "simulated_cv_min,simulated_cv_max,deviation,z,z_32bit,max_share_over_mean,min_share_over_mean,"
                + "collisions,birthday_estimate,expected_collisions,seconds";

        /** simulated / predicted − 1. */
        public double deviation() {
            return simulatedCv / predictedCv - 1;
        }

        /**
         * Standard scores of the simulated CV² against the formula's and the 32-bit model's (see {@link #z(double)}).
         */
        public double z() {
            return z(predictedCv);
        }

        public double z32() {
            return z(predictedCv32);
        }

        /**
         * (simulated CV² − predicted CV²) over the standard error the pooled CV² would have if the
         * prediction held: shares near Gamma(k)/K have Var((s/e − 1)²) = CV⁴ (2 + 6/k), averaged over
         * N backends and the seeds.
         */
        double z(double predicted) {
            double p2 = predicted * predicted;
            return (simulatedCv * simulatedCv - p2) / (p2 * Math.sqrt((2 + 6.0 / k) / ((double) backends * seeds)));
        }

        public String csv() {
            return String.format(
                    Locale.ROOT,
                    "%d,%d,%d,%d,%.6g,%.6g,%.6g,%.6g,%.6g,%.5f,%.2f,%.2f,%.6g,%.6g,%.4f,%.4f,%.4f,%.3f",
                    k,
                    backends,
                    seeds,
                    points,
                    predictedCv,
                    predictedCv32,
                    simulatedCv,
                    minCv,
                    maxCv,
                    deviation(),
                    z(),
                    z32(),
                    maxShare,
                    minShare,
                    collisions,
                    birthdayEstimate(),
                    expectedCollisions,
                    seconds);
        }
    }

    /**
     * Point multiples from {@code from} to {@code to}, {@code perDecade} per factor of ten, rounded to
     * two significant digits (10, 18, 32, 56, 100, …); both ends included.
     */
    public static List<Integer> logSteps(int from, int to, int perDecade) {
        if (from < 1 || to < from || perDecade < 1) {
            throw new IllegalArgumentException(
                    "need 1 <= from <= to and perDecade >= 1: from=" + from + " to=" + to + " perDecade=" + perDecade);
        }
        TreeSet<Integer> ks = new TreeSet<>();
        ks.add(from);
        double steps = Math.log10((double) to / from) * perDecade;
        for (int i = 1; i < Math.ceil(steps - 1e-9); i++) {
            double k = from * Math.pow(10, (double) i / perDecade);
            double unit = Math.pow(10, Math.max(0, Math.floor(Math.log10(k)) - 1));
            ks.add((int) Math.max(from, Math.min(to, Math.round(k / unit) * unit)));
        }
        ks.add(to);
        return List.copyOf(ks);
    }

    public int rings() {
        return ks.size() * seeds;
    }

    /** The largest ring of the sweep, in points. */
    public long largestRing() {
        return (long) backends * ks.stream().mapToInt(Integer::intValue).max().orElseThrow();
    }

    /** Runs the sweep, handing each row to {@code rows} as soon as its rings are done. */
    public void run(RingSimulator simulator, Consumer<String> progress, Consumer<Row> rows) {
        List<List<ServerAddress>> fleets = new ArrayList<>();
        for (int s = 1; s <= seeds; s++) {
            fleets.add(SimulatedRing.randomAddresses(backends, s));
        }
        double line = Math.pow(2, hashBits);
        int ring = 0;
        for (int k : ks) {
            long start = System.nanoTime();
            double sumCv2 = 0;
            double minCv = Double.POSITIVE_INFINITY;
            double maxCv = 0;
            double maxShare = 0;
            double minShare = Double.POSITIVE_INFINITY;
            long dropped = 0;
            CollisionModel.Result model = null;
            for (int s = 0; s < seeds; s++) {
                SimulatedRing r = SimulatedRing.equal(fleets.get(s), family, k);
                if (model == null) {
                    model = CollisionModel.ring(r.pointsInTieOrder(), line);
                }
                ring++;
                String label = String.format(Locale.ROOT, "ring %d/%d (k=%d, seed %d)", ring, rings(), k, s + 1);
                RingSimulator.Measurement m = simulator.simulate(r, hashBits, label, progress);
                ShareStats stats = ShareStats.of(m.owned(), r.pointCounts());
                sumCv2 += stats.cv() * stats.cv();
                minCv = Math.min(minCv, stats.cv());
                maxCv = Math.max(maxCv, stats.cv());
                maxShare = Math.max(maxShare, stats.maxRatio());
                minShare = Math.min(minShare, stats.minRatio());
                dropped += m.dropped();
            }
            rows.accept(new Row(
                    k,
                    backends,
                    seeds,
                    (long) backends * k,
                    LoadFormula.cv(backends, k),
                    model.cv(),
                    Math.sqrt(sumCv2 / seeds),
                    minCv,
                    maxCv,
                    maxShare,
                    minShare,
                    (double) dropped / seeds,
                    CollisionModel.birthdayEstimate((long) backends * k, line),
                    model.expectedCollisions(),
                    (System.nanoTime() - start) / 1e9));
        }
    }

    /**
     * Where and by how much the simulation departs from the formula, in a few sentences: the range of k
     * where it agrees within {@link #DEPARTURE_Z} standard errors, the first k from which it stays
     * outside, the size of the departure at the largest k, how the 32-bit model does, and the k with
     * the lowest simulated CV.
     */
    public static List<String> departure(List<Row> rows) {
        List<String> lines = new ArrayList<>();
        int firstOutside = rows.size();
        while (firstOutside > 0 && Math.abs(rows.get(firstOutside - 1).z()) > DEPARTURE_Z) {
            firstOutside--;
        }
        double agreeing = 0;
        int agreeCount = 0;
        for (int i = 0; i < firstOutside; i++) {
            Row r = rows.get(i);
            if (Math.abs(r.z()) <= DEPARTURE_Z) {
                agreeCount++;
                agreeing = Math.max(agreeing, Math.abs(r.deviation()));
            }
        }
        Row last = rows.getLast();
        if (firstOutside == rows.size()) {
            lines.add(String.format(
                    Locale.ROOT,
                    "the simulation agrees with the formula at the largest k: %d of %d k within %.0f standard errors, "
                            + "largest deviation %.1f %%",
                    agreeCount,
                    rows.size(),
                    DEPARTURE_Z,
                    100 * agreeing));
        } else {
            Row first = rows.get(firstOutside);
            lines.add(String.format(
                    Locale.ROOT,
                    "the simulation departs from the formula from k = %d on (more than %.0f standard errors at every "
                            + "larger k): at k = %d %.2f %% simulated vs %.2f %% predicted (%+.1f %%, z = %.1f)",
                    first.k(),
                    DEPARTURE_Z,
                    first.k(),
                    100 * first.simulatedCv(),
                    100 * first.predictedCv(),
                    100 * first.deviation(),
                    first.z()));
            lines.add(String.format(
                    Locale.ROOT,
                    "at k = %d: %.2f %% simulated vs %.2f %% predicted (%+.0f %%), %.0f colliding points per ring "
                            + "(birthday estimate %.0f)",
                    last.k(),
                    100 * last.simulatedCv(),
                    100 * last.predictedCv(),
                    100 * last.deviation(),
                    last.collisions(),
                    last.birthdayEstimate()));
            lines.add(String.format(
                    Locale.ROOT,
                    "below k = %d: %d of %d k agree within %.0f standard errors, largest deviation %.1f %%",
                    first.k(),
                    agreeCount,
                    firstOutside,
                    DEPARTURE_Z,
                    100 * agreeing));
        }
        long modelMisses =
                rows.stream().filter(r -> Math.abs(r.z32()) > DEPARTURE_Z).count();
        double modelWorst = rows.stream()
                .mapToDouble(r -> Math.abs(r.simulatedCv() / r.predictedCv32() - 1))
                .max()
                .orElse(0);
        lines.add(String.format(
                Locale.ROOT,
                "the 32-bit model (predicted_cv_32bit: tie-order bias, dropped points, discrete line) is within "
                        + "%.0f standard errors at %d of %d k, largest deviation %.1f %%",
                DEPARTURE_Z,
                rows.size() - modelMisses,
                rows.size(),
                100 * modelWorst));
        Row best = rows.stream()
                .min((x, y) -> Double.compare(x.simulatedCv(), y.simulatedCv()))
                .orElseThrow();
        if (best != last) {
            lines.add(String.format(
                    Locale.ROOT,
                    "lowest simulated CV: %.2f %% at k = %d; more points than that make the balance worse",
                    100 * best.simulatedCv(),
                    best.k()));
        }
        return lines;
    }
}
