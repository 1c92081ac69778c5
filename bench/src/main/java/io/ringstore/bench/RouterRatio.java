package io.ringstore.bench;

import io.ringstore.Backend;
import java.util.Arrays;
import java.util.List;

/**
 * {@link RouterBenchmark}'s question on a busy machine: the route against the plain ring, measured in
 * alternation in one JVM, so that a load that comes and goes hits both sides alike. Each round times
 * {@value #CALLS} calls of the plain form and of the route form back to back (which goes first
 * alternates), and the figure per form is the median over {@value #ROUNDS} rounds of the route/plain
 * ratio, after {@value #WARMUP} rounds not counted. The same state, keys and checks as the JMH
 * benchmark ({@link RouterBenchmark.Data}); JMH remains the reference for absolute times.
 *
 * <pre>
 * java -Xmx4g -cp bench/target/benchmarks.jar io.ringstore.bench.RouterRatio [PERCENT]
 * </pre>
 */
public final class RouterRatio {
    private static final int CALLS = 200_000;
    private static final int WARMUP = 10;
    private static final int ROUNDS = 41;
    /** Where answers go, so the calls are not optimised away. */
    private static volatile long sink;

    private RouterRatio() {}

    /** {@code CALLS} calls of one benchmark method; the loop is in each lambda, so each call site is monomorphic. */
    private interface Loop {
        long run(RouterBenchmark b, RouterBenchmark.Data d, KeyCursor c);
    }

    private record Form(String name, Loop plain, Loop route) {}

    private static long index(Backend b) {
        return b == null ? -1 : b.index();
    }

    public static void main(String[] args) throws Exception {
        RouterBenchmark.Data data = new RouterBenchmark.Data();
        data.size = BenchRings.MEDIUM;
        data.percent = args.length > 0 ? Double.parseDouble(args[0]) : 50;
        data.open();
        List<Form> forms = List.of(
                new Form(
                        "byte[]",
                        (b, d, c) -> {
                            long s = 0;
                            for (int i = 0; i < CALLS; i++) s += index(b.plainBytes(d, c));
                            return s;
                        },
                        (b, d, c) -> {
                            long s = 0;
                            for (int i = 0; i < CALLS; i++) s += index(b.routeBytes(d, c));
                            return s;
                        }),
                new Form(
                        "heap ByteBuffer",
                        (b, d, c) -> {
                            long s = 0;
                            for (int i = 0; i < CALLS; i++) s += index(b.plainHeapBuffer(d, c));
                            return s;
                        },
                        (b, d, c) -> {
                            long s = 0;
                            for (int i = 0; i < CALLS; i++) s += index(b.routeHeapBuffer(d, c));
                            return s;
                        }),
                new Form(
                        "direct ByteBuffer",
                        (b, d, c) -> {
                            long s = 0;
                            for (int i = 0; i < CALLS; i++) s += index(b.plainDirectBuffer(d, c));
                            return s;
                        },
                        (b, d, c) -> {
                            long s = 0;
                            for (int i = 0; i < CALLS; i++) s += index(b.routeDirectBuffer(d, c));
                            return s;
                        }),
                new Form(
                        "native MemorySegment",
                        (b, d, c) -> {
                            long s = 0;
                            for (int i = 0; i < CALLS; i++) s += index(b.plainSegment(d, c));
                            return s;
                        },
                        (b, d, c) -> {
                            long s = 0;
                            for (int i = 0; i < CALLS; i++) s += index(b.routeSegment(d, c));
                            return s;
                        }),
                new Form(
                        "failover select, byte[]",
                        (b, d, c) -> {
                            long s = 0;
                            for (int i = 0; i < CALLS; i++) s += index(b.plainSelect(d, c));
                            return s;
                        },
                        (b, d, c) -> {
                            long s = 0;
                            for (int i = 0; i < CALLS; i++) s += index(b.routeSelect(d, c));
                            return s;
                        }));
        RouterBenchmark bench = new RouterBenchmark();
        KeyCursor cursor = new KeyCursor();
        System.out.printf(
                "%-24s %10s %10s %8s   (%d calls a side a round, median of %d rounds, rollout %.0f %%)%n",
                "form", "plain ns", "route ns", "ratio", CALLS, ROUNDS, data.percent);
        try {
            for (Form f : forms) {
                double[] plain = new double[ROUNDS];
                double[] route = new double[ROUNDS];
                double[] ratio = new double[ROUNDS];
                for (int r = -WARMUP; r < ROUNDS; r++) {
                    boolean plainFirst = (r & 1) == 0;
                    double p = 0;
                    double q;
                    if (plainFirst) {
                        p = time(f.plain(), bench, data, cursor);
                    }
                    q = time(f.route(), bench, data, cursor);
                    if (!plainFirst) {
                        p = time(f.plain(), bench, data, cursor);
                    }
                    if (r >= 0) {
                        plain[r] = p;
                        route[r] = q;
                        ratio[r] = q / p;
                    }
                }
                System.out.printf("%-24s %10.1f %10.1f %8.2f%n", f.name(), median(plain), median(route), median(ratio));
            }
        } finally {
            data.close();
        }
    }

    /** ns per call of one block. */
    private static double time(Loop loop, RouterBenchmark bench, RouterBenchmark.Data data, KeyCursor cursor) {
        long t0 = System.nanoTime();
        sink += loop.run(bench, data, cursor);
        return (System.nanoTime() - t0) / (double) CALLS;
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }
}
