package io.ringstore.bench;

import io.ringstore.Backend;
import io.ringstore.KeyHash;
import io.ringstore.Ring;
import io.ringstore.RingStore;
import io.ringstore.RingVersion;
import io.ringstore.live.RingRouter;
import io.ringstore.migration.RolloutPolicy;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

/**
 * Where a rollout lookup's time goes (issue 21, "Rollouts"): each part of a route rolling out at 50 %
 * timed on its own, per key shape, against the plain ring lookup of the same keys, in alternating
 * rounds in one JVM (the median of the per-round ratios; {@link RouterRatio}'s method, for a loaded
 * machine), and the bytes allocated per call (the thread's allocation counter, over the measured
 * rounds). The keys are {@link RouterBenchmark}'s (URL-like, 20–120 bytes, 65,536 of them cycled),
 * the file its two-version file of 3.3 M points a version.
 *
 * <p>Parts, per shape ({@code byte[]}, direct {@link ByteBuffer}, native {@link MemorySegment}):
 * <ul>
 * <li>{@code ring hash}: the key's CRC-32 alone ({@link Ring#hash(byte[])});</li>
 * <li>{@code bucket}: the rollout bucket alone ({@link RolloutPolicy#bucket}: CRC-32C and the finaliser);</li>
 * <li>{@code plain+bucket}: the plain lookup and the bucket, both kept: the second hash without a branch;</li>
 * <li>{@code route 0 %}, {@code route 100 %}: the route's handle on one ring, no bucket computed;</li>
 * <li>{@code route 50 % one ring}: a router whose two versions are both v1: bucket and branch, one ring's caches;</li>
 * <li>{@code route 50 %}: the real thing, v1 and v2 (two rings sharing the caches).</li>
 * </ul>
 *
 * <pre>
 * java -Xmx4g -cp bench/target/benchmarks.jar io.ringstore.bench.RolloutCost [ROUNDS]
 * </pre>
 */
public final class RolloutCost {
    private static final int CALLS = 100_000;
    private static final int WARMUP = 8;
    /** Where answers go, so the calls are not optimised away. */
    private static volatile long sink;

    private RolloutCost() {}

    private interface Loop {
        long run();
    }

    private record Part(String shape, String name, Loop loop) {}

    private static long index(Backend b) {
        return b == null ? -1 : b.index();
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 31;
        Path file = RouterBenchmark.twoVersionFile(BenchRings.Shape.of(BenchRings.MEDIUM));
        byte[][] keys = BenchRings.urlKeys(65_536, BenchRings.KEY_SEED);
        int mask = keys.length - 1;
        try (RingStore plain = RingStore.open(file);
                Arena arena = Arena.ofShared();
                RingRouter half = RingRouter.builder(file)
                        .versions(RingVersion.V1, RouterBenchmark.NEW_VERSION)
                        .policy(RolloutPolicy.everywhere(50))
                        .pollMillis(0)
                        .jmx(false)
                        .open();
                RingRouter none = RingRouter.builder(file)
                        .versions(RingVersion.V1, RouterBenchmark.NEW_VERSION)
                        .policy(RolloutPolicy.everywhere(0))
                        .pollMillis(0)
                        .jmx(false)
                        .open();
                RingRouter all = RingRouter.builder(file)
                        .versions(RingVersion.V1, RouterBenchmark.NEW_VERSION)
                        .policy(RolloutPolicy.everywhere(100))
                        .pollMillis(0)
                        .jmx(false)
                        .open();
                RingRouter oneRing = RingRouter.builder(file)
                        .versions(RingVersion.V1, RingVersion.V1)
                        .policy(RolloutPolicy.everywhere(50))
                        .pollMillis(0)
                        .jmx(false)
                        .open()) {
            Ring ring = plain.ring(Set.of(), RingVersion.V1);
            RingRouter.Route r50 = half.route(Set.of());
            RingRouter.Route r0 = none.route(Set.of());
            RingRouter.Route r100 = all.route(Set.of());
            RingRouter.Route r50one = oneRing.route(Set.of());
            ByteBuffer[] direct = new ByteBuffer[keys.length];
            MemorySegment[] segments = new MemorySegment[keys.length];
            for (int k = 0; k < keys.length; k++) {
                direct[k] =
                        ByteBuffer.allocateDirect(keys[k].length).put(keys[k]).flip();
                segments[k] = arena.allocate(keys[k].length).copyFrom(MemorySegment.ofArray(keys[k]));
            }
            List<Part> parts = new ArrayList<>();
            // Each lambda holds its own loop, so that every call site in it sees one shape.
            parts.add(new Part("byte[]", "plain", () -> {
                long s = 0;
                for (int i = 0; i < CALLS; i++) s += index(plain.backend(ring.lookup(keys[i & mask])));
                return s;
            }));
            parts.add(new Part("byte[]", "ring hash", () -> {
                long s = 0;
                for (int i = 0; i < CALLS; i++) s += ring.hash(keys[i & mask]);
                return s;
            }));
            parts.add(new Part("byte[]", "crc32c", () -> {
                long s = 0;
                for (int i = 0; i < CALLS; i++) s += KeyHash.CRC32C.hash(keys[i & mask]);
                return s;
            }));
            parts.add(new Part("byte[]", "bucket", () -> {
                long s = 0;
                for (int i = 0; i < CALLS; i++) {
                    byte[] k = keys[i & mask];
                    s += RolloutPolicy.bucket(k, 0, k.length);
                }
                return s;
            }));
            parts.add(new Part("byte[]", "plain+bucket", () -> {
                long s = 0;
                for (int i = 0; i < CALLS; i++) {
                    byte[] k = keys[i & mask];
                    s += index(plain.backend(ring.lookup(k))) + RolloutPolicy.bucket(k, 0, k.length);
                }
                return s;
            }));
            parts.add(new Part("byte[]", "route 0 %", () -> {
                long s = 0;
                for (int i = 0; i < CALLS; i++) s += index(r0.backend(keys[i & mask]));
                return s;
            }));
            parts.add(new Part("byte[]", "route 100 %", () -> {
                long s = 0;
                for (int i = 0; i < CALLS; i++) s += index(r100.backend(keys[i & mask]));
                return s;
            }));
            parts.add(new Part("byte[]", "route 50 % one ring", () -> {
                long s = 0;
                for (int i = 0; i < CALLS; i++) s += index(r50one.backend(keys[i & mask]));
                return s;
            }));
            parts.add(new Part("byte[]", "route 50 %", () -> {
                long s = 0;
                for (int i = 0; i < CALLS; i++) s += index(r50.backend(keys[i & mask]));
                return s;
            }));

            parts.add(new Part("direct ByteBuffer", "plain", () -> {
                long s = 0;
                for (int i = 0; i < CALLS; i++) s += index(plain.backend(ring.lookup(direct[i & mask])));
                return s;
            }));
            parts.add(new Part("direct ByteBuffer", "ring hash", () -> {
                long s = 0;
                for (int i = 0; i < CALLS; i++) s += ring.hash(direct[i & mask]);
                return s;
            }));
            parts.add(new Part("direct ByteBuffer", "crc32c", () -> {
                long s = 0;
                for (int i = 0; i < CALLS; i++) s += KeyHash.CRC32C.hash(direct[i & mask]);
                return s;
            }));
            parts.add(new Part("direct ByteBuffer", "bucket", () -> {
                long s = 0;
                for (int i = 0; i < CALLS; i++) s += RolloutPolicy.bucket(direct[i & mask]);
                return s;
            }));
            parts.add(new Part("direct ByteBuffer", "plain+bucket", () -> {
                long s = 0;
                for (int i = 0; i < CALLS; i++) {
                    ByteBuffer k = direct[i & mask];
                    s += index(plain.backend(ring.lookup(k))) + RolloutPolicy.bucket(k);
                }
                return s;
            }));
            parts.add(new Part("direct ByteBuffer", "route 0 %", () -> {
                long s = 0;
                for (int i = 0; i < CALLS; i++) s += index(r0.backend(direct[i & mask]));
                return s;
            }));
            parts.add(new Part("direct ByteBuffer", "route 100 %", () -> {
                long s = 0;
                for (int i = 0; i < CALLS; i++) s += index(r100.backend(direct[i & mask]));
                return s;
            }));
            parts.add(new Part("direct ByteBuffer", "route 50 % one ring", () -> {
                long s = 0;
                for (int i = 0; i < CALLS; i++) s += index(r50one.backend(direct[i & mask]));
                return s;
            }));
            parts.add(new Part("direct ByteBuffer", "route 50 %", () -> {
                long s = 0;
                for (int i = 0; i < CALLS; i++) s += index(r50.backend(direct[i & mask]));
                return s;
            }));

            parts.add(new Part("native MemorySegment", "plain", () -> {
                long s = 0;
                for (int i = 0; i < CALLS; i++) s += index(plain.backend(ring.lookup(segments[i & mask])));
                return s;
            }));
            parts.add(new Part("native MemorySegment", "ring hash", () -> {
                long s = 0;
                for (int i = 0; i < CALLS; i++) s += ring.hash(segments[i & mask]);
                return s;
            }));
            parts.add(new Part("native MemorySegment", "crc32c", () -> {
                long s = 0;
                for (int i = 0; i < CALLS; i++) s += KeyHash.CRC32C.hash(segments[i & mask]);
                return s;
            }));
            parts.add(new Part("native MemorySegment", "bucket", () -> {
                long s = 0;
                for (int i = 0; i < CALLS; i++) s += RolloutPolicy.bucket(segments[i & mask]);
                return s;
            }));
            parts.add(new Part("native MemorySegment", "plain+bucket", () -> {
                long s = 0;
                for (int i = 0; i < CALLS; i++) {
                    MemorySegment k = segments[i & mask];
                    s += index(plain.backend(ring.lookup(k))) + RolloutPolicy.bucket(k);
                }
                return s;
            }));
            parts.add(new Part("native MemorySegment", "route 0 %", () -> {
                long s = 0;
                for (int i = 0; i < CALLS; i++) s += index(r0.backend(segments[i & mask]));
                return s;
            }));
            parts.add(new Part("native MemorySegment", "route 100 %", () -> {
                long s = 0;
                for (int i = 0; i < CALLS; i++) s += index(r100.backend(segments[i & mask]));
                return s;
            }));
            parts.add(new Part("native MemorySegment", "route 50 % one ring", () -> {
                long s = 0;
                for (int i = 0; i < CALLS; i++) s += index(r50one.backend(segments[i & mask]));
                return s;
            }));
            parts.add(new Part("native MemorySegment", "route 50 %", () -> {
                long s = 0;
                for (int i = 0; i < CALLS; i++) s += index(r50.backend(segments[i & mask]));
                return s;
            }));

            int n = parts.size();
            com.sun.management.ThreadMXBean threads =
                    (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
            long thread = Thread.currentThread().threadId();
            long[] allocated = new long[n];
            double[][] ns = new double[n][rounds];
            double[][] ratio = new double[n][rounds];
            for (int r = -WARMUP; r < rounds; r++) {
                double[] t = new double[n];
                // The order rotates round by round, so that no part always follows the same one.
                for (int j = 0; j < n; j++) {
                    int p = Math.floorMod(j + r, n);
                    long b0 = threads.getThreadAllocatedBytes(thread);
                    long t0 = System.nanoTime();
                    sink += parts.get(p).loop().run();
                    t[p] = (System.nanoTime() - t0) / (double) CALLS;
                    if (r >= 0) {
                        allocated[p] += threads.getThreadAllocatedBytes(thread) - b0;
                    }
                }
                if (r >= 0) {
                    for (int p = 0; p < n; p++) {
                        ns[p][r] = t[p];
                        ratio[p][r] = t[p] / t[plainOf(parts, p)];
                    }
                }
            }
            System.out.printf(
                    "%-22s %-22s %9s %9s %9s   (%,d calls a part a round, median of %d rounds)%n",
                    "shape", "part", "ns", "x plain", "B/call", CALLS, rounds);
            for (int p = 0; p < n; p++) {
                System.out.printf(
                        "%-22s %-22s %9.1f %9.2f %9.2f%n",
                        parts.get(p).shape(),
                        parts.get(p).name(),
                        median(ns[p]),
                        median(ratio[p]),
                        allocated[p] / ((double) CALLS * rounds));
            }
        }
    }

    private static int plainOf(List<Part> parts, int p) {
        for (int q = p; ; q--) {
            if (parts.get(q).name().equals("plain")) {
                return q;
            }
        }
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }
}
