package io.ringstore.bench;

import io.ringstore.state.HostState;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
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
import org.openjdk.jmh.infra.ThreadParams;

/**
 * What the host-wide state costs a router, in ns per operation, on one state file shared by the
 * benchmark's threads: acquiring and releasing an in-flight slot (atomic adds on the heap, then plain
 * stores of the counts into the shared mapping) on one backend for every thread ({@code acquireReleaseOneBackend}: with
 * {@code -t 2} one cache line bouncing between cores) and on a backend per thread; an availability
 * check (drain and health words of one cache line); the host-wide in-flight count of a backend (the
 * sum of its lease cells); the mean over the tracked backends. Four processes at once on one state
 * file: {@link StateMeasure}.
 *
 * <pre>
 * java -jar bench/target/benchmarks.jar StateBenchmark -t 1   # and -t 2
 * </pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class StateBenchmark {
    static final List<String> ENDPOINTS = List.of("10.0.0.1:80", "10.0.0.2:80", "10.0.0.3:80", "10.0.0.4:80");

    /** One state file in a temporary directory, removed afterwards, tracking {@link #ENDPOINTS}. */
    @State(Scope.Benchmark)
    public static class Data {
        Path dir;
        HostState state;
        int[] slots;

        @Setup(Level.Trial)
        public void open() throws Exception {
            dir = Files.createTempDirectory("ringstore-state-bench");
            state = HostState.open(dir.resolve("fleet.ring"));
            slots = state.track(ENDPOINTS);
        }

        @TearDown(Level.Trial)
        public void close() throws Exception {
            state.close();
            try (Stream<Path> files = Files.walk(dir)) {
                for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                    Files.delete(p);
                }
            }
        }
    }

    /** A thread's own backend (thread i takes the i-th tracked one) and its clock for availability checks. */
    @State(Scope.Thread)
    public static class Own {
        int slot;
        long now;

        @Setup(Level.Trial)
        public void start(Data data, ThreadParams thread) {
            slot = data.slots[thread.getThreadIndex() % data.slots.length];
            now = System.nanoTime();
        }
    }

    @Benchmark
    public void acquireReleaseOneBackend(Data d) {
        d.state.acquire(d.slots[0]);
        d.state.release(d.slots[0]);
    }

    @Benchmark
    public void acquireReleaseOwnBackend(Data d, Own own) {
        d.state.acquire(own.slot);
        d.state.release(own.slot);
    }

    @Benchmark
    public boolean available(Data d, Own own) {
        return d.state.available(own.slot, own.now++);
    }

    @Benchmark
    public long inFlight(Data d, Own own) {
        return d.state.inFlight(own.slot);
    }

    @Benchmark
    public double meanInFlight(Data d) {
        return d.state.meanInFlight();
    }
}
