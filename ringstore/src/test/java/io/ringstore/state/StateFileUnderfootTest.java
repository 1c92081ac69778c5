package io.ringstore.state;

import static io.ringstore.state.StateFileLayout.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.ringstore.LogCapture;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The state file changed under running processes, as operators and hosts change it (issue 20, items 2,
 * 4 and 5): truncated in place, deleted and made again, replaced, or carried over a reboot. Routing
 * goes on, nothing is thrown into a request, and a router ends up on the file at the path with its
 * requests in flight counted there.
 */
class StateFileUnderfootTest {
    /** A fast heartbeat, so that a move is seen within a few tens of milliseconds. */
    private static final HostState.Options FAST =
            HostStateTest.SMALL.withTimings(Duration.ofMillis(20), Duration.ofMillis(100), Duration.ofSeconds(60));

    private static final List<String> ENDPOINTS = List.of("10.0.0.1:80", "10.0.0.2:80", "10.0.0.3:80");

    @TempDir
    Path dir;

    private Path ring() {
        return dir.resolve("fleet.ring");
    }

    private Path state() {
        return HostState.statePath(ring());
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, "not within 10 s: " + what);
            Thread.sleep(5);
        }
    }

    /** {@code : > FILE} from another process, as an operator would. */
    private static void truncateFromAnotherProcess(Path file) throws Exception {
        Process p = new ProcessBuilder("sh", "-c", ": > \"$0\"", file.toString())
                .inheritIO()
                .start();
        assertEquals(0, p.waitFor(), "sh truncating " + file);
    }

    @Test
    void aFileTruncatedInUseIsNeverThrownIntoARequestAndARouterMovesToANewOne() throws Exception {
        try (LogCapture log = new LogCapture(HostState.class);
                HostState router = HostState.open(ring(), FAST)) {
            int[] slots = router.track(ENDPOINTS);
            router.acquire(slots[0]);
            router.acquire(slots[0]);
            truncateFromAnotherProcess(state());
            // Every call of the request path, right after: each either still reads the old pages or routes
            // without state, and none throws (before the fix: InternalError from the first one).
            for (int i = 0; i < 1000; i++) {
                router.available(slots[i % 3], System.nanoTime());
                router.peekAvailable(slots[i % 3], System.nanoTime(), 1, 1);
                router.acquire(slots[1]);
                router.release(slots[1]);
                router.inFlight(slots[0]);
                router.totalInFlight();
                router.reportSuccess(slots[2]);
            }
            await("a new state file at the path", () -> {
                try {
                    return Files.size(state()) == fileLength(FAST.leases(), FAST.slots());
                } catch (Exception e) {
                    return false;
                }
            });
            assertTrue(Files.exists(state().resolveSibling("fleet.ring.state.bad")), "the truncated file moved aside");
            // The router now uses the new file: a drain there reaches it, and its requests count there.
            try (HostState operator = HostState.inspect(state(), FAST, false).orElseThrow()) {
                operator.drain("10.0.0.2:80");
                await(
                        "the drain in the new file reaching the router",
                        () -> !router.available(slots[1], System.nanoTime()));
                assertTrue(router.available(slots[0], System.nanoTime()));
                assertTrue(router.counted());
                router.acquire(slots[2]);
                int inNew = operator.slot("10.0.0.3:80");
                assertTrue(inNew >= 0, "the router tracks its endpoints in the new file");
                assertEquals(1, operator.inFlight(inNew));
                assertEquals(
                        1,
                        operator.leases().stream()
                                .filter(HostState.LeaseState::alive)
                                .count(),
                        () -> "the router's lease: " + operator.leases());
            }
            assertTrue(heartbeatAlive(), "the heartbeat thread survives");
            assertEquals(
                    2,
                    log.containing(state().toString()).size(),
                    () -> "one line for the file moved aside, one for the move: " + log.lines());
            assertEquals(
                    1, log.containing("moved to the file now at the path").size(), () -> String.valueOf(log.lines()));
            assertTrue(log.containing("moved to the file now at the path")
                    .getFirst()
                    .contains(state().toString()));
        }
    }

    /** An Error thrown inside the heartbeat (an OutOfMemoryError, say) is logged once and the next beat goes on. */
    @Test
    void theHeartbeatSurvivesAnError() throws Exception {
        try (LogCapture log = new LogCapture(HostState.class);
                HostState router = HostState.open(ring(), FAST)) {
            java.util.concurrent.atomic.AtomicInteger beats = new java.util.concurrent.atomic.AtomicInteger();
            router.follower.beforeBeat = () -> {
                if (beats.incrementAndGet() == 1) {
                    throw new OutOfMemoryError("Java heap space (thrown by the test)");
                }
            };
            await("beats after the Error", () -> beats.get() >= 5);
            assertTrue(heartbeatAlive());
            assertEquals(
                    1,
                    log.containing("heartbeat failed, retrying: java.lang.OutOfMemoryError")
                            .size(),
                    () -> String.valueOf(log.lines()));
        }
    }

    private static boolean heartbeatAlive() {
        return Thread.getAllStackTraces().keySet().stream()
                .anyMatch(t -> t.getName().equals("ringstore-state fleet.ring.state") && t.isAlive());
    }

    @Test
    void aFileReplacedInUseIsFollowedAndTheRequestsInFlightAreReRegistered() throws Exception {
        try (LogCapture log = new LogCapture(HostState.class);
                HostState router = HostState.open(ring(), FAST)) {
            int[] slots = router.track(ENDPOINTS);
            router.acquire(slots[0]);
            router.acquire(slots[0]);
            router.acquire(slots[2]);
            // The operator removes the file (the CLI's advice for a bad one) and drains the third endpoint
            // in the new one before any router has moved: it takes slot 0 there, which the router's first
            // endpoint had, so the router's slots must be mapped, not reused.
            Files.delete(state());
            try (HostState operator = HostState.inspect(state(), FAST, true).orElseThrow()) {
                operator.drain("10.0.0.3:80");
                assertEquals(0, operator.slot("10.0.0.3:80"));
                await(
                        "the drain in the new file reaching the router",
                        () -> !router.available(slots[2], System.nanoTime()));
                assertTrue(router.available(slots[0], System.nanoTime()), "the first endpoint is not the drained one");
                assertTrue(router.available(slots[1], System.nanoTime()));
                int first = operator.slot("10.0.0.1:80");
                int third = operator.slot("10.0.0.3:80");
                assertTrue(first > 0, "the router tracked its endpoints in the new file");
                assertEquals(2, operator.inFlight(first), "re-registered");
                assertEquals(1, operator.inFlight(third), "re-registered");
                assertEquals(3, operator.totalInFlight());
                router.release(slots[0]);
                assertEquals(1, operator.inFlight(first));
                assertEquals(1, router.inFlight(slots[0]));
                assertEquals(slots[0], router.slot("10.0.0.1:80"), "the router's name for the endpoint is kept");
                assertEquals(slots[2], router.track(ENDPOINTS)[2]);
            }
            List<String> moved = log.containing("moved to the file now at the path");
            assertEquals(1, moved.size(), () -> String.valueOf(log.lines()));
            assertTrue(moved.getFirst().contains("was replaced"), moved.getFirst());
            assertTrue(moved.getFirst().contains("3 of its requests in flight counted there"), moved.getFirst());
        }
        try (HostState operator = HostState.inspect(state(), FAST, false).orElseThrow()) {
            assertEquals(0, operator.totalInFlight(), "closing gave the new lease back, with its counts");
            assertEquals(List.of(), operator.leases());
        }
    }

    /**
     * A file removed with nothing made in its place is not made again by a router (a directory being
     * removed would get it back): the routers keep the file they share until a process makes a new one.
     */
    @Test
    void aFileRemovedIsNotMadeAgainByARouter() throws Exception {
        try (HostState router = HostState.open(ring(), FAST);
                HostState other = HostState.open(ring(), FAST)) {
            int[] slots = router.track(ENDPOINTS);
            int[] theirs = other.track(ENDPOINTS);
            Files.delete(state());
            Thread.sleep(300); // 15 heartbeats
            assertFalse(Files.exists(state()), "not made again");
            router.acquire(slots[0]);
            assertEquals(1, other.inFlight(theirs[0]), "the two still share the removed file");
            router.release(slots[0]);
        }
        assertFalse(Files.exists(state()));
    }

    @Test
    void anInspectorFollowsAReplacedFileWhenRefreshed() throws Exception {
        try (HostState router = HostState.open(ring(), FAST);
                HostState watcher = HostState.inspect(state(), FAST, false).orElseThrow()) {
            router.track(ENDPOINTS);
            int[] watched = watcher.slots(List.of("10.0.0.2:80", "10.0.0.9:80"));
            assertEquals(-1, watched[1]);
            long version = watcher.directoryVersion();
            assertFalse(watcher.refresh(), "nothing changed");
            Files.delete(state());
            try (HostState operator = HostState.inspect(state(), FAST, true).orElseThrow()) {
                operator.drain("10.0.0.2:80");
            }
            assertTrue(watcher.refresh(), "the inspector moves to the new file");
            assertFalse(watcher.available(watched[0], System.nanoTime()), "the drain in the new file");
            assertTrue(watcher.directoryVersion() != version);
            // An endpoint that had no slot gets one later (a drain): the directory version says to look again.
            long before = watcher.directoryVersion();
            try (HostState operator = HostState.inspect(state(), FAST, false).orElseThrow()) {
                operator.drain("10.0.0.9:80");
            }
            assertTrue(watcher.directoryVersion() != before);
            int late = watcher.slot("10.0.0.9:80");
            assertTrue(late >= 0);
            assertFalse(watcher.available(late, System.nanoTime()));
        }
    }

    /** Writes {@code value} as a native long at {@code offset} of the closed state file. */
    private void poke(long offset, long value) throws Exception {
        try (FileChannel ch = FileChannel.open(state(), StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(0, value), offset);
        }
    }

    /** A file whose first endpoint failed at a time in the future, as after a reboot, the second drained. */
    private long recordOfFailedBackend() throws Exception {
        try (HostState h = HostState.open(ring(), FAST)) {
            int[] slots = h.track(ENDPOINTS);
            assertEquals(0, slots[0]);
            h.reportFailure(slots[0], System.nanoTime());
            h.drain("10.0.0.2:80");
            assertFalse(h.available(slots[0], System.nanoTime()));
        }
        long record = recordsOffset(FAST.leases());
        long future = System.nanoTime() + TimeUnit.HOURS.toNanos(5); // the earlier boot had been up 5 h longer
        poke(record + CHECKED_OFFSET, future);
        poke(record + ACCESSED_OFFSET, future);
        poke(record + FAILS_OFFSET, 3);
        return record;
    }

    @Test
    void aFileFromAnEarlierBootHasItsFailuresAndTimesResetAndKeepsItsDrains() throws Exception {
        assumeTrue(BootCheck.read(Path.of("/proc/sys/kernel/random/boot_id")) != null, "the kernel gives a boot id");
        recordOfFailedBackend();
        poke(BOOT_ID_OFFSET, 0x1234_5678_9abc_def0L); // another boot's id
        poke(BOOT_ID_OFFSET + 8, 0x0fed_cba9_8765_4321L);
        try (LogCapture log = new LogCapture(HostState.class);
                HostState h = HostState.open(ring(), FAST)) {
            int[] slots = h.track(ENDPOINTS);
            assertTrue(h.available(slots[0], System.nanoTime()), "not skipped for the earlier boot's uptime");
            assertFalse(h.available(slots[1], System.nanoTime()), "the drain carries over");
            HostState.BackendState first = h.backends().getFirst();
            assertEquals(0, first.fails());
            assertNull(first.sinceFailure());
            List<String> lines = log.containing("earlier boot");
            assertEquals(1, lines.size(), () -> String.valueOf(log.lines()));
            assertTrue(lines.getFirst().contains("boot id 12345678-9abc-def0-0fed-cba987654321"), lines.getFirst());
        }
        try (LogCapture log = new LogCapture(HostState.class);
                HostState h = HostState.open(ring(), FAST)) {
            h.track(ENDPOINTS);
            assertEquals(List.of(), log.containing("earlier boot"), "once per boot");
        }
    }

    @Test
    void aTimeInTheFutureIsStaleInAFileWithoutABootId() throws Exception {
        long record = recordOfFailedBackend();
        poke(BOOT_ID_OFFSET, 0); // as an earlier release leaves it
        poke(BOOT_ID_OFFSET + 8, 0);
        try (HostState h = HostState.inspect(state(), FAST, false).orElseThrow()) {
            assertTrue(
                    h.peekAvailable(0, System.nanoTime(), 1, TimeUnit.SECONDS.toNanos(10)),
                    "a failure in the future is stale");
            HostState.BackendState first = h.backends().getFirst();
            assertFalse(first.failed());
            assertNull(first.sinceFailure(), "no negative time since the failure");
            assertEquals(3, first.fails(), "no reset without another boot's id: only the times are read as stale");
        }
        assertTrue(record > 0);
    }
}
