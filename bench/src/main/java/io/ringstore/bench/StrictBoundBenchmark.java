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
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
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
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.ThreadParams;

/**
 * The lookup path and one request's bookkeeping under the host's shared state, with and without the
 * load bound, in ns per call: a 100-backend ring (160 points each), 65,536 URL-like keys taken in turn
 * (thread i of t from i/t of the way through them), one router and one state file shared by every
 * thread. {@code backend}: the ring alone; {@code choose*}: {@code Route.choose} without a bound (drain
 * and health of the key's backend) and with c = 1.25; {@code request*}: choose, acquire, release (check,
 * then count); {@code strict*}: {@code Route.chooseAndAcquire} and release (reserve, then check).
 *
 * <p>{@code -p overBound=10}: every tenth backend holds {@value #HELD} requests, far over the bound, so
 * the bounded calls send its keys (about a tenth) to the next candidate of their random-jump walk.
 * {@code -t 2}: two threads on one state file (the same cache lines); {@code -prof gc}: bytes per call,
 * 0 on every path. Four processes at once on one state file: {@link StateMeasure}.
 * bench/results/2026-12-01-strict-bound.md runs it on the commit before the strict bound (without the
 * strict methods) and after, in one session.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "-Xmx1g")
public class StrictBoundBenchmark {
    private static final int BACKENDS = 100;
    private static final int KEYS = 1 << 16;
    /** Held on each backend over the bound: far over ⌈1.25 · (m + 1) / n⌉ = 7 for the 500 held in all. */
    private static final int HELD = 50;

    @State(Scope.Benchmark)
    public static class Data {
        /** Percent of the backends held over the bound (every tenth backend for 10). */
        @Param({"0"})
        public int overBound;

        Path dir;
        RingRouter router;
        RingRouter.Route route;
        HostState state;
        SharedLoad unbounded;
        SharedLoad bounded;
        byte[][] keys;
        final List<Integer> held = new ArrayList<>();

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
            keys = BenchRings.urlKeys(KEYS, BenchRings.KEY_SEED);
            if (overBound < 0 || overBound > 100 || (overBound > 0 && 100 % overBound != 0)) {
                throw new IllegalArgumentException("overBound must divide 100: overBound=" + overBound);
            }
            List<Backend> backends = router.current().backends();
            for (int b = 0; overBound > 0 && b < BACKENDS; b += 100 / overBound) {
                for (int i = 0; i < HELD; i++) {
                    held.add(bounded.acquire(backends.get(b)));
                }
            }
        }

        @TearDown(Level.Trial)
        public void close() throws Exception {
            for (int token : held) {
                bounded.release(token);
            }
            state.close();
            router.close();
            try (Stream<Path> files = Files.walk(dir)) {
                for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                    Files.delete(p);
                }
            }
        }
    }

    /** Each thread's place in the keys: thread i of t starts i/t of the way through them. */
    @State(Scope.Thread)
    public static class Cursor {
        private int next;

        @Setup(Level.Trial)
        public void start(ThreadParams thread) {
            next = (int) ((long) KEYS * thread.getThreadIndex() / thread.getThreadCount());
        }

        byte[] key(Data d) {
            next = (next + 1) & (KEYS - 1);
            return d.keys[next];
        }
    }

    @Benchmark
    public Backend backend(Data d, Cursor c) {
        return d.route.backend(c.key(d));
    }

    @Benchmark
    public Backend chooseUnbounded(Data d, Cursor c) {
        return d.route.choose(c.key(d), d.unbounded);
    }

    @Benchmark
    public Backend chooseBounded(Data d, Cursor c) {
        return d.route.choose(c.key(d), d.bounded);
    }

    @Benchmark
    public Backend requestUnbounded(Data d, Cursor c) {
        Backend b = d.route.choose(c.key(d), d.unbounded);
        d.unbounded.release(d.unbounded.acquire(b));
        return b;
    }

    @Benchmark
    public Backend requestBounded(Data d, Cursor c) {
        Backend b = d.route.choose(c.key(d), d.bounded);
        d.bounded.release(d.bounded.acquire(b));
        return b;
    }

    @Benchmark
    public Backend strictUnbounded(Data d, Cursor c) {
        Backend b = d.route.chooseAndAcquire(c.key(d), d.unbounded);
        d.unbounded.release(d.unbounded.token(b));
        return b;
    }

    @Benchmark
    public Backend strictBounded(Data d, Cursor c) {
        Backend b = d.route.chooseAndAcquire(c.key(d), d.bounded);
        d.bounded.release(d.bounded.token(b));
        return b;
    }
}
