package io.ringstore.bench;

import io.ringstore.Ring;
import io.ringstore.RingStore;
import io.ringstore.family.KeyHash;
import io.ringstore.family.RingVersion;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
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
 * One lookup from the key in each ring family, against the family's key hash alone and against a
 * {@code TreeMap} of the same points: {@code version} × {@code servers} (backends of weights 1 to 10,
 * {@link FamilyRings}), over {@value FamilyRings#KEY_COUNT} URL-like keys of 20 to 60 bytes, one thread.
 *
 * <ul>
 *   <li>{@code keyHash}: the ring's {@link KeyHash} of the key's bytes ({@link KeyHash#hash(byte[])},
 *       {@link KeyHash#hash64(byte[], int, int)} for a ring of 64-bit points);
 *   <li>{@code lookup}: {@link Ring#lookup(byte[])} on the mapped file: that hash, then the search;
 *   <li>{@code treemap}: the same hash, then {@code ceilingEntry} wrapping to {@code firstEntry} (for
 *       HAProxy's family also the entry before it, the nearer of the two) in a
 *       {@code TreeMap<Long, Integer>} of the ring's points ({@link Baselines.TreeMapRing}), as
 *       spymemcached's {@code KetamaNodeLocator} and Dubbo's {@code ConsistentHashSelector} look up.
 * </ul>
 * The setup checks that the TreeMap answers every key as the ring does. Bytes per point of both, and
 * the table of all three, come from {@link FamilyReport}.
 *
 * <pre>
 * java -jar bench/target/benchmarks.jar FamilyLookupBenchmark -f 1 -wi 3 -i 5 -w 1s -r 1s -rf json -rff families.json
 * </pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "-Xmx2g")
public class FamilyLookupBenchmark {
    /** The ring file of one version and the keys. */
    @State(Scope.Benchmark)
    public static class Data {
        @Param({
            "v1",
            "v2:160",
            "libketama",
            "libmemcached",
            "libmemcached-spy",
            "twemproxy:fnv1a_64",
            "twemproxy:md5",
            "twemproxy:murmur",
            "spymemcached",
            "spymemcached-weighted",
            "xmemcached",
            "xmemcached-nginx",
            "dubbo",
            "couchbase",
            "envoy",
            "envoy-murmur2",
            "grpc",
            "libmemcached-consistent",
            "libmemcached-consistent:md5",
            "libmemcached-consistent:murmur3",
            "libmemcached-spy-unweighted",
            "haproxy",
            "grpc-java"
        })
        public String version;

        @Param({"100", "2048"})
        public int servers;

        Path dir;
        RingStore store;
        Ring ring;
        KeyHash keyHash;
        boolean wide;
        byte[][] keys;
        int mask;

        @Setup(Level.Trial)
        public void open() throws Exception {
            dir = Files.createTempDirectory("family-lookup");
            RingVersion v = RingVersion.parse(version);
            store = FamilyRings.build(v, servers, dir.resolve("ring"));
            ring = store.ring(Set.of(), v);
            keyHash = ring.keyHash();
            wide = ring.isWide();
            keys = FamilyRings.keys();
            mask = keys.length - 1;
        }

        @TearDown(Level.Trial)
        public void close() throws Exception {
            store.close();
            Files.delete(dir.resolve("ring"));
            Files.delete(dir);
        }
    }

    /** The TreeMap of the ring's points, checked against the ring for every key. */
    @State(Scope.Benchmark)
    public static class TreeMapState {
        Baselines.TreeMapRing map;

        @Setup(Level.Trial)
        public void build(Data data) {
            map = new Baselines.TreeMapRing(data.ring, data.store.backendCount());
            for (byte[] key : data.keys) {
                int expected = data.ring.lookup(key);
                int actual = lookup(data, map, key);
                if (actual != expected) {
                    throw new IllegalStateException("treemap answers backend " + actual + " for key "
                            + new String(key, StandardCharsets.US_ASCII) + " in " + data.version
                            + "; the ring file answers " + expected);
                }
            }
        }
    }

    @Benchmark
    public long keyHash(Data data, KeyCursor cursor) {
        byte[] key = data.keys[cursor.next(data.mask)];
        return data.wide ? data.keyHash.hash64(key, 0, key.length) : data.keyHash.hash(key);
    }

    @Benchmark
    public int lookup(Data data, KeyCursor cursor) {
        return data.ring.lookup(data.keys[cursor.next(data.mask)]);
    }

    @Benchmark
    public int treemap(Data data, TreeMapState treemap, KeyCursor cursor) {
        return lookup(data, treemap.map, data.keys[cursor.next(data.mask)]);
    }

    private static int lookup(Data data, Baselines.TreeMapRing map, byte[] key) {
        return data.wide
                ? map.backend64(data.keyHash.hash64(key, 0, key.length))
                : map.applyAsInt(data.keyHash.hash(key));
    }
}
