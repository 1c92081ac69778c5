package io.ringstore.balance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.Ring;
import io.ringstore.RingStore;
import io.ringstore.TestRings;
import io.ringstore.family.RingVersion;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link BoundedLoad} against oracles written here: the ring's own answer with no load, the clockwise
 * order of distinct backends from the key's point (from {@link Ring#pointBackend(int)}, point by point),
 * the paper's capacity in exact integer arithmetic, and the candidates the choice actually examined,
 * recorded by the test's view (first with room wins, else the least loaded available one).
 */
class BoundedLoadTest {
    private static final int SMALL = 10;
    /** More than the 128 backends the examined-set tells apart exactly. */
    private static final int LARGE = 200;

    @TempDir
    static Path dir;

    static RingStore small;
    static RingStore large;

    @BeforeAll
    static void build() throws Exception {
        small = open(SMALL, "small.ring");
        large = open(LARGE, "large.ring");
    }

    @AfterAll
    static void close() {
        small.close();
        large.close();
    }

    private static RingStore open(int backends, String name) throws Exception {
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < backends; i++) {
            text.append("server 10.0.")
                    .append(i >> 8)
                    .append('.')
                    .append(i & 0xFF)
                    .append(":80 weight=")
                    .append(1 + i % 3)
                    .append('\n');
        }
        Path file = dir.resolve(name);
        TestRings.build(file, text.toString(), RingVersion.V1);
        return RingStore.open(file);
    }

    private static Ring ring(RingStore store) {
        return store.ring(Set.of(), RingVersion.V1);
    }

    /** Counts and availability in arrays; records every backend examined (available() called) per choice. */
    static final class ArrayView implements LoadView {
        final long[] inFlight;
        final boolean[] available;
        final List<Integer> examined = new ArrayList<>();
        long total = -1; // -1: the sum of inFlight

        ArrayView(int backends) {
            inFlight = new long[backends];
            available = new boolean[backends];
            java.util.Arrays.fill(available, true);
        }

        @Override
        public boolean available(int backend) {
            examined.add(backend);
            return available[backend];
        }

        @Override
        public long inFlight(int backend) {
            return inFlight[backend];
        }

        @Override
        public long totalInFlight() {
            if (total >= 0) {
                return total;
            }
            long sum = 0;
            for (long n : inFlight) {
                sum += n;
            }
            return sum;
        }

        @Override
        public int availableBackends() {
            int n = 0;
            for (boolean a : available) {
                n += a ? 1 : 0;
            }
            return n;
        }

        int choose(BoundedLoad rule, Ring ring, int hash) {
            examined.clear();
            return rule.choose(ring, hash, this);
        }
    }

    /** The distinct backends of the points from the key's point on, clockwise, at most {@code limit}. */
    private static List<Integer> clockwise(Ring ring, int hash, int limit) {
        Set<Integer> order = new LinkedHashSet<>();
        for (int i = 0, p = ring.pointIndex(hash);
                i < ring.pointCount() && order.size() < limit;
                i++, p = (p + 1) % ring.pointCount()) {
            order.add(ring.pointBackend(p));
        }
        return new ArrayList<>(order);
    }

    @ParameterizedTest
    @EnumSource(BoundedLoad.Walk.class)
    void withNoLoadTheChoiceIsTheRingsAnswerAfterOneProbe(BoundedLoad.Walk walk) {
        for (RingStore store : List.of(small, large)) {
            Ring ring = ring(store);
            ArrayView view = new ArrayView(store.backendCount());
            BoundedLoad rule = BoundedLoad.of(1.25).walk(walk);
            SplittableRandom random = new SplittableRandom(1);
            for (int i = 0; i < 20_000; i++) {
                int hash = random.nextInt();
                assertEquals(ring.lookupHash(hash), view.choose(rule, ring, hash), "hash " + hash);
                assertEquals(1, view.examined.size());
            }
        }
    }

    @ParameterizedTest
    @EnumSource(BoundedLoad.Walk.class)
    void anUnavailableBackendIsNeverChosenWhileAnotherIsAvailable(BoundedLoad.Walk walk) {
        for (RingStore store : List.of(small, large)) {
            Ring ring = ring(store);
            int n = store.backendCount();
            BoundedLoad rule = BoundedLoad.of(1.25).walk(walk);
            SplittableRandom random = new SplittableRandom(2);
            for (int round = 0; round < 200; round++) {
                ArrayView view = new ArrayView(n);
                // from a few down to all but one: the last ones exercise the sweep past the probe bound
                int down = round < 190 ? random.nextInt(n) : n - 1;
                for (int b : random.ints(0, n).distinct().limit(down).toArray()) {
                    view.available[b] = false;
                }
                for (int b = 0; b < n; b++) {
                    view.inFlight[b] = random.nextInt(20);
                }
                for (int i = 0; i < 200; i++) {
                    int hash = random.nextInt();
                    int chosen = view.choose(rule, ring, hash);
                    assertTrue(chosen >= 0 && view.available[chosen], "chose unavailable backend " + chosen);
                    if (view.inFlight[ring.lookupHash(hash)] < rule.capacity(view)
                            && view.available[ring.lookupHash(hash)]) {
                        assertEquals(ring.lookupHash(hash), chosen, "the key's own backend has room");
                    }
                }
            }
            ArrayView allDown = new ArrayView(n);
            java.util.Arrays.fill(allDown.available, false);
            assertEquals(Ring.NO_BACKEND, allDown.choose(rule, ring, 12345));
        }
    }

    @Test
    void withNoLoadAndSomeDownClockwiseIsTheFirstAvailableBackendClockwise() {
        Ring ring = ring(small);
        SplittableRandom random = new SplittableRandom(3);
        for (int maxProbes : new int[] {2, 16}) { // 2: often past the probe bound, into the sweep
            BoundedLoad rule =
                    BoundedLoad.of(1.25).walk(BoundedLoad.Walk.CLOCKWISE).maxProbes(maxProbes);
            for (int round = 0; round < 100; round++) {
                ArrayView view = new ArrayView(SMALL);
                for (int b = 0; b < SMALL; b++) {
                    view.available[b] = random.nextInt(10) < 3;
                }
                view.available[random.nextInt(SMALL)] = true;
                for (int i = 0; i < 100; i++) {
                    int hash = random.nextInt();
                    int expected = clockwise(ring, hash, SMALL).stream()
                            .filter(b -> view.available[b])
                            .findFirst()
                            .orElseThrow();
                    assertEquals(expected, view.choose(rule, ring, hash), "hash " + hash);
                }
            }
        }
    }

    @ParameterizedTest
    @EnumSource(BoundedLoad.Walk.class)
    void examinesDistinctCandidatesWithinTheBoundAndTakesTheFirstWithRoom(BoundedLoad.Walk walk) {
        Ring ring = ring(small);
        SplittableRandom random = new SplittableRandom(4);
        for (int maxProbes : new int[] {1, 3, 16}) {
            BoundedLoad rule = BoundedLoad.of(1.1).walk(walk).maxProbes(maxProbes);
            for (int round = 0; round < 500; round++) {
                ArrayView view = new ArrayView(SMALL);
                for (int b = 0; b < SMALL; b++) {
                    view.inFlight[b] = random.nextInt(3) == 0 ? 50 : random.nextInt(20);
                    view.available[b] = random.nextInt(8) != 0;
                }
                long capacity = rule.capacity(view);
                int hash = random.nextInt();
                int chosen = view.choose(rule, ring, hash);
                List<Integer> all = view.examined;
                int sweep = all.subList(1, all.size()).indexOf(all.getFirst()) + 1;
                // the sweep for an available backend starts again at the key's point
                List<Integer> examined = new ArrayList<>(sweep > 0 ? all.subList(0, sweep) : all);
                if (sweep > 0) {
                    assertTrue(
                            examined.stream().noneMatch(b -> view.available[b]),
                            "swept though one was available: " + view.examined);
                }
                assertTrue(examined.size() <= Math.min(maxProbes, SMALL), "examined " + examined);
                assertEquals(examined.size(), new HashSet<>(examined).size(), "examined twice: " + examined);
                assertEquals(ring.lookupHash(hash), examined.getFirst());
                if (walk == BoundedLoad.Walk.CLOCKWISE) {
                    assertEquals(clockwise(ring, hash, examined.size()), examined);
                }
                int expected = examined.stream()
                        .filter(b -> view.available[b] && view.inFlight[b] < capacity)
                        .findFirst()
                        .orElseGet(() -> leastLoaded(view, examined));
                if (expected >= 0) { // else the sweep: covered by the tests of unavailable backends
                    assertEquals(expected, chosen, "examined " + examined + ", capacity " + capacity);
                }
            }
        }
    }

    private static int leastLoaded(ArrayView view, List<Integer> examined) {
        int best = -1;
        for (int b : examined) {
            if (view.available[b] && (best < 0 || view.inFlight[b] < view.inFlight[best])) {
                best = b;
            }
        }
        return best;
    }

    @ParameterizedTest
    @EnumSource(BoundedLoad.Walk.class)
    void withEveryBackendOverTheBoundTheProbeBoundHoldsAndTheLeastLoadedCandidateIsReturned(BoundedLoad.Walk walk) {
        for (RingStore store : List.of(small, large)) {
            Ring ring = ring(store);
            int n = store.backendCount();
            BoundedLoad rule = BoundedLoad.of(1.25).walk(walk).maxProbes(5);
            ArrayView view = new ArrayView(n);
            for (int b = 0; b < n; b++) {
                view.inFlight[b] = 1000 + (b * 7919L) % n; // distinct loads: one least loaded
            }
            view.total = 0; // an inconsistent view: capacity ⌈1.25 / n⌉ = 1, every backend over it
            assertEquals(1, rule.capacity(view));
            SplittableRandom random = new SplittableRandom(5);
            for (int i = 0; i < 2_000; i++) {
                int hash = random.nextInt();
                int chosen = view.choose(rule, ring, hash);
                assertTrue(view.examined.size() <= 5, "examined " + view.examined);
                assertEquals(leastLoaded(view, view.examined), chosen, "examined " + view.examined);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(BoundedLoad.Walk.class)
    void placingRequestsOneByOneNoBackendExceedsThePapersCapacity(BoundedLoad.Walk walk) {
        // Mirrokni et al.: each ball placed into a bin with fewer than ⌈c·(m+1)/n⌉ balls. With enough probes to
        // reach every backend, no backend ever holds more, however skewed the keys (here a third of them one key).
        Ring ring = ring(small);
        for (double c : new double[] {1.0, 1.1, 1.25, 1.5}) {
            BoundedLoad rule = BoundedLoad.of(c).walk(walk).maxProbes(64);
            ArrayView view = new ArrayView(SMALL);
            SplittableRandom random = new SplittableRandom(6);
            for (long m = 0; m < 3_000; m++) {
                int hash = random.nextInt(3) == 0 ? 42 : random.nextInt();
                long capacity = Math.ceilDiv(Math.round(c * 1000) * (m + 1), 1000L * SMALL);
                view.inFlight[view.choose(rule, ring, hash)]++;
                for (long load : view.inFlight) {
                    assertTrue(
                            load <= capacity, "c=" + c + ", m=" + m + ": a backend holds " + load + " > " + capacity);
                }
            }
        }
    }

    @Test
    void theChoiceIsDeterministicPerKeyForTheSameLoad() {
        Ring ring = ring(large);
        SplittableRandom random = new SplittableRandom(7);
        ArrayView view = new ArrayView(LARGE);
        for (int b = 0; b < LARGE; b++) {
            view.inFlight[b] = random.nextInt(3) == 0 ? 100 : random.nextInt(10);
        }
        for (BoundedLoad.Walk walk : BoundedLoad.Walk.values()) {
            BoundedLoad one = BoundedLoad.of(1.25).walk(walk);
            BoundedLoad other = BoundedLoad.of(1.25).walk(walk);
            Set<Integer> moved = new HashSet<>();
            for (int i = 0; i < 2_000; i++) {
                int hash = random.nextInt();
                int chosen = view.choose(one, ring, hash);
                List<Integer> examined = new ArrayList<>(view.examined);
                assertEquals(chosen, view.choose(other, ring, hash));
                assertEquals(examined, view.examined);
                if (chosen != ring.lookupHash(hash)) {
                    moved.add(chosen);
                }
            }
            assertTrue(moved.size() > 10, walk + ": overflow should reach many backends, reached " + moved);
        }
    }

    @Test
    void capacityIsThePapersBoundInExactIntegers() {
        ArrayView view = new ArrayView(11);
        view.total = 9;
        assertEquals(1, BoundedLoad.of(1.1).capacity(view)); // 1.1 × 10 / 11 = 1 exactly, not 1.0000000000000002
        view.total = 99;
        ArrayView fifty = new ArrayView(50);
        fifty.total = 99;
        assertEquals(3, BoundedLoad.of(1.25).capacity(fifty)); // ⌈2.5⌉
        fifty.total = 100;
        assertEquals(3, BoundedLoad.of(1.25).capacity(fifty)); // ⌈2.525⌉
        fifty.total = -5; // nonsense total: counted as 0
        assertEquals(1, BoundedLoad.of(1.25).capacity(fifty));
        ArrayView none = new ArrayView(3);
        java.util.Arrays.fill(none.available, false);
        none.total = 3; // no backend available: n counted as 1, no division by zero
        assertEquals(5, BoundedLoad.of(1.25).capacity(none));
        fifty.total = Long.MAX_VALUE; // clamped to 2^40: no overflow
        assertEquals(
                Math.ceilDiv(1250 * ((1L << 40) + 1), 1000L * 50),
                BoundedLoad.of(1.25).capacity(fifty));
    }

    @Test
    void badParametersAreRefusedNamingTheValue() {
        assertEquals(
                "c must be between 1.0 and 100.0: c=0.9",
                assertThrows(IllegalArgumentException.class, () -> BoundedLoad.of(0.9))
                        .getMessage());
        assertThrows(IllegalArgumentException.class, () -> BoundedLoad.of(Double.NaN));
        assertEquals(
                "maxProbes must be between 1 and 1024: maxProbes=0",
                assertThrows(
                                IllegalArgumentException.class,
                                () -> BoundedLoad.of(1.25).maxProbes(0))
                        .getMessage());
        assertThrows(IllegalArgumentException.class, () -> BoundedLoad.of(1.25).walk(null));
        BoundedLoad rule = BoundedLoad.of(1.25);
        assertEquals(BoundedLoad.Walk.RANDOM_JUMP, rule.walk());
        assertEquals(BoundedLoad.DEFAULT_MAX_PROBES, rule.maxProbes());
        assertEquals(1.25, rule.c());
    }

    /** A view that counts ({@link LoadView#acquire}); {@code racer} is called after each reservation, before the check reads. */
    static final class CountingView extends ArrayViewBase {
        Runnable racer = () -> {};

        CountingView(int backends) {
            super(backends);
        }

        @Override
        public void acquire(int backend) {
            inFlight[backend]++;
            racer.run();
        }

        @Override
        public void release(int backend) {
            inFlight[backend]--;
        }
    }

    /** {@link ArrayView} without the record of examined backends, to extend. */
    static class ArrayViewBase implements LoadView {
        final long[] inFlight;

        ArrayViewBase(int backends) {
            inFlight = new long[backends];
        }

        @Override
        public boolean available(int backend) {
            return true;
        }

        @Override
        public long inFlight(int backend) {
            return inFlight[backend];
        }

        @Override
        public long totalInFlight() {
            long sum = 0;
            for (long n : inFlight) {
                sum += n;
            }
            return sum;
        }

        @Override
        public int availableBackends() {
            return inFlight.length;
        }
    }

    @Test
    void chooseAndAcquireIsChooseAndCountsTheRequestWhenNothingRaces() {
        Ring ring = ring(small);
        CountingView counting = new CountingView(SMALL);
        ArrayView reading = new ArrayView(SMALL);
        BoundedLoad rule = BoundedLoad.of(1.25);
        SplittableRandom random = new SplittableRandom(4);
        for (int i = 0; i < 5_000; i++) {
            int hash = random.nextInt();
            int expected = reading.choose(rule, ring, hash);
            int b = rule.chooseAndAcquire(ring, hash, counting);
            assertEquals(expected, b, "request " + i);
            reading.inFlight[expected]++;
            assertEquals(reading.inFlight[b], counting.inFlight[b], "counted once");
            if (random.nextInt(3) == 0) { // some requests end, at random
                int done = random.nextInt(SMALL);
                if (counting.inFlight[done] > 0) {
                    counting.inFlight[done]--;
                    reading.inFlight[done]--;
                }
            }
        }
        assertThrows(
                UnsupportedOperationException.class, () -> rule.chooseAndAcquire(ring, 1, reading), "a read-only view");
    }

    @Test
    void aRequestRacingForTheLastPlaceMakesTheOtherGiveItBackAndTakeTheNextCandidate() {
        Ring ring = ring(small);
        BoundedLoad rule = BoundedLoad.of(1.0);
        CountingView view = new CountingView(SMALL);
        for (int b = 0; b < SMALL; b++) {
            view.inFlight[b] = 2; // 20 in flight: capacity ⌈21 / 10⌉ = 3, one place left on every backend
        }
        int hash = 12345;
        int home = ring.lookupHash(hash);
        // Another process takes home's last place between this request's reservation and its check.
        view.racer = () -> {
            view.racer = () -> {};
            view.inFlight[home]++;
        };
        int b = rule.chooseAndAcquire(ring, hash, view);
        assertTrue(b >= 0 && b != home, "not the backend the racer filled: " + b);
        assertEquals(3, view.inFlight[home], "home: its 2, and the racer's; this request's reservation given back");
        assertEquals(3, view.inFlight[b], "the next candidate took this request");
        for (long n : view.inFlight) {
            assertTrue(n <= 3, "no backend above the capacity 3: " + java.util.Arrays.toString(view.inFlight));
        }
        // Where choose() had answered: home, which the racer filled; a count after it would make 4.
        view.inFlight[home] = 2;
        view.inFlight[b] = 2;
        assertEquals(home, rule.choose(ring, hash, view));
    }

    @Test
    void whenEveryCandidateOfTheKeyIsFullTheSweepFindsTheBackendWithRoom() {
        Ring ring = ring(small);
        BoundedLoad rule = BoundedLoad.of(1.0).maxProbes(1);
        CountingView view = new CountingView(SMALL);
        int hash = 777;
        int home = ring.lookupHash(hash);
        java.util.Arrays.fill(view.inFlight, 2);
        view.inFlight[home] = 3; // 21 in flight: capacity ⌈22 / 10⌉ = 3, home full
        int room = (home + 1) % SMALL;
        view.inFlight[room] = 1;
        view.inFlight[(home + 2) % SMALL] = 3;
        // capacity ⌈(21 + 1)/10⌉ = 3: home is full, the others have room; choose() with one probe answers home, over it
        assertEquals(home, rule.choose(ring, hash, view));
        int b = rule.chooseAndAcquire(ring, hash, view);
        assertTrue(
                b != home && view.inFlight[b] <= 3,
                "a backend with room, counted: " + b + " " + java.util.Arrays.toString(view.inFlight));
    }
}
