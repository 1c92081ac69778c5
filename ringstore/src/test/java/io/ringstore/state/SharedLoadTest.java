package io.ringstore.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.Backend;
import io.ringstore.Ring;
import io.ringstore.TestRings;
import io.ringstore.balance.BoundedLoad;
import io.ringstore.balance.LoadView;
import io.ringstore.live.RingRouter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link RingRouter.Route#choose} under a {@link SharedLoad}, against oracles on a small fleet: the
 * plain lookup when the state says nothing, nginx's failover walk with drained, down and failed
 * backends skipped, and {@link BoundedLoad} over a load view kept by the test itself.
 */
class SharedLoadTest {
    private static final String FLEET = """
            server 10.0.0.1:80
            server 10.0.0.2:80 weight=2 features=x
            server 10.0.0.3:80 features=x
            server 10.0.0.4:80
            server 10.0.0.5:80
            server 10.0.0.6:80 down
            server 10.0.0.7:80
            server 10.0.0.8:80 features=x
            """;
    private static final HostState.Options OPTIONS = HostState.Options.DEFAULTS.withCapacity(64, 4);
    private static final long FAIL_TIMEOUT = 10_000_000_000L; // the default fail_timeout, as a ring file has it
    private static final int KEYS = 2000;

    @TempDir
    Path dir;

    private Path ring;
    private byte[][] keys;
    /** The test's clock: a fail_timeout passes when the test says so. */
    private final AtomicLong now = new AtomicLong(System.nanoTime());

    @BeforeEach
    void fleet() throws Exception {
        ring = dir.resolve("fleet.ring");
        TestRings.build(ring, FLEET);
        keys = new byte[KEYS][];
        for (int k = 0; k < KEYS; k++) {
            keys[k] = ("/shared/" + k).getBytes(StandardCharsets.US_ASCII);
        }
    }

    private RingRouter router() throws Exception {
        return RingRouter.builder(ring).jmx(false).pollMillis(0).graceMillis(0).open();
    }

    /** nginx's answer: the first of 21 points from the key's whose backend {@code ok} accepts, else the first of the whole ring. */
    private static Backend nginx(RingRouter.Route route, byte[] key, java.util.function.Predicate<Backend> ok) {
        Backend b = route.select(key, Ring.NGINX_MAX_POINTS, ok);
        return b != null ? b : route.select(key, Integer.MAX_VALUE, ok);
    }

    @Test
    void withNothingInTheStateEveryKeyGoesToItsRingBackend() throws Exception {
        try (RingRouter router = router();
                HostState state = HostState.open(ring, OPTIONS);
                RingRouter.Route route = router.route(Set.of())) {
            SharedLoad bounded = SharedLoad.open(state, router::current, BoundedLoad.of(1.25));
            SharedLoad unbounded = SharedLoad.open(state, router::current, null);
            int moved = 0;
            for (byte[] key : keys) {
                Backend plain = route.backend(key);
                assertSame(plain.down() ? nginx(route, key, b -> !b.down()) : plain, route.choose(key, unbounded));
                Backend chosen = route.choose(key, bounded);
                if (plain.down()) {
                    assertTrue(!chosen.down());
                    moved++;
                } else {
                    assertSame(plain, chosen);
                }
            }
            assertTrue(moved > 0, "the fleet's down backend owns keys");
        }
    }

    /**
     * A state file with fewer slots than the ring has backends: routing goes on (what has no slot is
     * routed without shared state), and the full directory is not scanned again on every request.
     */
    @Test
    void aFullStateFileStillRoutesEveryKey() throws Exception {
        HostState.Options four = HostState.Options.DEFAULTS.withCapacity(4, 4);
        try (RingRouter router = router();
                HostState state = HostState.open(ring, four);
                RingRouter.Route route = router.route(Set.of())) {
            SharedLoad unbounded = SharedLoad.open(state, router::current, null);
            SharedLoad bounded = SharedLoad.open(state, router::current, BoundedLoad.of(1.25));
            for (byte[] key : keys) {
                Backend plain = route.backend(key);
                Backend expected = plain.down() ? nginx(route, key, b -> !b.down()) : plain;
                assertSame(expected, route.choose(key, unbounded));
                Backend chosen = route.choose(key, bounded); // a down key's next candidate is the bound's own walk
                assertTrue(plain.down() ? !chosen.down() : chosen == plain, key.length + " " + chosen);
            }
            assertEquals(4, state.backends().size(), "the four slots there are, in use");
        }
    }

    @Test
    void aDrainedBackendIsNeverChosenAndUndrainingRestoresIt() throws Exception {
        try (RingRouter router = router();
                HostState state = HostState.open(ring, OPTIONS);
                RingRouter.Route route = router.route(Set.of());
                HostState operator = HostState.inspect(HostState.statePath(ring), OPTIONS, false)
                        .orElseThrow()) {
            SharedLoad bounded = SharedLoad.open(state, router::current, BoundedLoad.of(1.25));
            SharedLoad unbounded = SharedLoad.open(state, router::current, null);
            String drained = "10.0.0.4:80";
            operator.drain(drained);
            int owned = 0;
            for (byte[] key : keys) {
                Backend plain = route.backend(key);
                Backend chosen = route.choose(key, unbounded);
                assertSame(
                        nginx(route, key, b -> !b.down() && !b.socketAddress().equals(drained)), chosen);
                assertNotEquals(drained, route.choose(key, bounded).socketAddress());
                if (plain.socketAddress().equals(drained)) {
                    owned++;
                } else if (!plain.down()) {
                    assertSame(plain, route.choose(key, bounded), "only the drained backend's keys move");
                }
            }
            assertTrue(owned > 0);
            operator.undrain(drained);
            for (byte[] key : keys) {
                Backend plain = route.backend(key);
                if (!plain.down()) {
                    assertSame(plain, route.choose(key, bounded));
                }
            }
        }
    }

    @Test
    void aFailedBackendIsSkippedHostWideUntilItsFailTimeoutThenProbedOnce() throws Exception {
        try (RingRouter router = router();
                HostState state = HostState.open(ring, OPTIONS);
                HostState other = HostState.open(ring, OPTIONS);
                RingRouter.Route route = router.route(Set.of())) {
            SharedLoad mine = SharedLoad.open(state, router::current, BoundedLoad.of(1.25), now::get);
            SharedLoad theirs =
                    SharedLoad.open(other, router::current, BoundedLoad.of(1.25), now::get); // another router process
            byte[] key = keyOf(route, "10.0.0.5:80");
            Backend failing = route.backend(key);
            assertSame(failing, route.choose(key, mine));
            mine.reportFailure(failing); // max_fails=1 (a ring file's default)
            assertNotEquals(failing, route.choose(key, mine));
            assertNotEquals(failing, route.choose(key, theirs), "failed host-wide");
            now.addAndGet(FAIL_TIMEOUT - 1);
            assertNotEquals(failing, route.choose(key, theirs));
            now.addAndGet(2);
            assertSame(failing, route.choose(key, theirs), "the probe after fail_timeout");
            assertNotEquals(failing, route.choose(key, mine), "one probe for the host");
            theirs.reportSuccess(failing);
            assertSame(failing, route.choose(key, mine));
        }
    }

    @Test
    void theLoadBoundIsTheBoundedLoadOfTheHostsCounts() throws Exception {
        try (RingRouter router = router();
                HostState state = HostState.open(ring, OPTIONS);
                HostState other = HostState.open(ring, OPTIONS);
                RingRouter.Route all = router.route(Set.of());
                RingRouter.Route x = router.route(Set.of("x"))) {
            BoundedLoad bound = BoundedLoad.of(1.25);
            SharedLoad mine = SharedLoad.open(state, router::current, bound);
            SharedLoad theirs = SharedLoad.open(other, router::current, bound);
            List<Backend> backends = router.current().backends();
            long[] inFlight = new long[backends.size()];
            List<Integer> tokens = new ArrayList<>();
            Random random = new Random(12);
            int overflowed = 0;
            for (int round = 0; round < 400; round++) {
                // Requests placed by both processes on skewed backends, some finished.
                Backend b =
                        backends.get(random.nextInt(3) == 0 ? random.nextInt(backends.size()) : random.nextInt(2) + 3);
                tokens.add((round % 2 == 0 ? mine : theirs).acquire(b) * 2 + round % 2);
                inFlight[b.index()]++;
                if (random.nextInt(3) == 0) {
                    int t = tokens.remove(random.nextInt(tokens.size()));
                    (t % 2 == 0 ? mine : theirs).release(t / 2);
                    inFlight[slotBackend(backends, state, t / 2)]--;
                }
                for (RingRouter.Route route : List.of(all, x)) {
                    Ring r = route.oldRing();
                    for (int k = round; k < KEYS; k += 97) {
                        long hash = r.hash(keys[k]);
                        int expected = bound.choose(r, hash, view(r, backends, inFlight));
                        Backend chosen = route.choose(keys[k], round % 2 == 0 ? mine : theirs);
                        assertNotNull(chosen);
                        assertEquals(
                                backends.get(expected).address(), chosen.address(), "key " + k + " round " + round);
                        if (chosen != route.backend(keys[k])
                                && !route.backend(keys[k]).down()) {
                            overflowed++;
                        }
                    }
                }
            }
            assertTrue(overflowed > 0, "some keys were over the bound");
        }
    }

    @Test
    void aSwitchTracksTheNewBackendsAndRequestsOfTheOldOneAreStillCounted() throws Exception {
        try (RingRouter router = router();
                HostState state = HostState.open(ring, OPTIONS);
                RingRouter.Route route = router.route(Set.of())) {
            SharedLoad load =
                    SharedLoad.open(state, router::current, null); // no bound: the request held does not move keys
            Backend old = route.choose(keys[0], load);
            int token = load.acquire(old);
            assertEquals(1, state.inFlight(state.slot(old.socketAddress())));
            TestRings.build(ring, FLEET + "server 10.0.0.9:80\n");
            assertTrue(router.checkNow());
            assertEquals(-1, state.slot("10.0.0.9:80"), "tracked on first use");
            for (byte[] key : keys) {
                assertSame(
                        route.backend(key).down() ? nginx(route, key, b -> !b.down()) : route.backend(key),
                        route.choose(key, load));
            }
            assertTrue(state.slot("10.0.0.9:80") >= 0);
            load.release(token);
            assertEquals(0, state.inFlight(state.slot(old.socketAddress())));
            assertEquals(0, state.totalInFlight());
        }
    }

    @Test
    void noAvailableBackendIsNull() throws Exception {
        try (RingRouter router = router();
                HostState state = HostState.open(ring, OPTIONS);
                RingRouter.Route route = router.route(Set.of("x"))) {
            for (String e : List.of("10.0.0.2:80", "10.0.0.3:80", "10.0.0.8:80")) {
                state.drain(e);
            }
            assertNull(route.choose(keys[0], SharedLoad.open(state, router::current, BoundedLoad.of(1.25))));
            assertNull(route.choose(keys[0], SharedLoad.open(state, router::current, null)));
        }
    }

    @Test
    void peekingAtAFailedBackendPastItsTimeoutLeavesTheProbeToARouter() throws Exception {
        try (HostState state = HostState.open(ring, OPTIONS)) {
            int slot = state.track(List.of("10.0.0.1:80"))[0];
            long t = now.get();
            state.reportFailure(slot, t);
            assertTrue(!state.peekAvailable(slot, t + FAIL_TIMEOUT, 1, FAIL_TIMEOUT));
            for (int i = 0; i < 3; i++) {
                assertTrue(
                        state.peekAvailable(slot, t + FAIL_TIMEOUT + 1, 1, FAIL_TIMEOUT),
                        "every look sees it probe-able");
            }
            assertTrue(
                    state.available(slot, t + FAIL_TIMEOUT + 1, 1, FAIL_TIMEOUT), "the probe is still there to take");
            assertTrue(!state.available(slot, t + FAIL_TIMEOUT + 2, 1, FAIL_TIMEOUT), "and only once");
            assertTrue(!state.peekAvailable(slot, t + FAIL_TIMEOUT + 2, 1, FAIL_TIMEOUT));
        }
    }

    /** A key whose ring backend is {@code endpoint}. */
    private byte[] keyOf(RingRouter.Route route, String endpoint) {
        for (byte[] key : keys) {
            if (route.backend(key).socketAddress().equals(endpoint)) {
                return key;
            }
        }
        throw new AssertionError("no key on " + endpoint);
    }

    private static int slotBackend(List<Backend> backends, HostState state, int slot) {
        for (Backend b : backends) {
            if (state.slot(b.socketAddress()) == slot) {
                return b.index();
            }
        }
        throw new AssertionError("slot " + slot);
    }

    /** The oracle's view: the test's own counts over the ring's members; available = not down. */
    private static LoadView view(Ring r, List<Backend> backends, long[] inFlight) {
        List<Backend> members = backends.stream()
                .filter(b -> b.features().containsAll(r.features()))
                .toList();
        return new LoadView() {
            @Override
            public boolean available(int backend) {
                return !backends.get(backend).down();
            }

            @Override
            public long inFlight(int backend) {
                return inFlight[backend];
            }

            @Override
            public long totalInFlight() {
                return members.stream().mapToLong(b -> inFlight[b.index()]).sum();
            }

            @Override
            public int availableBackends() {
                return (int) members.stream().filter(b -> !b.down()).count();
            }
        };
    }
}
