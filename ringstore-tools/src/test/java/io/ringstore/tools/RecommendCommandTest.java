package io.ringstore.tools;

import static io.ringstore.tools.AnalyzeCommandTest.formulaCv;
import static io.ringstore.tools.CliJson.array;
import static io.ringstore.tools.CliJson.number;
import static io.ringstore.tools.CliJson.object;
import static io.ringstore.tools.CliRun.backends;
import static io.ringstore.tools.CliRun.build;
import static io.ringstore.tools.CliRun.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.Backend;
import io.ringstore.Ring;
import io.ringstore.RingStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RecommendCommandTest {
    private static Map<String, Object> json(String... args) {
        CliRun r = run(args).assertOk();
        assertEquals(1, r.outLines().size(), "one line of JSON");
        return object(CliJson.parse(r.out()));
    }

    @Test
    void equalBackendsGetTheFormulaSolvedForK() {
        // Few points: collisions change nothing, so k = ceil(((N−1)/C² − 1)/N).
        int n = 100;
        double c = 0.047;
        int expected = (int) Math.ceil(((n - 1) / (c * c) - 1) / n);
        Map<String, Object> j =
                json("recommend", "--backends", String.valueOf(n), "--target-cv", String.valueOf(c), "--json");
        assertEquals(expected, number(j.get("point_multiple")).intValueExact());
        assertTrue(number(j.get("predicted_cv")).doubleValue() <= c);
        assertEquals(
                6L * n * expected, number(j.get("bytes_per_ring")).longValueExact(), "6 bytes a point, none collide");
        Map<String, Object> nginx = object(j.get("nginx_default"));
        assertEquals(160, number(nginx.get("point_multiple")).intValueExact());
        assertEquals(6L * n * 160, number(nginx.get("bytes_per_ring")).longValueExact());
        assertEquals(
                Math.sqrt((n - 1.0) / (n * 160.0 + 1)),
                number(nginx.get("predicted_cv")).doubleValue(),
                1e-6);

        CliRun text = run("recommend", "--backends", String.valueOf(n), "--target-cv", "4.7%")
                .assertOk();
        assertEquals(String.valueOf(expected), text.field("point_multiple"), "percent form, text output");
    }

    @Test
    void collisionsRaiseTheAnswerForLargeRings() {
        // N = 2048 at 1 %: the continuous formula needs k = 9,996; 20 M points collide enough to need more.
        int continuous = (int) Math.ceil((2047 / 1e-4 - 1) / 2048);
        int k = number(json("recommend", "--backends", "2048", "--target-cv", "0.01", "--json")
                        .get("point_multiple"))
                .intValueExact();
        assertTrue(k > continuous && k < continuous * 1.05, k + " vs " + continuous);
    }

    @Test
    void unreachableTargetIsOneLine() {
        String error =
                run("recommend", "--backends", "2048", "--target-cv", "0.5%").assertError(Main.FAILED, "recommend");
        assertTrue(error.contains("lowest"), error);
    }

    @Test
    void fileAnswerMeetsTheTargetOnEveryRingAndItsBytesAreWhatBuildWrites(@TempDir Path dir) throws Exception {
        Path file = backends(dir, "fleet.conf", CliFleet.text(CliFleet.FEATURED));
        double c = 0.03;
        Map<String, Object> j = json("recommend", file.toString(), "--target-cv", String.valueOf(c), "--json");
        int k = number(j.get("point_multiple")).intValueExact();
        List<Object> rings = array(j.get("rings"));

        Path ring = dir.resolve("k.ring");
        build(file, ring, "--algorithm", "v2", "--point-multiple", String.valueOf(k), "--quiet");
        Path nginx = dir.resolve("160.ring");
        build(file, nginx, "--algorithm", "v2", "--point-multiple", "160", "--quiet");
        assertEquals(Files.size(ring), number(j.get("file_bytes")).longValueExact(), "file bytes at k = " + k);
        assertEquals(
                Files.size(nginx),
                number(object(j.get("nginx_default")).get("file_bytes")).longValueExact(),
                "file bytes at 160");

        double worst = 0;
        double worstBelow = 0;
        try (RingStore store = RingStore.open(ring)) {
            assertEquals(store.rings().size(), rings.size());
            for (int i = 0; i < rings.size(); i++) {
                Ring x = store.rings().get(i);
                Map<String, Object> r = object(rings.get(i));
                assertEquals(x.pointCount(), number(r.get("points")).longValueExact(), "points of " + x);
                assertEquals(6L * x.pointCount(), number(r.get("bytes")).longValueExact(), "bytes of " + x);
                List<Backend> members = store.backends().stream()
                        .filter(b -> b.features().containsAll(x.features()))
                        .toList();
                if (!members.isEmpty()) {
                    worst = Math.max(worst, formulaCv(members, k));
                    worstBelow = Math.max(worstBelow, formulaCv(members, k - 1));
                }
            }
        }
        assertTrue(worst <= c, "every ring meets " + c + " at k = " + k + ": worst " + worst);
        assertTrue(worstBelow > c, "some ring misses " + c + " at k - 1: worst " + worstBelow);
    }

    @Test
    void wrongArguments(@TempDir Path dir) throws Exception {
        String f = backends(dir, "fleet.conf", CliFleet.text(CliFleet.FEATURED)).toString();
        for (String[] args : List.of(
                new String[] {"recommend", "--target-cv", "0.01"},
                new String[] {"recommend", "--backends", "10"},
                new String[] {"recommend", "--backends", "10", f, "--target-cv", "0.01"},
                new String[] {"recommend", f, f, "--target-cv", "0.01"},
                new String[] {"recommend", "--backends", "0", "--target-cv", "0.01"},
                new String[] {"recommend", "--backends", "10", "--target-cv", "0"},
                new String[] {"recommend", "--backends", "10", "--target-cv", "2"},
                new String[] {"recommend", "--backends", "10", "--target-cv", "-1%"},
                new String[] {"recommend", "--backends", "10", "--target-cv", "one"})) {
            run(args).assertError(Main.USAGE, "recommend");
        }
        run("recommend", dir.resolve("missing.conf").toString(), "--target-cv", "0.01")
                .assertError(Main.FAILED, "recommend");
    }
}
