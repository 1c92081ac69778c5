package io.ringstore;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.balance.BoundedLoad;
import io.ringstore.balance.LoadView;
import io.ringstore.builder.BackendList;
import io.ringstore.builder.BuildResult;
import io.ringstore.builder.RingBuilder;
import io.ringstore.builder.Views;
import io.ringstore.family.RingVersion;
import io.ringstore.migration.RingDiff;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.PrimitiveIterator;
import java.util.SplittableRandom;
import java.util.function.IntPredicate;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A view answers exactly what the ring stored as its own points answers: random fleets with features,
 * built with {@link Views#NONE} and with {@link Views#ALL} (and {@link Views#AUTO}), compared ring by
 * ring for every feature set and version: every point (position, hash, backend), {@link RingDiff} 0,
 * lookups at random hashes and at, below and above points, failover walks with random refusals,
 * failover order and line shares. Equal hashes are forced: v2 ignores scope ids, so
 * {@code [fe80::1%3]} and {@code [fe80::1%4]} tie on every point, and the v1 fleets are large enough
 * for natural collisions (asserted present).
 */
@Tag("slow")
class ViewExactnessTest {
    @TempDir
    Path dir;

    /** Totals over the whole test, asserted at the end of each case so that "exact" is not vacuous. */
    private long ringsCompared;

    private long viewsCompared;
    private long tiesInViewedSegments;

    @Test
    void viewsEqualStoredRingsForV2WithForcedTies() throws Exception {
        for (int seed = 1; seed <= 6; seed++) {
            compare(
                    seed,
                    fleet(seed, 60 + 40 * seed, true),
                    RingVersion.v2(1),
                    RingVersion.v2(16),
                    RingVersion.v2(160));
        }
        assertTrue(viewsCompared >= 6 * 3 * 3, "views compared: " + viewsCompared);
        assertTrue(tiesInViewedSegments > 0, "no equal hashes in the segments views read");
    }

    @Test
    void viewsEqualStoredRingsForV1WithNaturalTies() throws Exception {
        // 2,500 backends × 160 points: about 19 equal hashes expected on the 32-bit line.
        compare(11, fleet(11, 2500, false), RingVersion.V1, RingVersion.v2(160));
        compare(12, fleet(12, 300, false), RingVersion.V1);
        assertTrue(viewsCompared >= 3, "views compared: " + viewsCompared);
        assertTrue(tiesInViewedSegments > 0, "no natural v1 equal hashes in the segments views read");
    }

    /** A backends file: IPv4 and IPv6, weights 1-4, 3-5 features each held with probability 1/4 to 3/4. */
    private static String fleet(int seed, int size, boolean scopedTwins) {
        SplittableRandom random = new SplittableRandom(seed);
        List<String> features = List.of("eu", "ssd", "gpu", "pci", "canary").subList(0, 3 + random.nextInt(3));
        double[] p = new double[features.size()];
        for (int f = 0; f < p.length; f++) {
            p[f] = 0.25 + 0.25 * random.nextInt(3);
        }
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < size; i++) {
            String address = scopedTwins && i < 6
                    ? "[fe80::1%" + (3 + i) + "]:80"
                    : random.nextInt(4) == 0
                            ? "[2001:db8::" + Integer.toHexString(i + 1) + "]:8080"
                            : "10." + (i >> 8 & 255) + "." + (i & 255) + ".7:80";
            text.append("server ")
                    .append(address)
                    .append(" weight=")
                    .append(1 + random.nextInt(4))
                    .append(';');
            List<String> own = new ArrayList<>();
            for (int f = 0; f < p.length; f++) {
                if (random.nextDouble() < p[f] || (scopedTwins && i < 6 && f == 0)) {
                    own.add(features.get(f));
                }
            }
            if (!own.isEmpty()) {
                text.append(" # ringstore: features=").append(String.join(",", own));
            }
            text.append('\n');
        }
        return text.toString();
    }

    private void compare(int seed, String text, RingVersion... versions) throws Exception {
        BackendList backends = BackendList.parse("fleet" + seed, text);
        Path stored = dir.resolve("stored" + seed + ".ring");
        Path all = dir.resolve("views" + seed + ".ring");
        Path auto = dir.resolve("auto" + seed + ".ring");
        build(backends, Views.NONE, stored, versions);
        BuildResult viewed = build(backends, Views.ALL, all, versions);
        build(backends, Views.AUTO, auto, versions);
        assertTrue(viewed.views() > 0, "no ring became a view: " + viewed);
        try (RingStore b = RingStore.open(all)) {
            // What a router does with a view: lookups, failover, bounded load. No position table (heap) for any of it.
            for (Ring view : b.rings()) {
                SplittableRandom random = new SplittableRandom(seed);
                for (int k = 0; k < 2000 && !view.isEmpty(); k++) {
                    view.lookupHash(random.nextInt());
                    view.select(random.nextInt(), Ring.NGINX_MAX_POINTS, x -> x % 3 == 0);
                    BoundedLoad.of(1.25).choose(view, random.nextInt(), new LoadView() {
                        public boolean available(int backend) {
                            return backend % 2 == 0;
                        }

                        public long inFlight(int backend) {
                            return backend % 5;
                        }

                        public long totalInFlight() {
                            return 10;
                        }

                        public int availableBackends() {
                            return 1;
                        }
                    });
                }
                assertTrue(!view.positionTableBuilt(), "a lookup built the position table of " + view);
            }
        }
        try (RingStore a = RingStore.open(stored);
                RingStore b = RingStore.open(all);
                RingStore c = RingStore.open(auto)) {
            assertEquals(a.verify() >= 0, b.verify() >= 0);
            c.verify();
            assertEquals(
                    viewed.views(),
                    b.rings().stream().filter(r -> r.storage() == 2).count());
            for (int i = 0; i < a.rings().size(); i++) {
                Ring expected = a.rings().get(i);
                Ring view = b.rings().get(i);
                sameRing(seed, expected, view);
                sameRing(seed, expected, c.rings().get(i));
                if (view.storage() == 2) {
                    viewsCompared++;
                    tiesInViewedSegments = Math.max(
                            tiesInViewedSegments,
                            view.storedCount()
                                    - b.ring(java.util.Set.of(), view.version()).pointCount());
                }
            }
        }
    }

    private static BuildResult build(BackendList backends, Views views, Path target, RingVersion... versions)
            throws Exception {
        RingBuilder builder = RingBuilder.of(backends).views(views).generation(1);
        for (RingVersion v : versions) {
            builder.version(v);
        }
        return builder.build(target);
    }

    private void sameRing(int seed, Ring expected, Ring actual) {
        String what = "seed " + seed + " ring " + expected + " (storage " + actual.storage() + ")";
        ringsCompared++;
        assertEquals(expected.toString(), actual.toString(), what);
        assertEquals(expected.pointCount(), actual.pointCount(), what + ": points");
        int n = expected.pointCount();
        for (int i = 0; i < n; i++) {
            if (expected.pointHash(i) != actual.pointHash(i) || expected.pointBackend(i) != actual.pointBackend(i)) {
                throw new AssertionError(what + ": point " + i + " is " + actual.pointHash(i)
                        + "/" + actual.pointBackend(i) + ", stored ring has "
                        + expected.pointHash(i) + "/" + expected.pointBackend(i));
            }
        }
        if (n == 0) {
            assertEquals(Ring.NO_BACKEND, actual.lookupHash(12345), what);
            return;
        }
        assertEquals(0.0, RingDiff.between(expected, actual).movedFraction(), what + ": diff");
        assertArrayEquals(expected.lineShares(), actual.lineShares(), 0.0, what + ": shares");
        SplittableRandom random = new SplittableRandom(seed * 31L + expected.featureMask());
        for (int k = 0; k < 4000; k++) {
            int h = random.nextInt();
            if (k % 2 == 1) {
                h = (int) expected.pointHash(random.nextInt(n)) + (k % 3) - 1; // at, just below, just above a point
            }
            assertEquals(
                    expected.lookupHash(h), actual.lookupHash(h), what + ": lookup " + Integer.toUnsignedString(h));
            assertEquals(
                    expected.pointIndex(h),
                    actual.pointIndex(h),
                    what + ": point index " + Integer.toUnsignedString(h));
            long refused = random.nextLong() | random.nextLong(); // about 3/4 of backends refused
            IntPredicate accept = b -> (refused >>> (b * 7 % 64) & 1) == 0;
            int max = switch (k % 4) {
                case 0 -> 1;
                case 1 -> Ring.NGINX_MAX_POINTS;
                case 2 -> 5;
                default -> n + 2;
            };
            assertEquals(expected.select(h, max, accept), actual.select(h, max, accept), what + ": select " + max);
        }
        // Bounded load walks by cursor (no position table): the same choices on a view, both walks.
        int backends = expected.store().backendCount();
        long[] inFlight = new long[backends];
        boolean[] down = new boolean[backends];
        for (int b = 0; b < backends; b++) {
            inFlight[b] = random.nextInt(6);
            down[b] = random.nextInt(5) == 0;
        }
        long total = java.util.Arrays.stream(inFlight).sum();
        int up = (int) java.util.stream.IntStream.range(0, backends)
                .filter(b -> !down[b])
                .count();
        LoadView load = new LoadView() {
            @Override
            public boolean available(int backend) {
                return !down[backend];
            }

            @Override
            public long inFlight(int backend) {
                return inFlight[backend];
            }

            @Override
            public long totalInFlight() {
                return total;
            }

            @Override
            public int availableBackends() {
                return up;
            }
        };
        for (BoundedLoad.Walk walk : BoundedLoad.Walk.values()) {
            BoundedLoad bound = BoundedLoad.of(1.1).walk(walk);
            for (int k = 0; k < 500; k++) {
                int h = random.nextInt();
                assertEquals(
                        bound.choose(expected, h, load),
                        bound.choose(actual, h, load),
                        what + ": bounded load " + walk);
            }
        }
        for (int k = 0; k < 50; k++) {
            byte[] key = ("key-" + seed + "-" + k).getBytes(StandardCharsets.US_ASCII);
            PrimitiveIterator.OfInt e = expected.backends(key);
            PrimitiveIterator.OfInt a = actual.backends(key);
            for (int j = 0; j < 8 && e.hasNext(); j++) {
                assertEquals(e.nextInt(), a.nextInt(), what + ": failover order");
            }
        }
    }
}
