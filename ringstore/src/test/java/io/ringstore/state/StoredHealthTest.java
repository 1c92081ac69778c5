package io.ringstore.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.ringstore.Backend;
import io.ringstore.TestRings;
import io.ringstore.balance.BoundedLoad;
import io.ringstore.live.RingRouter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A router judges each backend by the health settings its ring file stores (flag health): a backend
 * with {@code max_fails=2 fail_timeout=1s} takes two failures to leave, and is back (probed) after 1 s,
 * while a backend with nginx's defaults beside it leaves after one and stays out 10 s. On the test's
 * clock: nothing waits.
 */
class StoredHealthTest {
    private static final String FLEET = """
            server 10.0.0.1:80 max_fails=2 fail_timeout=1s
            server 10.0.0.2:80
            server 10.0.0.3:80
            server 10.0.0.4:80
            """;
    private static final long MS = 1_000_000L;

    @TempDir
    Path dir;

    private final AtomicLong now = new AtomicLong(System.nanoTime());

    @Test
    void unbounded() throws Exception {
        run(null);
    }

    @Test
    void bounded() throws Exception {
        run(BoundedLoad.of(1.25));
    }

    private void run(BoundedLoad policy) throws Exception {
        Path ring = dir.resolve("fleet.ring");
        TestRings.build(ring, FLEET);
        try (RingRouter router = RingRouter.builder(ring)
                        .jmx(false)
                        .pollMillis(0)
                        .graceMillis(0)
                        .open();
                HostState state = HostState.open(ring, HostState.Options.DEFAULTS.withCapacity(16, 2));
                RingRouter.Route route = router.route(Set.of())) {
            SharedLoad load = SharedLoad.open(state, router::current, policy, now::get);
            byte[] tuned = keyOf(route, 0);
            byte[] plain = keyOf(route, 1);
            Backend b0 = route.backend(tuned);
            Backend b1 = route.backend(plain);
            assertEquals(2, b0.maxFails(), "the stored max_fails");
            assertEquals(1, b0.failTimeoutSeconds(), "the stored fail_timeout");
            assertEquals(1, b1.maxFails());
            assertEquals(10, b1.failTimeoutSeconds());

            load.reportFailure(b0);
            assertSame(b0, route.choose(tuned, load), "max_fails=2: one failure leaves it in");
            load.reportFailure(b0);
            assertNotEquals(b0, route.choose(tuned, load), "two failures take it out");
            load.reportFailure(b1);
            assertNotEquals(b1, route.choose(plain, load), "the default max_fails=1: one failure takes it out");

            now.addAndGet(900 * MS);
            assertNotEquals(b0, route.choose(tuned, load), "within its fail_timeout of 1 s");
            now.addAndGet(200 * MS);
            assertSame(b0, route.choose(tuned, load), "after 1 s it is probed");
            load.reportSuccess(b0);
            assertSame(b0, route.choose(tuned, load), "a successful probe brings it back");
            assertNotEquals(b1, route.choose(plain, load), "the default fail_timeout is 10 s: still out after 1.1 s");
            now.addAndGet(9_000 * MS);
            assertSame(b1, route.choose(plain, load), "after 10 s it is probed");
        }
    }

    /** max_conns=2 stored: the backend is skipped while 2 requests are in flight to it host-wide (any process), as nginx's hash balancer does. */
    @Test
    void maxConnsCountsTheHostsRequests() throws Exception {
        Path ring = dir.resolve("conns.ring");
        TestRings.build(ring, FLEET.replace("10.0.0.2:80", "10.0.0.2:80 max_conns=2"));
        HostState.Options options = HostState.Options.DEFAULTS.withCapacity(16, 2);
        try (RingRouter router = RingRouter.builder(ring)
                        .jmx(false)
                        .pollMillis(0)
                        .graceMillis(0)
                        .open();
                HostState state = HostState.open(ring, options);
                HostState other = HostState.open(ring, options); // another router on the host (its own lease)
                RingRouter.Route route = router.route(Set.of())) {
            for (BoundedLoad policy : new BoundedLoad[] {null, BoundedLoad.of(100)}) {
                SharedLoad load = SharedLoad.open(state, router::current, policy, now::get);
                byte[] key = keyOf(route, 1);
                Backend b1 = route.backend(key);
                assertEquals(2, b1.maxConns());
                int mine = load.acquire(b1);
                assertSame(b1, route.choose(key, load), policy + ": 1 of 2 in flight");
                int slot = other.track(List.of(b1.socketAddress()))[0];
                other.acquire(slot);
                assertNotEquals(b1, route.choose(key, load), policy + ": 2 of 2 in flight host-wide");
                other.release(slot);
                assertSame(b1, route.choose(key, load), policy + ": below max_conns again");
                load.release(mine);
            }
        }
    }

    /** A key the ring answers with backend {@code index}. */
    private static byte[] keyOf(RingRouter.Route route, int index) {
        for (int k = 0; ; k++) {
            byte[] key = ("/health/" + k).getBytes(StandardCharsets.US_ASCII);
            if (route.backend(key).index() == index) {
                return key;
            }
        }
    }
}
