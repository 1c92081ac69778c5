package io.ringstore.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.Backend;
import io.ringstore.RingStore;
import io.ringstore.TestRings;
import io.ringstore.live.RingRouter;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.function.IntPredicate;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A ring file's backends are available by one rule, wherever it is asked: not {@code down}, not
 * drained, not failed by their own {@code max_fails}/{@code fail_timeout}, below their {@code max_conns}
 * host-wide. {@link HostState#availableBackends(List, int[])} answers by it (before, it knew only the
 * slots: a backend marked down, or one holding its {@code max_conns}, read as available), and so does
 * {@link SharedLoad}.
 */
class AvailabilityTest {
    private static final String FLEET = """
            server 10.0.0.1:80
            server 10.0.0.2:80 down
            server 10.0.0.3:80 max_conns=2
            server 10.0.0.4:80 max_fails=2 fail_timeout=1s
            server 10.0.0.5:80
            """;
    private static final int PLAIN = 0, DOWN = 1, MAX_CONNS = 2, TWO_FAILS = 3, DRAINED = 4;

    @TempDir
    Path dir;

    @Test
    void availableBackendsLeavesOutDownAndFullBackends() throws Exception {
        Path ring = dir.resolve("fleet.ring");
        TestRings.build(ring, FLEET);
        try (RingStore store = RingStore.open(ring);
                HostState state = HostState.open(ring, HostStateTest.SMALL)) {
            List<Backend> backends = store.backends();
            int[] slots =
                    state.track(backends.stream().map(Backend::socketAddress).toList());
            IntPredicate up = state.availableBackends(backends, slots);
            assertTrue(up.test(PLAIN));
            assertFalse(up.test(DOWN), "marked down in the ring file");
            assertTrue(up.test(MAX_CONNS), "no request in flight");

            state.acquire(slots[MAX_CONNS]);
            assertTrue(up.test(MAX_CONNS), "one request of max_conns=2");
            state.acquire(slots[MAX_CONNS]);
            assertFalse(up.test(MAX_CONNS), "max_conns reached host-wide");
            state.release(slots[MAX_CONNS]);
            assertTrue(up.test(MAX_CONNS), "below max_conns again");

            state.drain("10.0.0.5:80");
            assertFalse(up.test(DRAINED), "drained");
            long now = System.nanoTime();
            state.reportFailure(slots[TWO_FAILS], now);
            assertTrue(up.test(TWO_FAILS), "its own max_fails=2: one failure leaves it in");
            state.reportFailure(slots[TWO_FAILS], now);
            assertFalse(up.test(TWO_FAILS), "two failures within its fail_timeout");

            IntPredicate bySlots = state.availableBackends(slots);
            assertTrue(bySlots.test(DOWN), "by slots alone, down is not known");
            assertFalse(bySlots.test(DRAINED));
        }
    }

    @Test
    void withoutStateOnlyDownCounts() throws Exception {
        Path ring = dir.resolve("fleet.ring");
        TestRings.build(ring, FLEET);
        try (RingStore store = RingStore.open(ring)) {
            Availability up = Availability.of(store.backends());
            assertEquals(
                    List.of(PLAIN, MAX_CONNS, TWO_FAILS, DRAINED),
                    IntStream.range(0, store.backendCount())
                            .filter(up::peek)
                            .boxed()
                            .toList());
            assertEquals(
                    List.of(PLAIN, MAX_CONNS, TWO_FAILS, DRAINED),
                    IntStream.range(0, store.backendCount()).filter(up).boxed().toList());
        }
    }

    /** A router's shared load answers by the same rule: the key of a full backend goes elsewhere, and comes back. */
    @Test
    void sharedLoadSkipsWhatAvailableBackendsLeavesOut() throws Exception {
        Path ring = dir.resolve("fleet.ring");
        TestRings.build(ring, FLEET);
        try (RingRouter router =
                        RingRouter.builder(ring).jmx(false).pollMillis(0).open();
                HostState state = HostState.open(ring, HostStateTest.SMALL);
                RingRouter.Route route = router.route(Set.of())) {
            SharedLoad load = SharedLoad.open(state, router::current, null);
            List<Backend> backends = router.current().backends();
            IntPredicate up = state.availableBackends(
                    backends,
                    state.slots(backends.stream().map(Backend::socketAddress).toList()));
            byte[] key = null;
            for (int k = 0; key == null; k++) {
                byte[] candidate = ("/k/" + k).getBytes(java.nio.charset.StandardCharsets.US_ASCII);
                if (route.backend(candidate).index() == MAX_CONNS) {
                    key = candidate;
                }
            }
            Backend full = backends.get(MAX_CONNS);
            int a = load.acquire(full);
            int b = load.acquire(full);
            assertFalse(up.test(MAX_CONNS));
            assertTrue(route.choose(key, load).index() != MAX_CONNS, "skipped at max_conns");
            load.release(a);
            assertTrue(up.test(MAX_CONNS));
            assertEquals(MAX_CONNS, route.choose(key, load).index(), "back below max_conns");
            load.release(b);
        }
    }
}
