package io.ringstore.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.Backend;
import io.ringstore.TestRings;
import io.ringstore.balance.BoundedLoad;
import io.ringstore.live.RingRouter;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import net.openhft.chronicle.testframework.process.JavaProcessBuilder;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The strict bound of {@link SharedLoad#chooseAndAcquire}: threads of this process and of a child JVM
 * route keys at full speed through one state file (choose and count, then release, again), while a
 * sampler here reads, for every backend, the requests routed to it host-wide and not yet released,
 * and requires that no sample has a backend above ⌈c · m / n⌉, m being the same sample's total. In
 * each process two workers give their keys as {@code byte[]}, one as direct {@link ByteBuffer}s
 * and one as native {@link MemorySegment}s: every key shape's {@code chooseAndAcquire} races every other.
 *
 * <p><b>What is sampled.</b> Each worker adds one to its backend's cell of an audit file (one int per
 * backend, shared by every process) after {@code chooseAndAcquire} answers, and takes it away before it
 * releases: the audit counts requests taken, exactly the requests a backend would be serving. Besides
 * the sampler's samples, each of those additions is itself a sample of its backend at the instant a
 * request is taken (the value it returns), and the highest is kept per backend. The state
 * file's own counts are read too and printed, not asserted: they also hold, for a few nanoseconds, a
 * reservation that the check then gives back (no request is sent on it), and the sum of a backend's
 * per-process cells is not read at one instant.
 *
 * <p><b>Why this regime.</b> 16 backends, c = 1.25 and at most 8 requests in flight at once (each of 8
 * workers holds one at a time) make the bound 1 for every total from 1 to 12: no backend may ever serve
 * two requests at once. A bound that stays the same for every total the run can reach is what makes
 * "no sample above the bound" a property of the choosing alone: where the bound varies with m, releases
 * elsewhere lower it under a backend that was within it when it took its requests (the bound is one on
 * placement, as in the paper), and samples exceed it without any request taken above it.
 *
 * <p>Choosing then acquiring ({@link SharedLoad#choose}, then {@link SharedLoad#acquire}) does not
 * pass: run with {@code -Dringstore.test.checkThenCount=true} (bench/results/2026-12-01-strict-bound.md
 * has the worst samples of both).
 */
@Tag("process")
class StrictBoundTest {
    static final int BACKENDS = 16;
    static final double C = 1.25;
    static final int THREADS_PER_PROCESS = 4;
    static final int ROUNDS = 200_000;
    /** Few keys, so that workers race for the same backends. */
    static final int KEYS = 6;

    static final HostState.Options OPTIONS = HostState.Options.DEFAULTS.withCapacity(64, 4);
    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();
    /** The audit file: an int per backend (requests taken, not released), then the most each held at once. */
    private static final long HIGHEST = 4L * BACKENDS;

    private static final boolean CHECK_THEN_COUNT = Boolean.getBoolean("ringstore.test.checkThenCount");

    @TempDir
    Path dir;

    static String fleet() {
        StringBuilder s = new StringBuilder();
        for (int i = 1; i <= BACKENDS; i++) {
            s.append("server 10.0.1.").append(i).append(":80\n");
        }
        return s.toString();
    }

    @Test
    void noSampleEverHasABackendAboveTheBoundOfItsTotal() throws Exception {
        Path ring = dir.resolve("fleet.ring");
        TestRings.build(ring, fleet());
        Path audit = dir.resolve("audit");
        Files.write(audit, new byte[8 * BACKENDS]);
        assertEquals(1, bound(8), "the regime: bound 1 at the most in flight");
        try (Arena arena = Arena.ofShared();
                RingRouter router = RingRouter.builder(ring)
                        .jmx(false)
                        .pollMillis(0)
                        .graceMillis(0)
                        .open();
                HostState state = HostState.open(ring, OPTIONS)) {
            MemorySegment cells = map(audit, arena);
            SharedLoad load = SharedLoad.open(state, router::current, BoundedLoad.of(C));
            int[] slots = state.slots(router.current().backends().stream()
                    .map(Backend::socketAddress)
                    .toList());
            Process child = JavaProcessBuilder.create(StrictBoundTest.class)
                    .withJvmArguments(
                            "-Xmx64m", "-XX:+UseSerialGC", "-Dringstore.test.checkThenCount=" + CHECK_THEN_COUNT)
                    .withProgramArguments(ring.toString(), audit.toString())
                    .start();
            BufferedReader childOut =
                    new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.US_ASCII));
            try {
                assertEquals("READY", childOut.readLine(), "the child JVM opened the state");
                List<Thread> workers = work(router, load, cells, 1);
                AtomicBoolean childDone = new AtomicBoolean();
                Thread waiter = Thread.ofPlatform().start(() -> {
                    try {
                        childOut.readLine(); // DONE, or end of stream
                    } catch (Exception ignored) {
                        // the child's exit is checked below
                    }
                    childDone.set(true);
                });
                long samples = 0;
                long busySamples = 0;
                String worst = null;
                long worstExcess = Long.MIN_VALUE;
                long worstStateExcess = Long.MIN_VALUE;
                while (!childDone.get() || workers.stream().anyMatch(Thread::isAlive)) {
                    long total = 0;
                    long max = 0;
                    int busiest = -1;
                    long stateTotal = 0;
                    long stateMax = 0;
                    for (int b = 0; b < BACKENDS; b++) {
                        long n = (int) INT.getVolatile(cells, 4L * b);
                        total += n;
                        if (n > max) {
                            max = n;
                            busiest = b;
                        }
                        long s = state.inFlight(slots[b]);
                        stateTotal += s;
                        stateMax = Math.max(stateMax, s);
                    }
                    samples++;
                    if (total > 0) {
                        busySamples++;
                        long excess = max - bound(total);
                        if (excess > worstExcess) {
                            worstExcess = excess;
                            worst = "backend " + busiest + " held " + max + " of " + total + " in flight (bound "
                                    + bound(total) + ")";
                        }
                    }
                    if (stateTotal > 0) {
                        worstStateExcess = Math.max(worstStateExcess, stateMax - bound(stateTotal));
                    }
                }
                waiter.join();
                assertTrue(child.waitFor(60, TimeUnit.SECONDS), "the child JVM ends");
                assertEquals(0, child.exitValue(), () -> "the child JVM: " + stderr(child));
                System.out.printf(
                        "strict bound (%s): %,d samples, %,d with requests in flight; worst: %s; excess over the bound: audit %d, "
                                + "state file's counts %d%n",
                        CHECK_THEN_COUNT ? "choose, then acquire" : "chooseAndAcquire",
                        samples,
                        busySamples,
                        worst,
                        worstExcess,
                        worstStateExcess);
                int[] highest = new int[BACKENDS];
                for (int b = 0; b < BACKENDS; b++) {
                    highest[b] = (int) INT.getVolatile(cells, HIGHEST + 4L * b);
                }
                System.out.println("  the most each backend held at once, as its requests were taken: "
                        + java.util.Arrays.toString(highest));
                assertTrue(busySamples > 100, "sampled while requests were in flight: " + busySamples);
                assertTrue(worstExcess <= 0, "a sample above the bound: " + worst);
                for (int b = 0; b < BACKENDS; b++) {
                    // Taken with at most 8 in flight, so with a bound of 1 for any total it was taken at.
                    assertTrue(
                            highest[b] <= bound(8),
                            "backend " + b + " held " + highest[b] + " at once, above the bound " + bound(8));
                }
                for (int b = 0; b < BACKENDS; b++) {
                    assertEquals(0, (int) INT.getVolatile(cells, 4L * b), "audit back to zero");
                    assertEquals(0, state.inFlight(slots[b]), "state back to zero");
                }
            } finally {
                child.destroyForcibly();
            }
        }
    }

    /** ⌈c · m / n⌉ in the integers {@link BoundedLoad} uses (c = 1.25 = 1250 / 1000). */
    static long bound(long m) {
        return Math.ceilDiv(1250 * m, 1000L * BACKENDS);
    }

    private static String stderr(Process p) {
        try {
            return new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        } catch (Exception e) {
            return String.valueOf(e);
        }
    }

    static MemorySegment map(Path audit, Arena arena) throws Exception {
        try (FileChannel ch = FileChannel.open(audit, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            return ch.map(FileChannel.MapMode.READ_WRITE, 0, 8L * BACKENDS, arena);
        }
    }

    /** How a worker gives its keys: threads 0 and 1 of each process arrays, 2 direct buffers, 3 native segments. */
    enum KeyShape {
        ARRAY,
        BUFFER,
        SEGMENT
    }

    /**
     * Starts the workers of one process: each routes a key, counts it in the audit, uncounts it, releases
     * it, {@link #ROUNDS} times; in each process two workers give their keys as arrays, one as direct
     * {@link ByteBuffer}s (position 1) and one as native {@link MemorySegment} slices, so the bound holds
     * whichever shape the racing requests' keys have.
     */
    static List<Thread> work(RingRouter router, SharedLoad load, MemorySegment cells, long seed) {
        byte[][] keys = new byte[KEYS][];
        for (int k = 0; k < KEYS; k++) {
            keys[k] = ("/strict/" + k).getBytes(StandardCharsets.US_ASCII);
        }
        RingRouter.Route route = router.route(java.util.Set.of());
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < THREADS_PER_PROCESS; t++) {
            SplittableRandom random = new SplittableRandom(seed * 1000 + t);
            KeyShape shape = t == 2 ? KeyShape.BUFFER : t == 3 ? KeyShape.SEGMENT : KeyShape.ARRAY;
            ByteBuffer[] buffers = new ByteBuffer[KEYS];
            MemorySegment[] segments = new MemorySegment[KEYS];
            for (int k = 0; k < KEYS; k++) { // each thread its own: a buffer's position and limit are not shared
                buffers[k] = ByteBuffer.allocateDirect(keys[k].length + 2)
                        .position(1)
                        .put(keys[k])
                        .flip()
                        .position(1);
                segments[k] =
                        Arena.ofAuto().allocate(keys[k].length + 1).asSlice(1).copyFrom(MemorySegment.ofArray(keys[k]));
            }
            workers.add(Thread.ofPlatform().start(() -> {
                for (int i = 0; i < ROUNDS; i++) {
                    int k = random.nextInt(KEYS);
                    Backend b;
                    int token;
                    if (CHECK_THEN_COUNT) {
                        b = switch (shape) {
                            case ARRAY -> route.choose(keys[k], load);
                            case BUFFER -> route.choose(buffers[k], load);
                            case SEGMENT -> route.choose(segments[k], load);
                        };
                        token = load.acquire(b);
                    } else {
                        b = switch (shape) {
                            case ARRAY -> route.chooseAndAcquire(keys[k], load);
                            case BUFFER -> route.chooseAndAcquire(buffers[k], load);
                            case SEGMENT -> route.chooseAndAcquire(segments[k], load);
                        };
                        token = load.token(b);
                    }
                    long cell = 4L * b.index();
                    int held = (int) INT.getAndAdd(cells, cell, 1) + 1; // a sample at the instant the request is taken
                    for (int seen; held > (seen = (int) INT.getVolatile(cells, HIGHEST + cell)); ) {
                        INT.compareAndSet(cells, HIGHEST + cell, seen, held);
                    }
                    for (int spin = random.nextInt(64); spin > 0; spin--) { // the request, held a moment
                        Thread.onSpinWait();
                    }
                    INT.getAndAdd(cells, cell, -1);
                    load.release(token);
                }
            }));
        }
        return workers;
    }

    /** The child JVM: the same workers, on the same ring, state file and audit. */
    public static void main(String[] args) throws Exception {
        Path ring = Path.of(args[0]);
        try (Arena arena = Arena.ofShared();
                RingRouter router = RingRouter.builder(ring)
                        .jmx(false)
                        .pollMillis(0)
                        .graceMillis(0)
                        .open();
                HostState state = HostState.open(ring, OPTIONS)) {
            MemorySegment cells = map(Path.of(args[1]), arena);
            SharedLoad load = SharedLoad.open(state, router::current, BoundedLoad.of(C));
            System.out.println("READY");
            System.out.flush();
            for (Thread t : work(router, load, cells, 2)) {
                t.join();
            }
            System.out.println("DONE");
            System.out.flush();
        }
    }
}
