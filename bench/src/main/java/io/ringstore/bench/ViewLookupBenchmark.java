package io.ringstore.bench;

import io.ringstore.Backend;
import io.ringstore.Ring;
import io.ringstore.RingFileLayout;
import io.ringstore.RingStore;
import io.ringstore.builder.BackendList;
import io.ringstore.builder.Views;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.SplittableRandom;
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
 * What a lookup through a view costs, in ns per {@link Ring#lookupHash} over {@code hashCount}
 * precomputed random hashes (65,536, or 4,194,304); {@link ViewMeasure} measures what views save.
 *
 * <p>On {@link ViewFleets#nestedFleet} (2,048 backends × weight 10, 3,276,800 points), built with
 * {@code --views all} and {@code --views none}, for each {@code feature} ({@code all}: the ring of all
 * backends; {@code not0mod8} to {@code mod32}: 7/8 down to 1/32 of the points):
 * <ul>
 *   <li>{@code view}: the feature's ring as a view (the ALL file; for {@code all}, the ring of all kept
 *       with ties and feature bits);
 *   <li>{@code stored}: the same ring stored as points (the NONE file);
 *   <li>{@code ringOfAll}: the ring of all backends the view searches, its search without the walk.
 * </ul>
 * {@code -p viewsFrom=FILE}: the {@code view} side reads the views of FILE instead, the same fleet
 * built with {@code --views all} by another release ({@code nested.conf}, written by
 * {@code ViewMeasure --fleet-dir}); every side is checked to answer as the stored ring for every hash.
 *
 * <p>{@code mixed}: {@link ViewFleets#randomFleet}'s file (5 features, 32 rings) built with the
 * {@code views} parameter (NONE, AUTO, ALL), used as a router uses it: each lookup goes to one of its
 * rings, chosen at random (uniformly, precomputed with the hashes), every answer checked against the
 * NONE file.
 *
 * <pre>
 * java -Xmx4g -jar bench/target/benchmarks.jar ViewLookupBenchmark
 * </pre>
 * Files are built into {@code views/} in the benchmarks' ring directory ({@link BenchRings#dataDir()})
 * and reused while they are newer than the benchmark jar.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "-Xmx4g")
public class ViewLookupBenchmark {
    /** The nested fleet's two files and one feature's rings in them. */
    @State(Scope.Benchmark)
    public static class Nested {
        @Param({"all", "not0mod8", "not0mod4", "mod2", "mod4", "mod6", "mod8", "mod10", "mod12", "mod16", "mod32"})
        public String feature;

        @Param({"65536", "4194304"})
        public int hashCount;

        /** {@code built}, or a file of the same fleet built with {@code --views all} whose views are the view side. */
        @Param("built")
        public String viewsFrom;

        RingStore all;
        RingStore none;
        RingStore other;
        Ring view;
        Ring stored;
        Ring ringOfAll;
        int[] hashes;
        int mask;

        @Setup(Level.Trial)
        public void open() throws Exception {
            BackendList fleet = ViewFleets.nestedFleet();
            all = openOrBuild(fleet, Views.ALL, "nested");
            none = openOrBuild(fleet, Views.NONE, "nested");
            Set<String> features = feature.equals("all") ? Set.of() : Set.of(feature);
            ringOfAll = all.ring(Set.of());
            stored = none.ring(features);
            if (viewsFrom.equals("built")) {
                view = all.ring(features);
            } else {
                other = RingStore.open(Path.of(viewsFrom));
                view = other.ring(features);
            }
            RingFileLayout.Storage expected = features.isEmpty()
                    ? RingFileLayout.Storage.POINTS_WITH_TIES_AND_FEATURE_BITS_BY_FEATURE
                    : RingFileLayout.Storage.VIEW;
            if ((other == null && all.layout().storage(view) != expected)
                    || none.layout().storage(stored) != RingFileLayout.Storage.POINTS) {
                throw new IllegalStateException(
                        feature + ": stored as " + all.layout().storage(view) + " and "
                                + none.layout().storage(stored) + ", expected " + expected + " and POINTS");
            }
            hashes = ViewFleets.randomHashes(hashCount, BenchRings.KEY_SEED + Integer.numberOfTrailingZeros(hashCount));
            mask = hashCount - 1;
            for (int h : hashes) {
                int s = stored.lookupHash(h);
                if (view.lookupHash(h) != s || s < 0) {
                    throw new IllegalStateException(feature + " hash " + Integer.toUnsignedString(h) + ": view "
                            + view.lookupHash(h) + ", stored " + s);
                }
            }
        }

        @TearDown(Level.Trial)
        public void close() {
            ViewFleets.closeAll(new RingStore[] {all, none, other});
        }
    }

    /** The random fleet's file built with {@code views}, its non-empty rings, and which ring each hash goes to. */
    @State(Scope.Benchmark)
    public static class Mixed {
        @Param({"NONE", "AUTO", "ALL"})
        public Views views;

        @Param({"65536", "4194304"})
        public int hashCount;

        RingStore store;
        Ring[] rings;
        int[] hashes;
        byte[] ringOf;
        int mask;

        @Setup(Level.Trial)
        public void open() throws Exception {
            BackendList fleet = ViewFleets.randomFleet(ViewFleets.FLEET_SEED);
            store = openOrBuild(fleet, views, "random5");
            rings = nonEmpty(store);
            int seed = Integer.numberOfTrailingZeros(hashCount);
            hashes = ViewFleets.randomHashes(hashCount, BenchRings.KEY_SEED + 100 + seed);
            ringOf = new byte[hashCount];
            SplittableRandom random = new SplittableRandom(BenchRings.KEY_SEED + 200 + seed);
            for (int j = 0; j < ringOf.length; j++) {
                ringOf[j] = (byte) random.nextInt(rings.length);
            }
            mask = hashCount - 1;
            try (RingStore reference = openOrBuild(fleet, Views.NONE, "random5")) {
                Ring[] expected = nonEmpty(reference);
                if (expected.length != rings.length) {
                    throw new IllegalStateException(store.path() + " has " + rings.length + " non-empty rings, "
                            + reference.path() + " " + expected.length);
                }
                for (int j = 0; j < hashes.length; j++) {
                    if (rings[ringOf[j]].lookupHash(hashes[j]) != expected[ringOf[j]].lookupHash(hashes[j])) {
                        throw new IllegalStateException(views + " differs from NONE: ring " + rings[ringOf[j]]
                                + ", hash " + Integer.toUnsignedString(hashes[j]));
                    }
                }
            }
        }

        private static Ring[] nonEmpty(RingStore store) {
            return store.rings().stream().filter(r -> !r.isEmpty()).toArray(Ring[]::new);
        }

        @TearDown(Level.Trial)
        public void close() {
            store.close();
        }
    }

    /**
     * The fleet built with {@code views} as {@code views/NAME-KIND.ring}: the file there if it is newer
     * than this benchmark's jar (or class folder) and holds the fleet's backends and features, else a new
     * build.
     */
    static RingStore openOrBuild(BackendList fleet, Views views, String name) throws Exception {
        Path file = BenchRings.dataDir()
                .resolve("views")
                .resolve(name + "-" + views.name().toLowerCase(Locale.ROOT) + ".ring");
        Path code = Path.of(ViewLookupBenchmark.class
                .getProtectionDomain()
                .getCodeSource()
                .getLocation()
                .toURI());
        if (Files.isRegularFile(file)
                && Files.getLastModifiedTime(file).compareTo(Files.getLastModifiedTime(code)) > 0) {
            RingStore store = RingStore.open(file);
            if (sameFleet(store, fleet)) {
                return store;
            }
            store.close();
        }
        Files.createDirectories(file.getParent());
        return ViewFleets.build(fleet, views, file);
    }

    private static boolean sameFleet(RingStore store, BackendList fleet) {
        List<Backend> backends = fleet.backends();
        if (store.backendCount() != backends.size() || !store.features().equals(fleet.features())) {
            return false;
        }
        for (int i = 0; i < backends.size(); i++) {
            Backend b = store.backend(i);
            if (!b.address().equals(backends.get(i).address())
                    || b.weight() != backends.get(i).weight()
                    || !b.features().equals(backends.get(i).features())) {
                return false;
            }
        }
        return true;
    }

    @Benchmark
    public int view(Nested n, KeyCursor cursor) {
        return n.view.lookupHash(n.hashes[cursor.next(n.mask)]);
    }

    @Benchmark
    public int stored(Nested n, KeyCursor cursor) {
        return n.stored.lookupHash(n.hashes[cursor.next(n.mask)]);
    }

    @Benchmark
    public int ringOfAll(Nested n, KeyCursor cursor) {
        return n.ringOfAll.lookupHash(n.hashes[cursor.next(n.mask)]);
    }

    @Benchmark
    public int mixed(Mixed m, KeyCursor cursor) {
        int j = cursor.next(m.mask);
        return m.rings[m.ringOf[j]].lookupHash(m.hashes[j]);
    }
}
