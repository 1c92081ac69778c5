package io.ringstore.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.family.Families;
import io.ringstore.family.RingVersion;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

class PointGeneratorTest {
    private static final int SHARES = 4;
    private static final long SLOW_SHARE_MILLIS = 300;

    /** The generator's threads still alive. */
    private static Set<Thread> buildThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("ringstore-build-") && t.isAlive())
                .collect(Collectors.toSet());
    }

    private static void sleep() {
        try {
            Thread.sleep(SLOW_SHARE_MILLIS);
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * The calling thread's share fails at once while the others still run: the call must wait for
     * them (they write into the caller's arrays), then throw the caller's failure. Before the fix it
     * threw at once and left the other threads running.
     */
    @Test
    void aFailingCallerShareStillJoinsTheOtherThreads() {
        AtomicInteger finished = new AtomicInteger();
        IllegalStateException thrown = assertThrows(
                IllegalStateException.class,
                () -> PointGenerator.inParallel(SHARES, share -> {
                    if (share == SHARES - 1) {
                        throw new IllegalStateException("caller's share");
                    }
                    sleep();
                    finished.incrementAndGet();
                }));
        assertEquals("caller's share", thrown.getMessage());
        assertEquals(SHARES - 1, finished.get(), "every started share ran to its end before the call returned");
        assertEquals(Set.of(), buildThreads(), "no ringstore-build thread outlives the call");
    }

    /** An Error of a started share propagates as itself, after every share has ended. */
    @Test
    void anErrorOfAStartedSharePropagates() {
        AssertionError error = new AssertionError("share 1");
        AssertionError thrown = assertThrows(
                AssertionError.class,
                () -> PointGenerator.inParallel(SHARES, share -> {
                    if (share == 1) {
                        throw error;
                    }
                    sleep();
                }));
        assertSame(error, thrown);
        assertEquals(Set.of(), buildThreads());
    }

    /** Several failures: the caller's own is thrown, the started shares' ride along as suppressed. */
    @Test
    void theFirstFailureIsThrownTheOthersSuppressed() {
        RuntimeException thrown = assertThrows(
                RuntimeException.class,
                () -> PointGenerator.inParallel(SHARES, share -> {
                    throw new RuntimeException("share " + share);
                }));
        assertEquals("share " + (SHARES - 1), thrown.getMessage());
        assertEquals(SHARES - 1, thrown.getSuppressed().length);
        assertEquals(Set.of(), buildThreads());
    }

    /** The same ring on one thread and on four, above the size where the generator splits the work. */
    @Test
    void pointsDoNotDependOnTheThreadCount() throws Exception {
        SplittableRandom random = new SplittableRandom(9);
        int n = 300;
        ServerAddress[] addresses = new ServerAddress[n];
        int[] points = new int[n];
        for (int i = 0; i < n; i++) {
            addresses[i] =
                    ServerAddress.parse("10.1." + (i >> 8) + "." + (i & 0xFF) + ":" + (1000 + random.nextInt(9000)));
            points[i] = i % 7 == 0 ? 0 : 1000 + random.nextInt(8000); // some backends not in the ring
        }
        PointGenerator.Members members = v2Members(addresses, points);
        assertTrue(members.totalPoints() > 1 << 20, "large enough to be split: " + members.totalPoints());
        PointGenerator.Sorted one = new PointGenerator(1).generateSorted(members, 32, line -> {});
        long[] expected = Arrays.copyOf(one.points(), one.count());
        PointGenerator.Sorted four = new PointGenerator(4).generateSorted(members, 32, line -> {});
        assertArrayEquals(expected, Arrays.copyOf(four.points(), four.count()));
        for (int i = 1; i < expected.length; i++) {
            assertTrue(Long.compareUnsigned(expected[i - 1], expected[i]) < 0, "ring order at " + i);
        }
    }

    /**
     * Against a naive oracle: every point by {@link Crc32#nextPoint}, packed, all sorted by
     * {@code Arrays.sort} in unsigned order. V2 ranks (address order, not list order); 4.2 M points (512
     * first-level buckets, split between threads); the full line and a 10-bit line, on which every hash
     * is shared by thousands of points (ties sorted by rank in long runs); one thread and two.
     */
    @Tag("slow") // an exhaustive sweep of several seconds: the full lane runs it
    @Test
    void sortedPointsEqualANaiveSortOfEveryChain() throws Exception {
        SplittableRandom random = new SplittableRandom(10);
        int n = 800;
        ServerAddress[] addresses = new ServerAddress[n];
        int[] points = new int[n];
        for (int i = 0; i < n; i++) {
            addresses[i] = ServerAddress.parse("10." + random.nextInt(256) + "." + (i >> 8) + "." + (i & 0xFF) + ":"
                    + (1000 + random.nextInt(9000)));
            points[i] = i % 11 == 0 ? random.nextInt(3) : 4000 + random.nextInt(4000);
        }
        PointGenerator.Members members = v2Members(addresses, points);
        int total = Math.toIntExact(members.totalPoints());
        assertEquals(9, PointSorter.bucketBits(total), "a ring of 4 M to 8 M points: " + total);
        for (int hashBits : new int[] {32, 10}) {
            int mask = -1 << (32 - hashBits);
            long[] expected = new long[total];
            int at = 0;
            for (int b = 0; b < n; b++) {
                int previous = 0;
                int base = Crc32.update(Crc32.INITIAL, addresses[b].pingoraHashInput()); // pingora's point source
                for (int j = 0; j < points[b]; j++) {
                    previous = Crc32.nextPoint(base, previous);
                    expected[at++] = PointSorter.pack(previous & mask, members.ranks()[b], b) ^ Long.MIN_VALUE;
                }
            }
            Arrays.sort(expected);
            for (int i = 0; i < total; i++) {
                expected[i] ^= Long.MIN_VALUE;
            }
            for (int threads : new int[] {1, 2}) {
                PointGenerator.Sorted sorted =
                        new PointGenerator(threads).generateSorted(members, hashBits, line -> {});
                assertEquals(total, sorted.count());
                assertArrayEquals(
                        expected,
                        Arrays.copyOf(sorted.points(), total),
                        "hashBits " + hashBits + ", threads " + threads);
            }
        }
    }

    /** The v2 ring of {@code addresses}, as the builder makes it from the family. */
    static PointGenerator.Members v2Members(ServerAddress[] addresses, int[] points) {
        List<BackendRecord> backends = new java.util.ArrayList<>();
        for (ServerAddress a : addresses) {
            backends.add(new BackendRecord(a, 1, 0, ServerParameters.DEFAULTS));
        }
        return new PointGenerator.Members(
                RingVersion.v2(160).points().source(backends),
                Families.PINGORA.ties().ranks(backends),
                points);
    }
}
