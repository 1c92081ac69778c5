package io.ringstore.bench;

import io.ringstore.Ring;
import io.ringstore.RingStore;
import io.ringstore.builder.RingBuilder;
import io.ringstore.family.RingVersion;
import io.ringstore.internal.format.PointSearch;
import java.io.DataOutputStream;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Set;

/**
 * ringstore's half of the comparison with pingora-ketama's Rust lookups (BENCHMARKS.md, "Lookups
 * against pingora-ketama"): 2,048 backends {@code 127.1.x.y:8080} × weight 10 as v1 (3,276,800
 * points) and v2:16 (327,675), 1,048,576 URL-like keys ({@link BenchRings#urlKeys}), each ring looked
 * up from the key ({@link Ring#lookup(byte[])}: CRC-32, then the search) and from the precomputed
 * CRC-32 ({@link Ring#lookupHash(long)}). Prints one line per round and side, {@code java SIDE ROUND
 * NS CHECKSUM}, the checksum the sum of the backend indexes found (pingora's node indexes are the
 * same numbers: the backends in the same order), as bench/pingora-lookup prints them for pingora.
 *
 * <pre>
 * java -cp $JAR io.ringstore.bench.PingoraLookupMeasure --write-keys KEYS   # the keys, for the Rust side
 * java -cp $JAR io.ringstore.bench.PingoraLookupMeasure [ROUNDS]
 * </pre>
 */
public final class PingoraLookupMeasure {
    private static final int BACKENDS = 2048;
    private static final int WEIGHT = 10;
    private static final int KEYS = 1 << 20;

    private PingoraLookupMeasure() {}

    public static void main(String[] args) throws Exception {
        byte[][] keys = BenchRings.urlKeys(KEYS, BenchRings.KEY_SEED);
        if (args.length == 2 && args[0].equals("--write-keys")) {
            writeKeys(keys, Path.of(args[1]));
            return;
        }
        int rounds = BenchArgs.count(
                args, 0, 5, "PingoraLookupMeasure", "PingoraLookupMeasure [ROUNDS] | --write-keys FILE");
        int[] hashes = BenchRings.hashes(keys);
        String[] names = {"v1", "v2:16"};
        RingStore[] stores = {open(RingVersion.V1, "v1"), open(RingVersion.v2(16), "v2-16")};
        Ring[] rings = {stores[0].ring(Set.of()), stores[1].ring(Set.of())};
        for (int r = 0; r < rings.length; r++) {
            reportIndex(names[r], rings[r]);
        }
        for (int round = 1; round <= rounds; round++) {
            long start0 = System.nanoTime();
            long crcs = crcOnly(rings[0], keys);
            report("crc", round, System.nanoTime() - start0, crcs);
            for (int r = 0; r < rings.length; r++) {
                long start = System.nanoTime();
                long sum = byHash(rings[r], hashes);
                report(names[r] + "-hash", round, System.nanoTime() - start, sum);
                start = System.nanoTime();
                sum = byKey(rings[r], keys);
                report(names[r] + "-key", round, System.nanoTime() - start, sum);
            }
        }
        for (RingStore s : stores) {
            s.close();
        }
    }

    private static long byHash(Ring ring, int[] hashes) {
        long sum = 0;
        for (int h : hashes) {
            sum += ring.lookupHash(h);
        }
        return sum;
    }

    private static long crcOnly(Ring ring, byte[][] keys) {
        long sum = 0;
        for (byte[] k : keys) {
            sum += ring.hash(k);
        }
        return sum;
    }

    private static long byKey(Ring ring, byte[][] keys) {
        long sum = 0;
        for (byte[] k : keys) {
            sum += ring.lookup(k);
        }
        return sum;
    }

    /**
     * The search's slice table as each process holds it: its heap bytes against the ring's point bytes,
     * and the time to build it (median of 5 builds).
     */
    private static void reportIndex(String name, Ring ring) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment points = BenchRings.mapPoints(ring, arena);
            int n = ring.pointCount();
            long[] nanos = new long[5];
            long bytes = 0;
            for (int i = 0; i < nanos.length; i++) {
                long start = System.nanoTime();
                bytes = PointSearch.index(points, n).bytes();
                nanos[i] = System.nanoTime() - start;
            }
            Arrays.sort(nanos);
            System.out.printf(
                    "index %s points %d point-bytes %d index-bytes %d (%.3f %%) built-ms %.2f%n",
                    name, n, points.byteSize(), bytes, 100.0 * bytes / points.byteSize(), nanos[2] / 1e6);
        }
    }

    private static void report(String side, int round, long nanos, long sum) {
        System.out.printf("java %s %d %.2f %d%n", side, round, (double) nanos / KEYS, sum);
    }

    private static RingStore open(RingVersion version, String name) throws Exception {
        BenchRings.Shape shape = new BenchRings.Shape("2048x10", BACKENDS, WEIGHT);
        Path file = BenchRings.dataDir().resolve("pingora-" + name + "-2048x10.ring");
        if (!Files.exists(file)) {
            Files.createDirectories(file.getParent());
            RingBuilder.of(shape.backendList()).version(version).generation(1).build(file);
        }
        return RingStore.open(file);
    }

    private static void writeKeys(byte[][] keys, Path file) throws IOException {
        try (DataOutputStream out = new DataOutputStream(Files.newOutputStream(file))) {
            out.writeInt(keys.length);
            for (byte[] k : keys) {
                out.writeShort(k.length);
                out.write(k);
            }
        }
    }
}
