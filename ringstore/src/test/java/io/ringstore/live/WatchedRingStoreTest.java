package io.ringstore.live;

import static io.ringstore.TestRings.builder;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.Backend;
import io.ringstore.LogCapture;
import io.ringstore.MemoryTempDir;
import io.ringstore.Ring;
import io.ringstore.RingFileException;
import io.ringstore.RingStore;
import io.ringstore.TestFiles;
import io.ringstore.family.RingVersion;
import io.ringstore.internal.format.RingFileDescriptor;
import io.ringstore.migration.RolloutPolicy;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.ref.WeakReference;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hot reload under load, through the router (its engine, the file watcher, is package-private):
 * readers never see an error or an answer that does not belong to the generation it came from, while
 * the file is replaced a thousand times; bad files are refused and the old generation keeps serving.
 * The router routes between v1 and v2:8, so each route reaches both versions' rings.
 *
 * <p>Two backend sets with disjoint addresses, A (odd generations) and B (even generations), so every
 * key's answer tells which file it came from. The expected answers are read from separate copies of A
 * and B opened once, before any watching starts.
 */
public class WatchedRingStoreTest {
    private static final String A = """
            server 127.0.0.1:8001 features=x
            server 127.0.0.1:8002 features=x weight=2
            server 127.0.0.1:8003
            server [::1]:8004 features=x
            server 127.0.0.5:8005
            """;
    private static final String B = """
            server 127.0.0.2:9001 features=x
            server 127.0.0.2:9002
            server [::1]:9003 features=x weight=3
            server 127.0.0.6:9004 features=x
            """;
    private static final RingVersion V2_8 = RingVersion.v2(8);
    private static final int REPLACEMENTS = 1_000;
    private static final int READERS = 8;
    private static final int KEYS = 256;

    /** The handles readers use: (features, version). */
    private static final List<Set<String>> HANDLE_FEATURES = List.of(Set.of(), Set.of("x"), Set.of(), Set.of("x"));

    private static final List<RingVersion> HANDLE_VERSIONS = List.of(RingVersion.V1, RingVersion.V1, V2_8, V2_8);

    /** For the lookups through {@link RingRouter.Route#backend}: about half of the keys on each version. */
    private static final RolloutPolicy HALF = RolloutPolicy.everywhere(50);

    @TempDir(factory = MemoryTempDir.class)
    Path dir;

    private Path path;
    private byte[][] keys;
    /** [set: 0 = A, 1 = B][handle][key] -> address text. */
    private String[][][] expected;

    @BeforeEach
    void expectedAnswers() throws Exception {
        path = dir.resolve("live.ring");
        keys = new byte[KEYS][];
        for (int k = 0; k < KEYS; k++) {
            keys[k] = ("/objects/" + k + "?v=" + (k * 7919)).getBytes(StandardCharsets.US_ASCII);
        }
        expected = new String[2][][];
        for (int set = 0; set < 2; set++) {
            Path copy = dir.resolve("expected-" + set + ".ring");
            builder(set == 0 ? A : B, RingVersion.V1, V2_8).generation(99).build(copy);
            try (RingStore store = RingStore.open(copy)) {
                store.verify();
                expected[set] = new String[HANDLE_FEATURES.size()][KEYS];
                for (int h = 0; h < HANDLE_FEATURES.size(); h++) {
                    Ring ring = store.ring(HANDLE_FEATURES.get(h), HANDLE_VERSIONS.get(h));
                    for (int k = 0; k < KEYS; k++) {
                        expected[set][h][k] =
                                store.backend(ring.lookup(keys[k])).address();
                    }
                }
            }
        }
        for (int h = 0; h < HANDLE_FEATURES.size(); h++) {
            for (int k = 0; k < KEYS; k++) {
                // Disjoint address sets: an answer names its file.
                assertNotEquals(expected[0][h][k], expected[1][h][k], "A and B must answer differently");
            }
        }
    }

    /** A router on {@code p} between v1 and v2:8, checking every {@code pollMillis} ms (0: only on checkNow), without an MBean. */
    private static RingRouter watch(Path p, long pollMillis) throws RingFileException {
        return RingRouter.builder(p)
                .versions(RingVersion.V1, V2_8)
                .policy(HALF)
                .pollMillis(pollMillis)
                .jmx(false)
                .open();
    }

    /** The ring of handle {@code h}'s version on its route. */
    private static Ring ringOf(RingRouter.Route route, int h) {
        return HANDLE_VERSIONS.get(h).equals(RingVersion.V1) ? route.oldRing() : route.newRing();
    }

    /** The handle (same features) whose version the policy gives key {@code k}: what {@code route.backend(key)} answers as. */
    private int handleOfKey(RingRouter router, int h, int k) {
        RingVersion v = router.policy().migrates(keys[k], 0, keys[k].length) ? V2_8 : RingVersion.V1;
        for (int i = 0; i < HANDLE_FEATURES.size(); i++) {
            if (HANDLE_FEATURES.get(i).equals(HANDLE_FEATURES.get(h))
                    && HANDLE_VERSIONS.get(i).equals(v)) {
                return i;
            }
        }
        throw new AssertionError("no handle for " + HANDLE_FEATURES.get(h) + " " + v);
    }

    private static String setFor(long generation) {
        return generation % 2 == 1 ? A : B;
    }

    private void publish(long generation) throws Exception {
        builder(setFor(generation), RingVersion.V1, V2_8).generation(generation).build(path);
    }

    /** Publishes {@code bytes} at the path the way a careful writer does: a temporary file renamed over it. */
    private void publishBytes(byte[] bytes) throws IOException {
        Path tmp = Files.createTempFile(dir, ".raw-", ".tmp");
        Files.write(tmp, bytes);
        Files.move(tmp, path, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    // ---- a thousand replacements under eight readers ----

    @Tag("slow")
    @Test
    void readersSeeOnlyCorrectAnswersWhileTheFileIsReplacedAThousandTimesByCheckNow() throws Exception {
        publish(1);
        try (RingRouter watched = watch(path, 0)) {
            hammer(watched, generation -> {
                Instant before = Instant.now();
                assertTrue(watched.checkNow(), "a newly published file must be switched to: generation " + generation);
                assertEquals(generation, watched.generation());
                assertFalse(watched.lastSwitch().isBefore(before), "lastSwitch moves with a switch");
                assertFalse(watched.checkNow(), "the same file again is no switch");
            });
            assertEquals(REPLACEMENTS, watched.switches());
        }
    }

    @Tag("slow")
    @Test
    void readersSeeOnlyCorrectAnswersWhileTheBackgroundPollerFollowsAThousandReplacements() throws Exception {
        publish(1);
        try (RingRouter watched = watch(path, 1)) {
            // The writer does not wait for the poller: it may miss files that were replaced before it looked.
            hammer(
                    watched,
                    generation -> assertTrue(watched.generation() <= generation, "a generation from the future"));
            System.out.println("the poller switched " + watched.switches() + " times for " + REPLACEMENTS + " files");
            assertTrue(watched.switches() <= REPLACEMENTS, "at most one switch per file: " + watched.switches());
            assertTrue(watched.switches() >= 10, "the poller followed too few files: " + watched.switches());
        }
    }

    private interface AfterPublish {
        void check(long generation) throws Exception;
    }

    /**
     * Runs {@value #READERS} readers over every handle while generations 2 .. {@value #REPLACEMENTS}+1
     * are published, calling {@code afterPublish} after each; then checks the readers' findings.
     */
    private void hammer(RingRouter watched, AfterPublish afterPublish) throws Exception {
        List<RingRouter.Route> handles = new ArrayList<>();
        int[][] handleOfKey = new int[HANDLE_FEATURES.size()][KEYS];
        for (int h = 0; h < HANDLE_FEATURES.size(); h++) {
            handles.add(watched.route(HANDLE_FEATURES.get(h)));
            for (int k = 0; k < KEYS; k++) {
                handleOfKey[h][k] = handleOfKey(watched, h, k);
            }
        }
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong errors = new AtomicLong();
        AtomicReference<String> firstError = new AtomicReference<>();
        long[] lookups = new long[READERS];
        long[] generationsSeen = new long[READERS];
        List<Thread> readers = new ArrayList<>();
        for (int t = 0; t < READERS; t++) {
            int id = t;
            Thread reader = new Thread(
                    () -> {
                        SplittableRandom random = new SplittableRandom(id);
                        long lastGeneration = 0;
                        long n = 0;
                        long distinct = 0;
                        while (!stop.get()) {
                            try {
                                int h = random.nextInt(handles.size());
                                int k = random.nextInt(KEYS);
                                RingRouter.Route live = handles.get(h);
                                Ring ring = ringOf(live, h);
                                long generation = ring.store().generation();
                                int b = ring.lookup(keys[k]);
                                String answer = b < 0
                                        ? "(none)"
                                        : ring.store().backend(b).address();
                                String want = expected[generation % 2 == 1 ? 0 : 1][h][k];
                                if (!want.equals(answer)) {
                                    error(
                                            errors,
                                            firstError,
                                            "reader " + id + ": generation " + generation + " handle " + h + " key " + k
                                                    + ": expected " + want + ", got " + answer);
                                }
                                if (generation < lastGeneration) {
                                    error(
                                            errors,
                                            firstError,
                                            "reader " + id + ": generation went back from " + lastGeneration + " to "
                                                    + generation);
                                }
                                if (generation != lastGeneration) {
                                    distinct++;
                                    lastGeneration = generation;
                                }
                                // The router's lookup: whichever generation served it, one of the two answers of the
                                // version the policy gives the key.
                                Backend any = live.backend(keys[k]);
                                int hk = handleOfKey[h][k];
                                if (any == null
                                        || !(any.address().equals(expected[0][hk][k])
                                                || any.address().equals(expected[1][hk][k]))) {
                                    error(
                                            errors,
                                            firstError,
                                            "reader " + id + ": backend(key " + k + ") on handle " + hk + " = " + any);
                                }
                                if (++n % 256 == 0) {
                                    Thread.yield(); // eight spinning readers on a small machine must not starve the
                                    // publisher
                                }
                            } catch (Throwable e) {
                                error(errors, firstError, "reader " + id + " threw " + e);
                            }
                        }
                        lookups[id] = n;
                        generationsSeen[id] = distinct;
                    },
                    "reader-" + t);
            readers.add(reader);
            reader.start();
        }
        long start = System.nanoTime();
        try {
            for (long generation = 2; generation <= REPLACEMENTS + 1; generation++) {
                publish(generation);
                afterPublish.check(generation);
                assertNull(watched.lastError());
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (watched.generation() != REPLACEMENTS + 1 && System.nanoTime() < deadline) {
                Thread.sleep(1); // a poller catching up with the last file
            }
        } finally {
            stop.set(true);
            for (Thread reader : readers) {
                reader.join(10_000);
                assertFalse(reader.isAlive(), "reader still running");
            }
        }
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        System.out.printf(
                "%d replacements in %d ms; lookups per reader %s; generations seen per reader %s%n",
                REPLACEMENTS, millis, Arrays.toString(lookups), Arrays.toString(generationsSeen));
        assertEquals(0, errors.get(), () -> errors.get() + " reader errors; first: " + firstError.get());
        assertEquals(REPLACEMENTS + 1, watched.generation());
        long totalSeen = Arrays.stream(generationsSeen).sum();
        assertTrue(
                totalSeen > READERS * 10L,
                "readers must have run across many switches: " + Arrays.toString(generationsSeen));
        for (long n : lookups) {
            assertTrue(n > 0, "every reader looked up");
        }
    }

    private static void error(AtomicLong errors, AtomicReference<String> first, String what) {
        errors.incrementAndGet();
        first.compareAndSet(null, what);
    }

    // ---- refusals ----

    @Test
    void badFilesAreRefusedWithAReasonAndTheCurrentGenerationKeepsServing() throws Exception {
        publish(1);
        byte[] good = Files.readAllBytes(path);
        try (RingRouter watched = watch(path, 0)) {
            RingRouter.Route all = watched.route(Set.of()); // handle 0: v1 of all backends
            RingRouter.Route x2 = watched.route(Set.of("x")); // handle 3: v2:8 of x
            RingStore first = watched.current();
            Instant switched = watched.lastSwitch();
            assertEquals(1, watched.generation());
            assertEquals(0, watched.switches());
            assertNull(watched.lastError());

            byte[] garbage = new byte[4096];
            new SplittableRandom(3).nextBytes(garbage);
            byte[] flippedSegment = good.clone();
            flippedSegment[flippedSegment.length - 3] ^= 0x10; // inside the last segment: only verify() sees it
            byte[] flippedHeader = good.clone();
            flippedHeader[RingFileDescriptor.GENERATION_OFFSET] ^= 0x01; // covered by the metadata checksum
            Object[][] cases = {
                {"garbage", garbage, "bad magic"},
                {"empty", new byte[0], "shorter than the 128-byte header"},
                {"truncated", Arrays.copyOf(good, good.length / 2), "(truncated?)"},
                {"extended", Arrays.copyOf(good, good.length + 100), "(extended or overwritten?)"},
                {"flipped header byte", flippedHeader, "metadata checksum mismatch"},
                {"flipped segment byte", flippedSegment, "segment checksum mismatch"},
            };
            for (Object[] c : cases) {
                String what = (String) c[0];
                publishBytes((byte[]) c[1]);
                assertRefused(watched, first, switched, what, (String) c[2]);
                assertAnswers(watched, all, 0, 0, what);
                assertAnswers(watched, x2, 3, 0, what);
                assertFalse(watched.checkNow(), what + ": the same bad file is not tried again");
            }

            Files.delete(path);
            assertRefused(watched, first, switched, "no file", "no such file");
            Files.createDirectory(path);
            assertRefused(watched, first, switched, "a directory", "directory");
            assertAnswers(watched, all, 0, 0, "directory");
            Files.delete(path);

            // A good file after all that: accepted, the reason cleared, the handles follow.
            Instant before = Instant.now();
            builder(B, RingVersion.V1, V2_8).generation(2).build(path);
            assertTrue(watched.checkNow(), () -> "good file refused: " + watched.lastError());
            assertNull(watched.lastError());
            assertEquals(2, watched.generation());
            assertEquals(1, watched.switches());
            assertFalse(watched.lastSwitch().isBefore(before));
            assertAnswers(watched, all, 0, 1, "after the good file");
            assertAnswers(watched, x2, 3, 1, "after the good file");
            // The first generation is still usable by whoever kept it (it is never unmapped under a reader).
            assertEquals(1, first.generation());
            assertEquals(
                    expected[0][0][0],
                    first.backend(first.ring(Set.of()).lookup(keys[0])).address());
        }
    }

    @Test
    void aFileLackingAFeatureOrVersionThatARouteUsesIsRefused() throws Exception {
        publish(1);
        try (RingRouter watched = watch(path, 0)) {
            RingRouter.Route x2 = watched.route(Set.of("x"));
            RingStore first = watched.current();
            Instant switched = watched.lastSwitch();

            // Same backends without the feature x.
            builder(A.replace(" features=x", ""), RingVersion.V1, V2_8)
                    .generation(2)
                    .build(path);
            assertRefused(watched, first, switched, "no feature x", "unknown feature 'x'");
            assertAnswers(watched, x2, 3, 0, "after the file without x");

            // The feature, but not the version the handle uses.
            builder(B, RingVersion.V1, RingVersion.v2(16)).generation(3).build(path);
            assertRefused(watched, first, switched, "no v2:8", "version v2:8 is not in");
            assertAnswers(watched, x2, 3, 0, "after the file without v2:8");

            publish(4);
            assertTrue(watched.checkNow(), () -> "good file refused: " + watched.lastError());
            assertEquals(4, watched.generation());
            assertAnswers(watched, x2, 3, 1, "after the good file");
        }
    }

    // ---- races and handles ----

    @Test
    void aHandleAskedForDuringACheckIsHeldToTheFileThatWillServe() throws Exception {
        publish(1);
        try (RingRouter watched = watch(path, 0)) {
            builder(A.replace(" features=x", ""), RingVersion.V1, V2_8)
                    .generation(2)
                    .build(path);
            AtomicReference<Object> asked = new AtomicReference<>();
            Thread asker = new Thread(
                    () -> {
                        try {
                            asked.set(watched.route(Set.of("x")));
                        } catch (RuntimeException e) {
                            asked.set(e);
                        }
                    },
                    "asker");
            // The new file has been checked against every handle there is (none uses x); before it
            // serves, another thread asks for x, which generation 1 has and generation 2 lacks.
            watched.engine().beforeSwitch = () -> {
                asker.start();
                while (asker.isAlive()
                        && asker.getState() != Thread.State.BLOCKED
                        && asker.getState() != Thread.State.WAITING) {
                    Thread.onSpinWait(); // until it has its handle, or waits for the check to end
                }
            };
            assertTrue(watched.checkNow(), () -> "no handle used x when the file was checked: " + watched.lastError());
            asker.join(10_000);
            assertEquals(2, watched.generation());
            // A handle on generation 1's x would fail its first lookup on generation 2: it must not exist.
            IllegalArgumentException refused = assertInstanceOf(
                    IllegalArgumentException.class,
                    asked.get(),
                    "a handle was registered that the serving file cannot answer");
            assertTrue(refused.getMessage().contains("unknown feature 'x'"), refused.getMessage());
        }
    }

    @Test
    void aClosedHandleNoLongerHoldsBackAFileWithoutItsFeature() throws Exception {
        publish(1);
        try (RingRouter watched = watch(path, 0)) {
            RingRouter.Route x2 = watched.route(Set.of("x"));
            RingStore first = watched.current();
            builder(A.replace(" features=x", ""), RingVersion.V1, V2_8)
                    .generation(2)
                    .build(path);
            assertRefused(watched, first, watched.lastSwitch(), "no feature x", "unknown feature 'x'");

            x2.close();
            builder(B.replace(" features=x", ""), RingVersion.V1, V2_8)
                    .generation(3)
                    .build(path);
            assertTrue(watched.checkNow(), () -> "refused for a closed handle: " + watched.lastError());
            assertEquals(3, watched.generation());
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> x2.backend(keys[0]));
            assertTrue(e.getMessage().contains("closed"), e.getMessage());
        }
    }

    @Test
    void aHandleNobodyHoldsNoLongerHoldsBackAFileWithoutItsFeature() throws Exception {
        publish(1);
        try (RingRouter watched = watch(path, 0)) {
            WeakReference<RingRouter.Route> dropped = new WeakReference<>(watched.route(Set.of("x")));
            for (int i = 0; i < 100 && dropped.get() != null; i++) {
                System.gc();
                Thread.sleep(10);
            }
            builder(A.replace(" features=x", ""), RingVersion.V1, V2_8)
                    .generation(2)
                    .build(path);
            assertTrue(watched.checkNow(), () -> "refused for a handle nobody holds: " + watched.lastError());
            assertEquals(2, watched.generation());
        }
    }

    @Test
    void aFilePublishedBetweenStampAndOpenIsOneSwitch() throws Exception {
        publish(1);
        try (RingRouter watched = watch(path, 0)) {
            publish(2);
            AtomicBoolean once = new AtomicBoolean();
            watched.engine().afterStamp = () -> {
                if (once.compareAndSet(false, true)) {
                    try {
                        publish(3); // the stamp taken describes generation 2; the file opened next is 3
                    } catch (Exception e) {
                        throw new AssertionError(e);
                    }
                }
            };
            assertTrue(watched.checkNow(), () -> "refused: " + watched.lastError());
            assertTrue(once.get());
            assertEquals(3, watched.generation());
            assertEquals(1, watched.switches());
            assertFalse(watched.checkNow(), "generation 3 is serving already: no second switch to it");
            assertEquals(1, watched.switches());
            assertEquals(3, watched.generation());
            assertNull(watched.lastError());
        }
    }

    /**
     * A FIFO renamed over the path between the watcher's regular-file check and its open: the poll
     * gives up on the open (it would block until a writer comes) instead of blocking the watcher for
     * good, and the next file published is picked up. The limit only detects a hang.
     */
    @Test
    @Tag("slow") // waits out the bounded open's 5 s
    void aFifoRenamedInBetweenCheckAndOpenDoesNotBlockTheWatcher() throws Exception {
        publish(1);
        Path fifo = dir.resolve("planted.fifo");
        TestFiles.mkfifo(fifo);
        try (RingRouter watched = watch(path, 0)) {
            AtomicBoolean once = new AtomicBoolean();
            watched.engine().afterRegularCheck = () -> {
                if (once.compareAndSet(false, true)) {
                    try {
                        Files.move(fifo, path, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                }
            };
            try {
                assertFalse(assertTimeoutPreemptively(Duration.ofSeconds(60), () -> watched.checkNow()));
                assertTrue(once.get());
                assertTrue(
                        watched.lastError() != null && watched.lastError().contains("did not return within"),
                        watched.lastError());
                Files.delete(path);
                publish(2);
                assertTrue(
                        assertTimeoutPreemptively(Duration.ofSeconds(60), () -> watched.checkNow()),
                        () -> "refused: " + watched.lastError());
                assertEquals(2, watched.generation());
            } finally {
                unblock(path);
            }
        }
    }

    /**
     * A bad file renamed over the path between the poll's look at the path's attributes and its read of
     * the file's first bytes is refused once, and not tried again: the stamp is of one file, not the
     * attributes of the one before and the bytes of the new one (found by the chaos run, which logged a
     * refusal twice, and behind a flaky test in which a refused file was switched to at the next poll).
     */
    @Test
    void aFileRenamedInDuringTheStampIsRefusedOnce() throws Exception {
        publish(1);
        Path bad = dir.resolve("bad.tmp");
        Files.write(bad, new byte[24]);
        try (RingRouter watched = watch(path, 0);
                io.ringstore.LogCapture log = new io.ringstore.LogCapture(WatchedRingStore.class)) {
            AtomicBoolean once = new AtomicBoolean();
            watched.engine().afterRegularCheck = () -> {
                if (once.compareAndSet(false, true)) {
                    try {
                        Files.move(bad, path, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                }
            };
            for (int poll = 0; poll < 5; poll++) {
                assertFalse(watched.checkNow());
            }
            assertTrue(once.get());
            assertEquals(1, log.containing("file is 24 bytes").size(), () -> "refused once: " + log.lines());
            assertEquals(1, watched.generation());
        }
    }

    /** Opens a FIFO at {@code path} for writing without blocking, if one is there: a reader blocked in open() returns. */
    private static void unblock(Path path) {
        if (Files.exists(path) && !Files.isRegularFile(path)) {
            try (var w = new java.io.RandomAccessFile(path.toFile(), "rw")) { // O_RDWR: never blocks on a FIFO on Linux
                w.getFD();
            } catch (IOException ignored) {
                // gone already
            }
        }
    }

    @Test
    void theServingFilePublishedAgainIsNoSwitch() throws Exception {
        publish(1);
        try (RingRouter watched = watch(path, 0)) {
            RingStore first = watched.current();
            publishBytes(Files.readAllBytes(path)); // a new file (new inode and time), the same generation
            assertFalse(watched.checkNow(), "the generation serving is not switched to again");
            assertSame(first, watched.current());
            assertEquals(0, watched.switches());
            assertNull(watched.lastError());
            assertFalse(watched.checkNow());
            assertEquals(0, watched.switches());
        }
    }

    // ---- the poller never stops ----

    /**
     * An Error thrown inside a check (a bug, a StackOverflowError) is logged in one line and the
     * poller goes on: the file it failed on is switched to on a later poll. Before, the Error
     * cancelled the periodic task and hot reload ended with nothing logged.
     */
    @Test
    void anErrorInsideACheckIsLoggedAndThePollerGoesOn() throws Exception {
        publish(1);
        try (LogCapture log = new LogCapture(io.ringstore.internal.Poller.class);
                RingRouter watched = watch(path, 5)) {
            AtomicLong thrown = new AtomicLong();
            watched.engine().afterStamp = () -> {
                if (thrown.getAndIncrement() < 3) {
                    throw new StackOverflowError("thrown inside a check by the test");
                }
            };
            publish(2);
            assertTrue(
                    waitFor(() -> watched.generation() == 2), "generation 2 switched to within 10 s after the Error");
            assertTrue(thrown.get() > 3, "thrown three times: " + thrown.get());
            List<String> lines = log.containing("thrown inside a check by the test");
            assertEquals(1, lines.size(), () -> "the same failure is logged once: " + log.lines());
            assertTrue(
                    lines.getFirst()
                            .startsWith("SEVERE " + path
                                    + ": watch check failed, still polling: java.lang.StackOverflowError"),
                    lines.getFirst());
        }
    }

    /**
     * Every kind of throwable, thrown once inside a background check before the file is opened or
     * before the switch, leaves the poller running: the next file published is switched to.
     */
    @Test
    void everyKindOfFaultInsideACheckLeavesThePollerRunning() throws Exception {
        List<Throwable> faults = List.of(
                new IllegalStateException("fault"),
                new UnsupportedOperationException("fault"),
                new StackOverflowError("fault"),
                new OutOfMemoryError("fault"),
                new AssertionError("fault"),
                new InternalError("fault"),
                new LinkageError("fault"),
                new java.io.IOException("checked fault"));
        publish(1);
        try (RingRouter watched = watch(path, 2)) {
            long generation = 1;
            for (Throwable fault : faults) {
                for (boolean beforeOpen : new boolean[] {true, false}) {
                    AtomicBoolean thrown = new AtomicBoolean();
                    Runnable throwOnce = () -> {
                        if (thrown.compareAndSet(false, true)) {
                            throw WatchedRingStoreTest.<RuntimeException>sneaky(fault);
                        }
                    };
                    watched.engine().afterStamp = beforeOpen ? throwOnce : () -> {};
                    watched.engine().beforeSwitch = beforeOpen ? () -> {} : throwOnce;
                    String what = fault + (beforeOpen ? " before opening" : " before switching");
                    publish(++generation);
                    assertTrue(waitFor(thrown::get), what + ": thrown within 10 s");
                    publish(++generation);
                    long expected = generation;
                    assertTrue(
                            waitFor(() -> watched.generation() == expected),
                            () -> what + ": the next file serves within 10 s, not " + watched.generation() + " ("
                                    + watched.lastError() + ")");
                }
            }
        }
    }

    @SuppressWarnings("unchecked")
    private static <T extends Throwable> T sneaky(Throwable t) throws T {
        throw (T) t;
    }

    /**
     * A file whose tables do not fit in the heap (simulated: an OutOfMemoryError inside the check) is
     * refused with the reason, not retried on every poll, and the next good file is switched to.
     */
    @Test
    void aFileThatRunsOutOfHeapIsRefusedAndTheNextGoodFileServes() throws Exception {
        publish(1);
        try (RingRouter watched = watch(path, 5)) {
            AtomicLong thrown = new AtomicLong();
            watched.engine().afterStamp = () -> {
                if (thrown.getAndIncrement() == 0) {
                    throw new OutOfMemoryError("Java heap space");
                }
            };
            publish(2);
            assertTrue(waitFor(() -> watched.lastError() != null), "refused within 10 s");
            assertTrue(
                    watched.lastError().startsWith("not enough heap to open and check it (Java heap space)"),
                    watched.lastError());
            Thread.sleep(50); // ten polls
            assertEquals(1, watched.generation(), "the file that ran out of heap is not retried");
            publish(3);
            assertTrue(waitFor(() -> watched.generation() == 3), "generation 3 switched to within 10 s");
            assertNull(watched.lastError());
        }
    }

    /**
     * A FIFO at the path is refused without being opened (opening one blocks until a writer comes):
     * neither {@code watch}, nor {@code checkNow}, nor the poller hangs, and the file replacing it
     * serves. The 10 s limits only detect a hang.
     */
    @Test
    void aFifoAtThePathIsRefusedUnopened() throws Exception {
        Path fifo = dir.resolve("fifo.ring");
        TestFiles.mkfifo(fifo);
        RingFileException e = assertThrows(RingFileException.class, () -> withinTenSeconds(() -> watch(fifo, 5)));
        assertTrue(e.getMessage().contains("is not a regular file"), e.getMessage());

        publish(1);
        try (RingRouter watched = watch(path, 5)) {
            RingStore first = watched.current();
            Files.delete(path);
            TestFiles.mkfifo(path);
            assertTrue(
                    waitFor(() ->
                            watched.lastError() != null && watched.lastError().contains("is not a regular file")),
                    () -> "the poller refused the FIFO within 10 s: " + watched.lastError());
            assertFalse(withinTenSeconds(watched::checkNow));
            assertSame(first, watched.current());
            Files.delete(path);
            publish(2);
            assertTrue(waitFor(() -> watched.generation() == 2), "the file replacing the FIFO switched to within 10 s");
        }
    }

    private interface Call<T> {
        T call() throws Exception;
    }

    /** Runs {@code call} on another thread and fails when it takes 10 s (a hang); rethrows what it throws. */
    private static <T> T withinTenSeconds(Call<T> call) throws Exception {
        java.util.concurrent.FutureTask<T> task = new java.util.concurrent.FutureTask<>(call::call);
        Thread.ofPlatform().daemon().name("hang detector").start(task);
        try {
            return task.get(10, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof Exception x) {
                throw x;
            }
            throw new AssertionError(e.getCause());
        } catch (java.util.concurrent.TimeoutException e) {
            throw new AssertionError("hung for 10 s");
        }
    }

    private static boolean waitFor(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (System.nanoTime() < deadline) {
            if (condition.getAsBoolean()) {
                return true;
            }
            Thread.sleep(5);
        }
        return condition.getAsBoolean();
    }

    private static void assertRefused(
            RingRouter watched, RingStore serving, Instant switched, String what, String reason) {
        long switches = watched.switches();
        assertFalse(watched.checkNow(), what + ": must be refused");
        String error = watched.lastError();
        assertNotNull(error, what + ": lastError must say why");
        assertTrue(error.contains(reason), () -> what + ": lastError should mention '" + reason + "': " + error);
        assertFalse(error.contains("\n"), what);
        assertSame(serving, watched.current(), what + ": the current generation keeps serving");
        assertEquals(serving.generation(), watched.generation(), what);
        assertEquals(switched, watched.lastSwitch(), what + ": lastSwitch unchanged");
        assertEquals(switches, watched.switches(), what);
    }

    /**
     * Every key through {@code live} answers as handle {@code h} of set {@code set} (0 = A, 1 = B): the
     * router's lookup, under a policy that gives every key handle h's version, and the ring serving.
     */
    private void assertAnswers(RingRouter router, RingRouter.Route live, int h, int set, String what) {
        RolloutPolicy before = router.policy();
        router.policy(
                HANDLE_VERSIONS.get(h).equals(RingVersion.V1) ? RolloutPolicy.NONE : RolloutPolicy.everywhere(100));
        try {
            for (int k = 0; k < KEYS; k++) {
                Backend b = live.backend(keys[k]);
                assertNotNull(b, what);
                assertEquals(expected[set][h][k], b.address(), what + ": key " + k);
                Ring ring = ringOf(live, h);
                assertEquals(
                        expected[set][h][k],
                        ring.store().backend(ring.lookup(keys[k])).address(),
                        what);
            }
        } finally {
            router.policy(before);
        }
    }
}
