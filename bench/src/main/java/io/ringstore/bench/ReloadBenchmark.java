package io.ringstore.bench;

import io.ringstore.Ring;
import io.ringstore.RingStore;
import io.ringstore.live.RingRouter;
import java.util.Set;
import java.util.concurrent.TimeUnit;
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

/**
 * What hot reload costs a lookup: the same ring read through a plain {@link RingStore} (shared arena,
 * closed explicitly) and through the current store of a {@link RingRouter} following the file (also a
 * shared arena since issue 11, closed by the router's watcher a grace period after a switch; the
 * benchmark name {@code gcManagedStore} is from when it was an automatic one). Precomputed hashes,
 * one thread. The router's own lookups ({@link RingRouter.Route}, which follow new generations) take
 * keys, not hashes: {@code RouterBenchmark -p percent=0} measures them against a plain ring.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = "-Xmx4g")
public class ReloadBenchmark {
    @State(Scope.Benchmark)
    public static class Data {
        @Param({BenchRings.SMALL, BenchRings.MEDIUM})
        public String size;

        RingStore plain;
        Ring plainRing;
        RingRouter watched;
        Ring watchedRing;
        int[] hashes;
        int mask;

        @Setup(Level.Trial)
        public void open() throws Exception {
            plain = BenchRings.open(size);
            plainRing = plain.ring(Set.of());
            watched = RingRouter.builder(plain.path())
                    .pollMillis(0)
                    .jmx(false)
                    .open(); // no poller: the path does not change here
            watchedRing = watched.current().ring(Set.of());
            hashes = BenchRings.hashes(BenchRings.urlKeys(65_536, BenchRings.KEY_SEED));
            mask = hashes.length - 1;
        }

        @TearDown(Level.Trial)
        public void close() {
            watched.close();
            plain.close();
        }
    }

    @Benchmark
    public int plainStore(Data data, KeyCursor cursor) {
        return data.plainRing.lookupHash(data.hashes[cursor.next(data.mask)]);
    }

    @Benchmark
    public int gcManagedStore(Data data, KeyCursor cursor) {
        return data.watchedRing.lookupHash(data.hashes[cursor.next(data.mask)]);
    }
}
