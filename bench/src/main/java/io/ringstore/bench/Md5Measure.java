package io.ringstore.bench;

import io.ringstore.family.KeyHash;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.security.DigestException;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Locale;

/**
 * {@link Md5Benchmark}'s sides timed in alternation in one JVM: each round times every side over the
 * same {@value FamilyRings#KEY_COUNT} URL-like keys of 20 to 60 bytes, in turn, by the thread's CPU
 * time (and wall time beside it, which a loaded machine inflates), then prints the round; the medians
 * of the rounds and of the per-round ratios come last. CPU time leaves out the time the thread waited
 * for a core, so the ratios hold on a shared machine; caches and the core's clock are still shared.
 *
 * <pre>
 * java -cp bench/target/benchmarks.jar io.ringstore.bench.Md5Measure [rounds [calls]]
 * </pre>
 */
public final class Md5Measure {
    private static final ThreadMXBean THREAD = ManagementFactory.getThreadMXBean();
    private static final String[] SIDES = {"ringstore", "messageDigest", "floor", "floorPerKey"};

    private static byte[][] keys;
    private static MessageDigest md5;
    private static final byte[] DIGEST = new byte[16];

    private Md5Measure() {}

    public static void main(String[] args) throws Exception {
        String usage = "Md5Measure [ROUNDS [CALLS]]";
        int rounds = BenchArgs.count(args, 0, 11, "Md5Measure", usage);
        int calls = BenchArgs.count(args, 1, 2_000_000, "Md5Measure", usage);
        keys = FamilyRings.keys();
        md5 = MessageDigest.getInstance("MD5");
        for (byte[] key : keys) {
            if (KeyHash.MD5.hash(key) != jdk(key)) {
                throw new IllegalStateException(
                        "ringstore's MD5 and the JDK's differ on a key of " + key.length + " bytes");
            }
        }
        System.out.printf(
                Locale.ROOT,
                "%d keys of %d-%d bytes, %d calls a side a round, %d rounds (3 more first, not counted)%n",
                keys.length,
                FamilyRings.MIN_KEY_LENGTH,
                FamilyRings.MAX_KEY_LENGTH,
                calls,
                rounds);
        double[][] cpu = new double[SIDES.length][rounds];
        double[][] wall = new double[SIDES.length][rounds];
        long sink = 0;
        for (int r = -3; r < rounds; r++) {
            StringBuilder line = new StringBuilder(r < 0 ? "warm-up" : "round " + (r + 1));
            for (int s = 0; s < SIDES.length; s++) {
                long w0 = System.nanoTime();
                long c0 = THREAD.getCurrentThreadCpuTime();
                sink += switch (s) {
                    case 0 -> ringstore(calls);
                    case 1 -> messageDigest(calls);
                    case 2 -> floor(calls);
                    default -> floorPerKey(calls);
                };
                long c1 = THREAD.getCurrentThreadCpuTime();
                long w1 = System.nanoTime();
                if (r >= 0) {
                    cpu[s][r] = (c1 - c0) / (double) calls;
                    wall[s][r] = (w1 - w0) / (double) calls;
                    line.append(String.format(Locale.ROOT, "  %s %.1f (wall %.1f)", SIDES[s], cpu[s][r], wall[s][r]));
                }
            }
            if (r >= 0) {
                line.append(String.format(
                        Locale.ROOT,
                        "  ringstore/floorPerKey %.3f ringstore/messageDigest %.3f",
                        cpu[0][r] / cpu[3][r],
                        cpu[0][r] / cpu[1][r]));
            }
            System.out.println(line);
        }
        System.out.println("medians, ns a key (CPU time; wall time in brackets):");
        for (int s = 0; s < SIDES.length; s++) {
            System.out.printf(Locale.ROOT, "  %-14s %.1f (%.1f)%n", SIDES[s], median(cpu[s]), median(wall[s]));
        }
        double[] perKey = new double[rounds];
        double[] oneBlock = new double[rounds];
        double[] jdk = new double[rounds];
        for (int r = 0; r < rounds; r++) {
            perKey[r] = cpu[0][r] / cpu[3][r];
            oneBlock[r] = cpu[0][r] / cpu[2][r];
            jdk[r] = cpu[0][r] / cpu[1][r];
        }
        System.out.printf(
                Locale.ROOT,
                "median ratios: ringstore/floorPerKey %.3f, ringstore/floor %.3f, ringstore/messageDigest %.3f (%d)%n",
                median(perKey),
                median(oneBlock),
                median(jdk),
                sink & 1);
    }

    private static long ringstore(int calls) {
        long sum = 0;
        for (int i = 0; i < calls; i++) {
            sum += KeyHash.MD5.hash(keys[i & (FamilyRings.KEY_COUNT - 1)]);
        }
        return sum;
    }

    private static long messageDigest(int calls) {
        long sum = 0;
        for (int i = 0; i < calls; i++) {
            sum += jdk(keys[i & (FamilyRings.KEY_COUNT - 1)]);
        }
        return sum;
    }

    private static long floor(int calls) {
        long sum = 0;
        for (int i = 0; i < calls; i++) {
            sum += Md5Floor.chain(i);
        }
        return sum;
    }

    private static long floorPerKey(int calls) {
        long sum = 0;
        for (int i = 0; i < calls; i++) {
            int h = Md5Floor.chain(i);
            sum += keys[i & (FamilyRings.KEY_COUNT - 1)].length < 56 ? h : Md5Floor.chain(h);
        }
        return sum;
    }

    private static int jdk(byte[] key) {
        md5.update(key);
        try {
            md5.digest(DIGEST, 0, 16);
        } catch (DigestException e) {
            throw new IllegalStateException(e);
        }
        return (DIGEST[0] & 0xFF) | (DIGEST[1] & 0xFF) << 8 | (DIGEST[2] & 0xFF) << 16 | DIGEST[3] << 24;
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }
}
