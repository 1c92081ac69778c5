package io.ringstore.bench;

import io.ringstore.Ring;
import io.ringstore.RingStore;
import io.ringstore.builder.BackendList;
import io.ringstore.builder.Views;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

/**
 * What a view's membership costs over the lookup in the ring of all backends it reads (issue 32, item
 * 3), the two sides alternating in one JVM: on {@link ViewFleets#nestedFleet} (2,048 backends × weight
 * 10, 3,275,625 points in the ring of all) built with {@code --views all}, for the features
 * {@code mod2}, {@code mod8} and {@code mod32} (f = 1/2, 1/8, 1/32), 4,194,304 distinct random hashes
 * ({@link ViewFleets#randomHashes}, the seed {@link ViewLookupBenchmark}'s). Each round looks every
 * hash up in the ring of all, then in each view, each pass timed whole. Every view's answers are first
 * checked against the same ring stored as points (the {@code --views none} file).
 *
 * <p>With {@code BEFORE}, a file of the same fleet built with {@code --views all} by an earlier
 * release (its feature bits by block, storage 3, where builds now write them by feature, storage 4),
 * that file's views are timed beside, each round, their answers checked first too (side
 * {@code before-FEATURE}).
 *
 * <p>Prints one line per round and side ({@code SIDE ROUND NS-PER-LOOKUP CHECKSUM}), then per fraction
 * the median of each side and of the per-round ratios view ÷ ring of all.
 *
 * <pre>
 * java -Xmx4g [-Dchained=true] -cp $JAR io.ringstore.bench.ViewCostMeasure [ROUNDS [BEFORE]]
 * </pre>
 */
public final class ViewCostMeasure {
    private static final int HASHES = 1 << 22;
    private static final List<String> FEATURES = List.of("mod2", "mod8", "mod32");

    /**
     * {@code -Dchained=true}: each hash looked up is the next random hash plus one bit of the previous
     * answer, so lookups cannot overlap and a pass measures latency instead of throughput.
     */
    private static final boolean CHAINED = Boolean.getBoolean("chained");

    private ViewCostMeasure() {}

    public static void main(String[] args) throws Exception {
        int rounds = BenchArgs.count(args, 0, 9, "ViewCostMeasure", "ViewCostMeasure [ROUNDS [BEFORE]]");
        System.out.printf("load average at start: %s", Files.readString(Path.of("/proc/loadavg")));
        BackendList fleet = ViewFleets.nestedFleet();
        Path beforeFile = args.length > 1 ? Path.of(args[1]) : null;
        try (RingStore all = ViewLookupBenchmark.openOrBuild(fleet, Views.ALL, "nested");
                RingStore none = ViewLookupBenchmark.openOrBuild(fleet, Views.NONE, "nested");
                RingStore before = beforeFile == null ? null : RingStore.open(beforeFile)) {
            int[] hashes = ViewFleets.randomHashes(HASHES, BenchRings.KEY_SEED + Integer.numberOfTrailingZeros(HASHES));
            Ring ringOfAll = all.ring(Set.of());
            List<String> sides = new ArrayList<>();
            List<Ring> views = new ArrayList<>();
            for (RingStore file : before == null ? List.of(all) : List.of(all, before)) {
                System.out.printf(
                        "%s: the ring of all backends stored as %s%n",
                        file == all ? "now" : beforeFile,
                        file.layout().storage(file.ring(Set.of())).label());
                for (String feature : FEATURES) {
                    Ring view = file.ring(Set.of(feature));
                    Ring stored = none.ring(Set.of(feature));
                    for (int h : hashes) {
                        if (view.lookupHash(h) != stored.lookupHash(h)) {
                            throw new IllegalStateException(feature + ": the view answers " + view.lookupHash(h)
                                    + " for hash " + Integer.toUnsignedString(h) + ", the stored ring "
                                    + stored.lookupHash(h));
                        }
                    }
                    sides.add(file == all ? feature : "before-" + feature);
                    views.add(view);
                }
            }
            double[] allNs = new double[rounds];
            double[][] viewNs = new double[views.size()][rounds];
            for (int round = 0; round < rounds; round++) {
                allNs[round] = pass("all", round, ringOfAll, hashes);
                for (int v = 0; v < views.size(); v++) {
                    viewNs[v][round] = pass(sides.get(v), round, views.get(v), hashes);
                }
            }
            System.out.printf("load average at end: %s", Files.readString(Path.of("/proc/loadavg")));
            for (int v = 0; v < views.size(); v++) {
                double[] ratios = new double[rounds];
                for (int round = 0; round < rounds; round++) {
                    ratios[round] = viewNs[v][round] / allNs[round];
                }
                System.out.printf(
                        "median %s: ring of all %.2f ns, view %.2f ns, view / all %.3f (rounds %s)%n",
                        sides.get(v),
                        median(allNs),
                        median(viewNs[v]),
                        median(ratios),
                        Arrays.toString(Arrays.stream(ratios)
                                .map(r -> Math.round(r * 1000) / 1000.0)
                                .toArray()));
            }
        }
    }

    private static double pass(String side, int round, Ring ring, int[] hashes) {
        long start = System.nanoTime();
        long sum = 0;
        if (CHAINED) {
            int last = 0;
            for (int h : hashes) {
                last = ring.lookupHash(h + (last >>> 31));
                sum += last;
            }
        } else {
            for (int h : hashes) {
                sum += ring.lookupHash(h);
            }
        }
        double ns = (double) (System.nanoTime() - start) / hashes.length;
        System.out.printf("%s %d %.2f %d%n", side, round + 1, ns, sum);
        return ns;
    }

    private static double median(double[] values) {
        double[] v = values.clone();
        Arrays.sort(v);
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }
}
