package io.ringstore.tools;

import static io.ringstore.tools.CliFleet.FEATURED;
import static io.ringstore.tools.CliRun.backends;
import static io.ringstore.tools.CliRun.build;
import static io.ringstore.tools.CliRun.otherFiles;
import static io.ringstore.tools.CliRun.run;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.Ring;
import io.ringstore.RingStore;
import io.ringstore.family.RingVersion;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CliBuildTest {
    private static final Pattern RINGS = Pattern.compile(
            "(\\d+) \\((\\d+) segments?; (\\d+) (?:ring shares|rings share) another ring's segment; (\\d+) empty\\)");
    private static final Pattern POINTS = Pattern.compile("(\\d+) \\((\\d+) dropped.*\\)");

    // ---- the summary ----

    @Test
    void summaryMatchesTheInputAndTheFileAsTheLibraryReadsIt(@TempDir Path dir) throws Exception {
        Path input = backends(dir, "fleet.conf", CliFleet.text(FEATURED));
        Path ring = dir.resolve("fleet.ring");
        CliRun r = build(input, ring);

        // Expected from the input alone.
        List<String> features = CliFleet.features(FEATURED);
        int rings = 1 << features.size();
        int segments = CliFleet.distinctMemberSets(FEATURED).size();
        long empty = CliFleet.emptyRings(FEATURED);
        long raw = CliFleet.rawPoints(FEATURED, 160);
        assertEquals(List.of("ssd", "gpu", "hdd"), features, "fixture");
        assertEquals(4, segments, "fixture: all, ssd, {127.0.0.2}, {127.0.0.4}");
        assertEquals(3, empty, "fixture: ssd+hdd, gpu+hdd, ssd+gpu+hdd");

        assertEquals(String.valueOf(FEATURED.size()), r.field("backends"));
        assertEquals("3 (ssd, gpu, hdd)", r.field("features"));
        assertEquals("1", r.field("generation"));
        Matcher m = RINGS.matcher(r.field("rings"));
        assertTrue(m.matches(), r.field("rings"));
        assertEquals(rings, Integer.parseInt(m.group(1)), "rings");
        assertEquals(segments, Integer.parseInt(m.group(2)), "segments");
        assertEquals(rings - empty - segments, Integer.parseInt(m.group(3)), "rings sharing a segment");
        assertEquals(empty, Integer.parseInt(m.group(4)), "empty rings");
        Matcher p = POINTS.matcher(r.field("points"));
        assertTrue(p.matches(), r.field("points"));
        long points = Long.parseLong(p.group(1));
        assertEquals(raw, points + Long.parseLong(p.group(2)), "points + dropped = Σ weight × 160 over the segments");

        long bytes = Long.parseLong(r.field("bytes"));
        assertEquals(Files.size(ring), bytes, "bytes = the file's size");
        assertEquals((double) bytes / points, Double.parseDouble(r.field("bytes_per_point")), 1e-4);
        assertTrue(Double.parseDouble(r.field("time_ms")) >= 0, r.field("time_ms"));

        try (RingStore store = RingStore.open(ring)) {
            store.verify();
            assertEquals(FEATURED.size(), store.backendCount());
            assertEquals(features, store.features());
            assertEquals(rings, store.rings().size());
            assertEquals(bytes, store.fileSize());
            Set<Long> offsets = new HashSet<>();
            long stored = 0;
            for (Ring x : store.rings()) {
                if (!x.isEmpty() && offsets.add(x.store().layout().segmentOf(x).offset())) {
                    stored += x.pointCount();
                }
            }
            assertEquals(segments, offsets.size(), "distinct segments in the file");
            assertEquals(points, stored, "summary points = Σ point counts of the distinct segments");
        }
    }

    @Test
    void bothAlgorithmsInOneFileInTheOrderGiven(@TempDir Path dir) throws Exception {
        Path input = backends(dir, "fleet.conf", CliFleet.text(FEATURED));
        Path ring = dir.resolve("both.ring");
        CliRun r = build(input, ring, "--algorithm", "v2,v1", "--point-multiple", "40");
        assertEquals("v2:40, v1", r.field("versions"));
        Matcher p = POINTS.matcher(r.field("points"));
        assertTrue(p.matches(), r.field("points"));
        assertEquals(
                CliFleet.rawPoints(FEATURED, 40) + CliFleet.rawPoints(FEATURED, 160),
                Long.parseLong(p.group(1)) + Long.parseLong(p.group(2)));
        try (RingStore store = RingStore.open(ring)) {
            assertEquals(List.of(RingVersion.v2(40), RingVersion.V1), store.versions());
            assertEquals(2 << CliFleet.features(FEATURED).size(), store.rings().size());
            // Σ weight = 8; equal hashes among 320 random 32-bit values are too unlikely to matter.
            assertEquals(
                    8 * 40, store.ring(Set.of(), RingVersion.v2(40)).pointCount(), "v2:40 ring of all: Σ weight × 40");
            assertEquals(8 * 160, store.ring(Set.of(), RingVersion.V1).pointCount(), "v1 ring of all: Σ weight × 160");
        }

        Path v1v2 = dir.resolve("v1v2.ring");
        build(input, v1v2, "--algorithm", "v1,v2");
        try (RingStore store = RingStore.open(v1v2)) {
            assertEquals(
                    List.of(RingVersion.V1, RingVersion.v2(160)),
                    store.versions(),
                    "v2's default point multiple is 160");
        }
    }

    // ---- generations and reproducibility ----

    @Test
    void generationGoesUpOnEachRebuildAndCanBeSet(@TempDir Path dir) throws Exception {
        Path input = backends(dir, "fleet.conf", CliFleet.text(FEATURED));
        Path ring = dir.resolve("fleet.ring");
        assertEquals("1", build(input, ring).field("generation"));
        assertEquals(1, generation(ring));
        assertEquals("2", build(input, ring).field("generation"));
        assertEquals(2, generation(ring));
        assertEquals("42", build(input, ring, "--generation", "42").field("generation"));
        assertEquals(42, generation(ring));
        assertEquals("43", build(input, ring).field("generation"));
        assertEquals(43, generation(ring));
        assertEquals("0", build(input, ring, "--generation=0").field("generation"));
        assertEquals(0, generation(ring));
        assertEquals(List.of(), otherFiles(dir, input, ring), "no temporary files left");
    }

    @Test
    void sameInputAndGenerationGiveTheSameBytes(@TempDir Path dir) throws Exception {
        Path input = backends(dir, "fleet.conf", CliFleet.text(FEATURED));
        Path a = dir.resolve("a.ring");
        Path b = dir.resolve("b.ring");
        build(input, a, "--algorithm", "v1,v2", "--generation", "7");
        build(input, b, "--algorithm", "v1,v2", "--generation", "7");
        assertEquals(-1, Files.mismatch(a, b), "two builds of one input and generation");
        byte[] first = Files.readAllBytes(a);
        build(input, a, "--algorithm", "v1,v2", "--generation", "7");
        assertArrayEquals(first, Files.readAllBytes(a), "rebuilding in place");

        Path c = dir.resolve("c.ring");
        build(input, c, "--algorithm", "v1,v2", "--generation", "8");
        assertTrue(Files.mismatch(a, c) >= 0, "another generation must change the file");
    }

    // ---- bad input: exit 1, one line, target untouched ----

    @Test
    void badBackendsLineNamesFileAndLineAndWritesNothing(@TempDir Path dir) throws Exception {
        Path input = backends(dir, "bad.conf", """
                upstream pool {
                    server 127.0.0.1:8080;
                    server 127.0.0.2:8080 weight=0;
                    server 127.0.0.3:8080;
                }
                """);
        Path ring = dir.resolve("new.ring");
        String error = run("build", input.toString(), "-o", ring.toString()).assertError(Main.FAILED, "build");
        assertTrue(error.contains(input + ":3:"), error);
        assertFalse(Files.exists(ring), "no output file for a bad input");
        assertEquals(List.of(), otherFiles(dir, input), "nothing written to the directory");
    }

    @Test
    void failedBuildLeavesTheExistingFileByteIdentical(@TempDir Path dir) throws Exception {
        Path good = backends(dir, "good.conf", CliFleet.text(FEATURED));
        Path ring = dir.resolve("live.ring");
        build(good, ring);
        byte[] before = Files.readAllBytes(ring);

        Path bad = backends(
                dir, "bad.conf", "server 127.0.0.1:8080\nserver 127.0.0.2:8080\nserver 127.0.0.3:8080 weight=0\n");
        String error = run("build", bad.toString(), "-o", ring.toString()).assertError(Main.FAILED, "build");
        assertTrue(error.contains(bad + ":3:"), error);
        assertArrayEquals(before, Files.readAllBytes(ring), "the live file must not change");
        assertEquals(List.of(), otherFiles(dir, good, ring, bad), "no temporary file left");

        Path duplicate = backends(dir, "dup.conf", "server 127.0.0.1:80\nserver 127.0.0.1\n");
        error = run("build", duplicate.toString(), "-o", ring.toString()).assertError(Main.FAILED, "build");
        assertTrue(error.contains(duplicate + ":2:"), error);
        assertArrayEquals(before, Files.readAllBytes(ring), "the live file must not change");
    }

    /**
     * Two servers that a family's point texts name alike (one name twice, or a name equal to another
     * server's address as the family writes it) are refused with both lines named: built, one of them
     * got no key and the build said nothing (issue 31, item 3). nginx and pingora hash the address, so
     * the same names are fine there.
     */
    @Test
    void serversThatAFamilyNamesAlikeAreRefused(@TempDir Path dir) throws Exception {
        Path ring = dir.resolve("named.ring");
        Path twice = backends(
                dir,
                "twice.conf",
                "server 10.0.0.1:11211 # ringstore: name=x\nserver 10.0.0.2:11211\n"
                        + "server 10.0.0.3:11211 # ringstore: name=x\n");
        for (String algorithm : List.of("twemproxy:md5", "libketama", "envoy", "libmemcached")) {
            String error = run("build", twice.toString(), "-o", ring.toString(), "--algorithm", algorithm)
                    .assertError(Main.FAILED, "build");
            assertTrue(
                    error.contains(twice + ":3: this server is 'x' to " + algorithm.replaceFirst(":.*", "")
                            + ", as the one on line 1 is"),
                    error);
            assertFalse(Files.exists(ring), "no file written");
        }
        Path asAddress =
                backends(dir, "address.conf", "server 10.0.0.2:80 # ringstore: name=10.0.0.1:80\nserver 10.0.0.1:80\n");
        String error = run("build", asAddress.toString(), "-o", ring.toString(), "--algorithm", "envoy")
                .assertError(Main.FAILED, "build");
        assertTrue(
                error.contains(asAddress + ":2: this server is '10.0.0.1:80' to envoy, as the one on line 1"), error);
        build(twice, ring, "--algorithm", "v1,v2"); // the address is hashed: names do not matter
    }

    @Test
    void replacingAFileThatIsNotARingFileNeedsAGeneration(@TempDir Path dir) throws Exception {
        Path input = backends(dir, "fleet.conf", CliFleet.text(FEATURED));
        Path target = dir.resolve("notes.txt");
        Files.writeString(target, "not a ring file\n".repeat(20));
        byte[] before = Files.readAllBytes(target);
        run("build", input.toString(), "-o", target.toString()).assertError(Main.FAILED, "build");
        assertArrayEquals(before, Files.readAllBytes(target));
        assertEquals("5", build(input, target, "--generation", "5").field("generation"));
        assertEquals(5, generation(target));
    }

    @Test
    void weightsTooLargeForARingNameTheLine(@TempDir Path dir) throws Exception {
        Path input =
                backends(dir, "big.conf", "# weights\nserver 127.0.0.1:8080\nserver 127.0.0.2:8080 weight=20000000\n");
        Path ring = dir.resolve("big.ring");
        String error = run("build", input.toString(), "-o", ring.toString()).assertError(Main.FAILED, "build");
        assertTrue(error.contains(input + ":3:"), error);
        assertFalse(Files.exists(ring));
        assertEquals(List.of(), otherFiles(dir, input), "no temporary file left");
    }

    @Test
    void crlfBackendsFileBuildsTheSameFile(@TempDir Path dir) throws Exception {
        String text = CliFleet.text(FEATURED);
        Path lf = dir.resolve("lf.ring");
        Path crlf = dir.resolve("crlf.ring");
        build(backends(dir, "lf.conf", text), lf, "--generation", "1");
        build(backends(dir, "crlf.conf", text.replace("\n", "\r\n")), crlf, "--generation", "1");
        assertEquals(-1, Files.mismatch(lf, crlf));
    }

    @Test
    void missingBackendsFile(@TempDir Path dir) {
        Path missing = dir.resolve("missing.conf");
        Path ring = dir.resolve("x.ring");
        String error = run("build", missing.toString(), "-o", ring.toString()).assertError(Main.FAILED, "build");
        assertTrue(error.contains(missing.toString()), error);
        assertFalse(Files.exists(ring));
    }

    @Test
    void missingOutputDirectoryOrADirectoryAsOutput(@TempDir Path dir) throws Exception {
        Path input = backends(dir, "fleet.conf", CliFleet.text(FEATURED));
        Path nowhere = dir.resolve("no-such-dir").resolve("x.ring");
        String error = run("build", input.toString(), "-o", nowhere.toString()).assertError(Main.FAILED, "build");
        assertTrue(error.contains("no-such-dir"), error);
        assertFalse(Files.exists(nowhere.getParent()));

        run("build", input.toString(), "-o", dir.toString()).assertError(Main.FAILED, "build");
    }

    // ---- wrong arguments: exit 2 ----

    @Test
    void wrongArgumentsExitTwoWithoutWriting(@TempDir Path dir) throws Exception {
        Path input = backends(dir, "fleet.conf", CliFleet.text(FEATURED));
        String in = input.toString();
        String out = dir.resolve("x.ring").toString();
        List<String[]> cases = List.of(
                new String[] {"build", in}, // missing -o
                new String[] {"build", "-o", out}, // missing BACKENDS
                new String[] {"build", in, in, "-o", out}, // two inputs
                new String[] {"build", in, "-o"}, // -o without a value
                new String[] {"build", in, "-o", out, "--colour"}, // unknown option
                new String[] {"build", in, "-o", out, "-o", out}, // given twice
                new String[] {"build", in, "-o", out, "--algorithm", "v3"},
                new String[] {"build", in, "-o", out, "--algorithm", "v1,v1"},
                new String[] {"build", in, "-o", out, "--algorithm", "v2", "--point-multiple", "0"},
                new String[] {"build", in, "-o", out, "--algorithm", "v2", "--point-multiple", "abc"},
                new String[] {"build", in, "-o", out, "--algorithm", "v2", "--point-multiple", "-5"},
                new String[] {"build", in, "-o", out, "--point-multiple", "40"}, // only v1
                new String[] {"build", in, "-o", out, "--algorithm", "v1", "--point-multiple", "160"},
                new String[] {"build", in, "-o", out, "--generation", "-1"},
                new String[] {"build", in, "-o", out, "--generation", "x"});
        for (String[] args : cases) {
            CliRun r = run(args);
            r.assertError(Main.USAGE, "build");
            assertEquals(0, r.stdout().length, () -> String.join(" ", args) + ": nothing on stdout");
            assertFalse(Files.exists(Path.of(out)), () -> String.join(" ", args) + ": nothing written");
        }
    }

    // ---- issue 10: hostile input, one line each ----

    @Test
    void theDefectOneInputIsRefusedInOneLineAndTheGoodRingStays(@TempDir Path dir) throws Exception {
        Path ring = dir.resolve("f.ring");
        build(backends(dir, "good.conf", "server 10.0.0.1:80\n"), ring);
        byte[] before = Files.readAllBytes(ring);
        Path lz = backends(dir, "lz.conf", "server " + "0".repeat(70_000) + "10.0.0.1:80\n");
        CliRun r = run("build", lz.toString(), "-o", ring.toString());
        String error = r.assertError(Main.FAILED, "build");
        assertTrue(error.startsWith(lz + ":1: "), error);
        assertEquals(0, r.stdout().length, "no summary for a build that did not publish");
        assertArrayEquals(before, Files.readAllBytes(ring));
        assertEquals(List.of(), otherFiles(dir, ring, lz, dir.resolve("good.conf")));
        assertEquals("2", build(dir.resolve("good.conf"), ring).field("generation"), "the next build goes on");
    }

    @Test
    void unclearInputsGetAClearLine(@TempDir Path dir) throws Exception {
        Path good = backends(dir, "good.conf", "server 10.0.0.1:80\n");
        Path ring = dir.resolve("f.ring");
        assertTrue(run("build", good.toString(), "-o", "")
                .assertError(Main.USAGE, "build")
                .contains("the output path is empty"));
        assertTrue(run("build", "/dev/zero", "-o", ring.toString())
                .assertError(Main.FAILED, "build")
                .contains("not a regular file"));
        assertTrue(run("build", backends(dir, "u.conf", "server unix:/x.sock\n").toString(), "-o", ring.toString())
                .assertError(Main.FAILED, "build")
                .contains("unix sockets are not supported"));
        assertTrue(run("build", good.toString(), "-o", "/dev/null")
                .assertError(Main.FAILED, "build")
                .contains("not a regular file"));
        String huge = "x".repeat(60_000); // within the line limit: the parser quotes it
        String error = run(
                        "build",
                        backends(dir, "huge.conf", "server " + huge + "\n").toString(),
                        "-o",
                        ring.toString())
                .assertError(Main.FAILED, "build");
        assertTrue(
                error.length() < 600 && error.contains("(cut: "),
                error.length() + ": " + error.substring(0, Math.min(200, error.length())));
        assertFalse(Files.exists(ring));
    }

    @Test
    void aSummaryThatCannotBeWrittenSaysTheRingWasPublished(@TempDir Path dir) throws Exception {
        Path good = backends(dir, "good.conf", "server 10.0.0.1:80\n");
        Path ring = dir.resolve("f.ring");
        String error = CliRun.runWithBrokenStdout("build", good.toString(), "-o", ring.toString(), "--generation", "7")
                .assertError(Main.FAILED, "build");
        assertEquals(
                "published " + ring + " (generation 7) but cannot write the summary: stdout closed or disk full",
                error);
        assertEquals(7, generation(ring));
    }

    @Test
    void leftoversOfDeadBuildsAreRemovedWithOneLine(@TempDir Path dir) throws Exception {
        Path good = backends(dir, "good.conf", "server 10.0.0.1:80\n");
        Path ring = dir.resolve("f.ring");
        Path leftover = Files.write(dir.resolve(".f.ring.4242.tmp"), new byte[1 << 16]);
        CliRun r =
                run("build", good.toString(), "-o", ring.toString(), "--quiet").assertOk();
        assertEquals(
                "ringstore build: removed 1 temporary file(s) of " + ring
                        + " left by builds that died: '.f.ring.4242.tmp'\n",
                r.stderr());
        assertFalse(Files.exists(leftover));
    }

    @Test
    void aPointMultipleOutOfRangeNamesTheRange(@TempDir Path dir) throws Exception {
        Path ring = dir.resolve("v2.ring");
        build(backends(dir, "good.conf", "server 10.0.0.1:80\n"), ring, "--algorithm", "v2", "--point-multiple", "40");
        for (String k : List.of("4294967295", "0", "-5", "x", "99999999999999999999999")) {
            String error = run("lookup", ring.toString(), "--algorithm", "v2:" + k, "/a")
                    .assertError(Main.USAGE, "lookup");
            assertTrue(error.contains("K from 1 to 2147483647"), error);
        }
        assertEquals(
                Main.OK,
                run("lookup", ring.toString(), "--algorithm", "v2:0040", "/a").exit());
        String error = run(
                        "build",
                        dir.resolve("good.conf").toString(),
                        "-o",
                        ring.toString(),
                        "--algorithm",
                        "v2",
                        "--point-multiple",
                        "4294967295")
                .assertError(Main.USAGE, "build");
        assertTrue(error.contains("from 1 to 2147483647"), error);
    }

    private static long generation(Path ring) throws Exception {
        try (RingStore store = RingStore.open(ring)) {
            return store.generation();
        }
    }
}
