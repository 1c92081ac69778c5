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
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The host-wide state under {@code --procs} processes at once (4 by default), each a JVM of its own on
 * the same ring and state file, in ns per operation of one process: acquire + release on one backend
 * for every process and on a backend each, and a router's request path: {@code Route.backend} (the ring
 * alone), {@code Route.choose} with c = 1.25, and choose + acquire + release. Each process runs its
 * loop for a warm-up second, then {@code --seconds}; the figure is the mean over the processes. Threads
 * of one process, and every other figure of the state: the JMH benchmarks {@link StateBenchmark} and
 * {@link StrictBoundBenchmark}; JMH cannot run processes side by side.
 *
 * <pre>
 * java -cp bench/target/benchmarks.jar io.ringstore.bench.StateMeasure [--procs N] [--seconds S]
 * </pre>
 * The ring (100 backends, 160 points each) and state files live in a temporary directory, removed
 * afterwards.
 */
public final class StateMeasure {
    private static final int BACKENDS = 100;
    private static final int KEYS = 1 << 16;
    private static final int BATCH = 1 << 12;

    private static volatile long sink;

    private StateMeasure() {}

    /** What each process does, one operation at a time, and the line it is reported under. */
    private enum Operation {
        ONE_BACKEND("acquire+release, one backend"),
        A_BACKEND_EACH("acquire+release, a backend each"),
        BACKEND("Route.backend (plain)"),
        CHOOSE("Route.choose, c=1.25"),
        REQUEST("choose + acquire + release, c=1.25");

        final String title;

        Operation(String title) {
            this.title = title;
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("--child")) {
            child(Operation.valueOf(args[1]), Path.of(args[2]), Integer.parseInt(args[3]), Double.parseDouble(args[4]));
            return;
        }
        int procs = 4;
        double seconds = 2;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--procs" -> procs = Integer.parseInt(args[++i]);
                case "--seconds" -> seconds = Double.parseDouble(args[++i]);
                default ->
                    throw new IllegalArgumentException(
                            "unknown argument: " + args[i] + " (usage: StateMeasure [--procs N] [--seconds S])");
            }
        }
        Path dir = Files.createTempDirectory("ringstore-state-measure");
        Path ring = dir.resolve("fleet.ring");
        try {
            RingBuilder.of(BackendList.parse("bench", fleet())).build(ring);
            System.out.printf("%-40s %8s %10s%n", "operation", "procs", "ns/op");
            for (Operation op : Operation.values()) {
                List<Process> children = new ArrayList<>();
                for (int p = 0; p < procs; p++) {
                    children.add(new ProcessBuilder(
                                    Path.of(System.getProperty("java.home"), "bin", "java")
                                            .toString(),
                                    "-cp",
                                    System.getProperty("java.class.path"),
                                    StateMeasure.class.getName(),
                                    "--child",
                                    op.name(),
                                    ring.toString(),
                                    String.valueOf(p),
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
                    if (c.waitFor() != 0) {
                        throw new IllegalStateException("a child process of " + op + " exited " + c.exitValue());
                    }
                }
                System.out.printf(Locale.ROOT, "%-40s %8d %10.1f%n", op.title, procs, sum / procs);
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

    private static String fleet() {
        StringBuilder fleet = new StringBuilder();
        for (int b = 0; b < BACKENDS; b++) {
            fleet.append("server 10.0.")
                    .append(b / 250)
                    .append('.')
                    .append(b % 250 + 1)
                    .append(":80\n");
        }
        return fleet.toString();
    }

    /** Process {@code index} of the run: prints its ns per operation, one number. */
    private static void child(Operation op, Path ring, int index, double seconds) throws Exception {
        byte[][] keys = BenchRings.urlKeys(KEYS, BenchRings.KEY_SEED);
        try (RingRouter router =
                        RingRouter.builder(ring).pollMillis(0).jmx(false).open();
                HostState state = HostState.open(ring);
                RingRouter.Route route = router.route(Set.of())) {
            SharedLoad bounded = SharedLoad.open(state, router::current, BoundedLoad.of(BoundedLoad.DEFAULT_C));
            List<Backend> backends = router.current().backends();
            int[] slots = state.track(List.of(
                    backends.get(0).address(),
                    backends.get(1).address(),
                    backends.get(2).address(),
                    backends.get(3).address()));
            int slot = op == Operation.A_BACKEND_EACH ? slots[index % slots.length] : slots[0];
            int start = (int) ((long) KEYS * index / 8); // each process from its own place in the keys
            Batch batch = switch (op) {
                case ONE_BACKEND, A_BACKEND_EACH ->
                    from -> {
                        for (int i = 0; i < BATCH; i++) {
                            state.acquire(slot);
                            state.release(slot);
                        }
                        return 0;
                    };
                case BACKEND ->
                    from -> {
                        long n = 0;
                        for (int i = 0; i < BATCH; i++) {
                            n += route.backend(keys[(from + i) & (KEYS - 1)]).index();
                        }
                        return n;
                    };
                case CHOOSE ->
                    from -> {
                        long n = 0;
                        for (int i = 0; i < BATCH; i++) {
                            n += route.choose(keys[(from + i) & (KEYS - 1)], bounded)
                                    .index();
                        }
                        return n;
                    };
                case REQUEST ->
                    from -> {
                        long n = 0;
                        for (int i = 0; i < BATCH; i++) {
                            Backend b = route.choose(keys[(from + i) & (KEYS - 1)], bounded);
                            bounded.release(bounded.acquire(b));
                            n += b.index();
                        }
                        return n;
                    };
            };
            System.out.println(measure(batch, start, seconds));
        }
    }

    /** {@value #BATCH} operations from key {@code from} on, returning something to keep. */
    private interface Batch {
        long run(int from);
    }

    /** Runs {@code batch} for a warm-up second and then {@code seconds}; returns ns per operation. */
    private static double measure(Batch batch, int start, double seconds) {
        long keep = 0;
        int from = start;
        long warm = System.nanoTime() + 1_000_000_000L;
        while (System.nanoTime() < warm) {
            keep += batch.run(from);
            from += BATCH;
        }
        long ops = 0;
        long begin = System.nanoTime();
        long end = begin + (long) (seconds * 1e9);
        long now;
        do {
            keep += batch.run(from);
            from += BATCH;
            ops += BATCH;
        } while ((now = System.nanoTime()) < end);
        sink += keep;
        return (double) (now - begin) / ops;
    }
}
