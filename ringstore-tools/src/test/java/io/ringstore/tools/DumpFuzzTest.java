package io.ringstore.tools;

import static io.ringstore.tools.CliRun.backends;
import static io.ringstore.tools.CliRun.build;
import static io.ringstore.tools.CliRun.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.RingFileException;
import io.ringstore.RingStore;
import io.ringstore.internal.format.RingFileDescriptor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Files that open but break {@code dump}: the values dump computes with (weights, feature masks,
 * point multiples, point counts, the points' backends and hashes) mutated with every checksum
 * recomputed, so that they pass the checksums and reach the value checks. Every file that opens is
 * dumped as text and as JSON: one line and exit 1 at most, never a trace; and a file that
 * {@code verify} accepts is shown whole (exit 0, every ring's shares). The structural fuzzing of the
 * format, 100,000 files a run, is the library's {@code RingFileFuzzTest}; this one runs the CLI.
 *
 * <p>System properties: {@code ringstore.dumpfuzz.cases} (default {@value #DEFAULT_CASES}),
 * {@code ringstore.dumpfuzz.seed}.
 */
@Tag("slow")
class DumpFuzzTest {
    private static final int DEFAULT_CASES = 3_000;
    private static final long[] WEIGHTS = {
        1, 2, 3, 1000, RingFileDescriptor.MAX_WEIGHT - 1, RingFileDescriptor.MAX_WEIGHT, 0xFFFF_FFFFL, 0
    };
    private static final long[] MULTIPLES = {
        1,
        2,
        160,
        1 << 20,
        RingFileDescriptor.MAX_POINTS_PER_RING,
        RingFileDescriptor.MAX_POINTS_PER_RING + 1,
        Integer.MAX_VALUE,
        0xFFFF_FFFFL,
        0
    };

    @TempDir
    static Path dir;

    private static final List<byte[]> seeds = new ArrayList<>();

    @BeforeAll
    static void buildSeeds() throws Exception {
        String[][] shapes = {
            {"server 127.0.0.1:80\nserver 127.0.0.2:80 weight=3\nserver [::1]:80\n", "v1,v2"},
            {
                "server 127.0.0.1:80 features=a\nserver 127.0.0.2:80 features=a,b\nserver 127.0.0.3:80 features=b\nserver 127.0.0.4:80\n",
                "v2,v1"
            },
            {"server 127.0.0.1:80 features=a\nserver 127.0.0.2:80 features=b\n", "v2"},
        };
        for (String[] s : shapes) {
            Path ring = dir.resolve("seed-" + seeds.size() + ".ring");
            build(
                    backends(dir, "seed-" + seeds.size() + ".conf", s[0]),
                    ring,
                    "--algorithm",
                    s[1],
                    "--point-multiple",
                    "4");
            seeds.add(Files.readAllBytes(ring));
        }
    }

    @Test
    void everyFileThatOpensDumpsWithoutATraceAndEveryFileThatVerifiesDumpsWhole() throws Exception {
        long seed = Long.getLong("ringstore.dumpfuzz.seed", 0xD0D0_2026L);
        long cases = Long.getLong("ringstore.dumpfuzz.cases", DEFAULT_CASES);
        Path file = dir.resolve("case.ring");
        long opened = 0;
        long verified = 0;
        for (long c = 0; c < cases; c++) {
            SplittableRandom r = new SplittableRandom(seed ^ (c * 0x9E37_79B9_7F4A_7C15L));
            RingPatch patch = RingPatch.of(seeds.get(r.nextInt(seeds.size())));
            StringBuilder what = new StringBuilder("seed " + seed + " case " + c + ":");
            int mutations = 1 + r.nextInt(3);
            for (int m = 0; m < mutations; m++) {
                mutate(patch, r, what);
            }
            patch.write(file);
            boolean verifies;
            try (RingStore store = RingStore.open(file)) {
                opened++;
                try {
                    store.verify();
                    verifies = true;
                    verified++;
                } catch (RingFileException e) {
                    verifies = false;
                }
            } catch (RingFileException e) {
                continue;
            }
            for (String[] args :
                    new String[][] {{"dump", file.toString()}, {"dump", file.toString(), "--json", "--points", "2"}}) {
                CliRun run = run(args);
                String context = what + " " + String.join(" ", args) + "\nstderr: " + run.stderr();
                if (verifies) {
                    assertEquals(Main.OK, run.exit(), context);
                    assertFalse(
                            run.out().contains("shares not shown") || run.out().contains("\"problem\""),
                            context + "\n" + run.out());
                    if (args.length > 2) {
                        CliJson.parse(run.out());
                    }
                } else if (run.exit() != Main.OK) {
                    run.assertError(Main.FAILED, "dump");
                }
                run.assertNoStackTrace();
            }
        }
        System.out.printf("dump fuzz, seed %d: %d files, %d opened, %d verified%n", seed, cases, opened, verified);
        assertTrue(opened > cases / 5, "too few mutated files opened: " + opened);
        assertTrue(verified > cases / 20, "too few mutated files verified: " + verified);
    }

    private static void mutate(RingPatch p, SplittableRandom r, StringBuilder what) {
        int ring = r.nextInt(p.ringCount());
        int points = p.pointCount(ring);
        switch (r.nextInt(7)) {
            case 0 -> {
                int b = r.nextInt(p.backendCount());
                long w = r.nextBoolean() ? WEIGHTS[r.nextInt(WEIGHTS.length)] : 1 + r.nextInt(Integer.MAX_VALUE);
                p.backendWeight(b, w);
                what.append(" backend ").append(b).append(" weight=").append(w);
            }
            case 6 -> { // every weight at once: sums past a long need them all large
                long w = WEIGHTS[r.nextInt(WEIGHTS.length)];
                for (int b = 0; b < p.backendCount(); b++) {
                    p.backendWeight(b, w);
                }
                what.append(" every weight=").append(w);
            }
            case 1 -> {
                int b = r.nextInt(p.backendCount());
                int mask = r.nextInt(1 << p.featureCount());
                p.backendMask(b, mask);
                what.append(" backend ").append(b).append(" mask=").append(mask);
            }
            case 2 -> {
                int version = ring >> p.featureCount();
                long m = MULTIPLES[r.nextInt(MULTIPLES.length)];
                p.pointMultiple(version, (int) m);
                what.append(" version ").append(version).append(" multiple=").append(m);
            }
            case 3 -> {
                if (points > 0) {
                    int keep = r.nextInt(points);
                    p.pointCount(ring, keep);
                    what.append(" ring ")
                            .append(ring)
                            .append(" cut to ")
                            .append(keep)
                            .append(" points");
                }
            }
            case 4 -> {
                if (points > 0) {
                    int point = r.nextInt(points);
                    int b = r.nextInt(p.backendCount() + 1);
                    p.pointBackend(ring, point, b);
                    what.append(" ring ")
                            .append(ring)
                            .append(" point ")
                            .append(point)
                            .append(" backend=")
                            .append(b);
                }
            }
            default -> {
                if (points > 0) {
                    int point = r.nextInt(points);
                    int h = r.nextInt();
                    p.pointHash(ring, point, h);
                    what.append(" ring ")
                            .append(ring)
                            .append(" point ")
                            .append(point)
                            .append(" hash=")
                            .append(Integer.toUnsignedString(h));
                }
            }
        }
    }
}
