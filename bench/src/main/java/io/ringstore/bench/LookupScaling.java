package io.ringstore.bench;

import io.ringstore.Ring;
import io.ringstore.RingStore;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * {@link LookupBenchmark}'s {@code ringstoreKey} and {@code ringstoreHash} from one thread and from two
 * at once, in alternation in one JVM, for a machine shared with other work where JMH's {@code -t 1}
 * and {@code -t 2} runs see different loads. Each round runs each form for {@code --millis} on one
 * thread, then on two threads started together (same ring, same keys, thread i of t cycling through
 * them from i/t of the way in, as {@link LookupBenchmark.Cursor} does). Besides operations it records each thread's
 * CPU time: a thread that got less than {@value #FULL_CPU} of the wall time shared its core with
 * something else, and its round says nothing about how lookups scale. Figures: medians over
 * {@code --rounds} rounds after {@value #WARMUP} not counted. Three ratios, each the median of the
 * per-round two-thread / one-thread ratios: of throughput over all rounds ({@code ratio}); the same
 * over the rounds in which every thread had its core ({@code ratio, full}, with their count); and
 * twice the ratio of operations per CPU second ({@code ratio, cpu}: what two threads would do with a
 * core each, if sharing a core costs nothing else; what the threads do to each other, through false
 * sharing or the shared cache and memory, still shows).
 *
 * <pre>java -Xmx4g -cp bench/target/benchmarks.jar io.ringstore.bench.LookupScaling [--rounds R] [--millis MS] [--verbose] [SIZE...]</pre>
 *
 * Sizes default to {@code 100x160} and {@code 2048x10x160}.
 */
public final class LookupScaling {
    private static final int KEYS = 65_536;
    private static final int WARMUP = 3;
    private static final double FULL_CPU = 0.95;
    private static final int CHECK_EVERY = 1024;
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    /** Where answers go, so the loops are not optimised away. */
    private static volatile long sink;

    private LookupScaling() {}

    /** One lookup form: what each operation calls. */
    private interface Form {
        int lookup(Ring ring, byte[][] keys, int[] hashes, int position);
    }

    /** One thread's share of a timed run. */
    private record Share(long ops, long wallNanos, long cpuNanos) {
        double cpu() {
            return (double) cpuNanos / wallNanos;
        }
    }

    public static void main(String[] args) throws Exception {
        int rounds = 9;
        int millis = 1000;
        boolean verbose = false;
        List<String> sizes = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--millis" -> millis = Integer.parseInt(args[++i]);
                case "--verbose" -> verbose = true;
                default -> sizes.add(args[i]);
            }
        }
        if (rounds < 1 || millis < 1) {
            throw new IllegalArgumentException(
                    "--rounds and --millis must be at least 1: rounds=" + rounds + " millis=" + millis);
        }
        if (sizes.isEmpty()) {
            sizes = List.of(BenchRings.SMALL, BenchRings.MEDIUM);
        }
        if (!THREADS.isCurrentThreadCpuTimeSupported()) {
            throw new IllegalStateException("this JVM cannot measure a thread's CPU time");
        }
        byte[][] keys = BenchRings.urlKeys(KEYS, BenchRings.KEY_SEED);
        int[] hashes = BenchRings.hashes(keys);
        String[] names = {"ringstoreKey", "ringstoreHash"};
        Form[] forms = {(r, k, h, p) -> r.lookup(k[p]), (r, k, h, p) -> r.lookupHash(h[p])};
        System.out.printf(
                "%-12s %-14s %10s %10s %7s %12s %10s   (ops/us, median of %d rounds of %d ms, %d keys)%n",
                "size", "form", "1 thread", "2 threads", "ratio", "ratio, full", "ratio, cpu", rounds, millis, KEYS);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            for (String size : sizes) {
                try (RingStore store = BenchRings.open(size)) {
                    Ring ring = store.ring(Set.of());
                    for (int f = 0; f < forms.length; f++) {
                        measure(pool, size, names[f], forms[f], ring, keys, hashes, rounds, millis, verbose);
                    }
                }
            }
        } finally {
            pool.shutdownNow();
        }
    }

    private static void measure(
            ExecutorService pool,
            String size,
            String name,
            Form form,
            Ring ring,
            byte[][] keys,
            int[] hashes,
            int rounds,
            int millis,
            boolean verbose)
            throws Exception {
        double[] one = new double[rounds];
        double[] two = new double[rounds];
        double[] ratio = new double[rounds];
        double[] cpuRatio = new double[rounds];
        List<Double> fullRatios = new ArrayList<>();
        for (int r = -WARMUP; r < rounds; r++) {
            List<Share> single = run(pool, 1, form, ring, keys, hashes, millis);
            List<Share> pair = run(pool, 2, form, ring, keys, hashes, millis);
            double a = opsPerMicro(single);
            double b = opsPerMicro(pair);
            if (verbose) {
                System.out.printf(
                        "  %s %s round %d: 1 thread %.1f (cpu %.2f); 2 threads %.1f + %.1f (cpu %.2f, %.2f)%n",
                        size,
                        name,
                        r,
                        a,
                        single.get(0).cpu(),
                        opsPerMicro(pair.subList(0, 1)),
                        opsPerMicro(pair.subList(1, 2)),
                        pair.get(0).cpu(),
                        pair.get(1).cpu());
            }
            if (r >= 0) {
                one[r] = a;
                two[r] = b;
                ratio[r] = b / a;
                cpuRatio[r] = 2 * opsPerCpuMicro(pair) / opsPerCpuMicro(single);
                if (single.stream().allMatch(s -> s.cpu() >= FULL_CPU)
                        && pair.stream().allMatch(s -> s.cpu() >= FULL_CPU)) {
                    fullRatios.add(b / a);
                }
            }
        }
        double[] full = fullRatios.stream().mapToDouble(Double::doubleValue).toArray();
        System.out.printf(
                "%-12s %-14s %10.1f %10.1f %7.2f %12s %10.2f%n",
                size,
                name,
                median(one),
                median(two),
                median(ratio),
                full.length == 0 ? "– (0 rounds)" : String.format("%.2f (%d)", median(full), full.length),
                median(cpuRatio));
    }

    /** {@code threads} threads started together, each running {@code form} for {@code millis}. */
    private static List<Share> run(
            ExecutorService pool, int threads, Form form, Ring ring, byte[][] keys, int[] hashes, int millis)
            throws Exception {
        CyclicBarrier start = new CyclicBarrier(threads);
        List<Future<Share>> futures = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int first = hashes.length / threads * t;
            futures.add(pool.submit(() -> {
                start.await();
                return loop(form, ring, keys, hashes, first, millis * 1_000_000L);
            }));
        }
        List<Share> shares = new ArrayList<>();
        for (Future<Share> f : futures) {
            shares.add(f.get());
        }
        return shares;
    }

    private static Share loop(Form form, Ring ring, byte[][] keys, int[] hashes, int first, long nanos) {
        int mask = hashes.length - 1;
        int position = first;
        long ops = 0;
        long sum = 0;
        long cpu0 = THREADS.getCurrentThreadCpuTime();
        long t0 = System.nanoTime();
        long t;
        do {
            for (int i = 0; i < CHECK_EVERY; i++) {
                position = (position + 1) & mask;
                sum += form.lookup(ring, keys, hashes, position);
            }
            ops += CHECK_EVERY;
            t = System.nanoTime();
        } while (t - t0 < nanos);
        long cpu = THREADS.getCurrentThreadCpuTime() - cpu0;
        sink += sum;
        return new Share(ops, t - t0, cpu);
    }

    private static double opsPerMicro(List<Share> shares) {
        double total = 0;
        for (Share s : shares) {
            total += s.ops() * 1000.0 / s.wallNanos();
        }
        return total;
    }

    /** Operations per microsecond of the threads' CPU time, all threads together. */
    private static double opsPerCpuMicro(List<Share> shares) {
        long ops = 0;
        long cpu = 0;
        for (Share s : shares) {
            ops += s.ops();
            cpu += s.cpuNanos();
        }
        return ops * 1000.0 / cpu;
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }
}
