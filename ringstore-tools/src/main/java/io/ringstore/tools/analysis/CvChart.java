package io.ringstore.tools.analysis;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.DoubleFunction;

/**
 * The sweep as a stand-alone SVG (no script, no external fonts): the CV against k on log-log axes
 * with the formula and the 32-bit model as lines and the simulated rings as points with their spread
 * over the seeds, and below it the colliding points per ring against the birthday estimate.
 */
public final class CvChart {
    private static final int WIDTH = 960;
    private static final int LEFT = 100;
    private static final int RIGHT = 920;
    private static final int TOP_Y0 = 80;
    private static final int TOP_Y1 = 520;
    private static final int BOTTOM_Y0 = 610;
    private static final int BOTTOM_Y1 = 830;
    private static final int HEIGHT = 900;
    private static final String FORMULA = "#1f5fbf";
    private static final String MODEL = "#e07b00";
    private static final String SIMULATED = "#111111";
    private static final String COLLISIONS = "#c0282d";
    private static final String BIRTHDAY = "#777777";
    private static final int CURVE_SAMPLES = 240;

    private final StringBuilder svg = new StringBuilder();

    private CvChart() {}

    /**
     * @param rows     the sweep, in increasing k
     * @param line     the hash line the rings were built on (2³²)
     * @param subtitle what was simulated (backends, seeds, algorithm)
     */
    public static String render(List<Sweep.Row> rows, double line, String subtitle) {
        if (rows.isEmpty()) {
            throw new IllegalArgumentException("no rows to draw");
        }
        return new CvChart().draw(rows, line, subtitle);
    }

    private String draw(List<Sweep.Row> rows, double line, String subtitle) {
        int n = rows.getFirst().backends();
        double kMin = rows.getFirst().k();
        double kMax = rows.getLast().k();
        Axis x = Axis.decades(kMin, kMax, LEFT, RIGHT);

        svg.append(String.format(
                Locale.ROOT,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                        + "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"13\">%n",
                WIDTH,
                HEIGHT,
                WIDTH,
                HEIGHT));
        svg.append(String.format(Locale.ROOT, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>%n", WIDTH, HEIGHT));
        text(
                WIDTH / 2.0,
                30,
                "middle",
                18,
                "bold",
                "Load imbalance of a consistent-hash ring against points per backend");
        text(WIDTH / 2.0, 52, "middle", 13, "normal", subtitle);

        // Top panel: CV.
        List<double[]> formula = new ArrayList<>();
        List<double[]> model = new ArrayList<>();
        for (int i = 0; i <= CURVE_SAMPLES; i++) {
            double k = Math.round(x.valueAt((double) i / CURVE_SAMPLES));
            if (k < 1) {
                continue;
            }
            formula.add(new double[] {k, LoadFormula.cv(n, (long) k)});
            long[] points = new long[n];
            Arrays.fill(points, (long) k);
            model.add(new double[] {k, CollisionModel.ring(points, line).cv()});
        }
        double cvMin = Double.POSITIVE_INFINITY;
        double cvMax = 0;
        for (Sweep.Row r : rows) {
            cvMin = Math.min(cvMin, Math.min(r.minCv(), Math.min(r.predictedCv(), r.predictedCv32())));
            cvMax = Math.max(cvMax, Math.max(r.maxCv(), Math.max(r.predictedCv(), r.predictedCv32())));
        }
        Axis cv = Axis.decades(cvMin, cvMax, TOP_Y1, TOP_Y0);
        frame(x, cv, TOP_Y0, TOP_Y1, "CV of a backend's load (SD / mean share, log scale)", CvChart::percent);
        if (160 >= x.min && 160 <= x.max) {
            double px = x.map(160);
            svg.append(String.format(
                    Locale.ROOT,
                    "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#999\" stroke-dasharray=\"2,4\"/>%n",
                    px,
                    TOP_Y0,
                    px,
                    TOP_Y1));
            text(px + 4, TOP_Y1 - 8, "start", 11, "normal", "nginx default k = 160");
        }
        polyline(formula, x, cv, FORMULA, "2.2", null);
        polyline(model, x, cv, MODEL, "2.2", "8,5");
        for (Sweep.Row r : rows) {
            double px = x.map(r.k());
            double lo = cv.map(r.minCv());
            double hi = cv.map(r.maxCv());
            svg.append(String.format(
                    Locale.ROOT,
                    "<path d=\"M%.1f %.1fV%.1fM%.1f %.1fH%.1fM%.1f %.1fH%.1f\" stroke=\"%s\" stroke-width=\"1.3\"/>%n",
                    px,
                    lo,
                    hi,
                    px - 4,
                    lo,
                    px + 4,
                    px - 4,
                    hi,
                    px + 4,
                    SIMULATED));
            svg.append(String.format(
                    Locale.ROOT,
                    "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.6\" fill=\"%s\"/>%n",
                    px,
                    cv.map(r.simulatedCv()),
                    SIMULATED));
        }
        int seeds = rows.getFirst().seeds();
        legend(
                RIGHT - 370,
                TOP_Y0 + 14,
                List.of(
                        new Entry("line", FORMULA, null, "formula √((N−1)/(N·k+1)), continuous ring"),
                        new Entry("line", MODEL, "8,5", "32-bit model: colliding points dropped in tie order"),
                        new Entry(
                                "point",
                                SIMULATED,
                                null,
                                "simulated, " + seeds + (seeds == 1 ? " seed" : " seeds")
                                        + " (bar: smallest–largest)")));

        // Bottom panel: colliding points.
        double cMin = Double.POSITIVE_INFINITY;
        double cMax = 0;
        for (Sweep.Row r : rows) {
            for (double v : new double[] {r.collisions(), r.birthdayEstimate()}) {
                if (v > 0) {
                    cMin = Math.min(cMin, v);
                    cMax = Math.max(cMax, v);
                }
            }
        }
        Axis col = Axis.decades(Math.max(cMin, 1e-3), Math.max(cMax, 1), BOTTOM_Y1, BOTTOM_Y0);
        frame(x, col, BOTTOM_Y0, BOTTOM_Y1, "colliding points per ring", CvChart::count);
        List<double[]> birthday = new ArrayList<>();
        for (int i = 0; i <= CURVE_SAMPLES; i++) {
            double k = x.valueAt((double) i / CURVE_SAMPLES);
            double b = CollisionModel.birthdayEstimate(Math.round(n * k), line);
            if (b >= col.min && b <= col.max) {
                birthday.add(new double[] {k, b});
            }
        }
        polyline(birthday, x, col, BIRTHDAY, "1.8", null);
        boolean anyZero = false;
        for (Sweep.Row r : rows) {
            double px = x.map(r.k());
            if (r.collisions() > 0) {
                svg.append(String.format(
                        Locale.ROOT,
                        "<rect x=\"%.1f\" y=\"%.1f\" width=\"7\" height=\"7\" fill=\"%s\"/>%n",
                        px - 3.5,
                        col.map(r.collisions()) - 3.5,
                        COLLISIONS));
            } else {
                anyZero = true;
                svg.append(String.format(
                        Locale.ROOT,
                        "<rect x=\"%.1f\" y=\"%d\" width=\"7\" height=\"7\" fill=\"white\" stroke=\"%s\" stroke-width=\"1.3\"/>%n",
                        px - 3.5,
                        BOTTOM_Y1 - 3,
                        COLLISIONS));
            }
        }
        List<Entry> entries = new ArrayList<>(List.of(
                new Entry("line", BIRTHDAY, null, "birthday estimate n²/2³³ (n = N·k points)"),
                new Entry("square", COLLISIONS, null, "simulated: points dropped by dedup, mean over seeds")));
        if (anyZero) {
            entries.add(new Entry("open", COLLISIONS, null, "no collision in any seed (drawn on the axis)"));
        }
        legend(LEFT + 14, BOTTOM_Y0 + 14, entries);
        text((LEFT + RIGHT) / 2.0, HEIGHT - 22, "middle", 14, "normal", "points per backend k (log scale)");
        svg.append("</svg>\n");
        return svg.toString();
    }

    private record Entry(String kind, String color, String dash, String label) {}

    private void legend(double x, double y, List<Entry> entries) {
        double height = 22 * entries.size() + 10;
        svg.append(String.format(
                Locale.ROOT,
                "<rect x=\"%.1f\" y=\"%.1f\" width=\"360\" height=\"%.1f\" fill=\"white\" fill-opacity=\"0.92\" stroke=\"#bbb\"/>%n",
                x,
                y,
                height));
        for (int i = 0; i < entries.size(); i++) {
            Entry e = entries.get(i);
            double cy = y + 18 + 22 * i;
            switch (e.kind) {
                case "line" ->
                    svg.append(String.format(
                            Locale.ROOT,
                            "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2.2\"%s/>%n",
                            x + 10,
                            cy,
                            x + 44,
                            cy,
                            e.color,
                            e.dash == null ? "" : " stroke-dasharray=\"" + e.dash + "\""));
                case "point" ->
                    svg.append(String.format(
                            Locale.ROOT,
                            "<path d=\"M%.1f %.1fV%.1f\" stroke=\"%s\" stroke-width=\"1.3\"/><circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.6\" fill=\"%s\"/>%n",
                            x + 27,
                            cy - 8,
                            cy + 8,
                            e.color,
                            x + 27,
                            cy,
                            e.color));
                case "square" ->
                    svg.append(String.format(
                            Locale.ROOT,
                            "<rect x=\"%.1f\" y=\"%.1f\" width=\"7\" height=\"7\" fill=\"%s\"/>%n",
                            x + 23.5,
                            cy - 3.5,
                            e.color));
                default ->
                    svg.append(String.format(
                            Locale.ROOT,
                            "<rect x=\"%.1f\" y=\"%.1f\" width=\"7\" height=\"7\" fill=\"white\" stroke=\"%s\" stroke-width=\"1.3\"/>%n",
                            x + 23.5,
                            cy - 3.5,
                            e.color));
            }
            text(x + 54, cy + 4.5, "start", 12.5, "normal", e.label);
        }
    }

    /** Plot frame, grid lines at every 1..9 × 10^d, labels at decades, the y title. */
    private void frame(Axis x, Axis y, int y0, int y1, String yTitle, DoubleFunction<String> yLabel) {
        svg.append("<g stroke-width=\"1\">\n");
        for (double d = x.min; d <= x.max * 1.0001; d *= 10) {
            for (int m = 1; m < 10 && d * m <= x.max * 1.0001; m++) {
                double px = x.map(d * m);
                svg.append(String.format(
                        Locale.ROOT,
                        "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\"/>%n",
                        px,
                        y0,
                        px,
                        y1,
                        m == 1 ? "#c8c8c8" : "#ececec"));
                if (m == 1) {
                    text(px, y1 + 18, "middle", 12, "normal", String.format(Locale.ROOT, "%,.0f", d));
                }
            }
        }
        for (double d = y.min; d <= y.max * 1.0001; d *= 10) {
            for (int m = 1; m < 10 && d * m <= y.max * 1.0001; m++) {
                double py = y.map(d * m);
                svg.append(String.format(
                        Locale.ROOT,
                        "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\"/>%n",
                        LEFT,
                        py,
                        RIGHT,
                        py,
                        m == 1 ? "#c8c8c8" : "#ececec"));
                if (m == 1) {
                    text(LEFT - 8, py + 4, "end", 12, "normal", yLabel.apply(d));
                }
            }
        }
        svg.append(String.format(
                Locale.ROOT,
                "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#333\"/>%n",
                LEFT,
                y0,
                RIGHT - LEFT,
                y1 - y0));
        svg.append("</g>\n");
        double cy = (y0 + y1) / 2.0;
        svg.append(String.format(
                Locale.ROOT,
                "<text x=\"%d\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"14\" transform=\"rotate(-90 %d %.1f)\">%s</text>%n",
                30,
                cy,
                30,
                cy,
                escape(yTitle)));
    }

    private void polyline(List<double[]> points, Axis x, Axis y, String color, String width, String dash) {
        if (points.isEmpty()) {
            return;
        }
        StringBuilder d = new StringBuilder();
        for (double[] p : points) {
            double py = y.map(Math.max(y.min, Math.min(y.max, p[1])));
            d.append(d.isEmpty() ? "" : " ").append(String.format(Locale.ROOT, "%.1f,%.1f", x.map(p[0]), py));
        }
        svg.append(String.format(
                Locale.ROOT,
                "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"%s\"%s/>%n",
                d,
                color,
                width,
                dash == null ? "" : " stroke-dasharray=\"" + dash + "\""));
    }

    private void text(double x, double y, String anchor, double size, String weight, String s) {
        svg.append(String.format(
                Locale.ROOT,
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"%s\"%s>%s</text>%n",
                x,
                y,
                anchor,
                size == Math.rint(size) ? String.valueOf((int) size) : String.valueOf(size),
                weight.equals("normal") ? "" : " font-weight=\"" + weight + "\"",
                escape(s)));
    }

    private static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }

    /** 0.1 %, 1 %, 10 %, 100 %. */
    static String percent(double v) {
        double p = v * 100;
        return (p >= 1 ? String.format(Locale.ROOT, "%.0f", p) : String.format(Locale.ROOT, "%s", stripZeros(p)))
                + " %";
    }

    /** 0.01, 1, 100, 10k, 1M. */
    static String count(double v) {
        if (v < 1) {
            return stripZeros(v);
        }
        if (v < 1e4) {
            return String.format(Locale.ROOT, "%,.0f", v);
        }
        if (v < 1e6) {
            return String.format(Locale.ROOT, "%.0fk", v / 1e3);
        }
        if (v < 1e9) {
            return String.format(Locale.ROOT, "%.0fM", v / 1e6);
        }
        return String.format(Locale.ROOT, "%.0fG", v / 1e9);
    }

    private static String stripZeros(double v) {
        return new BigDecimal(String.format(Locale.ROOT, "%.6g", v))
                .stripTrailingZeros()
                .toPlainString();
    }

    /** A log axis over whole decades, mapped to pixels [p0, p1] (p1 < p0 for y). */
    private record Axis(double min, double max, double p0, double p1) {
        static Axis decades(double lo, double hi, double p0, double p1) {
            double min = Math.pow(10, Math.floor(Math.log10(lo) + 1e-9));
            double max = Math.pow(10, Math.ceil(Math.log10(hi) - 1e-9));
            if (max <= min) {
                max = min * 10;
            }
            return new Axis(min, max, p0, p1);
        }

        double map(double v) {
            return p0 + (Math.log10(v) - Math.log10(min)) / (Math.log10(max) - Math.log10(min)) * (p1 - p0);
        }

        /** The value at fraction t of the axis. */
        double valueAt(double t) {
            return Math.pow(10, Math.log10(min) + t * (Math.log10(max) - Math.log10(min)));
        }
    }
}
