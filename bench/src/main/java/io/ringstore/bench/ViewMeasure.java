package io.ringstore.bench;

import io.ringstore.Backend;
import io.ringstore.Ring;
import io.ringstore.RingFileLayout;
import io.ringstore.RingStore;
import io.ringstore.builder.BackendList;
import io.ringstore.builder.RingBuilder;
import io.ringstore.builder.Views;
import io.ringstore.internal.format.RingFileDescriptor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * What views ({@link Views}) save, in file and page-cache bytes, to set
 * {@link RingBuilder#AUTO_MAX_EXPECTED_WALK}; what they cost a lookup is {@link ViewLookupBenchmark}.
 *
 * <p>For {@code examples/backends.conf} and for {@link ViewFleets#randomFleet} (2,048 backends of weight
 * 10, each with each of 5 features with probability ½; 32 rings), it builds the file with views
 * {@code NONE}, {@code AUTO} and {@code ALL}, opens the three, looks up the same
 * {@value #PAGE_CACHE_LOOKUPS} random hashes in every ring of each (checking that the three files
 * answer alike), then reads the Rss of each file's mapping in {@code /proc/self/smaps}: the page-cache
 * bytes a router using every ring touches. Also the sum of {@link RingFileLayout#ownBytes} over the
 * rings and the distinct segments' bytes. Then the file size AUTO would give at other thresholds,
 * derived from the NONE and ALL files' layouts (checked against the real AUTO file at the current
 * threshold).
 *
 * <p>{@code --seed S} (repeatable) measures the 5-feature fleet drawn from each seed instead of
 * {@link ViewFleets#FLEET_SEED}; {@code --fleet-dir DIR} writes each seeded fleet
 * ({@code random5-SEED.conf}) and {@link ViewLookupBenchmark}'s fleet ({@code nested.conf}) as backends
 * files, for another release's {@code ringstore build}.
 *
 * <pre>
 * java -Xmx4g -cp bench/target/benchmarks.jar io.ringstore.bench.ViewMeasure
 *     [--backends FILE] [--seed S]... [--fleet-dir DIR] [--tsv FILE]
 * </pre>
 * Files go to {@code views/} in the benchmarks' ring directory ({@link BenchRings#dataDir()}). Linux
 * only (smaps).
 */
public final class ViewMeasure {
    private static final int PAGE_CACHE_LOOKUPS = 1 << 20;
    /** Thresholds (members hold at least 1/W of the weight) of the derived AUTO file sizes. */
    private static final int[] WALKS = {2, 4, 6, 8, 10, 12, 16, 32, 64};

    private static final String USAGE =
            "usage: ViewMeasure [--backends FILE] [--seed S]... [--fleet-dir DIR] [--tsv FILE]";
    /** Where answers go, so the lookups are not optimised away. */
    private static volatile long sink;

    private ViewMeasure() {}

    public static void main(String[] args) throws Exception {
        Path backendsFile = Path.of("examples/backends.conf");
        String tsvPath = null;
        List<Long> seeds = new ArrayList<>();
        Path fleetDir = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--backends" -> backendsFile = Path.of(args[++i]);
                case "--tsv" -> tsvPath = args[++i];
                case "--seed" -> seeds.add(Long.decode(args[++i]));
                case "--fleet-dir" -> fleetDir = Path.of(args[++i]);
                default -> throw new IllegalArgumentException("unknown argument: " + args[i] + " (" + USAGE + ")");
            }
        }
        Path dir = BenchRings.dataDir().resolve("views");
        Files.createDirectories(dir);
        if (fleetDir != null) {
            Files.createDirectories(fleetDir);
            Files.writeString(fleetDir.resolve("nested.conf"), ViewFleets.backendsFile(ViewFleets.nestedFleet()));
        }
        System.out.printf("load average at start: %s", Files.readString(Path.of("/proc/loadavg")));
        long start = System.nanoTime();
        try (Tsv tsv = Tsv.create(
                tsvPath,
                "fleet",
                "views",
                "fileBytes",
                "ratioToNone",
                "viewRings",
                "rings",
                "segmentBytes",
                "ownBytesSum",
                "rssBytes")) {
            measureBytes("examples/backends.conf", BackendList.parse(backendsFile), dir.resolve("backends-conf"), tsv);
            for (long seed : seeds.isEmpty() ? List.of(ViewFleets.FLEET_SEED) : seeds) {
                BackendList fleet = ViewFleets.randomFleet(seed);
                String name = ViewFleets.RANDOM_FLEET + ", seed 0x" + Long.toHexString(seed);
                if (fleetDir != null) { // for building the same fleet with another release's CLI
                    Files.writeString(
                            fleetDir.resolve("random5-" + Long.toHexString(seed) + ".conf"),
                            ViewFleets.backendsFile(fleet));
                }
                measureBytes(name, fleet, dir.resolve("random5-" + Long.toHexString(seed)), tsv);
            }
        }
        System.out.printf(
                "%nload average at end: %stotal %.0f s%n",
                Files.readString(Path.of("/proc/loadavg")), (System.nanoTime() - start) / 1e9);
    }

    private static void measureBytes(String name, BackendList fleet, Path prefix, Tsv tsv) throws Exception {
        RingStore[] stores = ViewFleets.buildAll(fleet, prefix);
        try {
            List<Ring> reference = stores[0].rings();
            for (RingStore s : stores) {
                if (!s.features().equals(stores[0].features()) || s.rings().size() != reference.size()) {
                    throw new IllegalStateException(s.path() + " has other rings than " + stores[0].path());
                }
            }
            // Every ring of every file, the same hashes; answers compared across the files.
            int[] hashes = ViewFleets.randomHashes(PAGE_CACHE_LOOKUPS, BenchRings.KEY_SEED);
            long sum = 0;
            for (int r = 0; r < reference.size(); r++) {
                for (int h : hashes) {
                    int expected = stores[0].rings().get(r).lookupHash(h);
                    for (int k = 1; k < stores.length; k++) {
                        int got = stores[k].rings().get(r).lookupHash(h);
                        if (got != expected) {
                            throw new IllegalStateException(
                                    "ring " + reference.get(r) + " hash " + Integer.toUnsignedString(h) + ": "
                                            + ViewFleets.KINDS[k] + " answers " + got + ", NONE " + expected);
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
                        ViewFleets.KINDS[k],
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
                        ViewFleets.KINDS[k],
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
            ViewFleets.closeAll(stores);
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
}
