package io.ringstore.bench;

import io.ringstore.Backend;
import io.ringstore.Ring;
import io.ringstore.RingRouter;
import io.ringstore.RingStore;
import io.ringstore.WatchedRingStore;
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

import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * What the router's live handle costs a lookup, side by side on the same ring file and keys: a
 * plain {@link Ring} (its store's shared arena never closed under it), a {@link WatchedRingStore.Live}
 * handle (follows switches; a lookup that meets an unmapped generation is retried, which costs an
 * exception handler that does nothing until it runs), and a {@link RingRouter.Route} (that plus the
 * rollout policy read and a per-version counter; at policy NONE the rollout bucket is not computed).
 * Byte-array keys, so the CRC-32 of the key is included. Run with {@code -prof gc} to see that none
 * allocates.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = "-Xmx4g")
public class RouterBenchmark {
    @State(Scope.Benchmark)
    public static class Data {
        @Param({BenchRings.SMALL, BenchRings.MEDIUM})
        public String size;

        RingStore plain;
        Ring plainRing;
        RingRouter router;
        WatchedRingStore.Live live;
        RingRouter.Route route;
        byte[][] keys;
        int mask;

        @Setup(Level.Trial)
        public void open() throws Exception {
            plain = BenchRings.open(size);
            plainRing = plain.ring(Set.of());
            Path path = plain.path();
            router = RingRouter.builder(path).pollMillis(0).jmx(false).open(); // no poller: the path does not change here
            live = router.watched().ring(Set.of());
            route = router.route(Set.of());
            keys = BenchRings.urlKeys(65_536, BenchRings.KEY_SEED);
            mask = keys.length - 1;
        }

        @TearDown(Level.Trial)
        public void close() {
            router.close();
            plain.close();
        }
    }

    @Benchmark
    public int plainRing(Data data, KeyCursor cursor) {
        return data.plainRing.lookup(data.keys[cursor.next(data.mask)]);
    }

    @Benchmark
    public Backend plainRingBackend(Data data, KeyCursor cursor) {
        Ring r = data.plainRing;
        int b = r.lookup(data.keys[cursor.next(data.mask)]);
        return b < 0 ? null : r.store().backend(b);
    }

    @Benchmark
    public int liveHandle(Data data, KeyCursor cursor) {
        return data.live.lookup(data.keys[cursor.next(data.mask)]);
    }

    @Benchmark
    public Backend routerRoute(Data data, KeyCursor cursor) {
        return data.route.backend(data.keys[cursor.next(data.mask)]);
    }
}
