package io.ringstore.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.state.HostState;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code ringstore state}: what it shows of a router's live state, drain and undrain, and its errors. */
class CliStateTest {
    @TempDir
    Path dir;

    @Test
    void showsWhatRoutersShareAndDrainsInEveryRouter() throws Exception {
        Path ring = dir.resolve("fleet.ring");
        try (HostState router = HostState.open(ring)) {
            int[] slots = router.track(List.of("10.0.0.1:80", "10.0.0.2:80"));
            router.acquire(slots[0]);
            router.acquire(slots[0]);
            router.reportFailure(slots[1], System.nanoTime());

            String text = CliRun.run("state", ring.toString()).assertOk().out();
            assertEquals(
                    "file: " + HostState.statePath(ring),
                    text.lines().findFirst().orElseThrow());
            assertTrue(text.matches("(?s).*\\n  10\\.0\\.0\\.1:80 +no +ok +- +2 +1 +10s +0\\n.*"), text);
            assertTrue(text.matches("(?s).*\\n  10\\.0\\.0\\.2:80 +no +failed +0 +0 +1 +10s +0\\n.*"), text);
            assertTrue(
                    text.contains("\nhealth: nginx's defaults (max_fails=1 fail_timeout=10s max_conns=0: no ring file "
                            + ring + ")\n"),
                    text);
            assertTrue(text.contains("  lease 0: pid " + ProcessHandle.current().pid() + ", alive, 2 in flight"), text);

            assertEquals(
                    "drained 10.0.0.2:80: every router skips it from its next lookup\n",
                    CliRun.run("state", ring.toString(), "drain", "10.0.0.2:80")
                            .assertOk()
                            .out());
            assertFalse(router.available(slots[1], System.nanoTime()));
            router.reportSuccess(slots[1]);
            Map<String, Object> json = CliJson.object(CliJson.parse(
                    CliRun.run("state", HostState.statePath(ring).toString(), "--json", "--max-fails", "0")
                            .assertOk()
                            .out()));
            List<Object> backends = CliJson.array(json.get("backends"));
            Map<String, Object> second = CliJson.object(backends.get(1));
            assertEquals("10.0.0.2:80", second.get("endpoint"));
            assertEquals(true, second.get("drained"));
            assertEquals(false, second.get("failed"), "--max-fails 0: never failed");
            assertEquals(2, ((Number) CliJson.object(backends.get(0)).get("in_flight")).intValue());

            assertEquals(
                    "undrained 10.0.0.2:80\n",
                    CliRun.run("state", ring.toString(), "undrain", "10.0.0.2:80")
                            .assertOk()
                            .out());
            assertEquals(
                    "10.0.0.2:80 was not drained\n",
                    CliRun.run("state", ring.toString(), "undrain", "10.0.0.2:80")
                            .assertOk()
                            .out());
            assertTrue(router.available(slots[0], System.nanoTime()));
        }
    }

    /**
     * Each backend is judged and shown by the health settings its ring file stores, as routers judge it;
     * {@code --max-fails} and {@code --fail-timeout} set them for every backend.
     */
    @Test
    void healthIsJudgedByTheRingFilesSettings() throws Exception {
        Path ring = dir.resolve("tuned.ring");
        CliRun.build(
                CliRun.backends(
                        dir,
                        "tuned.conf",
                        "server 10.0.0.1:80 max_fails=2 fail_timeout=1s max_conns=9\nserver 10.0.0.2:80\n"),
                ring);
        try (HostState router = HostState.open(ring)) {
            int[] slots = router.track(List.of("10.0.0.1:80", "10.0.0.2:80", "10.0.0.9:80"));
            long now = System.nanoTime();
            for (int slot : slots) {
                router.reportFailure(slot, now);
            }
            String text = CliRun.run("state", ring.toString()).assertOk().out();
            assertTrue(
                    text.matches("(?s).*\\n  10\\.0\\.0\\.1:80 +no +ok \\(1 failures\\) +\\d+ +0 +2 +1s +9\\n.*"),
                    "max_fails=2: one failure is not enough\n" + text);
            assertTrue(text.matches("(?s).*\\n  10\\.0\\.0\\.2:80 +no +failed +\\d+ +0 +1 +10s +0\\n.*"), text);
            assertTrue(
                    text.matches("(?s).*\\n  10\\.0\\.0\\.9:80 +no +failed +\\d+ +0 +1 +10s +0\\n.*"),
                    "not in the ring: the defaults\n" + text);
            assertTrue(
                    text.contains("\nhealth: each backend's settings in " + ring
                            + " (nginx's defaults for endpoints it does not have)\n"),
                    text);

            Map<String, Object> json = CliJson.object(CliJson.parse(
                    CliRun.run("state", HostState.statePath(ring).toString(), "--json", "--max-fails", "1")
                            .assertOk()
                            .out()));
            assertEquals(
                    "--max-fails 1 for every backend; otherwise each backend's settings in " + ring
                            + " (nginx's defaults for endpoints it does not have)",
                    json.get("health"));
            Map<String, Object> first =
                    CliJson.object(CliJson.array(json.get("backends")).getFirst());
            assertEquals("10.0.0.1:80", first.get("endpoint"));
            assertEquals(true, first.get("failed"), "--max-fails 1 for every backend");
            assertEquals(
                    List.of(1, 1, 9),
                    List.of(
                            ((Number) first.get("max_fails")).intValue(),
                            ((Number) first.get("fail_timeout")).intValue(),
                            ((Number) first.get("max_conns")).intValue()));
        }
    }

    @Test
    void drainBeforeAnyRouterCreatesTheStateFile() throws Exception {
        Path ring = dir.resolve("new.ring");
        Files.writeString(ring, "published, no router yet"); // drain needs the ring file to exist, not a router
        CliRun.run("state", ring.toString(), "drain", "[::1]:9000").assertOk();
        try (HostState router = HostState.open(ring)) {
            int slot = router.track(List.of("[::1]:9000"))[0];
            assertFalse(router.available(slot, System.nanoTime()));
        }
    }

    @Test
    void errorsAreOneLine() throws Exception {
        Path ring = dir.resolve("none.ring");
        assertEquals(
                HostState.statePath(ring) + ": no state file (no router has opened " + ring + " yet)",
                CliRun.run("state", ring.toString()).assertError(Main.FAILED, "state"));
        Files.writeString(HostState.statePath(ring), "garbage");
        assertTrue(CliRun.run("state", ring.toString())
                .assertError(Main.FAILED, "state")
                .contains("shorter than the 256-byte header"));
        assertEquals(
                "garbage", Files.readString(HostState.statePath(ring)), "an operator's look never replaces the file");
        assertEquals(
                "missing ADDR after drain",
                CliRun.run("state", ring.toString(), "drain").assertError(Main.USAGE, "state"));
        assertEquals("missing FILE", CliRun.run("state").assertError(Main.USAGE, "state"));
        assertEquals(
                "drain and undrain take no option",
                CliRun.run("state", ring.toString(), "drain", "a:1", "--json").assertError(Main.USAGE, "state"));
        Files.delete(HostState.statePath(ring));
        assertTrue(CliRun.run("state", ring.toString(), "drain", "x".repeat(63))
                .assertError(Main.USAGE, "state")
                .startsWith("ADDR 'xxx"));
        assertTrue(CliRun.run("state", ring.toString(), "drain", "")
                .assertError(Main.USAGE, "state")
                .startsWith("ADDR ''"));
        assertEquals(
                ring + ": no such ring file (drain names the ring file the routers open, or its .state file)",
                CliRun.run("state", ring.toString(), "drain", "10.0.0.1:80").assertError(Main.FAILED, "state"));
        assertFalse(Files.exists(HostState.statePath(ring)), "a mistyped ring path creates no state file");
    }

    /** An address is drained as routers track it, however the backends file spells it. */
    @Test
    void drainNamesTheEndpointAsRoutersTrackIt() throws Exception {
        Path ring = dir.resolve("spell.ring");
        Files.writeString(ring, "published");
        assertEquals(
                "drained 192.0.2.16:80: every router skips it from its next lookup\n",
                CliRun.run("state", ring.toString(), "drain", "192.0.2.16")
                        .assertOk()
                        .out());
        assertEquals(
                "drained [2001:db8::10]:8080: every router skips it from its next lookup\n",
                CliRun.run("state", ring.toString(), "drain", "[2001:0db8::10]:8080")
                        .assertOk()
                        .out());
        try (HostState router = HostState.open(ring)) {
            int[] slots = router.track(List.of("192.0.2.16:80", "[2001:db8::10]:8080"));
            assertFalse(router.available(slots[0], System.nanoTime()));
            assertFalse(router.available(slots[1], System.nanoTime()));
        }
        assertEquals(
                "undrained [2001:db8::10]:8080\n",
                CliRun.run("state", ring.toString(), "undrain", "[2001:0db8:0::10]:08080")
                        .assertOk()
                        .out());
    }
}
