package io.ringstore.bench;

import io.ringstore.builder.BackendList;
import io.ringstore.builder.BuildResult;
import io.ringstore.builder.RingBuilder;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * The warm side of "a fresh JVM against a warm one" (BENCHMARKS.md, one-shot commands): what
 * {@code ringstore build BACKENDS -o OUT} does (parse the backends file, build every feature ring,
 * publish), ROUNDS times in one JVM, each round's wall time from the parse to the published file, the
 * process's CPU time over the round (every thread: the builder's, the JIT's, the GC's; comparable with
 * a whole process's user + sys on a loaded machine, where wall times are not) and the builder's own
 * points per second, then the medians of the rounds after the first. Run it beside the same command
 * timed as whole processes.
 *
 * <pre>
 * java -Xmx2g -cp bench/target/benchmarks.jar io.ringstore.bench.WarmBuild BACKENDS OUT [ROUNDS]
 * </pre>
 */
public final class WarmBuild {
    private WarmBuild() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: WarmBuild BACKENDS OUT [ROUNDS]");
            System.exit(2);
        }
        Path backends = Path.of(args[0]);
        Path out = Path.of(args[1]);
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 11;
        double[] ms = new double[rounds];
        double[] cpuMs = new double[rounds];
        System.out.println("round\tms\tcpu_ms\tpoints\tpoints_per_second");
        for (int i = 0; i < rounds; i++) {
            long cpu = cpuNanos();
            long start = System.nanoTime();
            BuildResult r = RingBuilder.of(BackendList.parse(backends)).build(out);
            ms[i] = (System.nanoTime() - start) / 1e6;
            cpuMs[i] = (cpuNanos() - cpu) / 1e6;
            System.out.printf(
                    "%d\t%.1f\t%.1f\t%d\t%.0f%n", i + 1, ms[i], cpuMs[i], r.points(), r.points() / (r.nanos() / 1e9));
        }
        System.out.printf(
                "median of rounds 2-%d: %.1f ms, %.1f ms CPU%n", rounds, medianAfterFirst(ms), medianAfterFirst(cpuMs));
    }

    private static long cpuNanos() {
        return ProcessHandle.current().info().totalCpuDuration().orElseThrow().toNanos();
    }

    private static double medianAfterFirst(double[] values) {
        double[] warm = Arrays.copyOfRange(values, Math.min(1, values.length - 1), values.length);
        Arrays.sort(warm);
        return warm[warm.length / 2];
    }
}
