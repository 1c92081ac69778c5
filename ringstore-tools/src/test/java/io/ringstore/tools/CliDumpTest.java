package io.ringstore.tools;

import static io.ringstore.tools.CliJson.array;
import static io.ringstore.tools.CliJson.number;
import static io.ringstore.tools.CliJson.object;
import static io.ringstore.tools.CliJson.string;
import static io.ringstore.tools.CliRun.backends;
import static io.ringstore.tools.CliRun.build;
import static io.ringstore.tools.CliRun.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.Backend;
import io.ringstore.Ring;
import io.ringstore.RingStore;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CliDumpTest {
    @TempDir
    static Path dir;

    private static Path ring;

    @BeforeAll
    static void buildFile() throws Exception {
        ring = dir.resolve("fleet.ring");
        build(
                backends(dir, "fleet.conf", CliFleet.text(CliFleet.FEATURED)),
                ring,
                "--algorithm",
                "v1,v2",
                "--point-multiple",
                "40",
                "--generation",
                "17");
    }

    // ---- text ----

    /** A backend marked down says so in both forms; the others do not. */
    @Test
    void aDownBackendIsShown() throws Exception {
        Path file = dir.resolve("down.ring");
        build(backends(dir, "down.conf", "server 127.0.0.1:80\nserver 127.0.0.2:80 down features=eu\n"), file);
        List<String> lines = run("dump", file.toString()).assertOk().outLines();
        assertTrue(
                lines.stream().anyMatch(l -> l.contains("127.0.0.2:80") && l.endsWith("eu  down")),
                String.join("\n", lines));
        assertTrue(
                lines.stream().noneMatch(l -> l.contains("127.0.0.1:80") && l.contains("down")),
                String.join("\n", lines));
        String json = run("dump", file.toString(), "--json").assertOk().out();
        assertTrue(
                json.contains("\"features\":[\"eu\"],\"down\":true,")
                        && json.contains("\"features\":[],\"down\":false,"),
                json);
    }

    /** The health settings stored in the ring file: text names those that are not nginx's defaults, JSON always has all three. */
    @Test
    void theHealthSettingsAreShown() throws Exception {
        Path file = dir.resolve("health.ring");
        build(
                backends(
                        dir,
                        "health.conf",
                        "server 127.0.0.1:80\nserver 127.0.0.2:80 max_fails=2 fail_timeout=1s down\n"
                                + "server 127.0.0.3:80 max_conns=5 # ringstore: name=three\n"),
                file);
        List<String> lines = run("dump", file.toString()).assertOk().outLines();
        String text = String.join("\n", lines);
        assertTrue(
                lines.stream()
                        .anyMatch(l -> l.contains("127.0.0.2:80")
                                && l.endsWith("  down max_fails=2 fail_timeout=1s max_conns=0")),
                text);
        assertTrue(
                lines.stream()
                        .anyMatch(l -> l.contains("127.0.0.3:80")
                                && l.endsWith("  name=three max_fails=1 fail_timeout=10s max_conns=5")),
                text);
        assertTrue(lines.stream().anyMatch(l -> l.contains("127.0.0.1:80") && !l.contains("max_fails")), text);
        List<Object> backends = CliJson.array(CliJson.object(CliJson.parse(
                        run("dump", file.toString(), "--json").assertOk().out()))
                .get("backends"));
        int[][] expected = {{1, 10, 0}, {2, 1, 0}, {1, 10, 5}};
        for (int i = 0; i < expected.length; i++) {
            Map<String, Object> b = CliJson.object(backends.get(i));
            assertEquals(
                    List.of(expected[i][0], expected[i][1], expected[i][2]),
                    List.of(
                            ((Number) b.get("max_fails")).intValue(),
                            ((Number) b.get("fail_timeout")).intValue(),
                            ((Number) b.get("max_conns")).intValue()),
                    "backend " + i + ": " + b);
        }
    }

    @Test
    void textShowsTheGenerationBackendsAndEveryRing() throws Exception {
        CliRun r = run("dump", ring.toString()).assertOk();
        String text = r.out();
        assertEquals("17", r.field("generation"));
        assertEquals(String.valueOf(Files.size(ring)), r.field("bytes"));
        try (RingStore store = RingStore.open(ring)) {
            for (Backend b : store.backends()) {
                assertTrue(text.contains(b.address()), () -> "backend " + b.address() + " missing:\n" + text);
            }
            assertEquals(
                    store.rings().size(),
                    r.outLines().stream().filter(l -> l.startsWith("ring ")).count(),
                    "one 'ring' line per ring");
            for (Ring x : store.rings()) {
                String head = "ring " + x + ": " + x.pointCount() + " points, " + 6L * x.pointCount() + " bytes";
                assertTrue(
                        r.outLines().stream().anyMatch(l -> l.startsWith(head)),
                        () -> "'" + head + "' missing:\n" + text);
            }
        }
    }

    @Test
    void textListsTheFirstPointsOfEveryNonEmptyRing() throws Exception {
        CliRun r = run("dump", ring.toString(), "--points", "3").assertOk();
        List<String> lines = r.outLines();
        try (RingStore store = RingStore.open(ring)) {
            for (Ring x : store.rings()) {
                if (x.isEmpty()) {
                    continue;
                }
                int first = pointTableHeading(lines, indexOfPrefix(lines, "ring " + x + ": ")) + 1;
                for (int i = 0; i < 3; i++) {
                    String expected = i + " " + Long.toUnsignedString(x.pointHash(i)) + " "
                            + store.backend(x.pointBackend(i)).address();
                    assertEquals(
                            expected,
                            lines.get(first + i).strip().replaceAll("\\s+", " "),
                            "ring " + x + " point " + i);
                }
                assertTrue(
                        first + 3 == lines.size() || lines.get(first + 3).isBlank(),
                        () -> "only 3 points in ring " + x);
            }
        }
    }

    // ---- JSON ----

    @Test
    void jsonIsOneObjectMatchingTheLibrary() throws Exception {
        CliRun r = run("dump", ring.toString(), "--json").assertOk();
        assertEquals(1, r.outLines().size(), "one line of JSON");
        Map<String, Object> root = object(CliJson.parse(r.out()));
        assertEquals(17, number(root.get("generation")).intValueExact());
        try (RingStore store = RingStore.open(ring)) {
            assertEquals(store.fileSize(), number(root.get("bytes")).longValueExact());

            List<Object> backends = array(root.get("backends"));
            assertEquals(store.backendCount(), backends.size());
            for (int i = 0; i < backends.size(); i++) {
                Map<String, Object> b = object(backends.get(i));
                assertEquals(CliFleet.FEATURED.get(i).address(), string(b.get("address")));
                assertEquals(
                        CliFleet.FEATURED.get(i).weight(),
                        number(b.get("weight")).intValueExact());
            }

            List<Object> rings = array(root.get("rings"));
            assertEquals(store.rings().size(), rings.size());
            for (int i = 0; i < rings.size(); i++) {
                Ring x = store.rings().get(i);
                Map<String, Object> j = object(rings.get(i));
                assertEquals(x.version().toString(), string(j.get("version")));
                assertEquals(
                        x.features(),
                        new LinkedHashSet<>(array(j.get("features")).stream()
                                .map(CliJson::string)
                                .toList()));
                assertEquals(x.pointCount(), number(j.get("points")).intValueExact(), () -> "points of ring " + x);
                List<Object> shares = array(j.get("backends"));
                if (x.isEmpty()) {
                    assertEquals(0, shares.size(), () -> "no backends in empty ring " + x);
                    continue;
                }
                Set<Integer> members = CliFleet.members(CliFleet.FEATURED, x.features());
                Set<Integer> listed = new TreeSet<>();
                double line = 0;
                double weight = 0;
                double[] exact = x.lineShares();
                for (Object o : shares) {
                    Map<String, Object> s = object(o);
                    int index = number(s.get("index")).intValueExact();
                    listed.add(index);
                    double lineShare = number(s.get("line_share")).doubleValue();
                    assertEquals(
                            exact[index], lineShare, 1e-8, () -> "line share of backend " + index + " in ring " + x);
                    line += lineShare;
                    weight += number(s.get("weight_share")).doubleValue();
                }
                assertEquals(members, listed, () -> "backends of ring " + x);
                assertEquals(1.0, line, 1e-6, () -> "line shares of ring " + x);
                assertEquals(1.0, weight, 1e-6, () -> "weight shares of ring " + x);
            }
        }
    }

    @Test
    void jsonWeightSharesFollowTheWeights() throws Exception {
        Map<String, Object> root = object(
                CliJson.parse(run("dump", ring.toString(), "--json").assertOk().out()));
        Map<String, Object> all = object(array(root.get("rings")).getFirst());
        assertEquals(List.of(), array(all.get("features")), "the first ring is the ring of all backends");
        int total = CliFleet.FEATURED.stream().mapToInt(CliFleet.Server::weight).sum();
        for (Object o : array(all.get("backends"))) {
            Map<String, Object> s = object(o);
            int index = number(s.get("index")).intValueExact();
            assertEquals(
                    (double) CliFleet.FEATURED.get(index).weight() / total,
                    number(s.get("weight_share")).doubleValue(),
                    1e-8);
        }
    }

    /**
     * {@code --json --points N} must stay valid JSON with the ring's point count intact. Today it writes
     * the key {@code "points"} twice in every ring (the count, then the list; DumpCommand.json), so a
     * strict parser rejects it and a lenient one loses the count.
     */
    @Test
    void jsonWithPointsListsThemWithoutLosingThePointCount() throws Exception {
        CliRun r = run("dump", ring.toString(), "--json", "--points", "3").assertOk();
        Map<String, Object> root = object(CliJson.parse(r.out()));
        try (RingStore store = RingStore.open(ring)) {
            List<Object> rings = array(root.get("rings"));
            for (int i = 0; i < rings.size(); i++) {
                Ring x = store.rings().get(i);
                Map<String, Object> j = object(rings.get(i));
                assertEquals(x.pointCount(), number(j.get("points")).intValueExact(), () -> "points of ring " + x);
                List<Object> listed = new ArrayList<>();
                for (Object value : j.values()) {
                    if (value instanceof List<?> list
                            && !list.isEmpty()
                            && list.getFirst() instanceof Map<?, ?> m
                            && m.containsKey("hash")) {
                        listed.addAll(list);
                    }
                }
                assertEquals(Math.min(3, x.pointCount()), listed.size(), () -> "listed points of ring " + x);
                for (int p = 0; p < listed.size(); p++) {
                    Map<String, Object> point = object(listed.get(p));
                    assertEquals(x.pointHash(p), number(point.get("hash")).longValueExact());
                    assertEquals(x.pointBackend(p), number(point.get("backend")).intValueExact());
                }
            }
        }
    }

    // ---- errors ----

    @Test
    void badArgumentsAndBadFiles() throws Exception {
        run("dump").assertError(Main.USAGE, "dump");
        run("dump", ring.toString(), ring.toString()).assertError(Main.USAGE, "dump");
        run("dump", ring.toString(), "--points", "-1").assertError(Main.USAGE, "dump");
        run("dump", ring.toString(), "--points", "many").assertError(Main.USAGE, "dump");
        run("dump", ring.toString(), "--json=yes").assertError(Main.USAGE, "dump");
        run("dump", dir.resolve("missing.ring").toString()).assertError(Main.FAILED, "dump");
        Path text = Files.writeString(dir.resolve("notes.txt"), "hello\n".repeat(100));
        run("dump", text.toString(), "--json").assertError(Main.FAILED, "dump");
    }

    /** As lookup does: output that could not be written is exit 1, not a silent 0 (e.g. {@code dump f > /dev/full}). */
    @Test
    void aFailingStdoutIsAFailure() {
        CliRun.runWithBrokenStdout("dump", ring.toString()).assertError(Main.FAILED, "dump");
        CliRun.runWithBrokenStdout("dump", ring.toString(), "--json").assertError(Main.FAILED, "dump");
    }

    @Test
    void stdoutIsWrittenInLargeBlocks() {
        // Unbuffered, a text dump wrote every printf piece on its own (118,082 write calls for a 10-feature file).
        int[] writes = {0};
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        java.io.OutputStream counting = new java.io.OutputStream() {
            @Override
            public void write(int b) {
                writes[0]++;
                bytes.write(b);
            }

            @Override
            public void write(byte[] b, int off, int len) {
                writes[0]++;
                bytes.write(b, off, len);
            }
        };
        java.io.PrintStream stdout = new java.io.PrintStream(counting, false, java.nio.charset.StandardCharsets.UTF_8);
        java.io.PrintStream stderr = new java.io.PrintStream(
                new java.io.ByteArrayOutputStream(), true, java.nio.charset.StandardCharsets.UTF_8);
        for (String[] args : List.of(
                new String[] {"dump", ring.toString(), "--points", "200"},
                new String[] {"dump", ring.toString(), "--points", "200", "--json"})) {
            writes[0] = 0;
            bytes.reset();
            assertEquals(Main.OK, Main.run(args, java.io.InputStream.nullInputStream(), stdout, stderr));
            assertEquals(
                    run(args).out(),
                    bytes.toString(java.nio.charset.StandardCharsets.UTF_8),
                    "same bytes as through CliRun");
            int most = 2 + bytes.size() / (1 << 16);
            assertTrue(
                    writes[0] <= most,
                    () -> String.join(" ", args) + ": " + writes[0] + " writes for " + bytes.size() + " bytes");
        }
    }

    // ---- the test's own JSON parser ----

    @Test
    void testParserIsStrict() {
        Map<String, Object> o =
                object(CliJson.parse(" {\"a\": [1, -2.5e-3, \"x\\ty\\u0041\"], \"b\": {\"c\": null, \"d\": true}} "));
        assertEquals(new BigDecimal("-2.5e-3"), array(o.get("a")).get(1));
        assertEquals("x\tyA", array(o.get("a")).get(2));
        for (String bad :
                List.of("{\"a\":1,\"a\":2}", "{\"a\":1,}", "[1,]", "01", "1.", "{a:1}", "\"x", "[1] 2", "{\"a\":1}{")) {
            assertThrows(IllegalArgumentException.class, () -> CliJson.parse(bad), bad);
        }
    }

    private static int indexOfPrefix(List<String> lines, String prefix) {
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).startsWith(prefix)) {
                return i;
            }
        }
        throw new AssertionError("no line starting '" + prefix + "'");
    }

    /** The heading line of the point table that follows a ring's heading (after its share table). */
    private static int pointTableHeading(List<String> lines, int ringLine) {
        for (int i = ringLine + 1; i < lines.size() && !lines.get(i).isBlank(); i++) {
            if (lines.get(i).strip().startsWith("position")) {
                return i;
            }
        }
        throw new AssertionError("no point table after line " + ringLine + ": " + lines.get(ringLine));
    }
}
