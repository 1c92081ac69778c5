package io.ringstore.bench;

import io.ringstore.build.BackendList;
import io.ringstore.build.BuildResult;
import io.ringstore.build.RingBuilder;

import java.nio.file.Path;

/**
 * The warm side of "a fresh JVM against a warm one" (BENCHMARKS.md, one-shot commands): what
 * {@code ringstore build BACKENDS -o OUT} does (parse the backends file, build every feature ring,
 * publish), ROUNDS times in one JVM, each round's wall time from the parse to the published file and
 * the builder's own points per second, then the median of the rounds after the first. Run it beside
 * the same command timed as whole processes.
 *
 * <pre>
 * java -Xmx2g -cp bench/target/benchmarks.jar io.ringstore.bench.WarmBuild BACKENDS OUT [ROUNDS]
 * </pre>
 */
public final class WarmBuild {
    private WarmBuild() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: WarmBuild BACKENDS OUT [ROUNDS]");
            System.exit(2);
        }
        Path backends = Path.of(args[0]);
        Path out = Path.of(args[1]);
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 11;
        double[] ms = new double[rounds];
        System.out.println("round\tms\tpoints\tpoints_per_second");
        for (int i = 0; i < rounds; i++) {
            long start = System.nanoTime();
            BuildResult r = RingBuilder.of(BackendList.parse(backends)).build(out);
            ms[i] = (System.nanoTime() - start) / 1e6;
            System.out.printf("%d\t%.1f\t%d\t%.0f%n", i + 1, ms[i], r.points(), r.points() / (r.nanos() / 1e9));
        }
        double[] warm = java.util.Arrays.copyOfRange(ms, Math.min(1, rounds - 1), rounds);
        java.util.Arrays.sort(warm);
        System.out.printf("median of rounds 2-%d: %.1f ms%n", rounds, warm[warm.length / 2]);
    }
}
