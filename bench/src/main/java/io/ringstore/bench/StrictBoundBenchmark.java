package io.ringstore.bench;

import io.ringstore.Backend;
import io.ringstore.balance.BoundedLoad;
import io.ringstore.builder.BackendList;
import io.ringstore.builder.RingBuilder;
import io.ringstore.live.RingRouter;
import io.ringstore.state.HostState;
import io.ringstore.state.SharedLoad;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The lookup path and one request's bookkeeping, with and without the load bound (issue 20, the
 * strict bound), in ns per call on one thread: a 100-backend ring (160 points each), 65,536 URL-like
 * keys taken in turn, one state file, nothing else in flight. {@code backend}: the ring alone;
 * {@code choose*}: {@code Route.choose} without a bound and with c = 1.25; {@code request*}: choose,
 * acquire, release (check, then count: the only way before the strict bound); {@code strict*}:
 * {@code Route.chooseAndAcquire} and release (reserve, then check). bench/results/2026-12-01-strict-bound.md
 * runs it on the commit before the strict bound (without the strict methods) and after, in one session.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "-Xmx1g")
public class StrictBoundBenchmark {
    private static final int BACKENDS = 100;

    @State(Scope.Thread)
    public static class Data {
        Path dir;
        RingRouter router;
        RingRouter.Route route;
        HostState state;
        SharedLoad unbounded;
        SharedLoad bounded;
        byte[][] keys;
        int next;

        @Setup(Level.Trial)
        public void open() throws Exception {
            dir = Files.createTempDirectory("ringstore-strict-bound-bench");
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
            router = RingRouter.builder(ring).pollMillis(0).jmx(false).open();
            route = router.route(Set.of());
            state = HostState.open(ring);
            unbounded = SharedLoad.open(state, router::current, null);
            bounded = SharedLoad.open(state, router::current, BoundedLoad.of(BoundedLoad.DEFAULT_C));
            keys = BenchRings.urlKeys(65_536, BenchRings.KEY_SEED);
        }

        byte[] key() {
            byte[] k = keys[next];
            next = (next + 1) & (keys.length - 1);
            return k;
        }

        @TearDown(Level.Trial)
        public void close() throws Exception {
            state.close();
            router.close();
            try (Stream<Path> files = Files.walk(dir)) {
                for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                    Files.delete(p);
                }
            }
        }
    }

    @Benchmark
    public Backend backend(Data d) {
        return d.route.backend(d.key());
    }

    @Benchmark
    public Backend chooseUnbounded(Data d) {
        return d.route.choose(d.key(), d.unbounded);
    }

    @Benchmark
    public Backend chooseBounded(Data d) {
        return d.route.choose(d.key(), d.bounded);
    }

    @Benchmark
    public Backend requestUnbounded(Data d) {
        Backend b = d.route.choose(d.key(), d.unbounded);
        d.unbounded.release(d.unbounded.acquire(b));
        return b;
    }

    @Benchmark
    public Backend requestBounded(Data d) {
        Backend b = d.route.choose(d.key(), d.bounded);
        d.bounded.release(d.bounded.acquire(b));
        return b;
    }

    @Benchmark
    public Backend strictUnbounded(Data d) {
        Backend b = d.route.chooseAndAcquire(d.key(), d.unbounded);
        d.unbounded.release(d.unbounded.token(b));
        return b;
    }

    @Benchmark
    public Backend strictBounded(Data d) {
        Backend b = d.route.chooseAndAcquire(d.key(), d.bounded);
        d.bounded.release(d.bounded.token(b));
        return b;
    }
}
