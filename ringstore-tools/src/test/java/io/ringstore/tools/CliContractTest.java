package io.ringstore.tools;

import static io.ringstore.tools.CliJson.array;
import static io.ringstore.tools.CliJson.number;
import static io.ringstore.tools.CliJson.object;
import static io.ringstore.tools.CliJson.string;
import static io.ringstore.tools.CliRun.backends;
import static io.ringstore.tools.CliRun.build;
import static io.ringstore.tools.CliRun.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.RingStore;
import io.ringstore.family.RingVersion;
import io.ringstore.internal.TextLines;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The CLI as one contract (issue 13): the same version names in every command, {@code --quiet} and
 * {@code --json} meaning the same thing wherever they are, counts that agree between commands, whole
 * sentences in the top-level help, one percentage parser, and a {@code diff} that says what it compares.
 */
class CliContractTest {
    private static final String FLEET = CliFleet.text(CliFleet.FEATURED);

    @Test
    void buildWritesAnyListOfV1AndV2K(@TempDir Path dir) throws Exception {
        Path ring = dir.resolve("f.ring");
        build(backends(dir, "f.conf", FLEET), ring, "--algorithm", "v1,v2:16,v2:160", "--quiet");
        try (RingStore store = RingStore.open(ring)) {
            assertEquals(List.of(RingVersion.V1, RingVersion.v2(16), RingVersion.v2(160)), store.versions());
        }
        // A bare v2 takes --point-multiple; v2:K names its own.
        Path mixed = dir.resolve("m.ring");
        build(backends(dir, "m.conf", FLEET), mixed, "--algorithm", "v2:16,v2", "--point-multiple", "40", "--quiet");
        try (RingStore store = RingStore.open(mixed)) {
            assertEquals(List.of(RingVersion.v2(16), RingVersion.v2(40)), store.versions());
        }
        // Readers: --point-multiple K alone is --algorithm v2:K, and both spellings answer alike.
        CliRun byName = run("lookup", ring.toString(), "--algorithm", "v2:16", "/a", "/b")
                .assertOk();
        CliRun byMultiple = run("lookup", ring.toString(), "--point-multiple", "16", "/a", "/b")
                .assertOk();
        CliRun bareV2 = run("lookup", ring.toString(), "--algorithm", "v2", "--point-multiple", "16", "/a", "/b")
                .assertOk();
        assertEquals(byName.out(), byMultiple.out());
        assertEquals(byName.out(), bareV2.out());
        String twoV2 = run("lookup", ring.toString(), "--algorithm", "v2", "/a").assertError(Main.USAGE, "lookup");
        assertTrue(twoV2.contains("say which: v2:16 or v2:160"), twoV2);
    }

    /**
     * nginx and pingora are the families' names; v1 and v2[:K] stay their versions' names: {@code
     * --algorithm nginx} builds and reads what {@code v1} does, {@code pingora:K} what {@code v2:K}
     * does, byte for byte and answer for answer, and the versions print as before.
     */
    @Test
    void familyNamesAreTheVersionNamesToo(@TempDir Path dir) throws Exception {
        Path in = backends(dir, "f.conf", FLEET);
        Path byFamily = dir.resolve("family.ring");
        Path byVersion = dir.resolve("version.ring");
        build(in, byFamily, "--algorithm", "nginx,pingora:16,pingora", "--point-multiple", "40", "--generation", "1");
        build(in, byVersion, "--algorithm", "v1,v2:16,v2", "--point-multiple", "40", "--generation", "1");
        assertEquals(
                java.util.HexFormat.of().formatHex(java.nio.file.Files.readAllBytes(byVersion)),
                java.util.HexFormat.of().formatHex(java.nio.file.Files.readAllBytes(byFamily)));
        try (RingStore store = RingStore.open(byFamily)) {
            assertEquals(List.of(RingVersion.V1, RingVersion.v2(16), RingVersion.v2(40)), store.versions());
        }
        for (String[] same : new String[][] {{"nginx", "v1"}, {"pingora:16", "v2:16"}, {"pingora:40", "v2:40"}}) {
            assertEquals(
                    run("lookup", byVersion.toString(), "--algorithm", same[1], "/a", "/b")
                            .assertOk()
                            .out(),
                    run("lookup", byVersion.toString(), "--algorithm", same[0], "/a", "/b")
                            .assertOk()
                            .out(),
                    same[0]);
        }
        assertEquals(
                run("lookup", byVersion.toString(), "--algorithm", "v2", "--point-multiple", "16", "/a")
                        .assertOk()
                        .out(),
                run("lookup", byVersion.toString(), "--algorithm", "pingora", "--point-multiple", "16", "/a")
                        .assertOk()
                        .out());
        String help = run("build", "--help").assertOk().out();
        for (io.ringstore.family.RingFamily f : io.ringstore.family.Families.all()) {
            assertTrue(help.contains("\n" + " ".repeat(26) + f.name()), () -> "build --help lacks " + f.name());
        }
        assertTrue(help.contains("pingora = v2: v2:K with K from 1 to 2147483647; v2 is v2:160"), help);
    }

    @Test
    void ambiguousVersionsAreRefusedWithOneLine(@TempDir Path dir) throws Exception {
        String in = backends(dir, "f.conf", FLEET).toString();
        String out = dir.resolve("f.ring").toString();
        String twice = run("build", in, "-o", out, "--algorithm", "v2,v2:160").assertError(Main.USAGE, "build");
        assertTrue(twice.contains("listed twice"), twice);
        String nothingToApply = run("build", in, "-o", out, "--algorithm", "v1,v2:16", "--point-multiple", "40")
                .assertError(Main.USAGE, "build");
        assertTrue(nothingToApply.contains("bare v2"), nothingToApply);
        run("build", in, "-o", out, "--algorithm", "v1:160").assertError(Main.USAGE, "build");
        run("build", in, "-o", out, "--algorithm", "v2:0").assertError(Main.USAGE, "build");
        build(Path.of(in), Path.of(out), "--algorithm", "v1,v2:16", "--quiet");
        String both = run("lookup", out, "--algorithm", "v1", "--point-multiple", "16", "/a")
                .assertError(Main.USAGE, "lookup");
        assertTrue(both.contains("give one of the two"), both);
        run("lookup", out, "--algorithm", "v2:16", "--point-multiple", "16", "/a")
                .assertError(Main.USAGE, "lookup");
    }

    @Test
    void quietPrintsNothingAndJsonCarriesTheSummary(@TempDir Path dir) throws Exception {
        Path input = backends(dir, "f.conf", FLEET);
        Path ring = dir.resolve("f.ring");
        CliRun quiet =
                run("build", input.toString(), "-o", ring.toString(), "--quiet").assertOk();
        assertEquals("", quiet.out(), "--quiet: no summary, no samples");
        assertEquals("", quiet.stderr());
        run("build", input.toString(), "-o", ring.toString(), "--quiet", "--json")
                .assertError(Main.USAGE, "build");

        CliRun text = build(input, ring, "--algorithm", "v1,v2:16");
        Map<String, Object> j = object(CliJson.parse(
                build(input, ring, "--algorithm", "v1,v2:16", "--json").out()));
        assertEquals(ring.toString(), string(j.get("wrote")));
        assertEquals("3", number(j.get("generation")).toString(), "the third build of the file");
        assertEquals(
                List.of("ssd", "gpu", "hdd"),
                array(j.get("features")).stream().map(CliJson::string).toList());
        assertEquals(
                List.of("v1", "v2:16"),
                array(j.get("versions")).stream().map(CliJson::string).toList());
        assertEquals(text.field("backends"), number(j.get("backends")).toString());
        assertTrue(
                text.field("rings").startsWith(number(j.get("rings")) + " (" + number(j.get("segments")) + " segment"),
                text.field("rings"));
        assertTrue(
                text.field("points").startsWith(number(j.get("points")) + " (" + number(j.get("dropped")) + " dropped"),
                text.field("points"));
        assertEquals(text.field("bytes"), number(j.get("bytes")).toString());
        for (String key : List.of("shared_rings", "empty_rings", "bytes_per_point", "time_ms", "points_per_second")) {
            assertTrue(j.containsKey(key), key + " in " + j.keySet());
        }
        List<Object> samples = array(j.get("samples"));
        assertEquals(BuildCommand.SAMPLE_KEYS.size(), samples.size());
        for (Object o : samples) {
            Map<String, Object> s = object(o);
            assertEquals("v1 (all)", string(s.get("ring")), "the file's default ring answered");
            String key = string(s.get("key"));
            String looked = run("lookup", ring.toString(), "--algorithm", "v1", key)
                    .assertOk()
                    .out();
            assertEquals(key + "\t" + string(s.get("address")) + "\n", looked);
        }
        assertTrue(
                text.outLines().stream()
                        .filter(l -> l.startsWith("sample: "))
                        .allMatch(l -> l.endsWith("\tring v1 (all)")),
                text.out());
    }

    /** build's point count is verify's for one file whose rings share segments, with v1 and v2 (issue 9's fix, kept). */
    @Test
    void buildAndVerifyCountTheSamePoints(@TempDir Path dir) throws Exception {
        Path ring = dir.resolve("f.ring");
        Map<String, Object> built =
                object(CliJson.parse(build(backends(dir, "f.conf", FLEET), ring, "--algorithm", "v1,v2:40", "--json")
                        .out()));
        assertTrue(number(built.get("shared_rings")).intValueExact() > 0, "fixture: rings share segments");
        Map<String, Object> verified = object(CliJson.parse(
                run("verify", ring.toString(), "--json").assertOk().out()));
        assertEquals(Boolean.TRUE, verified.get("ok"));
        assertEquals(ring.toString(), string(verified.get("path")));
        assertEquals(number(built.get("generation")), number(verified.get("generation")));
        assertEquals(
                number(built.get("points")), number(verified.get("ring_points")), "verify counts what build counts");
        assertEquals(number(built.get("segments")), number(verified.get("segments")));
        assertEquals(number(built.get("rings")), number(verified.get("rings")));
        assertEquals(number(built.get("backends")), number(verified.get("backends")));
        String text = run("verify", ring.toString()).assertOk().out();
        assertTrue(text.contains(", " + number(built.get("points")) + " ring points,"), text);
    }

    @Test
    void oneOfEverythingIsSingular(@TempDir Path dir) throws Exception {
        Path ring = dir.resolve("one.ring");
        CliRun r = build(backends(dir, "one.conf", "server 10.0.0.1:80\n"), ring);
        assertEquals("1 (1 segment; 0 rings share another ring's segment; 0 empty)", r.field("rings"));
        String verified = run("verify", ring.toString()).assertOk().out();
        assertTrue(verified.contains(", 1 backend, 1 ring, 1 segment, 160 ring points,"), verified);
        assertTrue(run("dump", ring.toString()).assertOk().out().contains("rings: 1 (1 segment)"));
    }

    @Test
    void topLevelHelpShowsWholeSentences() {
        String help = CliRun.run("--help").assertOk().out();
        String commands =
                help.substring(help.indexOf("commands:\n") + "commands:\n".length(), help.indexOf("\n\nexit codes"));
        for (Command c : Main.commands()) {
            int at = commands.indexOf("  " + c.name() + " ");
            assertTrue(at >= 0, c.name() + " in\n" + commands);
            int next = commands.indexOf("\n  ", at + 1);
            while (next >= 0 && commands.charAt(next + 3) == ' ') { // a continuation line, indented under the summary
                next = commands.indexOf("\n  ", next + 1);
            }
            String summary = (next < 0 ? commands.substring(at) : commands.substring(at, next)).strip();
            assertTrue(summary.endsWith("."), () -> "a whole sentence: " + summary);
            assertTrue(summary.lines().allMatch(l -> l.length() <= 100), summary);
        }
    }

    @Test
    void analyzeOfAFileRefusesSvgWithTheReason(@TempDir Path dir) throws Exception {
        Path file = backends(dir, "f.conf", FLEET);
        String error = run(
                        "analyze",
                        file.toString(),
                        "--svg",
                        dir.resolve("x.svg").toString())
                .assertError(Main.USAGE, "analyze");
        assertTrue(error.contains("--backends N") && error.contains("--csv"), error);
        CliRun quiet = run(
                        "analyze",
                        file.toString(),
                        "--csv",
                        dir.resolve("x.csv").toString(),
                        "--quiet")
                .assertOk();
        assertEquals("", quiet.out());
        assertEquals("", quiet.stderr());
    }

    @Test
    void onePercentageParser() throws Exception {
        assertEquals(2.0, TextLines.percent("2%", 100), 1e-12);
        assertEquals(2.0, TextLines.percent("2 %", 100), 1e-12);
        assertEquals(2.0, TextLines.percent("0.02", 100), 1e-12, "a bare number where a fraction is natural");
        assertEquals(12.5, TextLines.percent("12.5", 1), 1e-12, "a bare number where the key says percent");
        assertEquals(12.5, TextLines.percent(" 12.5% ", 1), 1e-12);
        for (String bad : List.of("", "%", "NaN", "1e3", "0x1p3", "5d", "two", "5%%", "Infinity")) {
            assertTrue(Double.isNaN(TextLines.percent(bad, 1)), bad);
        }
        assertEquals(RecommendCommand.targetCv("0.047"), RecommendCommand.targetCv("4.7%"), 1e-15);
        assertEquals(
                0.047,
                io.ringstore.migration.PolicyFile.parse(Path.of("p"), "percent = 4.7%\nscope = all\n", "ams")
                                .basisPoints()
                        / 10_000.0,
                1e-12);
    }

    @Test
    void dumpPrintsCvAsAPercentage(@TempDir Path dir) throws Exception {
        Path ring = dir.resolve("f.ring");
        build(backends(dir, "f.conf", FLEET), ring);
        List<String> cv = run("dump", ring.toString()).assertOk().outLines().stream()
                .filter(l -> l.startsWith("  cv: "))
                .toList();
        assertTrue(
                !cv.isEmpty() && cv.stream().allMatch(l -> l.matches("  cv: measured \\d+\\.\\d{4} %, predicted .*")),
                cv.toString());
    }

    @Test
    void diffOfUnrelatedFleetsSaysSo(@TempDir Path dir) throws Exception {
        Path a = dir.resolve("a.ring");
        Path b = dir.resolve("b.ring");
        build(backends(dir, "a.conf", "server 10.0.0.1:80\nserver 10.0.0.2:80\n"), a);
        build(backends(dir, "b.conf", "server 10.0.1.1:80\nserver 10.0.1.2:80\n"), b);
        CliRun r = run("diff", a.toString(), b.toString()).assertOk();
        assertTrue(r.field("backends").startsWith("none in common (2 in a, 2 in b): different fleets"), r.out());
        assertTrue(r.outLines().stream().noneMatch(l -> l.startsWith("rollout ")), r.out());
        assertEquals(
                2,
                r.outLines().stream()
                        .filter(l -> l.startsWith("  10.0.0.") && l.endsWith("  removed"))
                        .count(),
                r.out());
        assertEquals(
                2,
                r.outLines().stream()
                        .filter(l -> l.startsWith("  10.0.1.") && l.endsWith("  added"))
                        .count(),
                r.out());
        Map<String, Object> j = object(CliJson.parse(
                run("diff", a.toString(), b.toString(), "--json").assertOk().out()));
        assertEquals(Boolean.FALSE, j.get("same_backends"));
        assertEquals(
                Set.of("added", "removed"),
                Set.copyOf(array(j.get("backends")).stream()
                        .map(o -> string(object(o).get("change")))
                        .toList()));
        Map<String, Object> same = object(CliJson.parse(
                run("diff", a.toString(), a.toString(), "--json").assertOk().out()));
        assertEquals(Boolean.TRUE, same.get("same_backends"));
        assertTrue(array(same.get("backends")).stream()
                .allMatch(o -> string(object(o).get("change")).equals("kept")));
    }
}
