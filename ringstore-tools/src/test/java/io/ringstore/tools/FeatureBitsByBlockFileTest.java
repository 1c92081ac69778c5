package io.ringstore.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.ringstore.Ring;
import io.ringstore.RingFileLayout;
import io.ringstore.RingStore;
import io.ringstore.family.RingVersion;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A file whose views read feature bits stored by block (storage 3), as every build wrote them before
 * issue 32 stored them by feature (storage 4): it still verifies and answers exactly as it did, and as
 * a build of the same backends today. The file ({@code golden/old-views-storage3.ring}: v2:40 and
 * spymemcached over {@code golden/old-views.conf}, 24 backends with features b, c and a, two down,
 * {@code --views all}) and the digests of its answers ({@code golden/old-views.answers}: SHA-256 of
 * {@code lookup --no-state --algorithm V [--features F]} of {@code golden/old-views.keys}, every version
 * and feature set) were made by the CLI at 085bb69, before the change.
 */
class FeatureBitsByBlockFileTest {
    @TempDir
    Path dir;

    @Test
    void aFileWithBitsByBlockVerifiesAndAnswersAsBeforeAndAsABuildToday() throws Exception {
        Path old = resource("old-views-storage3.ring");
        Path keys = resource("old-views.keys");
        Path rebuilt = dir.resolve("rebuilt.ring");
        CliRun.build(resource("old-views.conf"), rebuilt, "--algorithm", "v2:40,spymemcached", "--views", "all")
                .assertOk();
        CliRun.run("verify", old.toString()).assertOk();
        CliRun.run("verify", rebuilt.toString()).assertOk();
        try (RingStore o = RingStore.open(old);
                RingStore r = RingStore.open(rebuilt)) {
            for (RingStore s : List.of(o, r)) {
                boolean before = s == o;
                assertEquals(
                        before
                                ? RingFileLayout.Storage.POINTS_WITH_TIES_AND_FEATURE_BITS
                                : RingFileLayout.Storage.POINTS_WITH_TIES_AND_FEATURE_BITS_BY_FEATURE,
                        s.layout().storage(s.ring(Set.of())),
                        (before ? "the old" : "the rebuilt") + " file's ring of all backends");
            }
        }
        assertFalse(
                Arrays.equals(Files.readAllBytes(old), Files.readAllBytes(rebuilt)),
                "a build today stores the bits by feature");

        byte[] input = Files.readAllBytes(keys);
        List<String> recorded = Files.readAllLines(resource("old-views.answers"), StandardCharsets.UTF_8);
        assertEquals(16, recorded.size(), "two versions × eight feature sets");
        for (String line : recorded) {
            String[] f = line.split("\t"); // version, features or (all), digest
            for (Path file : List.of(old, rebuilt)) {
                List<String> args =
                        new ArrayList<>(List.of("lookup", file.toString(), "--no-state", "--algorithm", f[0]));
                if (!f[1].equals("(all)")) {
                    args.addAll(List.of("--features", f[1]));
                }
                CliRun lookup = CliRun.runWithInput(input, args.toArray(String[]::new));
                lookup.assertOk();
                assertEquals(
                        f[2], GoldenResources.sha256(lookup.stdout()), file.getFileName() + " " + f[0] + " " + f[1]);
            }
        }
    }

    /** Every hash, not only the keys': the old file's views and today's answer alike, failover walks too. */
    @Test
    void theViewsOfBothLayoutsAgreeOnRandomHashes() throws Exception {
        Path old = resource("old-views-storage3.ring");
        Path rebuilt = dir.resolve("rebuilt.ring");
        CliRun.build(resource("old-views.conf"), rebuilt, "--algorithm", "v2:40,spymemcached", "--views", "all")
                .assertOk();
        SplittableRandom random = new SplittableRandom(32);
        int views = 0;
        try (RingStore o = RingStore.open(old);
                RingStore r = RingStore.open(rebuilt)) {
            for (RingVersion version : o.versions()) {
                for (Set<String> features : List.of(
                        Set.of("a"),
                        Set.of("b"),
                        Set.of("c"),
                        Set.of("a", "b"),
                        Set.of("b", "c"),
                        Set.of("a", "b", "c"))) {
                    Ring a = o.ring(features, version);
                    Ring b = r.ring(features, version);
                    views += o.layout().storage(a) == RingFileLayout.Storage.VIEW ? 1 : 0;
                    for (int i = 0; i < 20_000; i++) {
                        int h = random.nextInt();
                        String what = version + " " + features + " hash " + Integer.toUnsignedString(h);
                        assertEquals(a.lookupHash(h), b.lookupHash(h), what);
                        assertEquals(a.select(h, 3, x -> x % 5 != 1), b.select(h, 3, x -> x % 5 != 1), what);
                    }
                }
            }
        }
        assertEquals(12, views, "every feature ring of the old file is a view");
    }

    private Path resource(String name) throws Exception {
        return GoldenResources.copy(name, dir);
    }
}
