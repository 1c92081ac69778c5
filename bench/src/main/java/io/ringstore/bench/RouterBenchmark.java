package io.ringstore.bench;

import io.ringstore.Backend;
import io.ringstore.Ring;
import io.ringstore.RingStore;
import io.ringstore.RingVersion;
import io.ringstore.builder.RingBuilder;
import io.ringstore.live.RingRouter;
import io.ringstore.migration.RolloutPolicy;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.IntPredicate;
import java.util.function.Predicate;
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
 * What a router's handle costs a lookup: a {@link RingRouter.Route} with a rollout policy against a
 * plain {@link Ring} of the same file, per key form, and the failover walk of both.
 *
 * <p>The file holds two versions of the size's ring (v1 and v2 with 160 points per weight unit, so
 * both rings have the size's point count); the router rolls out from v1 to v2 at {@code percent} %
 * (50 by default: half the keys are answered by each ring and the rollout bucket, a CRC-32C of the
 * key, is computed on every call; {@code -p percent=0} measures the handle without that hash), and a
 * counter per version is incremented. The plain ring is v1's, in a store opened
 * with {@link RingStore#open}. Both answer a {@link Backend} (what a router needs to connect), so the
 * plain side pays the backend-table read too. Keys are the same bytes in every form: {@code byte[]},
 * heap and direct {@link ByteBuffer}s, native {@link MemorySegment}s.
 *
 * <p>Failover ({@code *Select}): the nginx walk of at most {@link Ring#NGINX_MAX_POINTS} points with
 * an accept test rejecting every tenth backend (as down or unhealthy), from {@code byte[]} keys;
 * {@link Ring#select} takes an {@link IntPredicate} on indexes, the route a {@link Predicate} on
 * {@link Backend}s. Run with {@code -prof gc}: {@code gc.alloc.rate.norm} is the bytes allocated per
 * call.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 2, jvmArgsAppend = "-Xmx4g")
public class RouterBenchmark {
    static final RingVersion NEW_VERSION = RingVersion.v2(RingVersion.V1.pointMultiple());

    @State(Scope.Benchmark)
    public static class Data {
        @Param({BenchRings.MEDIUM})
        public String size;
        /** The rollout: 50 % answers half the keys from each version; 0 skips the rollout hash (the handle alone). */
        @Param({"50"})
        public double percent;

        RingStore plain;
        Ring plainRing;
        RingRouter router;
        RingRouter.Route route;
        Arena arena;
        byte[][] keys;
        ByteBuffer[] heapBuffers;
        ByteBuffer[] directBuffers;
        MemorySegment[] segments;
        int mask;
        IntPredicate acceptIndex;
        Predicate<Backend> acceptBackend;

        @Setup(Level.Trial)
        public void open() throws Exception {
            Path file = twoVersionFile(BenchRings.Shape.of(size));
            plain = RingStore.open(file);
            plainRing = plain.ring(Set.of(), RingVersion.V1);
            router = RingRouter.builder(file)
                    .versions(RingVersion.V1, NEW_VERSION)
                    .policy(RolloutPolicy.everywhere(percent))
                    .pollMillis(0)
                    .jmx(false) // no poller: the file does not change here
                    .open();
            route = router.route(Set.of());
            keys = BenchRings.urlKeys(65_536, BenchRings.KEY_SEED);
            mask = keys.length - 1;
            arena = Arena.ofShared();
            heapBuffers = new ByteBuffer[keys.length];
            directBuffers = new ByteBuffer[keys.length];
            segments = new MemorySegment[keys.length];
            for (int k = 0; k < keys.length; k++) {
                heapBuffers[k] = ByteBuffer.wrap(keys[k]);
                directBuffers[k] =
                        ByteBuffer.allocateDirect(keys[k].length).put(keys[k]).flip();
                segments[k] = arena.allocate(keys[k].length).copyFrom(MemorySegment.ofArray(keys[k]));
            }
            boolean[] rejected = new boolean[plain.backendCount()];
            for (int b = 0; b < rejected.length; b += 10) {
                rejected[b] = true;
            }
            acceptIndex = b -> !rejected[b];
            acceptBackend = b -> !rejected[b.index()];
            check();
        }

        /** Every form answers what the ring of the version the policy picks answers, before anything is measured. */
        private void check() {
            Ring newRing = plain.ring(Set.of(), NEW_VERSION);
            RolloutPolicy policy = router.policy();
            int migrated = 0;
            for (int k = 0; k < keys.length; k++) {
                boolean migrates = policy.migrates(keys[k], 0, keys[k].length);
                migrated += migrates ? 1 : 0;
                Ring ring = migrates ? newRing : plainRing;
                long hash = ring.hash(keys[k]);
                String expected = plain.backend(ring.lookupHash(hash)).address();
                String selected = plain.backend(ring.select(hash, Ring.NGINX_MAX_POINTS, acceptIndex))
                        .address();
                if (!route.backend(keys[k]).address().equals(expected)
                        || !route.backend(heapBuffers[k]).address().equals(expected)
                        || !route.backend(directBuffers[k]).address().equals(expected)
                        || !route.backend(segments[k]).address().equals(expected)
                        || !route.select(keys[k], Ring.NGINX_MAX_POINTS, acceptBackend)
                                .address()
                                .equals(selected)) {
                    throw new IllegalStateException("route and ring disagree on key " + k);
                }
            }
            if (Math.abs(migrated - keys.length * percent / 100) > keys.length / 50.0) {
                throw new IllegalStateException(
                        migrated + " of " + keys.length + " keys on the new version at " + percent + " %");
            }
            router.resetCounters();
        }

        @TearDown(Level.Trial)
        public void close() {
            router.close();
            plain.close();
            arena.close();
        }
    }

    /** The size's backends in a file with v1 and {@link #NEW_VERSION}, cached beside the other bench rings. */
    static Path twoVersionFile(BenchRings.Shape shape) throws Exception {
        Path file = BenchRings.dataDir().resolve("v1v2-" + shape.name() + ".ring");
        if (Files.exists(file)) {
            try (RingStore store = RingStore.open(file)) {
                if (store.versions().equals(List.of(RingVersion.V1, NEW_VERSION))
                        && store.backendCount() == shape.backends()
                        && store.backend(shape.backends() - 1).address().equals(shape.address(shape.backends() - 1))) {
                    return file;
                }
            }
        }
        Files.createDirectories(file.getParent());
        System.err.println("bench: building " + file + " (2 x " + shape.points() + " points)");
        RingBuilder.of(shape.backendList())
                .version(RingVersion.V1)
                .version(NEW_VERSION)
                .generation(1)
                .build(file);
        return file;
    }

    private static Backend backend(RingStore store, int index) {
        return index < 0 ? null : store.backend(index);
    }

    @Benchmark
    public Backend plainBytes(Data data, KeyCursor cursor) {
        return backend(data.plain, data.plainRing.lookup(data.keys[cursor.next(data.mask)]));
    }

    @Benchmark
    public Backend routeBytes(Data data, KeyCursor cursor) {
        return data.route.backend(data.keys[cursor.next(data.mask)]);
    }

    @Benchmark
    public Backend plainHeapBuffer(Data data, KeyCursor cursor) {
        return backend(data.plain, data.plainRing.lookup(data.heapBuffers[cursor.next(data.mask)]));
    }

    @Benchmark
    public Backend routeHeapBuffer(Data data, KeyCursor cursor) {
        return data.route.backend(data.heapBuffers[cursor.next(data.mask)]);
    }

    @Benchmark
    public Backend plainDirectBuffer(Data data, KeyCursor cursor) {
        return backend(data.plain, data.plainRing.lookup(data.directBuffers[cursor.next(data.mask)]));
    }

    @Benchmark
    public Backend routeDirectBuffer(Data data, KeyCursor cursor) {
        return data.route.backend(data.directBuffers[cursor.next(data.mask)]);
    }

    @Benchmark
    public Backend plainSegment(Data data, KeyCursor cursor) {
        return backend(data.plain, data.plainRing.lookup(data.segments[cursor.next(data.mask)]));
    }

    @Benchmark
    public Backend routeSegment(Data data, KeyCursor cursor) {
        return data.route.backend(data.segments[cursor.next(data.mask)]);
    }

    @Benchmark
    public Backend plainSelect(Data data, KeyCursor cursor) {
        return backend(
                data.plain,
                data.plainRing.select(
                        data.plainRing.hash(data.keys[cursor.next(data.mask)]),
                        Ring.NGINX_MAX_POINTS,
                        data.acceptIndex));
    }

    @Benchmark
    public Backend routeSelect(Data data, KeyCursor cursor) {
        return data.route.select(data.keys[cursor.next(data.mask)], Ring.NGINX_MAX_POINTS, data.acceptBackend);
    }
}
