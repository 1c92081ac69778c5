package io.ringstore.tools;

import static io.ringstore.tools.CliRun.backends;
import static io.ringstore.tools.CliRun.build;
import static io.ringstore.tools.CliRun.run;
import static io.ringstore.tools.CliRun.runWithInput;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.Ring;
import io.ringstore.RingStore;
import io.ringstore.state.HostState;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.IntPredicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ringstore lookup} consults the state file beside the ring: a backend drained with
 * {@code ringstore state FILE drain ADDR}, or failed host-wide, is skipped as a down one is (nginx's
 * 21-point walk); {@code --no-state} ignores the file; a bad state file is one line, and the answers are given without it.
 */
class CliLookupStateTest {
    private static final String FLEET = """
            server 127.0.0.1:8001;
            server 127.0.0.1:8002 down;
            server 127.0.0.1:8003 weight=2;
            server 127.0.0.1:8004;
            server 127.0.0.1:8005;
            """;

    @TempDir
    Path dir;

    private List<String> keys() {
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 400; i++) {
            keys.add("/item/" + i);
        }
        return keys;
    }

    /** What lookup must print: nginx's walk over the backends {@code up} accepts. */
    private static List<String> expected(Path ring, List<String> keys, IntPredicate up) throws Exception {
        List<String> lines = new ArrayList<>();
        try (RingStore store = RingStore.open(ring)) {
            Ring r = store.ring(Set.of());
            for (String k : keys) {
                int b = r.select(r.hash(k.getBytes(StandardCharsets.US_ASCII)), Ring.NGINX_MAX_POINTS, up);
                lines.add(k + "\t" + (b < 0 ? "-" : store.backend(b).upstreamAddress()));
            }
        }
        return lines;
    }

    private static int index(Path ring, String address) throws Exception {
        try (RingStore store = RingStore.open(ring)) {
            return store.backends().stream()
                    .filter(b -> b.socketAddress().equals(address))
                    .findFirst()
                    .orElseThrow()
                    .index();
        }
    }

    @Test
    void aDrainedBackendIsSkippedUntilUndrained() throws Exception {
        Path ring = dir.resolve("fleet.ring");
        build(backends(dir, "fleet.conf", FLEET), ring);
        List<String> keys = keys();
        String input = String.join("\n", keys) + "\n";
        int down = index(ring, "127.0.0.1:8002");
        int drained = index(ring, "127.0.0.1:8004");
        List<String> before =
                runWithInput(input, "lookup", ring.toString()).assertOk().outLines();
        assertEquals(expected(ring, keys, b -> b != down), before, "no state file: down servers only");

        run("state", ring.toString(), "drain", "127.0.0.1:8004").assertOk();
        List<String> after =
                runWithInput(input, "lookup", ring.toString()).assertOk().outLines();
        assertEquals(expected(ring, keys, b -> b != down && b != drained), after);
        assertTrue(after.stream().noneMatch(l -> l.endsWith("\t127.0.0.1:8004")));
        int moved = 0;
        for (int i = 0; i < keys.size(); i++) {
            if (!before.get(i).equals(after.get(i))) {
                assertTrue(
                        before.get(i).endsWith("\t127.0.0.1:8004"),
                        "only the drained backend's keys move: " + before.get(i));
                moved++;
            }
        }
        assertTrue(moved > 20, "the drained backend owned keys: " + moved);
        assertEquals(
                before,
                runWithInput(input, "lookup", ring.toString(), "--no-state")
                        .assertOk()
                        .outLines());
        assertTrue(run("lookup", ring.toString(), "--no-failover", "/item/1")
                .assertOk()
                .outLines()
                .getFirst()
                .equals(runWithInput("/item/1\n", "lookup", ring.toString(), "--no-failover", "--no-state")
                        .assertOk()
                        .outLines()
                        .getFirst()));

        run("state", ring.toString(), "undrain", "127.0.0.1:8004").assertOk();
        assertEquals(
                before,
                runWithInput(input, "lookup", ring.toString()).assertOk().outLines());
    }

    @Test
    void aBackendFailedHostWideIsSkippedAndAllSkippedIsSaid() throws Exception {
        Path ring = dir.resolve("fleet.ring");
        build(backends(dir, "fleet.conf", FLEET), ring);
        List<String> keys = keys();
        String input = String.join("\n", keys) + "\n";
        int down = index(ring, "127.0.0.1:8002");
        int failed = index(ring, "127.0.0.1:8005");
        try (HostState router = HostState.open(ring)) { // a router on this host: max_fails=1 by default
            int[] slots = router.track(List.of("127.0.0.1:8001", "127.0.0.1:8003", "127.0.0.1:8004", "127.0.0.1:8005"));
            router.reportFailure(slots[3], System.nanoTime());
            List<String> lines =
                    runWithInput(input, "lookup", ring.toString()).assertOk().outLines();
            assertEquals(expected(ring, keys, b -> b != down && b != failed), lines);
            // Looking is not probing: the router's own check still sees it failed.
            assertTrue(!router.available(slots[3], System.nanoTime()));

            for (String e : List.of("127.0.0.1:8001", "127.0.0.1:8003", "127.0.0.1:8004")) {
                router.drain(e);
            }
            CliRun all = run("lookup", ring.toString(), "/a");
            all.assertOk();
            assertEquals(List.of("/a\t-"), all.outLines());
            assertTrue(
                    all.stderr().contains("1 key found only servers marked down, drained or failed in the 21 points"),
                    all.stderr());
            assertNotEquals(
                    "/a\t-",
                    run("lookup", ring.toString(), "--no-state", "/a")
                            .assertOk()
                            .outLines()
                            .getFirst());
        }
    }

    /** Each backend by the health settings its ring file stores: max_fails=2 takes two failures, max_conns=1 one request in flight. */
    @Test
    void theRingFilesHealthSettingsDecide() throws Exception {
        Path ring = dir.resolve("tuned.ring");
        build(
                backends(
                        dir,
                        "tuned.conf",
                        FLEET.replace("8004;", "8004 max_conns=1;")
                                .replace("8005;", "8005 max_fails=2 fail_timeout=30s;")),
                ring);
        List<String> keys = keys();
        String input = String.join("\n", keys) + "\n";
        int down = index(ring, "127.0.0.1:8002");
        int limited = index(ring, "127.0.0.1:8004");
        int failed = index(ring, "127.0.0.1:8005");
        try (HostState router = HostState.open(ring)) {
            int[] slots = router.track(List.of("127.0.0.1:8001", "127.0.0.1:8003", "127.0.0.1:8004", "127.0.0.1:8005"));
            router.reportFailure(slots[3], System.nanoTime());
            assertEquals(
                    expected(ring, keys, b -> b != down),
                    runWithInput(input, "lookup", ring.toString()).assertOk().outLines(),
                    "max_fails=2: one failure leaves it in");
            router.reportFailure(slots[3], System.nanoTime());
            router.acquire(slots[2]);
            assertEquals(
                    expected(ring, keys, b -> b != down && b != failed && b != limited),
                    runWithInput(input, "lookup", ring.toString()).assertOk().outLines(),
                    "two failures; max_conns=1 with one in flight");
            router.release(slots[2]);
            assertEquals(
                    expected(ring, keys, b -> b != down && b != failed),
                    runWithInput(input, "lookup", ring.toString()).assertOk().outLines(),
                    "below max_conns again");
        }
    }

    @Test
    void aBadStateFileIsOneLineAndTheAnswersAreGivenWithoutIt() throws Exception {
        Path ring = dir.resolve("fleet.ring");
        build(backends(dir, "fleet.conf", FLEET), ring);
        Files.write(HostState.statePath(ring), new byte[100]);
        CliRun without = run("lookup", ring.toString(), "/a", "/b").assertOk();
        List<String> err = without.stderr().lines().toList();
        assertEquals(1, err.size(), "one line, not one per key: " + without.stderr());
        assertTrue(
                err.getFirst().startsWith("ringstore lookup: " + HostState.statePath(ring) + ": ")
                        && err.getFirst()
                                .endsWith(
                                        "; answering without the state file (as --no-state: drain and health not applied)"),
                without.stderr());
        CliRun noState =
                run("lookup", ring.toString(), "--no-state", "/a", "/b").assertOk();
        assertEquals(noState.out(), without.out());
        assertEquals("", noState.stderr());
    }
}
