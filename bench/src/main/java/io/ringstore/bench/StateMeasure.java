package io.ringstore.bench;

import io.ringstore.state.HostState;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CyclicBarrier;

/**
 * What the host-wide state costs a router, in ns per operation: acquiring and releasing an in-flight
 * slot (two atomic adds, two CAS decrements on the shared mapping), an availability check (drain and
 * health words of one cache line), the host-wide in-flight count of a backend (the sum of its lease
 * cells, two cache lines) and the mean over the tracked backends. With 1 and 2 threads of one process
 * on the same backend (the contended case: one cache line bouncing between cores) and on different
 * backends; then the same acquire+release loop in 4 processes at once, on one backend and on four.
 *
 * <pre>
 * java -cp bench/target/benchmarks.jar io.ringstore.bench.StateMeasure [--seconds S]
 * </pre>
 * The state file lives in a temporary directory, removed afterwards.
 */
public final class StateMeasure {
    private static final List<String> ENDPOINTS = List.of("10.0.0.1:80", "10.0.0.2:80", "10.0.0.3:80", "10.0.0.4:80");
    private static volatile long sink;

    private StateMeasure() {}

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("--child")) {
            child(Path.of(args[1]), Integer.parseInt(args[2]), Double.parseDouble(args[3]));
            return;
        }
        double seconds = args.length == 2 && args[0].equals("--seconds") ? Double.parseDouble(args[1]) : 2;
        Path dir = Files.createTempDirectory("ringstore-state-measure");
        Path ring = dir.resolve("fleet.ring");
        try (HostState state = HostState.open(ring)) {
            int[] slots = state.track(ENDPOINTS);
            System.out.printf("%-44s %8s %12s%n", "operation", "threads", "ns/op");
            for (int threads : new int[] {1, 2}) {
                report("acquire+release, one backend", threads, measure(threads, seconds, t -> pairs(state, slots[0])));
                report(
                        "acquire+release, a backend per thread",
                        threads,
                        measure(threads, seconds, t -> pairs(state, slots[t])));
                report("available(slot, now)", threads, measure(threads, seconds, t -> checks(state, slots[t])));
                report(
                        "inFlight(slot), 32 lease cells",
                        threads,
                        measure(threads, seconds, t -> counts(state, slots[t])));
                report("meanInFlight(), 32 lease totals", threads, measure(threads, seconds, t -> means(state)));
            }
            for (boolean spread : new boolean[] {false, true}) {
                List<Process> children = new ArrayList<>();
                for (int p = 0; p < 4; p++) {
                    children.add(new ProcessBuilder(
                                    Path.of(System.getProperty("java.home"), "bin", "java")
                                            .toString(),
                                    "-cp",
                                    System.getProperty("java.class.path"),
                                    StateMeasure.class.getName(),
                                    "--child",
                                    ring.toString(),
                                    String.valueOf(spread ? p : 0),
                                    String.valueOf(seconds))
                            .redirectError(ProcessBuilder.Redirect.INHERIT)
                            .start());
                }
                double sum = 0;
                for (Process c : children) {
                    try (BufferedReader r =
                            new BufferedReader(new InputStreamReader(c.getInputStream(), StandardCharsets.US_ASCII))) {
                        sum += Double.parseDouble(r.readLine());
                    }
                    c.waitFor();
                }
                System.out.printf(
                        Locale.ROOT,
                        "%-44s %8s %12.1f%n",
                        "acquire+release, 4 processes, " + (spread ? "a backend each" : "one backend"),
                        "4 procs",
                        sum / children.size());
            }
        } finally {
            try (var files = Files.list(dir)) {
                for (Path p : files.toList()) {
                    Files.delete(p);
                }
            }
            Files.delete(dir);
        }
    }

    /** One of four processes: ns per acquire+release pair after a warm-up, printed as one number. */
    private static void child(Path ring, int backend, double seconds) throws Exception {
        try (HostState state = HostState.open(ring)) {
            int slot = state.track(ENDPOINTS)[backend];
            System.out.println(measure(1, seconds, t -> pairs(state, slot)));
        }
    }

    private static void report(String operation, int threads, double nsPerOp) {
        System.out.printf(Locale.ROOT, "%-44s %8d %12.1f%n", operation, threads, nsPerOp);
    }

    private static final int BATCH = 1 << 14;

    private static long pairs(HostState state, int slot) {
        for (int i = 0; i < BATCH; i++) {
            state.acquire(slot);
            state.release(slot);
        }
        return 0;
    }

    private static long checks(HostState state, int slot) {
        long n = 0;
        long now = System.nanoTime();
        for (int i = 0; i < BATCH; i++) {
            n += state.available(slot, now + i) ? 1 : 0;
        }
        return n;
    }

    private static long counts(HostState state, int slot) {
        long n = 0;
        for (int i = 0; i < BATCH; i++) {
            n += state.inFlight(slot);
        }
        return n;
    }

    private static long means(HostState state) {
        double n = 0;
        for (int i = 0; i < BATCH; i++) {
            n += state.meanInFlight();
        }
        return (long) n;
    }

    /** A batch of {@link #BATCH} operations by thread {@code t}, returning something to keep. */
    private interface Batch {
        long run(int t);
    }

    /**
     * Runs {@code batch} on {@code threads} threads for a warm-up second and then {@code seconds};
     * returns the mean ns per operation of one thread (each thread's time over its own operations).
     */
    private static double measure(int threads, double seconds, Batch batch) throws Exception {
        CyclicBarrier start = new CyclicBarrier(threads);
        double[] ns = new double[threads];
        List<Thread> running = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            running.add(Thread.ofPlatform().start(() -> {
                try {
                    long keep = 0;
                    long warm = System.nanoTime() + 1_000_000_000L;
                    while (System.nanoTime() < warm) {
                        keep += batch.run(id);
                    }
                    start.await();
                    long ops = 0;
                    long begin = System.nanoTime();
                    long end = begin + (long) (seconds * 1e9);
                    long now;
                    do {
                        keep += batch.run(id);
                        ops += BATCH;
                    } while ((now = System.nanoTime()) < end);
                    ns[id] = (double) (now - begin) / ops;
                    sink += keep;
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }));
        }
        for (Thread t : running) {
            t.join();
        }
        double sum = 0;
        for (double v : ns) {
            sum += v;
        }
        return sum / threads;
    }
}
