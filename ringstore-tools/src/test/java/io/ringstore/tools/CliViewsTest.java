package io.ringstore.tools;

import static io.ringstore.tools.CliJson.array;
import static io.ringstore.tools.CliJson.number;
import static io.ringstore.tools.CliJson.object;
import static io.ringstore.tools.CliJson.string;
import static io.ringstore.tools.CliRun.backends;
import static io.ringstore.tools.CliRun.build;
import static io.ringstore.tools.CliRun.run;
import static io.ringstore.tools.CliRun.runWithInput;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code build --views}: the summary and JSON count views, {@code dump} shows each ring's storage and
 * own bytes, {@code verify} passes, and {@code lookup}, {@code diff} and {@code dump --points} see a
 * view exactly as the ring stored as points.
 */
class CliViewsTest {
    /**
     * 40 backends; feature a on 3/4 of them, b on 1/2, c on one of weight 1 (under 1/64 of the weight:
     * too few for auto); no backend has both a and c.
     */
    private static String fleet() {
        SplittableRandom r = new SplittableRandom(7);
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < 40; i++) {
            String f = (i % 4 != 0 ? "a," : "") + (i % 2 == 0 ? "b," : "") + (i == 0 ? "c," : "");
            int weight = 1 + r.nextInt(3);
            text.append("server 127.0.3.")
                    .append(i + 1)
                    .append(":80 weight=")
                    .append(i == 0 ? 1 : weight)
                    .append(';')
                    .append(f.isEmpty() ? "" : " # ringstore: features=" + f.substring(0, f.length() - 1))
                    .append('\n');
        }
        return text.toString();
    }

    @Tag("slow") // an exhaustive sweep of several seconds: the full lane runs it
    @Test
    void viewsAreCountedShownVerifiedAndAnswerAsStoredRings(@TempDir Path dir) throws Exception {
        Path input = backends(dir, "fleet.conf", fleet());
        Path none = dir.resolve("none.ring");
        Path auto = dir.resolve("auto.ring");
        Path all = dir.resolve("all.ring");
        CliRun plain = build(input, none);
        assertTrue(
                plain.field("rings")
                        .matches("8 \\(\\d+ segments; \\d+ rings? shares? another ring's segment; 2 empty\\)"),
                plain.field("rings"));
        CliRun a = build(input, auto, "--views", "auto");
        CliRun v = build(input, all, "--views", "all", "--json");
        Map<String, Object> summary = object(CliJson.parse(v.out()));
        assertEquals(
                BigDecimal.valueOf(5),
                number(summary.get("views")),
                "every ring with members but the ring of all (a+c and a+b+c have none)");
        assertEquals(BigDecimal.ONE, number(summary.get("segments")));
        assertTrue(a.field("rings").contains(" views; "), a.field("rings"));
        assertTrue(
                Files.size(all) < Files.size(auto) && Files.size(auto) < Files.size(none),
                Files.size(all) + " " + Files.size(auto) + " " + Files.size(none));

        for (Path f : List.of(auto, all)) {
            assertTrue(run("verify", f.toString()).assertOk().out().startsWith("ok: "));
        }
        Map<String, Object> dump = object(
                CliJson.parse(run("dump", all.toString(), "--json").assertOk().out()));
        assertEquals(BigDecimal.valueOf(3), number(dump.get("format_version")));
        List<Object> rings = array(dump.get("rings"));
        Map<String, Object> base = object(rings.get(0));
        assertEquals("points with ties and feature bits by feature", string(base.get("storage")));
        for (Object o : rings.subList(1, rings.size())) {
            Map<String, Object> ring = object(o);
            if (number(ring.get("points")).signum() > 0) {
                assertEquals("view", string(ring.get("storage")), ring.toString());
                assertEquals(BigDecimal.ZERO, number(ring.get("bytes")));
                assertEquals("v1 (all)", string(ring.get("view_of")));
            }
        }
        String text = run("dump", all.toString()).assertOk().out();
        assertTrue(
                text.contains("ring v1 a: ") && text.contains(", 0 bytes, view of ring v1 (all) (segment at "), text);

        // The same answers: lookups with failover, diff, and every point listed by dump.
        StringBuilder keys = new StringBuilder();
        for (int i = 0; i < 500; i++) {
            keys.append("/k/").append(i).append('\n');
        }
        for (String features : List.of("a", "b", "a,b", "c", "a,c")) {
            String stored = runWithInput(keys.toString(), "lookup", none.toString(), "--features", features)
                    .assertOk()
                    .out();
            assertEquals(
                    stored,
                    runWithInput(keys.toString(), "lookup", all.toString(), "--features", features)
                            .assertOk()
                            .out(),
                    features);
            assertEquals(
                    stored,
                    runWithInput(keys.toString(), "lookup", auto.toString(), "--features", features)
                            .assertOk()
                            .out(),
                    features);
            CliRun diff = run("diff", none.toString(), all.toString(), "--features", features)
                    .assertOk();
            assertTrue(diff.out().contains("moved_fraction: 0.000000000 "), diff.out());
        }
        assertEquals(
                points(run("dump", none.toString(), "--points", "100000")
                        .assertOk()
                        .out()),
                points(run("dump", all.toString(), "--points", "100000")
                        .assertOk()
                        .out()));
    }

    /** The point lines of a dump ("position hash backend"), ring headers and all. */
    private static List<String> points(String dump) {
        return dump.lines()
                .filter(l -> l.matches("\\s+\\d+\\s+\\d+\\s+\\S+:\\d+") || l.startsWith("ring "))
                .map(l -> l.startsWith("ring ") ? l.substring(0, l.indexOf(':')) : l)
                .toList();
    }

    @Test
    void aBadViewsValueIsOneLine(@TempDir Path dir) throws Exception {
        Path input = backends(dir, "fleet.conf", fleet());
        CliRun r = run("build", input.toString(), "-o", dir.resolve("x.ring").toString(), "--views", "some");
        assertEquals(2, r.exit());
        assertTrue(r.stderr().contains("--views 'some': expected auto, all or none"), r.stderr());
        assertTrue(Files.notExists(dir.resolve("x.ring")));
    }
}
