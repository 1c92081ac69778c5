package io.ringstore.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Router processes killed with {@code kill -9} while holding requests in flight: three child JVMs hold
 * a known number of requests on three backends and churn more; one is killed
 * ({@link Process#destroyForcibly()}, SIGKILL on Linux), and the counts every process sees return to
 * what the survivors hold; then all are killed and the next process to open the file finds zero. A
 * sampler in this process reads the counts throughout: never above what the children hold (the counts
 * are unsigned, so a count taken below zero reads as 4,294,967,295, not as a negative number).
 */
@Tag("process")
class KillNineTest {
    static final List<String> ENDPOINTS = RouterChild.ENDPOINTS;
    static final HostState.Options FAST = HostState.Options.DEFAULTS
            .withCapacity(64, 8)
            .withTimings(Duration.ofMillis(50), Duration.ofMillis(300), Duration.ofSeconds(60));

    @TempDir
    Path dir;

    @Test
    void countsOfAKilledProcessReturnAndNeverGoNegative() throws Exception {
        Path ring = dir.resolve("fleet.ring");
        assertTimeoutPreemptively(Duration.ofSeconds(120), () -> {
            List<RouterChild> children = new ArrayList<>();
            AtomicBoolean sampling = new AtomicBoolean(true);
            // most requests the children ever hold at once: 1+2+3 on backend 0, twice that on 1, one each churning on 2
            long[] most = {1 + 2 + 3, 2 + 4 + 6, 3};
            AtomicLongArray highest = new AtomicLongArray(most.length);
            AtomicLong samples = new AtomicLong();
            try (HostState observer = HostState.open(ring, FAST)) {
                int[] slots = observer.track(ENDPOINTS);
                Thread sampler = Thread.ofPlatform().start(() -> {
                    while (sampling.get()) {
                        for (int b = 0; b < slots.length; b++) {
                            highest.accumulateAndGet(b, observer.inFlight(slots[b]), Math::max);
                        }
                        samples.incrementAndGet();
                    }
                });
                // child i holds i+1 requests on backend 0, 2(i+1) on backend 1, and churns on backend 2
                for (int i = 0; i < 3; i++) {
                    children.add(RouterChild.start(
                            KillNineTest.class, ring, i + 1, "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"));
                }
                for (RouterChild c : children) {
                    c.expect("HELD");
                }
                assertEquals(1 + 2 + 3, observer.inFlight(slots[0]));
                assertEquals(2 + 4 + 6, observer.inFlight(slots[1]));

                long killedAt = System.nanoTime();
                children.get(1).process().destroyForcibly().waitFor(); // held 2 and 4
                long recovered = waitFor(() -> observer.inFlight(slots[0]) == 4 && observer.inFlight(slots[1]) == 8);
                System.out.printf(
                        "kill -9 of a router holding 6 requests: counts back to the survivors' after %d ms (%d samples)%n",
                        (recovered - killedAt) / 1_000_000, samples.get());
                for (RouterChild c : List.of(children.get(0), children.get(2))) {
                    c.send("QUIET");
                    c.expect("QUIET");
                }
                waitFor(() -> observer.inFlight(slots[2]) == 0);
                assertEquals(4, observer.inFlight(slots[0]));
                assertEquals(8, observer.inFlight(slots[1]));

                for (RouterChild c : children) {
                    c.process().destroyForcibly().waitFor();
                }
                sampling.set(false);
                sampler.join();
            }
            // No router left to reap: the next process to open the file does it.
            try (HostState next = HostState.open(ring, FAST)) {
                int[] slots = next.track(ENDPOINTS);
                // their heartbeats were fresh a moment ago: dead once stale, then reaped by next's heartbeat
                waitFor(() -> next.leases().size() == 1);
                for (int s : slots) {
                    assertEquals(0, next.inFlight(s), "returned by the next process to open the file");
                }
            } finally {
                children.forEach(c -> c.process().destroyForcibly());
            }
            assertTrue(samples.get() > 100, "sampled throughout: " + samples.get());
            for (int b = 0; b < most.length; b++) {
                assertTrue(
                        highest.get(b) <= most[b],
                        "never negative: backend " + b + " read " + highest.get(b)
                                + " in flight, its routers held at most " + most[b]);
            }
        });
    }

    private static long waitFor(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no recovery within 60 s");
            }
            Thread.sleep(1);
        }
        return System.nanoTime();
    }

    /** A router: holds {@code hold} requests on backend 0 and twice that on backend 1, churns on backend 2 until QUIET. */
    public static void main(String[] args) throws Exception {
        int hold = Integer.parseInt(args[1]);
        HostState state = HostState.open(Path.of(args[0]), FAST);
        int[] slots = RouterChild.holdRequests(state, hold);
        AtomicBoolean churn = new AtomicBoolean(true);
        Thread churner = Thread.ofPlatform().start(() -> {
            while (churn.get()) {
                state.acquire(slots[2]);
                Thread.onSpinWait();
                state.release(slots[2]);
            }
        });
        System.out.println("HELD");
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        for (String line; (line = in.readLine()) != null; ) {
            if (line.equals("QUIET")) {
                churn.set(false);
                churner.join();
                System.out.println("QUIET");
                System.out.flush();
            }
        }
        Thread.sleep(Long.MAX_VALUE); // stdin closed: wait to be killed, never release
    }
}
