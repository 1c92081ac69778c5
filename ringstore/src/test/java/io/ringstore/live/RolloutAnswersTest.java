package io.ringstore.live;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.Backend;
import io.ringstore.Ring;
import io.ringstore.RingStore;
import io.ringstore.TestRings;
import io.ringstore.family.RingVersion;
import io.ringstore.migration.RolloutPolicy;
import io.ringstore.state.HostState;
import io.ringstore.state.SharedLoad;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A route rolling out answers exactly as the code before issue 21's rollout work did
 * ({@link RolloutReference}, frozen): on a million seeded keys of 1 to 200 random bytes, in every key
 * shape (a whole {@code byte[]}, a range of one, heap, read-only heap and direct {@link ByteBuffer}s
 * with a position and limit inside a larger buffer, heap and native {@link MemorySegment}s), the key's
 * bucket, the version chosen (the router's counters) and the backend are the reference's. A digest of
 * the answers is also held to the one today's jar (commit 95cca6a) gave for the same keys and ring.
 */
class RolloutAnswersTest {
    private static final RingVersion NEW = RingVersion.v2(16);
    private static final int KEYS = 1_000_000;
    private static final int MAX_LENGTH = 200;
    private static final int PAD = 13;
    /**
     * {@link #digest} of the bucket, version and backend of the {@value #KEYS} keys of seed
     * {@code 0x21_0050} at 50 %, computed by the library's jar at commit 95cca6a (before this work)
     * through {@code RolloutPolicy.bucket} and {@code RingRouter.Route.backend(byte[])}.
     */
    private static final long TODAYS_DIGEST = -8276802415512604225L;

    @TempDir
    static Path dir;

    private static RingStore store;
    private static Ring oldRing;
    private static Ring newRing;

    /** The fleet: 200 backends, weights 1 to 3, so that the two versions' rings differ. */
    static String fleet() {
        StringBuilder text = new StringBuilder();
        for (int b = 0; b < 200; b++) {
            text.append("server 10.1.")
                    .append(b / 100)
                    .append('.')
                    .append(b % 100 + 1)
                    .append(":11211 weight=")
                    .append(1 + b % 3)
                    .append('\n');
        }
        return text.toString();
    }

    @BeforeAll
    static void setUp() throws Exception {
        Path file = dir.resolve("fleet.ring");
        TestRings.build(file, fleet(), RingVersion.V1, NEW);
        store = RingStore.open(file);
        oldRing = store.ring(Set.of(), RingVersion.V1);
        newRing = store.ring(Set.of(), NEW);
    }

    @AfterAll
    static void tearDown() {
        store.close();
    }

    private static RingRouter router(RolloutPolicy policy) throws Exception {
        return RingRouter.builder(store)
                .versions(RingVersion.V1, NEW)
                .policy(policy)
                .open();
    }

    /** One answer folded into a digest: the bucket, whether the key migrated and the backend. */
    static long digest(long digest, int bucket, boolean migrated, int backend) {
        return digest * 0x100_0000_01B3L + ((long) bucket << 17 | (migrated ? 1L << 16 : 0) | (backend + 1));
    }

    @Test
    void aMillionKeysGetTodaysBucketVersionAndBackendInEveryShape() throws Exception {
        RolloutPolicy policy = RolloutPolicy.everywhere(50);
        SplittableRandom random = new SplittableRandom(0x21_0050L);
        byte[] padded = new byte[MAX_LENGTH + 2 * PAD];
        long digest = 0;
        int migratedKeys = 0;
        try (RingRouter router = router(policy);
                RingRouter.Route route = router.route(Set.of());
                Arena arena = Arena.ofConfined()) {
            ByteBuffer direct = ByteBuffer.allocateDirect(padded.length);
            MemorySegment nativeKeys = arena.allocate(padded.length);
            for (int k = 0; k < KEYS; k++) {
                int length = random.nextInt(1, MAX_LENGTH + 1);
                byte[] key = new byte[length];
                random.nextBytes(key);
                System.arraycopy(key, 0, padded, PAD, length);
                direct.put(PAD, key);
                MemorySegment.copy(key, 0, nativeKeys, java.lang.foreign.ValueLayout.JAVA_BYTE, PAD, length);

                int bucket = RolloutReference.bucket(key, 0, length);
                boolean migrates = RolloutReference.migrates(policy, key, 0, length);
                int backend = RolloutReference.backend(policy, oldRing, newRing, key, 0, length);
                digest = digest(digest, bucket, migrates, backend);
                migratedKeys += migrates ? 1 : 0;
                if (k % 16 == 0) {
                    assertEquals(
                            bucket,
                            RolloutReference.bucketByTable(key, 0, length),
                            "the two CRC-32C of the reference, key " + k);
                }

                ByteBuffer heap = ByteBuffer.wrap(padded, PAD, length);
                ByteBuffer readOnly = heap.asReadOnlyBuffer();
                ByteBuffer directKey = direct.duplicate().position(PAD).limit(PAD + length);
                MemorySegment heapSegment = MemorySegment.ofArray(padded).asSlice(PAD, length);
                MemorySegment nativeSegment = nativeKeys.asSlice(PAD, length);

                assertEquals(bucket, RolloutPolicy.bucket(key, 0, length), "byte[] bucket, key " + k);
                assertEquals(bucket, RolloutPolicy.bucket(padded, PAD, length), "byte[] range bucket, key " + k);
                assertEquals(bucket, RolloutPolicy.bucket(heap), "heap buffer bucket, key " + k);
                assertEquals(bucket, RolloutPolicy.bucket(readOnly), "read-only buffer bucket, key " + k);
                assertEquals(bucket, RolloutPolicy.bucket(directKey), "direct buffer bucket, key " + k);
                assertEquals(bucket, RolloutPolicy.bucket(heapSegment), "heap segment bucket, key " + k);
                assertEquals(bucket, RolloutPolicy.bucket(nativeSegment), "native segment bucket, key " + k);

                long before = router.newLookups();
                String version = migrates ? "new" : "old";
                assertAnswer(backend, route.backend(key), "byte[]", k);
                assertAnswer(backend, route.backend(padded, PAD, length), "byte[] range", k);
                assertAnswer(backend, route.backend(heap), "heap buffer", k);
                assertAnswer(backend, route.backend(readOnly), "read-only buffer", k);
                assertAnswer(backend, route.backend(directKey), "direct buffer", k);
                assertAnswer(backend, route.backend(heapSegment), "heap segment", k);
                assertAnswer(backend, route.backend(nativeSegment), "native segment", k);
                assertEquals(
                        migrates ? 7 : 0,
                        router.newLookups() - before,
                        "version chosen (" + version + ") for key " + k);
                assertEquals(PAD, heap.position(), "the buffer is not moved");
                assertEquals(PAD, directKey.position(), "the buffer is not moved");
                assertEquals(PAD + length, directKey.limit(), "the buffer is not moved");
            }
            assertEquals(7L * (KEYS - migratedKeys), router.oldLookups());
        }
        assertTrue(Math.abs(migratedKeys - KEYS / 2) < 5_000, migratedKeys + " of " + KEYS + " keys migrated at 50 %");
        assertEquals(TODAYS_DIGEST, digest, "answers differ from today's jar's");
    }

    /**
     * Failover ({@code select}, with a predicate refusing the key's first backend) and the host-state
     * choices ({@code choose}, {@code chooseAndAcquire}) in every shape answer as the reference's
     * version chosen, then the byte[] key on that version's ring (choices with nothing drained or in
     * flight: the ring's backend), and count that version.
     */
    @Test
    void failoverAndChoicesGetTodaysVersionAndBackendInEveryShape() throws Exception {
        RolloutPolicy policy = RolloutPolicy.everywhere(50);
        SplittableRandom random = new SplittableRandom(0x21_0051L);
        byte[] padded = new byte[MAX_LENGTH + 2 * PAD];
        Path file = dir.resolve("fleet.ring");
        try (RingRouter router = router(policy);
                RingRouter.Route route = router.route(Set.of());
                HostState state = HostState.open(file, HostState.Options.DEFAULTS.withCapacity(256, 4));
                Arena arena = Arena.ofConfined()) {
            SharedLoad load = SharedLoad.open(state, () -> store, null);
            ByteBuffer direct = ByteBuffer.allocateDirect(padded.length);
            MemorySegment nativeKeys = arena.allocate(padded.length);
            for (int k = 0; k < 100_000; k++) {
                int length = random.nextInt(1, MAX_LENGTH + 1);
                byte[] key = new byte[length];
                random.nextBytes(key);
                System.arraycopy(key, 0, padded, PAD, length);
                direct.put(PAD, key);
                MemorySegment.copy(key, 0, nativeKeys, java.lang.foreign.ValueLayout.JAVA_BYTE, PAD, length);
                boolean migrates = RolloutReference.migrates(policy, key, 0, length);
                int backend = RolloutReference.backend(policy, oldRing, newRing, key, 0, length);
                Ring chosen = migrates ? newRing : oldRing;
                Predicate<Backend> notFirst = b -> b.index() != backend;
                Backend failover = chosen.selectBackend(key, 0, length, Ring.NGINX_MAX_POINTS, notFirst);
                int expectedFailover = failover == null ? Ring.NO_BACKEND : failover.index();

                Map<String, Object> shapes = new LinkedHashMap<>();
                shapes.put("heap buffer", ByteBuffer.wrap(padded, PAD, length));
                shapes.put(
                        "read-only buffer", ByteBuffer.wrap(padded, PAD, length).asReadOnlyBuffer());
                shapes.put("direct buffer", direct.duplicate().position(PAD).limit(PAD + length));
                shapes.put(
                        "read-only direct buffer",
                        direct.duplicate().position(PAD).limit(PAD + length).asReadOnlyBuffer());
                shapes.put("heap segment", MemorySegment.ofArray(padded).asSlice(PAD, length));
                shapes.put("native segment", nativeKeys.asSlice(PAD, length));
                long before = router.newLookups();
                for (Map.Entry<String, Object> shape : shapes.entrySet()) {
                    String name = shape.getKey();
                    if (shape.getValue() instanceof ByteBuffer b) {
                        assertAnswer(
                                expectedFailover,
                                route.select(b, Ring.NGINX_MAX_POINTS, notFirst),
                                "select, " + name,
                                k);
                        assertAnswer(backend, route.choose(b, load), "choose, " + name, k);
                        assertAnswer(
                                backend,
                                released(load, route.chooseAndAcquire(b, load)),
                                "chooseAndAcquire, " + name,
                                k);
                    } else {
                        MemorySegment m = (MemorySegment) shape.getValue();
                        assertAnswer(
                                expectedFailover,
                                route.select(m, Ring.NGINX_MAX_POINTS, notFirst),
                                "select, " + name,
                                k);
                        assertAnswer(backend, route.choose(m, load), "choose, " + name, k);
                        assertAnswer(
                                backend,
                                released(load, route.chooseAndAcquire(m, load)),
                                "chooseAndAcquire, " + name,
                                k);
                    }
                }
                assertEquals(
                        migrates ? 3L * shapes.size() : 0, router.newLookups() - before, "version chosen for key " + k);
            }
        }
    }

    private static Backend released(SharedLoad load, Backend b) {
        if (b != null) {
            load.release(load.token(b));
        }
        return b;
    }

    private static void assertAnswer(int expected, Backend got, String shape, int k) {
        assertEquals(expected, got == null ? Ring.NO_BACKEND : got.index(), shape + " backend, key " + k);
    }

    /** Keys in a mapped file (read without the intrinsic) get the reference's bucket and backend too. */
    @Test
    void keysInAMappedFileAnswerAsTheReference() throws Exception {
        SplittableRandom random = new SplittableRandom(0x21_3A9L);
        int count = 20_000;
        byte[][] keys = new byte[count][];
        java.io.ByteArrayOutputStream all = new java.io.ByteArrayOutputStream();
        for (int k = 0; k < count; k++) {
            keys[k] = new byte[random.nextInt(1, MAX_LENGTH + 1)];
            random.nextBytes(keys[k]);
            all.writeBytes(keys[k]);
        }
        Path file = dir.resolve("keys.bin");
        java.nio.file.Files.write(file, all.toByteArray());
        RolloutPolicy policy = RolloutPolicy.everywhere(50);
        try (RingRouter router = router(policy);
                RingRouter.Route route = router.route(Set.of());
                Arena arena = Arena.ofConfined();
                java.nio.channels.FileChannel channel = java.nio.channels.FileChannel.open(file)) {
            MemorySegment mapped = channel.map(java.nio.channels.FileChannel.MapMode.READ_ONLY, 0, all.size(), arena);
            assertTrue(mapped.isMapped());
            long at = 0;
            for (int k = 0; k < count; k++) {
                byte[] key = keys[k];
                MemorySegment slice = mapped.asSlice(at, key.length);
                at += key.length;
                assertEquals(
                        RolloutReference.bucket(key, 0, key.length),
                        RolloutPolicy.bucket(slice),
                        "mapped bucket, key " + k);
                assertAnswer(
                        RolloutReference.backend(policy, oldRing, newRing, key, 0, key.length),
                        route.backend(slice),
                        "mapped segment",
                        k);
            }
        }
    }

    /** At 0 %, 100 %, the smallest and largest fractions and out of scope, no shape's version or backend moves either. */
    @Test
    void everyFractionAndScopeAnswersAsTheReference() throws Exception {
        RolloutPolicy[] policies = {
            RolloutPolicy.NONE,
            RolloutPolicy.everywhere(100),
            RolloutPolicy.everywhere(0.01),
            RolloutPolicy.everywhere(99.99),
            RolloutPolicy.everywhere(37.42),
            RolloutPolicy.in(50, Set.of("ams"), "fra"),
            RolloutPolicy.in(50, Set.of("ams", "fra"), "fra")
        };
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment nativeKeys = arena.allocate(MAX_LENGTH);
            ByteBuffer direct = ByteBuffer.allocateDirect(MAX_LENGTH);
            for (RolloutPolicy policy : policies) {
                SplittableRandom random = new SplittableRandom(policy.hashCode());
                try (RingRouter router = router(RolloutPolicy.NONE);
                        RingRouter.Route route = router.route(Set.of())) {
                    router.policy(policy); // as a running router gets it
                    int migrated = 0;
                    for (int k = 0; k < 100_000; k++) {
                        int length = random.nextInt(1, MAX_LENGTH + 1);
                        byte[] key = new byte[length];
                        random.nextBytes(key);
                        direct.clear().put(key).flip();
                        MemorySegment nativeKey = nativeKeys.asSlice(0, length).copyFrom(MemorySegment.ofArray(key));
                        int backend = RolloutReference.backend(policy, oldRing, newRing, key, 0, length);
                        migrated += RolloutReference.migrates(policy, key, 0, length) ? 1 : 0;
                        assertAnswer(backend, route.backend(key), policy + " byte[]", k);
                        assertAnswer(backend, route.backend(direct), policy + " direct buffer", k);
                        assertAnswer(backend, route.backend(nativeKey), policy + " native segment", k);
                    }
                    assertEquals(3L * migrated, router.newLookups(), policy + ": keys on the new version");
                    assertEquals(3L * (100_000 - migrated), router.oldLookups(), policy + ": keys on the old version");
                }
            }
        }
    }
}
