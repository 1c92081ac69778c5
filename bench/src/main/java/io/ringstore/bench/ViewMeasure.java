package io.ringstore.bench;

import io.ringstore.Backend;
import io.ringstore.Ring;
import io.ringstore.RingFileLayout;
import io.ringstore.RingStore;
import io.ringstore.builder.BackendList;
import io.ringstore.builder.BuildResult;
import io.ringstore.builder.RingBuilder;
import io.ringstore.builder.Views;
import io.ringstore.internal.format.RingFileDescriptor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * What views (issue 14, {@link Views}) save and what they cost, to set {@link RingBuilder#AUTO_MAX_EXPECTED_WALK}.
 *
 * <p><b>bytes.</b> For {@code examples/backends.conf} and for a fleet of 2,048 backends of weight 10
 * where each backend has each of 5 features with probability ½ (seeded; 32 rings), it builds the file
 * with views {@code NONE}, {@code AUTO} and {@code ALL}, opens the three, looks up the same
 * {@value #PAGE_CACHE_LOOKUPS} random hashes in every ring of each (checking that the three files
 * answer alike), then reads the Rss of each file's mapping in {@code /proc/self/smaps}: the page-cache
 * bytes a router using every ring touches. Also the sum of {@link RingFileLayout#ownBytes} over the
 * rings and the distinct segments' bytes. Then the file size AUTO would give at other thresholds,
 * derived from the NONE and ALL files' layouts (checked against the real AUTO file at the current
 * threshold).
 *
 * <p><b>lookups.</b> A fleet of 2,048 backends of weight 10 (3,276,800 points) where feature
 * {@code modN} is held by the backends whose index is a multiple of N, so the ring of {@code modN}
 * has 1/N of the points (N = 2, 4, 6, 8, 10, 12, 16, 32), and {@code not0modN} by the others (7/8 and
 * 3/4 of the points), built with ALL and with NONE. For each feature, after checking that the view and the stored ring answer alike for every hash, it times
 * {@link Ring#lookupHash} of the view, of the ring of all backends the view reads (its search without
 * the walk) and of the stored ring, over the same precomputed random hashes (65,536, then 4,194,304),
 * in rounds whose order of sides rotates, after untimed rounds; it prints the median ns of each side,
 * the median of the per-round ratios view/stored and of the per-round differences view - all (the
 * walk). The row "all backends" compares the ring of all with ties (ALL file) and without (NONE).
 *
 * <p><b>mixed.</b> The 5-feature fleet's three files again, a router's view of them: each lookup goes
 * to one of the 32 rings, chosen at random (uniformly, precomputed with the hashes), timed per file in
 * rotating rounds; ns per lookup and the median per-round ratio to NONE.
 *
 * <p>{@code --seed S} (repeatable) measures bytes on the 5-feature fleet drawn from each seed instead
 * of {@link #FLEET_SEED}; {@code --fleet-dir DIR} writes each seeded fleet ({@code random5-SEED.conf})
 * and the lookups fleet ({@code nested.conf}) as backends files, for another release's
 * {@code ringstore build}; {@code --old-all FILE}, the lookups fleet built with {@code --views all} by
 * the release before feature bits, adds its views as a fourth side of every round (the walk point by
 * point, against the walk by feature bits, in one run).
 *
 * <pre>
 * java -Xmx4g -cp bench/target/benchmarks.jar io.ringstore.bench.ViewMeasure [bytes] [lookups] [mixed]
 *     [--backends FILE] [--rounds N] [--calls N] [--seed S]... [--fleet-dir DIR] [--old-all FILE]
 *     [--tsv-bytes FILE] [--tsv-lookups FILE] [--tsv-mixed FILE]
 * </pre>
 * Without a part named it does all three. Files go to {@code views/} in the benchmarks' ring directory
 * ({@link BenchRings#dataDir()}). Linux only (smaps).
 */
public final class ViewMeasure {
    private static final int BACKENDS = 2048;
    private static final int WEIGHT = 10;
    private static final int RANDOM_FEATURES = 5;
    private static final long FLEET_SEED = 0xFEA7_0014L;
    private static final int PAGE_CACHE_LOOKUPS = 1 << 20;
    /** The lookups fleet's features, by falling share of the backends: N/8 and 3/4 miss one index in 8 or 4, modN hold one in N. */
    private static final List<Share> SHARES = List.of(
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

    private static final int[] HASH_COUNTS = {1 << 16, 1 << 22};
    /** Thresholds (members hold at least 1/W of the weight) of the derived AUTO file sizes. */
    private static final int[] WALKS = {2, 4, 6, 8, 10, 12, 16, 32, 64};

    private static final int WARMUP_ROUNDS = 2;
    /** The builds compared, NONE first: ratios are to it. */
    private static final Views[] KINDS = {Views.NONE, Views.AUTO, Views.ALL};

    private static final String USAGE =
            "usage: ViewMeasure [bytes] [lookups] [mixed] [--backends FILE] [--rounds N] [--calls N]"
                    + " [--seed S]... [--fleet-dir DIR] [--old-all FILE] [--tsv-bytes FILE] [--tsv-lookups FILE] [--tsv-mixed FILE]";
    /** Where answers go, so the lookups are not optimised away. */
    private static volatile long sink;

    private ViewMeasure() {}

    public static void main(String[] args) throws Exception {
        Set<String> parts = new HashSet<>();
        Path backendsFile = Path.of("examples/backends.conf");
        int rounds = 15;
        int calls = 1 << 20;
        String tsvBytes = null;
        String tsvLookups = null;
        String tsvMixed = null;
        List<Long> seeds = new ArrayList<>();
        Path fleetDir = null;
        Path oldAll = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "bytes", "lookups", "mixed" -> parts.add(args[i]);
                case "--backends" -> backendsFile = Path.of(args[++i]);
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--calls" -> calls = Integer.parseInt(args[++i]);
                case "--tsv-bytes" -> tsvBytes = args[++i];
                case "--tsv-lookups" -> tsvLookups = args[++i];
                case "--tsv-mixed" -> tsvMixed = args[++i];
                case "--seed" -> seeds.add(Long.decode(args[++i]));
                case "--fleet-dir" -> fleetDir = Path.of(args[++i]);
                case "--old-all" -> oldAll = Path.of(args[++i]);
                default -> throw new IllegalArgumentException("unknown argument: " + args[i] + " (" + USAGE + ")");
            }
        }
        if (parts.isEmpty()) {
            parts = Set.of("bytes", "lookups", "mixed");
        }
        Path dir = BenchRings.dataDir().resolve("views");
        Files.createDirectories(dir);
        if (fleetDir != null) {
            Files.createDirectories(fleetDir);
            Files.writeString(fleetDir.resolve("nested.conf"), backendsFile(nestedFleet()));
        }
        System.out.printf("load average at start: %s", Files.readString(Path.of("/proc/loadavg")));
        long start = System.nanoTime();
        if (parts.contains("bytes")) {
            try (Tsv tsv = Tsv.create(
                    tsvBytes,
                    "fleet",
                    "views",
                    "fileBytes",
                    "ratioToNone",
                    "viewRings",
                    "rings",
                    "segmentBytes",
                    "ownBytesSum",
                    "rssBytes")) {
                measureBytes(
                        "examples/backends.conf", BackendList.parse(backendsFile), dir.resolve("backends-conf"), tsv);
                for (long seed : seeds.isEmpty() ? List.of(FLEET_SEED) : seeds) {
                    BackendList fleet = randomFleet(seed);
                    String name = RANDOM_FLEET + ", seed 0x" + Long.toHexString(seed);
                    if (fleetDir != null) { // for building the same fleet with another release's CLI
                        Files.writeString(
                                fleetDir.resolve("random5-" + Long.toHexString(seed) + ".conf"), backendsFile(fleet));
                    }
                    measureBytes(name, fleet, dir.resolve("random5-" + Long.toHexString(seed)), tsv);
                }
            }
        }
        if (parts.contains("lookups")) {
            try (Tsv tsv = Tsv.create(
                    tsvLookups,
                    "ring",
                    "fraction",
                    "members",
                    "points",
                    "expectedRead",
                    "hashes",
                    "viewNs",
                    "allNs",
                    "storedNs",
                    "ratio",
                    "ratioP25",
                    "ratioP75",
                    "walkNs")) {
                measureLookups(dir.resolve("nested"), oldAll, rounds, calls, tsv);
            }
        }
        if (parts.contains("mixed")) {
            try (Tsv tsv = Tsv.create(tsvMixed, "views", "hashes", "ns", "ratioToNone", "ratioP25", "ratioP75")) {
                measureMixed(dir.resolve("random5"), rounds, calls, tsv);
            }
        }
        System.out.printf(
                "%nload average at end: %stotal %.0f s%n",
                Files.readString(Path.of("/proc/loadavg")), (System.nanoTime() - start) / 1e9);
    }

    private static String address(int i) {
        return "127.1." + (i >> 8) + "." + (i & 0xFF) + ":8080";
    }

    private static final String RANDOM_FLEET = BACKENDS + "x" + WEIGHT + ", " + RANDOM_FEATURES + " features p=1/2";

    /** 2,048 backends of weight 10, each with each of features f1..f5 with probability ½ ({@link #FLEET_SEED}). */
    private static BackendList randomFleet() {
        return randomFleet(FLEET_SEED);
    }

    /** {@link #randomFleet()} drawn from {@code seed}. */
    private static BackendList randomFleet(long seed) {
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

    /** {@code fleet} as a backends file (one {@code server} line a backend), for another release's {@code ringstore build}. */
    private static String backendsFile(BackendList fleet) {
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

    /** A feature of the lookups fleet: held by the backends whose index passes {@code holds}. */
    private record Share(String feature, java.util.function.IntPredicate holds) {
        static Share mod(int n) {
            return new Share("mod" + n, i -> i % n == 0);
        }

        int members() {
            return (int)
                    java.util.stream.IntStream.range(0, BACKENDS).filter(holds).count();
        }
    }

    /** 2,048 backends of weight 10 with the features of {@link #SHARES}. */
    private static BackendList nestedFleet() {
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

    private static RingStore build(BackendList fleet, Views views, Path file) throws Exception {
        BuildResult r = RingBuilder.of(fleet).views(views).generation(1).build(file);
        System.err.printf("built %s: %,d bytes, %d views, %.1f s%n", file, r.fileBytes(), r.views(), r.nanos() / 1e9);
        return RingStore.open(file);
    }

    /** The fleet built with each of {@link #KINDS}, opened, in that order. */
    private static RingStore[] buildAll(BackendList fleet, Path prefix) throws Exception {
        RingStore[] stores = new RingStore[KINDS.length];
        try {
            for (int k = 0; k < KINDS.length; k++) {
                stores[k] = build(
                        fleet,
                        KINDS[k],
                        Path.of(prefix + "-" + KINDS[k].name().toLowerCase(java.util.Locale.ROOT) + ".ring"));
            }
            return stores;
        } catch (Exception | Error e) {
            for (RingStore s : stores) {
                if (s != null) {
                    s.close();
                }
            }
            throw e;
        }
    }

    // ---- bytes ----

    private static void measureBytes(String name, BackendList fleet, Path prefix, Tsv tsv) throws Exception {
        RingStore[] stores = buildAll(fleet, prefix);
        try {
            List<Ring> reference = stores[0].rings();
            for (RingStore s : stores) {
                if (!s.features().equals(stores[0].features()) || s.rings().size() != reference.size()) {
                    throw new IllegalStateException(s.path() + " has other rings than " + stores[0].path());
                }
            }
            // Every ring of every file, the same hashes; answers compared across the files.
            int[] hashes = randomHashes(PAGE_CACHE_LOOKUPS, BenchRings.KEY_SEED);
            long sum = 0;
            for (int r = 0; r < reference.size(); r++) {
                for (int h : hashes) {
                    int expected = stores[0].rings().get(r).lookupHash(h);
                    for (int k = 1; k < stores.length; k++) {
                        int got = stores[k].rings().get(r).lookupHash(h);
                        if (got != expected) {
                            throw new IllegalStateException(
                                    "ring " + reference.get(r) + " hash " + Integer.toUnsignedString(h) + ": "
                                            + KINDS[k] + " answers " + got + ", NONE " + expected);
                        }
                    }
                    sum += expected;
                }
            }
            sink += sum;
            long pid = ProcessHandle.current().pid();
            long noneBytes = stores[0].fileSize();
            long noneRss = 0;
            System.out.printf(
                    "%n### Bytes: %s (%d backends, %d features, %d rings; %,d lookups per ring in each file, answers equal)%n%n",
                    name, fleet.size(), fleet.features().size(), reference.size(), hashes.length);
            System.out.println(
                    "| views | file bytes | / NONE | rings as views | distinct segment bytes | sum of own bytes | page cache (Rss) bytes | Rss / NONE |");
            System.out.println("|---|---:|---:|---:|---:|---:|---:|---:|");
            for (int k = 0; k < stores.length; k++) {
                RingStore s = stores[k];
                RingFileLayout layout = s.layout();
                int viewRings = 0;
                long own = 0;
                for (Ring ring : s.rings()) {
                    viewRings += layout.storage(ring) == RingFileLayout.Storage.VIEW ? 1 : 0;
                    own += layout.ownBytes(ring);
                }
                long segmentBytes = layout.segments().stream()
                        .mapToLong(RingFileLayout.Segment::length)
                        .sum();
                long rss =
                        ShareMeasure.smapsOfMapping(pid, s.path().toRealPath()).get("Rss") * 1024;
                if (k == 0) {
                    noneRss = rss;
                }
                System.out.printf(
                        "| %s | %,d | %.3f | %d / %d | %,d | %,d | %,d | %.3f |%n",
                        KINDS[k],
                        s.fileSize(),
                        (double) s.fileSize() / noneBytes,
                        viewRings,
                        s.rings().size(),
                        segmentBytes,
                        own,
                        rss,
                        (double) rss / noneRss);
                tsv.row(
                        name,
                        KINDS[k],
                        s.fileSize(),
                        (double) s.fileSize() / noneBytes,
                        viewRings,
                        s.rings().size(),
                        segmentBytes,
                        own,
                        rss);
            }
            derivedThresholds(fleet, stores[0], stores[1], stores[2]);
        } finally {
            for (RingStore s : stores) {
                if (s != null) {
                    s.close();
                }
            }
        }
    }

    /**
     * File bytes AUTO would give if members had to hold at least 1/W of the weight, replaying the writer's
     * layout: the ALL file up to the end of its ring of all backends (metadata is the same size in every
     * file: a view's index entry is as long as a stored ring's), then, in file order, the NONE file's
     * segments whose member sets would stay stored, each aligned as the writer aligns it. Checked against
     * the real AUTO file at W = {@link RingBuilder#AUTO_MAX_EXPECTED_WALK}.
     */
    private static void derivedThresholds(BackendList fleet, RingStore none, RingStore auto, RingStore all) {
        if (none.layout().metadataLength() != all.layout().metadataLength()) {
            throw new IllegalStateException(
                    "metadata of NONE and ALL differ: " + none.layout() + " vs " + all.layout());
        }
        long total = fleet.backends().stream().mapToLong(Backend::weight).sum();
        RingFileLayout layout = none.layout();
        int allSegment = layout.segmentIndex(none.ring(Set.of()));
        RingFileLayout.Segment allWithTies = all.layout().segmentOf(all.ring(Set.of()));
        System.out.printf(
                "%nAUTO at other thresholds (derived from the NONE and ALL files' layouts; NONE = %,d bytes)%n%n",
                none.fileSize());
        System.out.println("| members hold ≥ 1/W | file bytes | / NONE | NONE / file | rings as views |");
        System.out.println("|---|---:|---:|---:|---:|");
        for (int w : WALKS) {
            Set<Integer> stayStored = new HashSet<>();
            int views = 0;
            for (Ring ring : none.rings()) {
                int seg = layout.segmentIndex(ring);
                if (seg < 0 || seg == allSegment) {
                    continue;
                }
                if (memberWeight(fleet, ring.features()) * w < total) {
                    stayStored.add(seg);
                } else {
                    views++;
                }
            }
            long end = allWithTies.offset() + allWithTies.length();
            for (int seg = 0; seg < layout.segments().size(); seg++) { // segments() is in file order
                if (stayStored.contains(seg)) {
                    long length = layout.segments().get(seg).length();
                    end = RingFileDescriptor.align(end, RingFileDescriptor.alignmentFor(length)) + length;
                }
            }
            System.out.printf(
                    "| 1/%d%s | %,d | %.3f | %.2f | %d / %d |%n",
                    w,
                    w == RingBuilder.AUTO_MAX_EXPECTED_WALK ? " (current)" : "",
                    end,
                    (double) end / none.fileSize(),
                    (double) none.fileSize() / end,
                    views,
                    none.rings().size());
            if (w == RingBuilder.AUTO_MAX_EXPECTED_WALK && end != auto.fileSize()) {
                throw new IllegalStateException(
                        "derived size at 1/" + w + " is " + end + " bytes, the AUTO file has " + auto.fileSize());
            }
        }
    }

    private static long memberWeight(BackendList fleet, Set<String> features) {
        return fleet.backends().stream()
                .filter(b -> b.features().containsAll(features))
                .mapToLong(Backend::weight)
                .sum();
    }

    // ---- lookups ----

    /** A ring as a view, as stored points and (with {@code --old-all}) as a view of the previous release's file (null without). */
    private record Pair(String name, Ring view, Ring stored, int members, Ring oldView) {}

    private static void measureLookups(Path prefix, Path oldAllFile, int rounds, int calls, Tsv tsv) throws Exception {
        BackendList fleet = nestedFleet();
        try (RingStore all = build(fleet, Views.ALL, Path.of(prefix + "-all.ring"));
                RingStore none = build(fleet, Views.NONE, Path.of(prefix + "-none.ring"));
                RingStore old = oldAllFile == null ? null : RingStore.open(oldAllFile)) {
            Ring ringOfAll = all.ring(Set.of());
            if (old != null && old.layout().storage(old.ring(Set.of())) != RingFileLayout.Storage.POINTS_WITH_TIES) {
                throw new IllegalStateException(oldAllFile + ": its ring of all backends is stored as "
                        + old.layout().storage(old.ring(Set.of()))
                        + ", expected points with ties (a view file of the previous release, without feature bits)");
            }
            List<Pair> pairs = new ArrayList<>();
            pairs.add(new Pair("all backends", ringOfAll, none.ring(Set.of()), BACKENDS, null));
            for (Share share : SHARES) {
                Set<String> f = Set.of(share.feature());
                pairs.add(new Pair(
                        share.feature(), all.ring(f), none.ring(f), share.members(), old == null ? null : old.ring(f)));
            }
            for (Pair p : pairs) {
                RingFileLayout.Storage expected = p.view() == ringOfAll
                        ? RingFileLayout.Storage.POINTS_WITH_TIES_AND_FEATURE_BITS
                        : RingFileLayout.Storage.VIEW;
                if (all.layout().storage(p.view()) != expected
                        || none.layout().storage(p.stored()) != RingFileLayout.Storage.POINTS) {
                    throw new IllegalStateException(
                            p.name() + ": stored as " + all.layout().storage(p.view()) + " and "
                                    + none.layout().storage(p.stored()) + ", expected " + expected + " and POINTS");
                }
            }
            int[][] hashSets = new int[HASH_COUNTS.length][];
            for (int i = 0; i < HASH_COUNTS.length; i++) {
                hashSets[i] = randomHashes(HASH_COUNTS[i], BenchRings.KEY_SEED + i);
            }
            for (Pair p : pairs) { // every hash that will be timed, before timing
                for (int[] hashes : hashSets) {
                    for (int h : hashes) {
                        int v = p.view().lookupHash(h);
                        int s = p.stored().lookupHash(h);
                        int o = p.oldView() == null ? s : p.oldView().lookupHash(h);
                        if (v != s || v < 0 || o != s) {
                            throw new IllegalStateException(p.name() + " hash " + Integer.toUnsignedString(h)
                                    + ": view " + v + ", stored " + s + ", old view " + o);
                        }
                    }
                }
            }
            System.err.println("lookups: view and stored ring agree on every hash; warming up");
            for (int r = 0; r < WARMUP_ROUNDS; r++) { // every ring, both kinds, before any timing
                for (Pair p : pairs) {
                    time(() -> run(p.view(), hashSets[0], 0, calls), calls);
                    time(() -> run(p.stored(), hashSets[0], 0, calls), calls);
                    if (p.oldView() != null) {
                        time(() -> run(p.oldView(), hashSets[0], 0, calls), calls);
                    }
                }
            }
            System.out.printf(
                    "%n### Lookups: view (ALL file) vs stored ring (NONE file), %d backends × weight %d, %,d points in the ring of all%n",
                    BACKENDS, WEIGHT, none.ring(Set.of()).pointCount());
            System.out.printf(
                    "%,d lookups a side a round, %d rounds after %d untimed, order of sides rotating; ratio = median of per-round"
                            + " view/stored; walk = median of per-round view - all (the ring of all backends the view searches)%n%n",
                    calls, rounds, WARMUP_ROUNDS);
            System.out.println(
                    "| ring | members | f | stored points | expected points read 1/f | skipped (1-f)/f | hashes | view ns | all ns | stored ns"
                            + " | view/stored | p25–p75 | walk ns | all/stored | old view ns | old view/stored |");
            System.out.println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|");
            for (int[] hashes : hashSets) {
                for (Pair p : pairs) {
                    List<Round> sides = new ArrayList<>();
                    sides.add(from -> run(p.view(), hashes, from, calls));
                    sides.add(from -> run(p.stored(), hashes, from, calls));
                    boolean withAll = p.view() != ringOfAll;
                    if (withAll) {
                        sides.add(from -> run(ringOfAll, hashes, from, calls));
                    }
                    int oldSide = sides.size();
                    if (p.oldView() != null) {
                        sides.add(from -> run(p.oldView(), hashes, from, calls));
                    }
                    double[][] t = alternate(sides, rounds, calls, hashes.length);
                    double[] ratio = perRound(t[0], t[1], (a, b) -> a / b);
                    double f = (double) p.members() / BACKENDS;
                    double allNs = withAll ? median(t[2]) : Double.NaN;
                    double walk = withAll ? median(perRound(t[0], t[2], (a, b) -> a - b)) : Double.NaN;
                    boolean withOld = p.oldView() != null;
                    System.out.printf(
                            "| %s | %d | %.4f | %,d | %.1f | %.1f | %,d | %.1f | %s | %.1f | %.2f | %.2f–%.2f | %s | %s | %s | %s |%n",
                            p.name(),
                            p.members(),
                            f,
                            p.stored().pointCount(),
                            1 / f,
                            (1 - f) / f,
                            hashes.length,
                            median(t[0]),
                            withAll ? String.format("%.1f", allNs) : "",
                            median(t[1]),
                            median(ratio),
                            quantile(ratio, 0.25),
                            quantile(ratio, 0.75),
                            withAll ? String.format("%.1f", walk) : "",
                            withAll ? String.format("%.2f", median(perRound(t[2], t[1], (a, b) -> a / b))) : "",
                            withOld ? String.format("%.1f", median(t[oldSide])) : "",
                            withOld ? String.format("%.2f", median(perRound(t[oldSide], t[1], (a, b) -> a / b))) : "");
                    tsv.row(
                            p.name(),
                            f,
                            p.members(),
                            p.stored().pointCount(),
                            1 / f,
                            hashes.length,
                            median(t[0]),
                            allNs,
                            median(t[1]),
                            median(ratio),
                            quantile(ratio, 0.25),
                            quantile(ratio, 0.75),
                            walk);
                }
            }
        }
    }

    // ---- mixed ----

    private static void measureMixed(Path prefix, int rounds, int calls, Tsv tsv) throws Exception {
        RingStore[] stores = buildAll(randomFleet(), prefix);
        try {
            Ring[][] rings = new Ring[stores.length][];
            for (int k = 0; k < stores.length; k++) {
                rings[k] = stores[k].rings().stream().filter(r -> !r.isEmpty()).toArray(Ring[]::new);
                if (rings[k].length != rings[0].length) {
                    throw new IllegalStateException(stores[k].path() + " has " + rings[k].length + " non-empty rings, "
                            + stores[0].path() + " " + rings[0].length);
                }
            }
            System.out.printf(
                    "%n### Mixed: %s, each lookup to one of its %d rings at random, per file%n",
                    RANDOM_FLEET, rings[0].length);
            System.out.printf(
                    "%,d lookups a side a round, %d rounds after %d untimed, order of files rotating; ratio = median of per-round file/NONE%n%n",
                    calls, rounds, WARMUP_ROUNDS);
            System.out.println("| views | file bytes | hashes | ns | / NONE | p25–p75 |");
            System.out.println("|---|---:|---:|---:|---:|---|");
            for (int i = 0; i < HASH_COUNTS.length; i++) {
                int[] hashes = randomHashes(HASH_COUNTS[i], BenchRings.KEY_SEED + 100 + i);
                byte[] ringOf = new byte[hashes.length];
                SplittableRandom random = new SplittableRandom(BenchRings.KEY_SEED + 200 + i);
                for (int j = 0; j < ringOf.length; j++) {
                    ringOf[j] = (byte) random.nextInt(rings[0].length);
                }
                for (int j = 0; j < hashes.length; j++) { // the files answer alike for every timed lookup
                    int expected = rings[0][ringOf[j]].lookupHash(hashes[j]);
                    for (int k = 1; k < stores.length; k++) {
                        if (rings[k][ringOf[j]].lookupHash(hashes[j]) != expected) {
                            throw new IllegalStateException(KINDS[k] + " differs from NONE: ring " + rings[k][ringOf[j]]
                                    + ", hash " + Integer.toUnsignedString(hashes[j]));
                        }
                    }
                }
                List<Round> sides = new ArrayList<>();
                for (Ring[] r : rings) {
                    sides.add(from -> runMixed(r, ringOf, hashes, from, calls));
                }
                double[][] t = alternate(sides, rounds, calls, hashes.length);
                for (int k = 0; k < stores.length; k++) {
                    double[] ratio = perRound(t[k], t[0], (a, b) -> a / b);
                    System.out.printf(
                            "| %s | %,d | %,d | %.1f | %.2f | %.2f–%.2f |%n",
                            KINDS[k],
                            stores[k].fileSize(),
                            hashes.length,
                            median(t[k]),
                            median(ratio),
                            quantile(ratio, 0.25),
                            quantile(ratio, 0.75));
                    tsv.row(
                            KINDS[k],
                            hashes.length,
                            median(t[k]),
                            median(ratio),
                            quantile(ratio, 0.25),
                            quantile(ratio, 0.75));
                }
            }
        } finally {
            for (RingStore s : stores) {
                if (s != null) {
                    s.close();
                }
            }
        }
    }

    // ---- timing ----

    /** One side of a round: {@code calls} lookups from hash {@code from} on; returns the sum of the answers. */
    private interface Round {
        long run(int from);
    }

    private interface Combine {
        double of(double a, double b);
    }

    /**
     * Times each side in every round, the order of the sides rotating (and reversed every other cycle),
     * after {@value #WARMUP_ROUNDS} untimed rounds; each round starts at the next {@code calls} hashes.
     *
     * @return ns per lookup, by side then round
     */
    private static double[][] alternate(List<Round> sides, int rounds, int calls, int hashCount) {
        int n = sides.size();
        double[][] t = new double[n][rounds];
        for (int r = -WARMUP_ROUNDS; r < rounds; r++) {
            int round = r + WARMUP_ROUNDS;
            int from = (int) ((long) round * calls % hashCount);
            boolean reversed = (round / n) % 2 == 1;
            for (int i = 0; i < n; i++) {
                int side = Math.floorMod((reversed ? -i : i) + round, n);
                double ns = time(() -> sides.get(side).run(from), calls);
                if (r >= 0) {
                    t[side][r] = ns;
                }
            }
        }
        return t;
    }

    /** ns per lookup of one side's {@code calls} lookups. */
    private static double time(java.util.function.LongSupplier lookups, int calls) {
        long t0 = System.nanoTime();
        sink += lookups.getAsLong();
        return (System.nanoTime() - t0) / (double) calls;
    }

    private static long run(Ring ring, int[] hashes, int from, int calls) {
        int mask = hashes.length - 1;
        long sum = 0;
        for (int i = 0; i < calls; i++) {
            sum += ring.lookupHash(hashes[(from + i) & mask]);
        }
        return sum;
    }

    private static long runMixed(Ring[] rings, byte[] ringOf, int[] hashes, int from, int calls) {
        int mask = hashes.length - 1;
        long sum = 0;
        for (int i = 0; i < calls; i++) {
            int j = (from + i) & mask;
            sum += rings[ringOf[j]].lookupHash(hashes[j]);
        }
        return sum;
    }

    /** {@code count} (a power of two) uniformly random 32-bit hashes: what CRC-32 of varied keys looks like to a ring. */
    private static int[] randomHashes(int count, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        int[] hashes = new int[count];
        for (int i = 0; i < count; i++) {
            hashes[i] = random.nextInt();
        }
        return hashes;
    }

    private static double[] perRound(double[] a, double[] b, Combine c) {
        double[] out = new double[a.length];
        for (int i = 0; i < a.length; i++) {
            out[i] = c.of(a[i], b[i]);
        }
        return out;
    }

    private static double median(double[] values) {
        return quantile(values, 0.5);
    }

    /** The value at rank floor(q·(n-1)) of the sorted values (the median of an odd count for q = ½). */
    private static double quantile(double[] values, double q) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[(int) (q * (sorted.length - 1))];
    }
}
