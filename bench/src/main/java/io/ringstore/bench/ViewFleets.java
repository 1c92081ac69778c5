package io.ringstore.bench;

import io.ringstore.Backend;
import io.ringstore.RingStore;
import io.ringstore.builder.BackendList;
import io.ringstore.builder.BuildResult;
import io.ringstore.builder.RingBuilder;
import io.ringstore.builder.Views;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.function.IntPredicate;
import java.util.stream.IntStream;

/**
 * The fleets views are measured on ({@link ViewMeasure}'s bytes, {@link ViewLookupBenchmark}'s
 * lookups), 2,048 backends {@code 127.1.x.y:8080} of weight 10 each:
 *
 * <ul>
 *   <li>{@link #randomFleet}: each backend has each of features f1..f5 with probability ½, drawn from a
 *       seed (32 rings);
 *   <li>{@link #nestedFleet}: feature {@code modN} is held by the backends whose index is a multiple of
 *       N, so its ring has 1/N of the points (N = 2, 4, 6, 8, 10, 12, 16, 32), and {@code not0modN} by
 *       the others (7/8 and 3/4 of the points): {@link #SHARES}.
 * </ul>
 */
final class ViewFleets {
    static final int BACKENDS = 2048;
    static final int WEIGHT = 10;
    static final int RANDOM_FEATURES = 5;
    static final long FLEET_SEED = 0xFEA7_0014L;
    static final String RANDOM_FLEET = BACKENDS + "x" + WEIGHT + ", " + RANDOM_FEATURES + " features p=1/2";
    /** The builds compared, NONE first: ratios are to it. */
    static final Views[] KINDS = {Views.NONE, Views.AUTO, Views.ALL};

    /** A feature of the nested fleet: held by the backends whose index passes {@code holds}. */
    record Share(String feature, IntPredicate holds) {
        static Share mod(int n) {
            return new Share("mod" + n, i -> i % n == 0);
        }

        int members() {
            return (int) IntStream.range(0, BACKENDS).filter(holds).count();
        }
    }

    /** The nested fleet's features, by falling share of the backends: not0modN miss one index in N, modN hold one in N. */
    static final List<Share> SHARES = List.of(
            new Share("not0mod8", i -> i % 8 != 0),
            new Share("not0mod4", i -> i % 4 != 0),
            Share.mod(2),
            Share.mod(4),
            Share.mod(6),
            Share.mod(8),
            Share.mod(10),
            Share.mod(12),
            Share.mod(16),
            Share.mod(32));

    private ViewFleets() {}

    private static String address(int i) {
        return "127.1." + (i >> 8) + "." + (i & 0xFF) + ":8080";
    }

    /** Each backend with each of features f1..f5 with probability ½, drawn from {@code seed}. */
    static BackendList randomFleet(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        BackendList.Builder b = BackendList.builder();
        for (int i = 0; i < BACKENDS; i++) {
            List<String> features = new ArrayList<>();
            for (int f = 1; f <= RANDOM_FEATURES; f++) {
                if (random.nextBoolean()) {
                    features.add("f" + f);
                }
            }
            b.add(address(i), WEIGHT, features);
        }
        return b.build();
    }

    /** The backends with the features of {@link #SHARES}. */
    static BackendList nestedFleet() {
        BackendList.Builder b = BackendList.builder();
        for (int i = 0; i < BACKENDS; i++) {
            List<String> features = new ArrayList<>();
            for (Share share : SHARES) {
                if (share.holds().test(i)) {
                    features.add(share.feature());
                }
            }
            b.add(address(i), WEIGHT, features);
        }
        return b.build();
    }

    /** {@code fleet} as a backends file (one {@code server} line a backend), for another release's {@code ringstore build}. */
    static String backendsFile(BackendList fleet) {
        StringBuilder out = new StringBuilder();
        for (Backend b : fleet.backends()) {
            out.append("server ")
                    .append(b.address())
                    .append(" weight=")
                    .append(b.weight())
                    .append(";");
            if (!b.features().isEmpty()) {
                out.append("  # ringstore: features=").append(String.join(",", b.features()));
            }
            out.append('\n');
        }
        return out.toString();
    }

    static RingStore build(BackendList fleet, Views views, Path file) throws Exception {
        BuildResult r = RingBuilder.of(fleet).views(views).generation(1).build(file);
        System.err.printf("built %s: %,d bytes, %d views, %.1f s%n", file, r.fileBytes(), r.views(), r.nanos() / 1e9);
        return RingStore.open(file);
    }

    /** The fleet built with each of {@link #KINDS} into {@code PREFIX-none.ring} and so on, opened, in that order. */
    static RingStore[] buildAll(BackendList fleet, Path prefix) throws Exception {
        RingStore[] stores = new RingStore[KINDS.length];
        try {
            for (int k = 0; k < KINDS.length; k++) {
                stores[k] = build(
                        fleet, KINDS[k], Path.of(prefix + "-" + KINDS[k].name().toLowerCase(Locale.ROOT) + ".ring"));
            }
            return stores;
        } catch (Exception | Error e) {
            closeAll(stores);
            throw e;
        }
    }

    static void closeAll(RingStore[] stores) {
        for (RingStore s : stores) {
            if (s != null) {
                s.close();
            }
        }
    }

    /** {@code count} uniformly random 32-bit hashes: what CRC-32 of varied keys looks like to a ring. */
    static int[] randomHashes(int count, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        int[] hashes = new int[count];
        for (int i = 0; i < count; i++) {
            hashes[i] = random.nextInt();
        }
        return hashes;
    }
}
