package io.ringstore.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.Backend;
import io.ringstore.TestRings;
import io.ringstore.balance.BoundedLoad;
import io.ringstore.family.RingVersion;
import io.ringstore.live.RingRouter;
import io.ringstore.migration.RolloutPolicy;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@link RingRouter.Route#chooseAndAcquire} answers and counts alike for every key shape: the same
 * {@value #KEYS} keys as {@code byte[]}, as heap and direct {@link ByteBuffer}s whose bytes start at
 * position 3, and as native {@link MemorySegment} slices, each shape routed through its own state file
 * (four worlds, one router), step by step in lockstep. Every step must take the same backend in every
 * world, count the same version of the rollout (half the keys move) and leave every backend with the
 * same requests in flight. Each world holds the last {@value #WINDOW} requests (the oldest released as a
 * new one is taken), so that on a ring of {@value #SERVERS} backends the bound c = 1.25 moves many keys
 * off their ring backend: the walk past it, the sweep and the reservations are all exercised, not only
 * the key's hash. Halfway, one backend is drained in every world: without a bound, spymemcached's keys
 * of that backend then take its rehash sequence (a buffer's or segment's key copied for it).
 */
class KeyShapesStrictTest {
    static final int KEYS = 10_000;
    static final int SERVERS = 5;
    static final int WINDOW = 24;
    /** The key's bytes start here in the buffers; the segment is a slice from offset 1. */
    static final int POSITION = 3;

    static final HostState.Options OPTIONS = HostState.Options.DEFAULTS.withCapacity(64, 4);
    static final String[] SHAPES = {"byte[]", "heap ByteBuffer", "direct ByteBuffer", "native MemorySegment"};

    @TempDir
    Path dir;

    static String fleet() {
        StringBuilder s = new StringBuilder();
        for (int i = 1; i <= SERVERS; i++) {
            s.append("server 10.0.2.")
                    .append(i)
                    .append(":11211 weight=")
                    .append(i)
                    .append('\n');
        }
        return s.toString();
    }

    /** c "none": without a bound (availability only). */
    @ParameterizedTest(name = "{0} to {1}, c={2}")
    @CsvSource({"v1, v2:160, 1.25", "spymemcached, envoy, 1.25", "libketama, grpc, 1.25", "spymemcached, v1, none"})
    void everyKeyShapeTakesTheSameBackendAndLeavesTheSameCounts(String from, String to, String c) throws Exception {
        RingVersion oldVersion = RingVersion.parse(from);
        RingVersion newVersion = RingVersion.parse(to);
        Path ring = dir.resolve("fleet.ring");
        TestRings.build(ring, fleet(), oldVersion, newVersion);
        BoundedLoad bound = c.equals("none") ? null : BoundedLoad.of(Double.parseDouble(c));
        SplittableRandom random = new SplittableRandom(0x5_4A9E5L);
        byte[][] keys = new byte[KEYS][];
        for (int k = 0; k < KEYS; k++) {
            keys[k] = ("/shapes/" + random.nextInt(1 << 20) + "/" + "x".repeat(random.nextInt(40)))
                    .getBytes(StandardCharsets.US_ASCII);
        }
        HostState[] states = new HostState[SHAPES.length];
        // One clock for every world, moved only by the test: the bound's count of available backends is
        // refreshed by time, which must not differ between worlds.
        AtomicLong now = new AtomicLong(System.nanoTime());
        try (Arena arena = Arena.ofConfined();
                RingRouter router = RingRouter.builder(ring)
                        .jmx(false)
                        .pollMillis(0)
                        .graceMillis(0)
                        .versions(oldVersion, newVersion)
                        .policy(RolloutPolicy.everywhere(50))
                        .open();
                RingRouter.Route route = router.route(Set.of())) {
            SharedLoad[] loads = new SharedLoad[SHAPES.length];
            int[][] slots = new int[SHAPES.length][];
            List<String> endpoints = router.current().backends().stream()
                    .map(Backend::socketAddress)
                    .toList();
            for (int s = 0; s < SHAPES.length; s++) {
                states[s] = HostState.open(dir.resolve("world-" + s + ".ring"), OPTIONS);
                loads[s] = SharedLoad.open(states[s], router::current, bound, now::get);
                slots[s] = states[s].slots(endpoints);
            }
            int[][] held = new int[SHAPES.length][WINDOW];
            long moved = 0;
            long migrated = 0;
            for (int k = 0; k < KEYS; k++) {
                if (k == KEYS / 2) {
                    for (HostState state : states) {
                        assertFalse(state.drain(endpoints.get(2)), "not drained before");
                    }
                    now.addAndGet(
                            2 * SharedLoad.COUNT_REFRESH_NANOS); // every world counts its available backends again on
                    // its next request
                }
                byte[] key = keys[k];
                byte[] padded = new byte[key.length + POSITION + 2];
                System.arraycopy(key, 0, padded, POSITION, key.length);
                ByteBuffer heap = ByteBuffer.wrap(padded).position(POSITION).limit(POSITION + key.length);
                ByteBuffer direct = ByteBuffer.allocateDirect(padded.length)
                        .put(padded)
                        .position(POSITION)
                        .limit(POSITION + key.length);
                MemorySegment segment =
                        arena.allocate(key.length + 1).asSlice(1, key.length).copyFrom(MemorySegment.ofArray(key));
                Backend plain = route.backend(key);
                Backend[] chosen = new Backend[SHAPES.length];
                long[] newLookups = new long[SHAPES.length];
                for (int s = 0; s < SHAPES.length; s++) {
                    if (k >= WINDOW) {
                        loads[s].release(held[s][k % WINDOW]);
                    }
                    long before = router.newLookups();
                    chosen[s] = switch (s) {
                        case 0 -> route.chooseAndAcquire(key, loads[s]);
                        case 1 -> route.chooseAndAcquire(heap, loads[s]);
                        case 2 -> route.chooseAndAcquire(direct, loads[s]);
                        default -> route.chooseAndAcquire(segment, loads[s]);
                    };
                    newLookups[s] = router.newLookups() - before;
                    assertNotNull(chosen[s], SHAPES[s] + ", key " + k);
                    held[s][k % WINDOW] = loads[s].token(chosen[s]);
                }
                assertEquals(POSITION, heap.position(), "the heap buffer was not moved");
                assertEquals(POSITION, direct.position(), "the direct buffer was not moved");
                for (int s = 1; s < SHAPES.length; s++) {
                    assertEquals(chosen[0], chosen[s], SHAPES[s] + " against byte[], key " + k);
                    assertEquals(newLookups[0], newLookups[s], SHAPES[s] + ": the same version as byte[], key " + k);
                    for (int b = 0; b < endpoints.size(); b++) {
                        assertEquals(
                                states[0].inFlight(slots[0][b]),
                                states[s].inFlight(slots[s][b]),
                                SHAPES[s] + ": backend " + b + "'s requests in flight after key " + k);
                    }
                }
                moved += chosen[0].equals(plain) ? 0 : 1;
                migrated += newLookups[0];
            }
            System.out.printf(
                    "%s to %s, c=%s: %,d of %,d keys off their ring backend, %,d on the new version%n",
                    from, to, c, moved, KEYS, migrated);
            assertTrue(
                    migrated > KEYS / 3 && migrated < 2 * KEYS / 3,
                    "the rollout moves about half the keys: " + migrated);
            assertTrue(moved > KEYS / 20, "the bound or the drain moves keys: " + moved + " off their ring backend");
            for (int s = 0; s < SHAPES.length; s++) {
                for (int token : held[s]) {
                    loads[s].release(token);
                }
                for (int b = 0; b < endpoints.size(); b++) {
                    assertEquals(0, states[s].inFlight(slots[s][b]), SHAPES[s] + ": back to zero");
                }
            }
        } finally {
            for (HostState state : states) {
                if (state != null) {
                    state.close();
                }
            }
        }
    }
}
