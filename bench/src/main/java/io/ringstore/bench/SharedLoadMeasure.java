package io.ringstore.bench;

import io.ringstore.Backend;
import io.ringstore.balance.BoundedLoad;
import io.ringstore.builder.BackendList;
import io.ringstore.builder.RingBuilder;
import io.ringstore.live.RingRouter;
import io.ringstore.state.HostState;
import io.ringstore.state.SharedLoad;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.CyclicBarrier;

/**
 * What a lookup under the host's shared state costs next to a plain one, in ns per lookup, on a
 * 100-backend ring (160 points each) and 65,536 URI keys taken in turn: {@code Route.backend} (the
 * ring alone), {@code Route.choose} without a load bound (drain and health of the key's backend),
 * with c = 1.25 and no backend over the bound, and with 10 % of the backends over it (their keys,
 * about 10 %, go to the next candidate of their random-jump walk); and {@code choose} followed by
 * {@code acquire} + {@code release}, the whole bookkeeping of one request. With 1 and 2 threads of one
 * process, then 4 processes at once on the same state file. Also the bytes each thread allocated per
 * lookup ({@code com.sun.management.ThreadMXBean}), which should be 0.
 *
 * <pre>
 * java -cp bench/target/benchmarks.jar io.ringstore.bench.SharedLoadMeasure [--seconds S]
 * </pre>
 * The ring and state files live in a temporary directory, removed afterwards.
 */
public final class SharedLoadMeasure {
    private static final int BACKENDS = 100;
    private static final int KEYS = 1 << 16;
    private static final int BATCH = 1 << 12;
    /** Held on each overloaded backend: far over ⌈1.25 · (m + 1) / n⌉ = 7 for the 500 held in all. */
    private static final int HELD = 50;

    private static volatile long sink;
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private SharedLoadMeasure() {}

    /** One way of answering a key. */
    private interface Lookup {
        Object answer(RingRouter.Route route, byte[] key);
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("--child")) {
            child(Path.of(args[1]), Double.parseDouble(args[2]));
            return;
        }
        double seconds = args.length == 2 && args[0].equals("--seconds") ? Double.parseDouble(args[1]) : 2;
        Path dir = Files.createTempDirectory("ringstore-shared-load-measure");
        Path ring = dir.resolve("fleet.ring");
        StringBuilder fleet = new StringBuilder();
        for (int b = 0; b < BACKENDS; b++) {
            fleet.append("server 10.0.")
                    .append(b / 250)
                    .append('.')
                    .append(b % 250 + 1)
                    .append(":80\n");
        }
        RingBuilder.of(BackendList.parse("bench", fleet.toString())).build(ring);
        byte[][] keys = keys();
        try (RingRouter router =
                        RingRouter.builder(ring).pollMillis(0).jmx(false).open();
                HostState state = HostState.open(ring);
                RingRouter.Route route = router.route(java.util.Set.of())) {
            SharedLoad unbounded = SharedLoad.open(state, router::current, null);
            SharedLoad bounded = SharedLoad.open(state, router::current, BoundedLoad.of(BoundedLoad.DEFAULT_C));
            System.out.printf("%-52s %8s %10s %10s%n", "lookup", "threads", "ns/lookup", "B/lookup");
            for (int threads : new int[] {1, 2}) {
                report(
                        "Route.backend (plain)",
                        threads,
                        measure(threads, seconds, route, keys, RingRouter.Route::backend));
                report(
                        "Route.choose, no bound (drain, health)",
                        threads,
                        measure(threads, seconds, route, keys, (r, k) -> r.choose(k, unbounded)));
                report(
                        "Route.choose, c=1.25, none over the bound",
                        threads,
                        measure(threads, seconds, route, keys, (r, k) -> r.choose(k, bounded)));
                report(
                        "choose + acquire + release, c=1.25",
                        threads,
                        measure(threads, seconds, route, keys, (r, k) -> request(r, k, bounded)));
            }
            List<Backend> backends = router.current().backends();
            List<Integer> held = new ArrayList<>();
            for (int b = 0; b < BACKENDS; b += 10) {
                for (int i = 0; i < HELD; i++) {
                    held.add(bounded.acquire(backends.get(b)));
                }
            }
            long moved = 0;
            for (byte[] k : keys) {
                moved += route.choose(k, bounded) != route.backend(k) ? 1 : 0;
            }
            System.out.printf(
                    Locale.ROOT,
                    "(10 %% of the backends hold %d each: %.1f %% of the keys go past their ring backend)%n",
                    HELD,
                    100.0 * moved / KEYS);
            for (int threads : new int[] {1, 2}) {
                report(
                        "Route.choose, c=1.25, 10 % of backends over",
                        threads, measure(threads, seconds, route, keys, (r, k) -> r.choose(k, bounded)));
            }
            for (int token : held) {
                bounded.release(token);
            }
            List<Process> children = new ArrayList<>();
            for (int p = 0; p < 4; p++) {
                children.add(new ProcessBuilder(
                                Path.of(System.getProperty("java.home"), "bin", "java")
                                        .toString(),
                                "-cp",
                                System.getProperty("java.class.path"),
                                SharedLoadMeasure.class.getName(),
                                "--child",
                                ring.toString(),
                                String.valueOf(seconds))
                        .redirectError(ProcessBuilder.Redirect.INHERIT)
                        .start());
            }
            double[] sums = new double[3];
            for (Process c : children) {
                try (BufferedReader r =
                        new BufferedReader(new InputStreamReader(c.getInputStream(), StandardCharsets.US_ASCII))) {
                    for (int i = 0; i < sums.length; i++) {
                        sums[i] += Double.parseDouble(r.readLine());
                    }
                }
                c.waitFor();
            }
            String[] names = {"Route.backend (plain)", "Route.choose, c=1.25", "choose + acquire + release, c=1.25"};
            for (int i = 0; i < names.length; i++) {
                System.out.printf(
                        Locale.ROOT,
                        "%-52s %8s %10.1f%n",
                        names[i] + ", 4 processes",
                        "4 procs",
                        sums[i] / children.size());
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

    /** One of four processes: ns per plain lookup, per bounded choose, per request's bookkeeping, one number a line. */
    private static void child(Path ring, double seconds) throws Exception {
        byte[][] keys = keys();
        try (RingRouter router =
                        RingRouter.builder(ring).pollMillis(0).jmx(false).open();
                HostState state = HostState.open(ring);
                RingRouter.Route route = router.route(java.util.Set.of())) {
            SharedLoad bounded = SharedLoad.open(state, router::current, BoundedLoad.of(BoundedLoad.DEFAULT_C));
            System.out.println(measure(1, seconds, route, keys, RingRouter.Route::backend)[0]);
            System.out.println(measure(1, seconds, route, keys, (r, k) -> r.choose(k, bounded))[0]);
            System.out.println(measure(1, seconds, route, keys, (r, k) -> request(r, k, bounded))[0]);
        }
    }

    private static Backend request(RingRouter.Route route, byte[] key, SharedLoad load) {
        Backend b = route.choose(key, load);
        load.release(load.acquire(b));
        return b;
    }

    private static byte[][] keys() {
        SplittableRandom random = new SplittableRandom(BenchRings.KEY_SEED);
        byte[][] keys = new byte[KEYS][];
        for (int k = 0; k < KEYS; k++) {
            keys[k] = ("/objects/" + Long.toHexString(random.nextLong()) + ".jpg").getBytes(StandardCharsets.US_ASCII);
        }
        return keys;
    }

    private static void report(String operation, int threads, double[] nsAndBytes) {
        System.out.printf(Locale.ROOT, "%-52s %8d %10.1f %10.2f%n", operation, threads, nsAndBytes[0], nsAndBytes[1]);
    }

    /**
     * Runs {@code lookup} over the keys on {@code threads} threads (each from its own offset) for a
     * warm-up second and then {@code seconds}; returns the mean ns per lookup of one thread, and the
     * mean bytes it allocated per lookup.
     */
    private static double[] measure(int threads, double seconds, RingRouter.Route route, byte[][] keys, Lookup lookup)
            throws Exception {
        CyclicBarrier start = new CyclicBarrier(threads);
        double[] ns = new double[threads];
        double[] bytes = new double[threads];
        List<Thread> running = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            running.add(Thread.ofPlatform().start(() -> {
                try {
                    int next = id * (KEYS / 2);
                    long keep = 0;
                    long warm = System.nanoTime() + 1_000_000_000L;
                    while (System.nanoTime() < warm) {
                        for (int i = 0; i < BATCH; i++, next = (next + 1) & (KEYS - 1)) {
                            keep += lookup.answer(route, keys[next]) == null ? 0 : 1;
                        }
                    }
                    start.await();
                    long ops = 0;
                    long allocatedBefore = 0;
                    long opsBefore = 0;
                    long begin = System.nanoTime();
                    long end = begin + (long) (seconds * 1e9);
                    long now;
                    do {
                        for (int i = 0; i < BATCH; i++, next = (next + 1) & (KEYS - 1)) {
                            keep += lookup.answer(route, keys[next]) == null ? 0 : 1;
                        }
                        ops += BATCH;
                        if (ops == BATCH) {
                            allocatedBefore =
                                    THREADS.getCurrentThreadAllocatedBytes(); // counted from the second batch on
                            opsBefore = ops;
                        }
                    } while ((now = System.nanoTime()) < end);
                    ns[id] = (double) (now - begin) / ops;
                    bytes[id] = ops == opsBefore
                            ? 0
                            : (double) (THREADS.getCurrentThreadAllocatedBytes() - allocatedBefore) / (ops - opsBefore);
                    sink += keep;
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }));
        }
        for (Thread t : running) {
            t.join();
        }
        return new double[] {mean(ns), mean(bytes)};
    }

    private static double mean(double[] values) {
        double sum = 0;
        for (double v : values) {
            sum += v;
        }
        return sum / values.length;
    }
}
