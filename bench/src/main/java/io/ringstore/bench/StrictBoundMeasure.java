package io.ringstore.bench;

import io.ringstore.Backend;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;

/**
 * {@link StrictBoundBenchmark}'s operations timed by the thread's CPU time rather than the wall clock,
 * for a machine shared with other work (where a wall-clock average counts the time the thread was
 * descheduled): the operations in turn, 200,000 calls a round, 31 rounds after 10 to warm up, the
 * median round in CPU ns per call. Same ring, keys and state as the benchmark.
 *
 * <pre>
 * java -cp bench/target/benchmarks.jar io.ringstore.bench.StrictBoundMeasure
 * </pre>
 */
public final class StrictBoundMeasure {
    private static final int CALLS = 200_000;
    private static final int WARM_UP = 10;
    private static final int ROUNDS = 31;
    private static volatile Object sink;

    private StrictBoundMeasure() {}

    public static void main(String[] args) throws Exception {
        StrictBoundBenchmark.Data d = new StrictBoundBenchmark.Data();
        d.open();
        StrictBoundBenchmark bench = new StrictBoundBenchmark();
        Map<String, BiFunction<StrictBoundBenchmark, StrictBoundBenchmark.Data, Backend>> ops = new LinkedHashMap<>();
        ops.put("backend", StrictBoundBenchmark::backend);
        ops.put("chooseUnbounded", StrictBoundBenchmark::chooseUnbounded);
        ops.put("chooseBounded", StrictBoundBenchmark::chooseBounded);
        ops.put("requestUnbounded", StrictBoundBenchmark::requestUnbounded);
        ops.put("requestBounded", StrictBoundBenchmark::requestBounded);
        ops.put("strictUnbounded", StrictBoundBenchmark::strictUnbounded);
        ops.put("strictBounded", StrictBoundBenchmark::strictBounded);
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        Map<String, List<Double>> rounds = new LinkedHashMap<>();
        ops.keySet().forEach(k -> rounds.put(k, new ArrayList<>()));
        for (int r = 0; r < WARM_UP + ROUNDS; r++) {
            for (var op : ops.entrySet()) {
                long start = threads.getCurrentThreadCpuTime();
                Object keep = null;
                for (int i = 0; i < CALLS; i++) {
                    keep = op.getValue().apply(bench, d);
                }
                long cpu = threads.getCurrentThreadCpuTime() - start;
                sink = keep;
                if (r >= WARM_UP) {
                    rounds.get(op.getKey()).add(cpu / (double) CALLS);
                }
            }
        }
        for (var e : rounds.entrySet()) {
            double[] v = e.getValue().stream()
                    .mapToDouble(Double::doubleValue)
                    .sorted()
                    .toArray();
            System.out.printf(
                    "%-18s median %7.1f  (quartiles %7.1f %7.1f) CPU ns/call%n",
                    e.getKey(), v[v.length / 2], v[v.length / 4], v[v.length * 3 / 4]);
        }
        d.close();
    }
}
