package io.ringstore.bench;

import io.ringstore.Backend;
import io.ringstore.Ring;
import io.ringstore.RingStore;
import io.ringstore.builder.RingBuilder;
import io.ringstore.family.KeyHash;
import io.ringstore.family.RingVersion;
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
import org.openjdk.jmh.infra.Blackhole;

/**
 * What a router's handle costs a lookup: a {@link RingRouter.Route} with a rollout policy against a
 * plain {@link Ring} of the same file, per key form, the failover walk of both, and where a rollout
 * lookup's time goes.
 *
 * <p>The file holds two versions of the size's ring (v1 and v2 with 160 points per weight unit, so
 * both rings have the size's point count). The plain ring is v1's, in a store opened with
 * {@link RingStore#open}; {@code plain*} answer from it. The router ({@link Rollout}) rolls out from v1
 * to {@code rolloutTo} at {@code percent} % (50 by default: half the keys are answered by each ring and
 * the rollout bucket, a CRC-32C of the key, is computed on every call; {@code -p percent=0} measures
 * the handle without that hash; {@code -p rolloutTo=v1}, both versions on one ring, the bucket and the
 * branch without a second ring in the caches), and a counter per version is incremented; {@code route*}
 * answer from it. Both answer a {@link Backend} (what a router needs to connect), so the plain side pays
 * the backend-table read too. Keys are the same bytes in every form: {@code byte[]}, heap and direct
 * {@link ByteBuffer}s, native {@link MemorySegment}s.
 *
 * <p>The parts of a rollout lookup, each alone: {@code ringHash*} the key's hash in the plain ring's
 * family, {@code bucket*} the rollout bucket ({@link RolloutPolicy#bucket}: CRC-32C and the finaliser),
 * {@code plainAndBucket*} the plain lookup and the bucket, both kept (the second hash without a
 * branch). Only the {@code route*} benchmarks take the rollout's parameters.
 *
 * <p>Failover ({@code *Select}): the nginx walk of at most {@link Ring#NGINX_MAX_POINTS} points with
 * an accept test rejecting every tenth backend (as down or unhealthy), from {@code byte[]} keys;
 * {@link Ring#select} takes an {@link IntPredicate} on indexes, the route a {@link Predicate} on
 * {@link Backend}s. Run with {@code -prof gc}: {@code gc.alloc.rate.norm} is the bytes allocated per
 * call.
 *
 * <pre>
 * java -jar bench/target/benchmarks.jar RouterBenchmark -p percent=0,50,100 -p rolloutTo=v2,v1 -prof gc
 * </pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 2, jvmArgsAppend = "-Xmx4g")
public class RouterBenchmark {
    static final RingVersion NEW_VERSION = RingVersion.v2(RingVersion.V1.pointMultiple());

    /** The two-version file, its plain v1 ring and the keys in every form. */
    @State(Scope.Benchmark)
    public static class Data {
        @Param({BenchRings.MEDIUM})
        public String size;

        Path file;
        RingStore plain;
        Ring plainRing;
        KeyHash keyHash;
        Arena arena;
        byte[][] keys;
        ByteBuffer[] heapBuffers;
        ByteBuffer[] directBuffers;
        MemorySegment[] segments;
        int mask;
        IntPredicate acceptIndex;
        boolean[] rejected;

        @Setup(Level.Trial)
        public void open() throws Exception {
            file = twoVersionFile(BenchRings.Shape.of(size));
            plain = RingStore.open(file);
            plainRing = plain.ring(Set.of(), RingVersion.V1);
            keyHash = plainRing.keyHash();
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
            rejected = new boolean[plain.backendCount()];
            for (int b = 0; b < rejected.length; b += 10) {
                rejected[b] = true;
            }
            acceptIndex = b -> !rejected[b];
        }

        @TearDown(Level.Trial)
        public void close() {
            plain.close();
            arena.close();
        }
    }

    /** A router over the same file, rolling out from v1 to {@code rolloutTo} at {@code percent} %. */
    @State(Scope.Benchmark)
    public static class Rollout {
        /** The rollout: 50 % answers half the keys from each version; 0 skips the rollout hash (the handle alone). */
        @Param({"50"})
        public double percent;
        /** The version rolled out to: {@code v2} (v2 with 160 points per weight unit), or {@code v1} (one ring). */
        @Param({"v2"})
        public String rolloutTo;

        RingRouter router;
        RingRouter.Route route;
        Predicate<Backend> acceptBackend;

        @Setup(Level.Trial)
        public void open(Data data) throws Exception {
            RingVersion to = switch (rolloutTo) {
                case "v2" -> NEW_VERSION;
                case "v1" -> RingVersion.V1;
                default -> throw new IllegalArgumentException("rolloutTo must be v2 or v1: " + rolloutTo);
            };
            router = RingRouter.builder(data.file)
                    .versions(RingVersion.V1, to)
                    .policy(RolloutPolicy.everywhere(percent))
                    .pollMillis(0)
                    .jmx(false) // no poller: the file does not change here
                    .open();
            route = router.route(Set.of());
            acceptBackend = b -> !data.rejected[b.index()];
            check(data, data.plain.ring(Set.of(), to));
        }

        /** Every form answers what the ring of the version the policy picks answers, before anything is measured. */
        private void check(Data data, Ring newRing) {
            RolloutPolicy policy = router.policy();
            byte[][] keys = data.keys;
            int migrated = 0;
            for (int k = 0; k < keys.length; k++) {
                boolean migrates = policy.migrates(keys[k], 0, keys[k].length);
                migrated += migrates ? 1 : 0;
                Ring ring = migrates ? newRing : data.plainRing;
                long hash = ring.hash(keys[k]);
                String expected = data.plain.backend(ring.lookupHash(hash)).address();
                String selected = data.plain
                        .backend(ring.select(hash, Ring.NGINX_MAX_POINTS, data.acceptIndex))
                        .address();
                if (!route.backend(keys[k]).address().equals(expected)
                        || !route.backend(data.heapBuffers[k]).address().equals(expected)
                        || !route.backend(data.directBuffers[k]).address().equals(expected)
                        || !route.backend(data.segments[k]).address().equals(expected)
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
    public Backend routeBytes(Data data, Rollout rollout, KeyCursor cursor) {
        return rollout.route.backend(data.keys[cursor.next(data.mask)]);
    }

    @Benchmark
    public Backend plainHeapBuffer(Data data, KeyCursor cursor) {
        return backend(data.plain, data.plainRing.lookup(data.heapBuffers[cursor.next(data.mask)]));
    }

    @Benchmark
    public Backend routeHeapBuffer(Data data, Rollout rollout, KeyCursor cursor) {
        return rollout.route.backend(data.heapBuffers[cursor.next(data.mask)]);
    }

    @Benchmark
    public Backend plainDirectBuffer(Data data, KeyCursor cursor) {
        return backend(data.plain, data.plainRing.lookup(data.directBuffers[cursor.next(data.mask)]));
    }

    @Benchmark
    public Backend routeDirectBuffer(Data data, Rollout rollout, KeyCursor cursor) {
        return rollout.route.backend(data.directBuffers[cursor.next(data.mask)]);
    }

    @Benchmark
    public Backend plainSegment(Data data, KeyCursor cursor) {
        return backend(data.plain, data.plainRing.lookup(data.segments[cursor.next(data.mask)]));
    }

    @Benchmark
    public Backend routeSegment(Data data, Rollout rollout, KeyCursor cursor) {
        return rollout.route.backend(data.segments[cursor.next(data.mask)]);
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
    public Backend routeSelect(Data data, Rollout rollout, KeyCursor cursor) {
        return rollout.route.select(data.keys[cursor.next(data.mask)], Ring.NGINX_MAX_POINTS, rollout.acceptBackend);
    }

    @Benchmark
    public int ringHashBytes(Data data, KeyCursor cursor) {
        return data.keyHash.hash(data.keys[cursor.next(data.mask)]);
    }

    @Benchmark
    public int ringHashDirectBuffer(Data data, KeyCursor cursor) {
        return data.keyHash.hash(data.directBuffers[cursor.next(data.mask)]);
    }

    @Benchmark
    public int ringHashSegment(Data data, KeyCursor cursor) {
        return data.keyHash.hash(data.segments[cursor.next(data.mask)]);
    }

    @Benchmark
    public int bucketBytes(Data data, KeyCursor cursor) {
        byte[] key = data.keys[cursor.next(data.mask)];
        return RolloutPolicy.bucket(key, 0, key.length);
    }

    @Benchmark
    public int bucketDirectBuffer(Data data, KeyCursor cursor) {
        return RolloutPolicy.bucket(data.directBuffers[cursor.next(data.mask)]);
    }

    @Benchmark
    public int bucketSegment(Data data, KeyCursor cursor) {
        return RolloutPolicy.bucket(data.segments[cursor.next(data.mask)]);
    }

    @Benchmark
    public void plainAndBucketBytes(Data data, KeyCursor cursor, Blackhole sink) {
        byte[] key = data.keys[cursor.next(data.mask)];
        sink.consume(backend(data.plain, data.plainRing.lookup(key)));
        sink.consume(RolloutPolicy.bucket(key, 0, key.length));
    }

    @Benchmark
    public void plainAndBucketDirectBuffer(Data data, KeyCursor cursor, Blackhole sink) {
        ByteBuffer key = data.directBuffers[cursor.next(data.mask)];
        sink.consume(backend(data.plain, data.plainRing.lookup(key)));
        sink.consume(RolloutPolicy.bucket(key));
    }

    @Benchmark
    public void plainAndBucketSegment(Data data, KeyCursor cursor, Blackhole sink) {
        MemorySegment key = data.segments[cursor.next(data.mask)];
        sink.consume(backend(data.plain, data.plainRing.lookup(key)));
        sink.consume(RolloutPolicy.bucket(key));
    }
}
