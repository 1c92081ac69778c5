package io.ringstore.state;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.IntPredicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** One process, one or several instances on one file: slots, counts, health, drain, reclaim, creation races. */
class HostStateTest {
    static final HostState.Options SMALL = HostState.Options.DEFAULTS.withCapacity(64, 8);
    private static final long SECOND = 1_000_000_000L;

    @TempDir
    Path dir;

    Path ring() {
        return dir.resolve("fleet.ring");
    }

    /**
     * Counts left in a free lease (a process that counted into it while it was being closed or reaped)
     * are not the requests of the next process to claim it: claiming a lease zeroes it.
     */
    @Test
    void aClaimedLeaseStartsFromZeroWhateverAFreeLeaseHeld() throws Exception {
        int slot;
        try (HostState first = HostState.open(ring(), SMALL)) {
            slot = first.track(List.of("10.0.0.1:80"))[0];
        }
        // Lease 0 is free now; plant the leftovers a racing acquire would have left in it.
        Path file = HostState.statePath(ring());
        long cell = StateFileLayout.recordsOffset(8)
                + (long) slot * StateFileLayout.recordLength(8)
                + StateFileLayout.IN_FLIGHT_OFFSET;
        try (java.nio.channels.FileChannel ch =
                java.nio.channels.FileChannel.open(file, java.nio.file.StandardOpenOption.WRITE)) {
            ch.write(
                    java.nio.ByteBuffer.allocate(4)
                            .order(java.nio.ByteOrder.nativeOrder())
                            .putInt(0, 5),
                    cell);
            ch.write(
                    java.nio.ByteBuffer.allocate(4)
                            .order(java.nio.ByteOrder.nativeOrder())
                            .putInt(0, 5),
                    StateFileLayout.LEASE_TOTALS_OFFSET);
        }
        try (HostState next = HostState.open(ring(), SMALL)) {
            assertEquals(
                    0, next.inFlight(next.track(List.of("10.0.0.1:80"))[0]), "no request of this process is in flight");
            assertEquals(0, next.totalInFlight());
        }
    }

    /** After close, counting is refused: a request racing close must not write into a lease given back. */
    @Test
    void countingAfterCloseIsRefused() throws Exception {
        HostState state = HostState.open(ring(), SMALL);
        int slot = state.track(List.of("10.0.0.1:80"))[0];
        state.close();
        assertThrows(IllegalStateException.class, () -> state.acquire(slot));
    }

    @Test
    void createsTheStateFileBesideTheRingAndKeepsSlotsAcrossRepublishes() throws Exception {
        try (HostState state = HostState.open(ring(), SMALL)) {
            assertEquals(dir.resolve("fleet.ring.state"), state.path());
            assertTrue(Files.isRegularFile(state.path()));
            int[] first = state.track(List.of("10.0.0.1:80", "10.0.0.2:80", "10.0.0.3:80"));
            assertEquals(3, java.util.Arrays.stream(first).distinct().count());
            // A republish reorders the backends and adds one: the endpoints keep their slots.
            int[] second = state.track(List.of("10.0.0.3:80", "10.0.0.4:80", "10.0.0.1:80", "10.0.0.2:80"));
            assertArrayEquals(new int[] {first[2], second[1], first[0], first[1]}, second);
            assertEquals(first[1], state.slot("10.0.0.2:80"));
            assertEquals(-1, state.slot("10.9.9.9:80"));
        }
    }

    @Test
    void aFullDirectoryOfEndpointsKeepsItsSlotsInAnyOrder() throws Exception {
        List<String> endpoints = new ArrayList<>();
        for (int i = 0; i < 4096; i++) {
            endpoints.add("[2001:db8::" + Integer.toHexString(i) + "]:" + (8000 + i % 100));
        }
        try (HostState state = HostState.open(ring())) { // 4,096 slots
            int[] slots = state.track(endpoints);
            assertEquals(4096, java.util.Arrays.stream(slots).distinct().count());
            List<String> reversed = new ArrayList<>(endpoints.reversed());
            int[] again = state.track(reversed);
            for (int i = 0; i < 4096; i++) {
                assertEquals(slots[i], again[4095 - i]);
            }
            assertThrows(IllegalStateException.class, () -> state.track(List.of("one-too-many:1")));
        }
    }

    @Test
    void inFlightIsCountedForTheWholeHostAndNeverGoesBelowZero() throws Exception {
        try (HostState a = HostState.open(ring(), SMALL);
                HostState b = HostState.open(ring(), SMALL)) {
            int[] sa = a.track(List.of("x:1", "y:1"));
            int[] sb = b.track(List.of("y:1", "x:1"));
            assertEquals(sa[0], sb[1]);
            a.acquire(sa[0]);
            a.acquire(sa[0]);
            b.acquire(sb[1]);
            b.acquire(sb[0]);
            assertEquals(3, a.inFlight(sa[0]));
            assertEquals(3, b.inFlight(sb[1]));
            assertEquals(1, a.inFlight(sa[1]));
            assertEquals(2.0, a.meanInFlight());
            b.release(sb[0]);
            b.release(sb[0]); // nothing of b's left on y: stays at zero
            assertEquals(0, a.inFlight(sa[1]));
            a.release(sa[0]);
            assertEquals(2, b.inFlight(sb[1]));
        }
        try (HostState c = HostState.open(ring(), SMALL)) { // closing gave the leases back, counts with them
            assertEquals(0, c.inFlight(c.slot("x:1")));
            assertEquals(
                    0,
                    c.leases().stream()
                            .filter(l -> l.pid() != ProcessHandle.current().pid() || l.inFlight() != 0)
                            .count());
        }
    }

    @Test
    void countsStayExactUnderManyThreads() throws Exception {
        try (HostState a = HostState.open(ring(), SMALL);
                HostState b = HostState.open(ring(), SMALL)) {
            int slot = a.track(List.of("hot:1")).clone()[0];
            b.track(List.of("hot:1"));
            ExecutorService pool = Executors.newFixedThreadPool(4);
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                HostState h = t % 2 == 0 ? a : b;
                done.add(pool.submit((Callable<Void>) () -> {
                    for (int i = 0; i < 100_000; i++) {
                        h.acquire(slot);
                        h.acquire(slot);
                        h.release(slot);
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
            pool.shutdown();
            assertEquals(400_000, a.inFlight(slot));
        }
    }

    @Test
    void healthFollowsNginxMaxFailsAndFailTimeout() throws Exception {
        try (HostState a = HostState.open(ring(), SMALL.withHealth(2, Duration.ofSeconds(10)));
                HostState b = HostState.open(ring(), SMALL.withHealth(2, Duration.ofSeconds(10)))) {
            int s = a.track(List.of("h:1"))[0];
            long t = 1_000 * SECOND;
            a.reportFailure(s, t);
            assertTrue(b.available(s, t), "one failure of two allowed");
            b.reportFailure(s, t + SECOND);
            assertFalse(a.available(s, t + 2 * SECOND), "two failures: unavailable in every instance");
            assertFalse(b.available(s, t + 11 * SECOND), "within fail_timeout of the last failure");
            a.reportSuccess(s); // a success not after a check does not clear the failures (nginx: accessed == checked)
            assertFalse(b.available(s, t + 11 * SECOND));
            // After fail_timeout exactly one caller probes it; the others wait another fail_timeout.
            assertTrue(a.available(s, t + 12 * SECOND));
            assertFalse(b.available(s, t + 12 * SECOND));
            assertFalse(a.available(s, t + 13 * SECOND));
            b.reportSuccess(s); // the probe succeeded: cleared for everyone
            assertTrue(a.available(s, t + 13 * SECOND));
            assertTrue(b.available(s, t + 13 * SECOND));
            assertEquals(0, a.backends().getFirst().fails());
        }
    }

    @Test
    void aFailedProbeKeepsTheBackendOutForAnotherTimeout() throws Exception {
        try (HostState a = HostState.open(ring(), SMALL)) { // max_fails 1, fail_timeout 10 s
            int s = a.track(List.of("h:1"))[0];
            long t = 5 * SECOND;
            a.reportFailure(s, t);
            assertFalse(a.available(s, t + SECOND));
            assertTrue(a.available(s, t + 11 * SECOND));
            a.reportFailure(s, t + 11 * SECOND);
            assertFalse(a.available(s, t + 20 * SECOND));
            assertTrue(a.available(s, t + 22 * SECOND));
            assertTrue(a.available(s, 0, 0, 0), "max_fails 0: never failed");
        }
    }

    @Test
    void drainTakesEffectInEveryInstanceAndForEndpointsNotYetTracked() throws Exception {
        try (HostState router = HostState.open(ring(), SMALL);
                HostState operator = HostState.inspect(HostState.statePath(ring()), SMALL, false)
                        .orElseThrow()) {
            int[] slots = router.track(List.of("a:1", "b:1"));
            IntPredicate ok = router.availableBackends(slots);
            assertTrue(ok.test(1));
            assertFalse(operator.drain("b:1"));
            assertFalse(ok.test(1));
            assertTrue(ok.test(0));
            assertTrue(operator.drain("b:1"), "drained already");
            assertFalse(operator.drain("c:1"));
            int[] later = router.track(List.of("a:1", "b:1", "c:1"));
            assertFalse(router.available(later[2], System.nanoTime()), "drained before any ring named it");
            assertTrue(operator.undrain("b:1"));
            assertTrue(ok.test(1));
            assertFalse(operator.undrain("nowhere:1"));
            assertThrows(IllegalStateException.class, () -> operator.acquire(slots[0]), "an operator holds no lease");
        }
    }

    @Test
    void slotsNoRouterNamesAreReclaimedOnceIdle() throws Exception {
        HostState.Options fast = SMALL.withCapacity(2, 4)
                .withTimings(Duration.ofMillis(10), Duration.ofMillis(200), Duration.ofMillis(100));
        try (HostState a = HostState.open(ring(), fast)) {
            a.track(List.of("old:1", "busy:1"));
            IllegalStateException full = assertThrows(IllegalStateException.class, () -> a.track(List.of("other:1")));
            assertTrue(full.getMessage().contains("all 2 backend slots are in use"), full.getMessage());
        }
        try (HostState a = HostState.open(ring(), fast)) {
            int[] s = a.track(List.of("old:1", "busy:1"));
            a.acquire(s[1]);
            a.track(List.of("busy:1"));
            a.track(List.of()); // nothing named now; busy:1 still has a request in flight
            long deadline = System.nanoTime() + 30 * SECOND;
            while (a.slot("old:1") >= 0 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertEquals(-1, a.slot("old:1"), "idle and unnamed: reclaimed");
            assertEquals(s[1], a.slot("busy:1"), "in flight: kept");
            assertEquals(s[0], a.track(List.of("new:1"))[0], "the freed slot serves a new endpoint");
            assertEquals(0, a.inFlight(s[0]));
        }
    }

    @Test
    void instancesRacingToCreateTheFileAllMapTheSameOne() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(8);
        List<Future<HostState>> opened = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            opened.add(pool.submit(() -> HostState.open(ring(), SMALL)));
        }
        List<HostState> states = new ArrayList<>();
        for (Future<HostState> f : opened) {
            states.add(f.get());
        }
        pool.shutdown();
        try {
            int slot = states.getFirst().track(List.of("shared:1"))[0];
            for (HostState h : states) {
                h.acquire(h.track(List.of("shared:1"))[0]);
            }
            assertEquals(8, states.getLast().inFlight(slot), "all 8 count in one file");
            assertEquals(8, states.getFirst().leases().size());
            try (var files = Files.list(dir)) {
                assertEquals(
                        List.of("fleet.ring.state"),
                        files.map(p -> p.getFileName().toString()).toList(),
                        "no temporary file left");
            }
            // 8 leases, all live: a ninth router still opens, and routes without counting its requests
            try (HostState ninth = HostState.open(ring(), SMALL)) {
                assertFalse(ninth.counted());
                int s = ninth.track(List.of("shared:1"))[0];
                ninth.acquire(s);
                assertEquals(8, ninth.inFlight(s), "the ninth router's request is not counted");
                ninth.release(s);
                assertEquals(8, ninth.inFlight(s), "nor its release");
                assertTrue(ninth.available(s, System.nanoTime()), "drain and health still shared");
            }
            assertTrue(states.getFirst().counted());
        } finally {
            for (HostState h : states) {
                h.close();
            }
        }
        try (HostState again = HostState.open(ring(), SMALL)) {
            assertNotEquals(-1, again.slot("shared:1"));
            assertEquals(0, again.inFlight(again.slot("shared:1")));
        }
    }

    /** A state file truncated under a running router ({@code : > f.ring.state}): the heartbeat thread lives on. */
    @Test
    void theHeartbeatSurvivesAStateFileTruncatedInUse() throws Exception {
        HostState.Options fast = SMALL.withTimings(
                java.time.Duration.ofMillis(10), java.time.Duration.ofMillis(200), java.time.Duration.ofSeconds(60));
        try (HostState state = HostState.open(ring(), fast)) {
            state.track(List.of("10.0.0.1:80"));
            String name = "ringstore-state " + HostState.statePath(ring()).getFileName();
            java.util.function.Supplier<Thread> heartbeat = () -> Thread.getAllStackTraces().keySet().stream()
                    .filter(t -> t.getName().equals(name))
                    .findFirst()
                    .orElse(null);
            assertTrue(heartbeat.get() != null && heartbeat.get().isAlive(), "heartbeat running");
            try (java.io.RandomAccessFile f =
                    new java.io.RandomAccessFile(HostState.statePath(ring()).toFile(), "rw")) {
                f.setLength(0);
            }
            Thread.sleep(500); // some 50 beats on the truncated mapping
            Thread t = heartbeat.get();
            assertTrue(t != null && t.isAlive(), "heartbeat still running after the file was truncated under it");
        }
    }
}
