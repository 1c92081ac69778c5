package io.ringstore;

import static io.ringstore.TestRings.build;
import static io.ringstore.TestRings.builder;
import static io.ringstore.TestRings.parse;
import static io.ringstore.TestRings.pointBackends;
import static io.ringstore.TestRings.tempFiles;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.builder.BackendList;
import io.ringstore.builder.BackendsFileException;
import io.ringstore.builder.BuildResult;
import io.ringstore.builder.RingBuilder;
import io.ringstore.family.Families;
import io.ringstore.family.RingVersion;
import io.ringstore.internal.format.RingFileDescriptor;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.BitSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.PrimitiveIterator;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.zip.CRC32;
import net.openhft.chronicle.testframework.Combination;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RingStoreTest {
    private static final RingVersion V2_16 = RingVersion.v2(16);

    /**
     * Feature sets chosen so that several masks select the same backends ({eu} and {ssd,eu} select
     * backends 0 and 1; {gpu} and {ssd,gpu} select 2) and some select none ({eu,gpu}).
     */
    private static final String FEATURED = """
            upstream pool {
                server 127.0.0.1:8080 features=ssd,eu
                server 127.0.0.2:8080 features=eu,ssd,old weight=2
                server 127.0.0.3:8080 features=gpu,ssd
                server [::1]:8080
                server 127.0.0.5:8080 features=old
            }
            """;

    // ---- rings and features ----

    @Test
    void everyFeatureSetSelectsExactlyTheBackendsHavingAllItsFeatures(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("featured.ring");
        BuildResult result = build(file, FEATURED, RingVersion.V1, V2_16);
        BackendList input = parse(FEATURED);
        try (RingStore store = RingStore.open(file)) {
            assertEquals(List.of("ssd", "eu", "old", "gpu"), store.features());
            assertEquals(List.of(RingVersion.V1, V2_16), store.versions());
            assertEquals(2 * 16, store.rings().size());
            assertEquals(result.rings(), store.rings().size());

            List<Set<String>> combinations = Combination.of(store.features()).toList();
            assertEquals(16, combinations.size());
            Set<Long> offsets = new HashSet<>();
            int empty = 0;
            for (RingVersion version : store.versions()) {
                Map<BitSet, Long> offsetOfMembers = new HashMap<>();
                for (Set<String> wanted : combinations) {
                    Ring ring = store.ring(wanted, version);
                    assertEquals(version, ring.version());
                    assertEquals(wanted, ring.features());
                    BitSet expected = new BitSet();
                    for (Backend b : input.backends()) {
                        if (b.features().containsAll(wanted)) {
                            expected.set(b.index());
                        }
                    }
                    assertEquals(expected, pointBackends(ring), () -> version + " " + wanted);
                    if (expected.isEmpty()) {
                        empty++;
                        assertTrue(ring.isEmpty());
                        assertEquals(0, segmentOffset(ring));
                        continue;
                    }
                    long weights = expected.stream()
                            .mapToLong(i -> input.backend(i).weight())
                            .sum();
                    assertTrue(ring.pointCount() <= weights * version.pointMultiple());
                    assertTrue(
                            ring.pointCount() >= weights * version.pointMultiple() - 2, "at most a collision or two");
                    // Same backends, same segment; different backends, a different segment.
                    Long seen = offsetOfMembers.putIfAbsent(expected, segmentOffset(ring));
                    if (seen != null) {
                        assertEquals(
                                seen,
                                segmentOffset(ring),
                                () -> "rings with backends " + expected + " share a segment");
                    } else {
                        assertTrue(
                                offsets.add(segmentOffset(ring)),
                                () -> version + " " + wanted + " reuses another backend set's segment");
                    }
                }
            }
            assertEquals(offsets.size(), store.segmentCount());
            assertEquals(offsets.size(), result.segments());
            assertEquals(empty, result.emptyRings());
            assertTrue(empty > 0, "the fixture has empty rings");
            // Rings of the fixture that must share: {eu} and {ssd,eu} are backends 0 and 1, {ssd} adds 2.
            Ring eu = store.ring(Set.of("eu"));
            assertEquals(segmentOffset(eu), segmentOffset(store.ring(Set.of("eu", "ssd"))));
            assertEquals(segmentOffset(store.ring(Set.of("gpu"))), segmentOffset(store.ring(Set.of("gpu", "ssd"))));
            assertNotEquals(segmentOffset(eu), segmentOffset(store.ring(Set.of("ssd"))));
            assertNotEquals(segmentOffset(eu), segmentOffset(store.ring(Set.of())));
            assertNotEquals(segmentOffset(eu), segmentOffset(store.ring(Set.of("eu"), V2_16)));
            assertEquals(RingVersion.V1, eu.version(), "ring(features) is the first version");
            store.verify();
        }
    }

    @Test
    void ringsListIsVersionsThenMasks(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("order.ring");
        build(file, FEATURED, V2_16, RingVersion.V1);
        try (RingStore store = RingStore.open(file)) {
            List<Ring> rings = store.rings();
            for (int i = 0; i < rings.size(); i++) {
                Ring r = rings.get(i);
                assertEquals(store.versions().get(i / 16), r.version());
                assertEquals(i % 16, r.featureMask());
                assertEquals(r, store.ring(r.features(), r.version()), "ring(features, version) finds the same object");
            }
            assertEquals(V2_16, store.ring(Set.of()).version(), "the first version added is the default");
        }
    }

    @Test
    void unknownFeatureOrVersionIsAnIllegalArgument(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("f.ring");
        build(file, FEATURED);
        try (RingStore store = RingStore.open(file)) {
            IllegalArgumentException e =
                    assertThrows(IllegalArgumentException.class, () -> store.ring(Set.of("ssd", "nvme")));
            assertTrue(e.getMessage().contains("'nvme'"), e.getMessage());
            e = assertThrows(IllegalArgumentException.class, () -> store.ring(Set.of(), RingVersion.v2(160)));
            assertTrue(e.getMessage().contains("v2:160"), e.getMessage());
        }
    }

    @Test
    void emptyRingsAnswerNoBackendWithoutThrowing(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("empty.ring");
        build(file, "server 127.0.0.1 features=a\nserver 127.0.0.2 features=b\n", RingVersion.V1, RingVersion.v2(1));
        try (RingStore store = RingStore.open(file)) {
            for (RingVersion v : store.versions()) {
                Ring ring = store.ring(Set.of("a", "b"), v);
                assertTrue(ring.isEmpty());
                assertEquals(0, ring.pointCount());
                for (int hash : new int[] {0, 1, -1, Integer.MIN_VALUE, Integer.MAX_VALUE, 0x12345678}) {
                    assertEquals(Ring.NO_BACKEND, ring.lookupHash(hash));
                    assertEquals(-1, ring.pointIndex(hash));
                }
                byte[] key = "/some/key".getBytes(StandardCharsets.UTF_8);
                assertEquals(Ring.NO_BACKEND, ring.lookup(key));
                assertEquals(Ring.NO_BACKEND, ring.lookup(key, 1, 3));
                assertEquals(Ring.NO_BACKEND, ring.lookup(new byte[0]));
                assertFalse(ring.points(key).hasNext());
                assertFalse(ring.backends(key).hasNext());
                assertThrows(
                        java.util.NoSuchElementException.class,
                        () -> ring.backends(key).nextInt());
                assertThrows(IndexOutOfBoundsException.class, () -> ring.pointHash(0));
                assertEquals(1, pointBackends(store.ring(Set.of("a"), v)).cardinality());
            }
            store.verify();
        }
    }

    @Test
    void hashesPastTheLastPointWrapToTheFirst(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("wrap.ring");
        build(
                file,
                "server 127.0.0.1:1 weight=3\nserver 127.0.0.2:2\nserver [::2]:3\n",
                RingVersion.V1,
                RingVersion.v2(2));
        try (RingStore store = RingStore.open(file)) {
            for (Ring ring : store.rings()) {
                int n = ring.pointCount();
                assertTrue(n > 1);
                int first = (int) ring.pointHash(0); // int arithmetic below: a 32-bit ring reads the low 32 bits
                int last = (int) ring.pointHash(n - 1);
                assertTrue(Integer.compareUnsigned(first, last) < 0);
                // On, just before and just after points.
                assertEquals(ring.pointBackend(0), ring.lookupHash(first));
                assertEquals(ring.pointBackend(0), ring.lookupHash(0));
                assertEquals(ring.pointBackend(n - 1), ring.lookupHash(last));
                assertEquals(ring.pointBackend(n - 1), ring.lookupHash(ring.pointHash(n - 2) + 1));
                assertEquals(ring.pointBackend(1), ring.lookupHash(first + 1));
                // Past the last point: point 0.
                assertTrue(last != -1, "a point at 0xFFFFFFFF would leave nothing past it");
                assertEquals(0, ring.pointIndex(last + 1));
                assertEquals(ring.pointBackend(0), ring.lookupHash(last + 1));
                assertEquals(ring.pointBackend(0), ring.lookupHash(0xFFFF_FFFF));
                assertEquals(0, ring.pointIndex(0xFFFF_FFFF));
                assertEquals(n - 1, ring.pointIndex(last));
            }
        }
    }

    @Test
    void lookupHashesTheKeyWithCrc32(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("keys.ring");
        build(file, "server 127.0.0.1\nserver 127.0.0.2\nserver 127.0.0.3 weight=5\n");
        SplittableRandom random = new SplittableRandom(7);
        try (RingStore store = RingStore.open(file)) {
            Ring ring = store.ring(Set.of());
            for (int i = 0; i < 1000; i++) {
                byte[] buf = new byte[random.nextInt(40) + 2];
                random.nextBytes(buf);
                CRC32 crc = new CRC32();
                crc.update(buf);
                int h = (int) crc.getValue();
                assertEquals(Integer.toUnsignedLong(h), ring.hash(buf));
                assertEquals(ring.lookupHash(h), ring.lookup(buf));
                crc.reset();
                crc.update(buf, 1, buf.length - 2);
                assertEquals(ring.lookupHash((int) crc.getValue()), ring.lookup(buf, 1, buf.length - 2));
                PrimitiveIterator.OfInt order = ring.backends(buf);
                assertEquals(ring.lookup(buf), order.nextInt());
                PrimitiveIterator.OfInt points = ring.points(buf);
                assertEquals(ring.lookup(buf), points.nextInt());
            }
        }
    }

    @Test
    void backendsComeBackAsWritten(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("b.ring");
        BuildResult result = build(file, FEATURED);
        BackendList input = parse(FEATURED);
        try (RingStore store = RingStore.open(file)) {
            assertEquals(input.size(), store.backendCount());
            assertEquals(input.size(), result.backends());
            for (int i = 0; i < input.size(); i++) {
                Backend in = input.backend(i);
                Backend out = store.backend(i);
                assertEquals(i, out.index());
                assertEquals(in.address(), out.address());
                assertEquals(in.weight(), out.weight());
                assertEquals(in.features(), out.features());
                assertEquals(in.upstreamAddress(), out.upstreamAddress());
                assertEquals(in.socketAddress(), out.socketAddress());
                assertEquals(0, out.line());
            }
            assertEquals(Files.size(file), store.fileSize());
            assertEquals(Files.size(file), result.fileBytes());
            assertEquals(file, store.path());
        }
    }

    @Test
    void closedStoresRefuseLookups(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("c.ring");
        build(file, "server 127.0.0.1\n");
        RingStore store = RingStore.open(file);
        Ring ring = store.ring(Set.of());
        ring.lookupHash(5);
        store.close();
        store.close(); // idempotent
        assertThrows(IllegalStateException.class, () -> ring.lookupHash(5));
    }

    // ---- builder arguments ----

    @Test
    void builderRefusesBadArguments() throws Exception {
        RingBuilder b = builder("server 127.0.0.1");
        b.version(RingVersion.V1);
        assertThrows(IllegalArgumentException.class, () -> b.version(RingVersion.V1));
        assertThrows(IllegalArgumentException.class, () -> b.generation(-1));
        assertThrows(IllegalArgumentException.class, () -> new RingVersion(Families.NGINX, 16));
        assertThrows(IllegalArgumentException.class, () -> RingVersion.v2(0));
        RingBuilder many = builder("server 127.0.0.1");
        for (int k = 1; k <= 16; k++) {
            many.version(RingVersion.v2(k));
        }
        assertThrows(IllegalArgumentException.class, () -> many.version(RingVersion.v2(17)));
    }

    // ---- point-count overflow ----

    @Test
    void tooManyPointsForOneBackendFailAtItsLineAndWriteNothing(@TempDir Path dir) throws Exception {
        // 13,421,773 × 160 = 2,147,483,680 > Integer.MAX_VALUE - 8.
        String text = "server 127.0.0.1\n\nserver 127.0.0.2 weight=13421773\nserver 127.0.0.3\n";
        Path file = dir.resolve("over.ring");
        BackendsFileException e = assertThrows(BackendsFileException.class, () -> build(file, text));
        assertEquals(3, e.line());
        assertTrue(e.reason().contains("13421773") && e.reason().contains("160"), e.reason());
        assertFalse(Files.exists(file));
        assertEquals(List.of(), tempFiles(dir));
        try (var files = Files.list(dir)) {
            assertEquals(0, files.count(), "nothing at all is left in the directory");
        }
    }

    @Test
    void tooManyPointsSummedFailAtTheLineThatOverflowsAndKeepTheOldFile(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("sum.ring");
        build(file, "server 127.0.0.9\n");
        byte[] before = Files.readAllBytes(file);
        // Each alone fits (7e6 × 160 = 1.12e9), the second brings the v1 ring to 2.24e9. v2:1 alone would fit.
        String text = "server 127.0.0.1 weight=7000000\n# comment\nserver 127.0.0.2 weight=7000000\n";
        BackendsFileException e =
                assertThrows(BackendsFileException.class, () -> build(file, text, RingVersion.v2(1), RingVersion.V1));
        assertEquals(3, e.line());
        assertTrue(e.reason().contains("v1"), e.reason());
        assertArrayEquals(before, Files.readAllBytes(file));
        assertEquals(List.of(), tempFiles(dir));

        // A large v2 point multiple overflows where v1 would not.
        e = assertThrows(
                BackendsFileException.class,
                () -> build(
                        file,
                        "server 127.0.0.1 weight=2\nserver 127.0.0.2 weight=2\n",
                        RingVersion.V1,
                        RingVersion.v2(600_000_000)));
        assertEquals(2, e.line());
        assertTrue(e.reason().contains("v2:600000000"), e.reason());
        assertArrayEquals(before, Files.readAllBytes(file));
        assertEquals(List.of(), tempFiles(dir));
    }

    // ---- generations and reproducibility ----

    @Test
    void sameInputAndGenerationGiveIdenticalBytes(@TempDir Path dir) throws Exception {
        Path a = dir.resolve("a.ring");
        Path b = dir.resolve("b.ring");
        builder(FEATURED, RingVersion.V1, V2_16, RingVersion.v2(1))
                .generation(42)
                .build(a);
        builder(FEATURED, RingVersion.V1, V2_16, RingVersion.v2(1))
                .generation(42)
                .build(b);
        assertEquals(-1, Files.mismatch(a, b));
        // Rebuilding at the same path with the same generation also reproduces the bytes.
        byte[] first = Files.readAllBytes(a);
        builder(FEATURED, RingVersion.V1, V2_16, RingVersion.v2(1))
                .generation(42)
                .build(a);
        assertArrayEquals(first, Files.readAllBytes(a));
        // A different generation changes the file.
        builder(FEATURED, RingVersion.V1, V2_16, RingVersion.v2(1))
                .generation(43)
                .build(b);
        assertNotEquals(-1, Files.mismatch(a, b));
        try (RingStore sa = RingStore.open(a);
                RingStore sb = RingStore.open(b)) {
            assertArrayEquals(sa.inputDigest(), sb.inputDigest(), "same input, same digest");
            assertEquals(42, sa.generation());
            assertEquals(43, sb.generation());
        }
    }

    @Test
    void differentInputGivesADifferentDigest(@TempDir Path dir) throws Exception {
        Path a = dir.resolve("a.ring");
        Path b = dir.resolve("b.ring");
        build(a, "server 127.0.0.1\nserver 127.0.0.2\n");
        build(b, "server 127.0.0.1\nserver 127.0.0.2 weight=2\n");
        try (RingStore sa = RingStore.open(a);
                RingStore sb = RingStore.open(b)) {
            assertFalse(java.util.Arrays.equals(sa.inputDigest(), sb.inputDigest()));
            assertEquals(32, sa.inputDigest().length);
        }
    }

    @Test
    void generationCountsRebuildsAndCanBeSet(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("gen.ring");
        String text = "server 127.0.0.1\n";
        for (long expected = 1; expected <= 3; expected++) {
            assertEquals(expected, build(file, text).generation());
            try (RingStore store = RingStore.open(file)) {
                assertEquals(expected, store.generation());
            }
        }
        assertEquals(100, builder(text).generation(100).build(file).generation());
        assertEquals(101, build(file, text).generation());
        assertEquals(0, builder(text).generation(0).build(file).generation());
        assertEquals(1, build(file, text).generation());
        try (RingStore store = RingStore.open(file)) {
            assertEquals(1, store.generation());
        }
        assertEquals(List.of(), tempFiles(dir));
    }

    @Test
    void generationNeverGoesNegative(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("max.ring");
        String text = "server 127.0.0.1\n";
        assertEquals(
                Long.MAX_VALUE,
                builder(text).generation(Long.MAX_VALUE).build(file).generation());
        // After the largest generation the next cannot be one more: the builder refuses, naming the
        // generation field, instead of wrapping to a negative number; the old file stays.
        byte[] before = Files.readAllBytes(file);
        RingFileException e = assertThrows(RingFileException.class, () -> build(file, text));
        assertEquals(file, e.path());
        assertEquals(RingFileDescriptor.GENERATION_OFFSET, e.offset());
        assertTrue(e.reason().contains("generation " + Long.MAX_VALUE + " cannot go up by one"), e.reason());
        assertArrayEquals(before, Files.readAllBytes(file));
        assertEquals(List.of(), tempFiles(dir));
    }

    @Test
    void backendsCannotBeChangedThroughTheStore(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("r.ring");
        build(file, FEATURED);
        try (RingStore store = RingStore.open(file)) {
            List<Backend> backends = store.backends();
            Backend first = backends.getFirst();
            assertThrows(UnsupportedOperationException.class, () -> backends.add(first));
            assertThrows(UnsupportedOperationException.class, () -> backends.set(0, backends.get(1)));
            assertThrows(UnsupportedOperationException.class, backends::clear);
            assertEquals(first, store.backend(0));
        }
    }

    @Test
    void rebuildingOverACorruptFileNeedsAGeneration(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("corrupt.ring");
        build(file, "server 127.0.0.1\n");
        byte[] corrupt = Files.readAllBytes(file);
        corrupt[0] ^= 0x20; // bad magic
        Files.write(file, corrupt);
        RingFileException e = assertThrows(RingFileException.class, () -> build(file, "server 127.0.0.2\n"));
        assertTrue(e.getMessage().contains(file.toString()), e.getMessage());
        assertTrue(e.reason().contains("generation"), e.reason());
        assertArrayEquals(corrupt, Files.readAllBytes(file), "the old file is untouched");
        assertEquals(List.of(), tempFiles(dir));

        Files.writeString(file, "not a ring file at all");
        assertThrows(RingFileException.class, () -> build(file, "server 127.0.0.2\n"));
        assertEquals("not a ring file at all", Files.readString(file));

        assertEquals(7, builder("server 127.0.0.2\n").generation(7).build(file).generation());
        try (RingStore store = RingStore.open(file)) {
            assertEquals("127.0.0.2", store.backend(0).address());
        }
        assertEquals(List.of(), tempFiles(dir));
    }

    // ---- atomic publication ----

    @Test
    void openStoresKeepTheirMappingWhileTheFileIsReplaced(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("live.ring");
        String oldText = "server 127.0.0.1\nserver 127.0.0.2\nserver 127.0.0.3\n";
        build(file, oldText, RingVersion.V1, V2_16);
        byte[][] keys = new byte[2000][];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = ("/object/" + i).getBytes(StandardCharsets.US_ASCII);
        }
        try (RingStore old = RingStore.open(file)) {
            Ring ring = old.ring(Set.of());
            int[] expected = new int[keys.length];
            for (int i = 0; i < keys.length; i++) {
                expected[i] = ring.lookup(keys[i]);
            }
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong rounds = new AtomicLong();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Thread reader = new Thread(() -> {
                try {
                    while (!stop.get()) {
                        for (int i = 0; i < keys.length; i++) {
                            int got = ring.lookup(keys[i]);
                            if (got != expected[i]) {
                                throw new AssertionError("key " + i + ": " + got + " instead of " + expected[i]);
                            }
                        }
                        rounds.incrementAndGet();
                    }
                } catch (Throwable t) {
                    failure.set(t);
                }
            });
            reader.start();
            try {
                for (int round = 0; round < 6; round++) {
                    String newText = "server 127.0.1." + round + "\nserver [::1]:" + (9000 + round) + " weight=2\n";
                    BuildResult r = build(file, newText, RingVersion.V1, V2_16);
                    assertEquals(round + 2, r.generation());
                    try (RingStore fresh = RingStore.open(file)) {
                        assertEquals("127.0.1." + round, fresh.backend(0).address());
                        assertEquals(2, fresh.backendCount());
                    }
                    assertEquals(List.of(), tempFiles(dir));
                }
                while (rounds.get() < 3 && failure.get() == null) {
                    Thread.onSpinWait();
                }
            } finally {
                stop.set(true);
                reader.join();
            }
            assertNull(failure.get());
            // The old mapping still describes the old file.
            assertEquals(1, old.generation());
            assertEquals(3, old.backendCount());
            assertEquals("127.0.0.3", old.backend(2).address());
            old.verify();
            for (int i = 0; i < keys.length; i++) {
                assertEquals(expected[i], ring.lookup(keys[i]));
            }
        }
    }

    @Test
    void aFailedPublishLeavesNoTemporaryFile(@TempDir Path dir) throws Exception {
        // The target is a non-empty directory: the temporary file is written, then the rename fails.
        Path target = dir.resolve("occupied");
        Files.createDirectory(target);
        Files.writeString(target.resolve("keep"), "x");
        assertThrows(
                IOException.class,
                () -> builder("server 127.0.0.1\n").generation(1).build(target));
        assertEquals(List.of(), tempFiles(dir));
        assertTrue(Files.isDirectory(target));
        assertEquals("x", Files.readString(target.resolve("keep")));
        try (var files = Files.list(dir)) {
            assertEquals(List.of(target), files.toList());
        }
    }

    @Test
    void buildResultDescribesTheFile(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("r.ring");
        BuildResult r = build(file, FEATURED, RingVersion.V1, V2_16);
        assertEquals(file, r.path());
        assertEquals(1, r.generation());
        assertEquals(5, r.backends());
        assertEquals(List.of("ssd", "eu", "old", "gpu"), r.features());
        assertEquals(List.of(RingVersion.V1, V2_16), r.versions());
        assertEquals(32, r.rings());
        assertEquals(Files.size(file), r.fileBytes());
        long points = 0;
        Set<Long> seen = new HashSet<>();
        try (RingStore store = RingStore.open(file)) {
            for (Ring ring : store.rings()) {
                if (!ring.isEmpty() && seen.add(segmentOffset(ring))) {
                    points += ring.pointCount();
                }
            }
        }
        assertEquals(points, r.points());
        assertTrue(r.bytesPerPoint() >= 6, "a point takes 6 bytes: " + r.bytesPerPoint());
    }

    @Test
    void publishedFilesAreReadableByOtherUsersAndKeepThePermissionsTheyReplace(@TempDir Path dir) throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(
                dir.getFileSystem().supportedFileAttributeViews().contains("posix"));
        Path file = dir.resolve("perm.ring");
        build(file, "server 127.0.0.1\n");
        assertEquals(
                java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"),
                java.nio.file.Files.getPosixFilePermissions(file),
                "a new ring file must be readable by router processes of any user");
        java.nio.file.Files.setPosixFilePermissions(
                file, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r-----"));
        build(file, "server 127.0.0.2\n");
        assertEquals(
                java.nio.file.attribute.PosixFilePermissions.fromString("rw-r-----"),
                java.nio.file.Files.getPosixFilePermissions(file),
                "a replacement keeps the permissions of the file it replaces");
    }

    /** Where a ring's points are (0 for an empty ring): rings with equal offsets share points. */
    private static long segmentOffset(Ring ring) {
        return ring.store().layout().segmentOf(ring).offset();
    }
}
