package io.ringstore;

import static io.ringstore.TestRings.build;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.ringstore.family.RingVersion;
import io.ringstore.internal.format.RingFileDescriptor;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.PrimitiveIterator;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Damaged ring files: every truncation, a flipped byte at every offset, random garbles. Opening must
 * either succeed or throw {@link RingFileException}, never anything else; what opened must answer
 * lookups with -1 or a valid backend and let {@link RingStore#verify()} find damaged points.
 */
class CorruptFileTest {
    private static final String BACKENDS = """
            server 127.0.0.1:8080 features=a
            server 127.0.0.2:8080 features=a,b
            server [::1]:8080
            """;
    private static final int[] PROBES = {0, 1, -1, 0x7FFF_FFFF, 0x8000_0000, 0x1234_5678, 0xDEAD_BEEF, 0x0F0F_0F0F};

    @TempDir
    Path dir;

    private Path original;
    private byte[] good;
    private long metadataEnd; // the metadata checksum sits here
    private long[][] segments; // {offset, length} of every non-empty segment
    private int[][] goodAnswers; // per ring, per probe

    @BeforeEach
    void buildFixture() throws Exception {
        original = dir.resolve("good.ring");
        build(original, BACKENDS, RingVersion.V1, RingVersion.v2(4));
        good = Files.readAllBytes(original);
        ByteBuffer header = ByteBuffer.wrap(good).order(ByteOrder.LITTLE_ENDIAN);
        metadataEnd = header.getLong(RingFileDescriptor.RING_INDEX_OFFSET_OFFSET)
                + header.getLong(RingFileDescriptor.RING_INDEX_LENGTH_OFFSET);
        try (RingStore store = RingStore.open(original)) {
            store.verify();
            assertEquals(2, store.features().size());
            assertEquals(2, store.versions().size());
            Map<Long, Long> lengths = new TreeMap<>();
            for (Ring r : store.rings()) {
                if (!r.isEmpty()) {
                    lengths.put(
                            r.store().layout().segmentOf(r).offset(),
                            (long) r.pointCount() * RingFileDescriptor.POINT_LENGTH);
                }
            }
            segments = lengths.entrySet().stream()
                    .map(e -> new long[] {e.getKey(), e.getValue()})
                    .toArray(long[][]::new);
            goodAnswers = answers(store);
        }
        assertTrue(segments.length >= 4, "fixture has several segments per version");
    }

    private static int[][] answers(RingStore store) {
        int[][] out = new int[store.rings().size()][];
        for (int i = 0; i < out.length; i++) {
            Ring ring = store.rings().get(i);
            out[i] = Arrays.stream(PROBES).map(ring::lookupHash).toArray();
        }
        return out;
    }

    private enum Region {
        METADATA,
        SEGMENT,
        PADDING
    }

    private Region regionOf(long offset) {
        if (offset < metadataEnd + RingFileDescriptor.METADATA_CRC_LENGTH) {
            return Region.METADATA;
        }
        for (long[] s : segments) {
            if (offset >= s[0] && offset < s[0] + s[1]) {
                return Region.SEGMENT;
            }
        }
        return Region.PADDING;
    }

    /** Writes {@code bytes} to the trial file and opens it: the store, or null after a well-formed RingFileException. */
    private RingStore openDamaged(Path file, byte[] bytes, String what) throws IOException {
        Files.write(file, bytes);
        return openDamaged(file, bytes.length, what);
    }

    /** Opens the damaged file as it is on disk, {@code size} bytes. */
    private static RingStore openDamaged(Path file, long size, String what) {
        try {
            return RingStore.open(file);
        } catch (RingFileException e) {
            checkMessage(e, file, size, what);
            // Found by a check of the reader's own, not by a runtime exception caught and wrapped.
            assertNull(e.getCause(), () -> what + ": " + e.getMessage());
            return null;
        } catch (Throwable t) {
            throw new AssertionError(what + ": open threw " + t + " instead of RingFileException", t);
        }
    }

    private static void checkMessage(RingFileException e, Path file, long size, String what) {
        assertEquals(file, e.path(), what);
        assertTrue(
                e.getMessage().contains(file.toString()), () -> what + ": message lacks the path: " + e.getMessage());
        if (e.offset() >= 0) {
            assertTrue(
                    e.offset() <= size, () -> what + ": offset " + e.offset() + " beyond the file: " + e.getMessage());
            assertTrue(
                    e.getMessage().contains("at byte " + e.offset()),
                    () -> what + ": message lacks the offset: " + e.getMessage());
        }
        assertTrue(e.reason() != null && !e.reason().isBlank(), what);
    }

    /** What may be asked of any store that opened: -1 or a valid index, RingFileException from verify. */
    private static boolean useSafely(RingStore store, Path file, String what) {
        int backends = store.backendCount();
        for (Ring ring : store.rings()) {
            for (int probe : PROBES) {
                int b = ring.lookupHash(probe);
                if (b < -1 || b >= backends) {
                    fail(what + ": lookupHash(" + probe + ") = " + b + " with " + backends + " backends on " + ring);
                }
            }
            for (int i = 0; i < ring.pointCount(); i += 97) {
                int b = ring.lookupHash(ring.pointHash(i));
                assertTrue(b >= -1 && b < backends, what);
            }
            byte[] key = "/key".getBytes(StandardCharsets.US_ASCII);
            int count = 0;
            for (PrimitiveIterator.OfInt it = ring.backends(key); it.hasNext(); count++) {
                int b = it.nextInt();
                assertTrue(b >= 0 && b < backends, what);
            }
            assertTrue(count <= backends, what);
        }
        for (int i = 0; i < backends; i++) {
            assertTrue(store.backend(i).weight() >= 1, what);
        }
        try {
            store.verify();
            return true;
        } catch (RingFileException e) {
            checkMessage(e, file, store.fileSize(), what + " (verify)");
            return false;
        } catch (Throwable t) {
            throw new AssertionError(what + ": verify threw " + t + " instead of RingFileException", t);
        }
    }

    // ---- sweeps ----

    /*
     * The sweeps change the trial file in place (truncate, or write a byte and put it back) rather
     * than rewriting it: thousands of whole-file writes would dominate the test's time.
     */
    @Tag("slow") // an exhaustive sweep of several seconds: the full lane runs it
    @Test
    void everyTruncationIsRefused() throws IOException {
        Path file = dir.resolve("truncated.ring");
        Files.write(file, good);
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            for (int length = good.length - 1; length >= 0; length--) {
                ch.truncate(length);
                assertEquals(length, Files.size(file));
                RingStore store = openDamaged(file, length, "truncated to " + length);
                if (store != null) {
                    store.close();
                    fail("a file truncated to " + length + " of " + good.length + " bytes opened");
                }
            }
        }
    }

    @Tag("slow")
    @Test
    void aByteFlippedAnywhereIsCaughtByOpenOrVerifyOrIsHarmlessPadding() throws IOException {
        Path file = dir.resolve("flipped.ring");
        Files.write(file, good);
        SplittableRandom random = new SplittableRandom(42);
        int[] seen = new int[Region.values().length];
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            for (int offset = 0; offset < good.length; offset++) {
                byte flipped = (byte) (good[offset] ^ (1 + random.nextInt(255)));
                Region region = regionOf(offset);
                seen[region.ordinal()]++;
                String what = "byte " + offset + " (" + region + ") flipped";
                put(ch, offset, flipped);
                RingStore store = openDamaged(file, good.length, what);
                if (region == Region.METADATA) {
                    if (store != null) {
                        store.close();
                        fail(what + ": opened although the metadata checksum covers it");
                    }
                } else {
                    assertTrue(store != null, () -> what + ": open reads only metadata, so it must succeed");
                    try (store) {
                        boolean verified = useSafely(store, file, what);
                        if (region == Region.SEGMENT) {
                            assertTrue(!verified, () -> what + ": verify passed over a damaged segment");
                        } else {
                            assertTrue(verified, what);
                            assertArrayEquals(goodAnswers, answers(store), what);
                        }
                    }
                }
                put(ch, offset, good[offset]);
            }
        }
        assertTrue(seen[Region.PADDING.ordinal()] > 0 && seen[Region.SEGMENT.ordinal()] > 0, Arrays.toString(seen));
    }

    private static void put(FileChannel ch, long offset, byte value) throws IOException {
        ch.write(ByteBuffer.wrap(new byte[] {value}), offset);
    }

    /**
     * A flipped metadata byte with the checksum recomputed gets past the checksum to the structural
     * checks: each must refuse with its own message (an offset, no wrapped exception) or open a file
     * that then behaves.
     */
    @Test
    void aFlippedMetadataByteWithAValidChecksumIsStillHandled() throws IOException {
        Path file = dir.resolve("forged.ring");
        Files.write(file, good);
        SplittableRandom random = new SplittableRandom(4242);
        int opened = 0;
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            for (int offset = 0; offset < metadataEnd; offset++) {
                for (int mask : new int[] {0xFF, 1 + random.nextInt(255), 1 << random.nextInt(8)}) {
                    byte[] bytes = good.clone();
                    bytes[offset] ^= (byte) mask;
                    fixMetadataChecksum(bytes);
                    put(ch, offset, bytes[offset]);
                    ch.write(
                            ByteBuffer.wrap(bytes, (int) metadataEnd, RingFileDescriptor.METADATA_CRC_LENGTH),
                            metadataEnd);
                    String what = "metadata byte " + offset + " ^ " + mask + " with a valid checksum";
                    RingStore store = openDamaged(file, good.length, what);
                    if (store != null) {
                        opened++;
                        try (store) {
                            useSafely(store, file, what);
                        }
                    }
                    put(ch, offset, good[offset]);
                }
            }
        }
        assertTrue(opened > 0, "some fields (generation, digest) may change without breaking the file");
    }

    @Test
    void randomGarblesAreHandled() throws IOException {
        Path file = dir.resolve("garbled.ring");
        SplittableRandom random = new SplittableRandom(7);
        for (int trial = 0; trial < 400; trial++) {
            byte[] bytes = good.clone();
            int runs = 1 + random.nextInt(3);
            StringBuilder what = new StringBuilder("trial " + trial + ":");
            for (int k = 0; k < runs; k++) {
                int at = random.nextInt(bytes.length);
                int length = Math.min(bytes.length - at, 1 + random.nextInt(64));
                byte[] junk = new byte[length];
                switch (random.nextInt(3)) {
                    case 0 -> random.nextBytes(junk);
                    case 1 -> Arrays.fill(junk, (byte) 0xFF);
                    default -> {} // zeros
                }
                System.arraycopy(junk, 0, bytes, at, length);
                what.append(" [").append(at).append(", +").append(length).append(')');
            }
            if (random.nextBoolean()) {
                fixMetadataChecksum(bytes);
                what.append(" checksum fixed");
            }
            RingStore store = openDamaged(file, bytes, what.toString());
            if (store != null) {
                try (store) {
                    useSafely(store, file, what.toString());
                }
            }
        }
    }

    // ---- specific failures ----

    @Test
    void badMagic() throws IOException {
        byte[] bytes = good.clone();
        System.arraycopy("NOTARING".getBytes(StandardCharsets.US_ASCII), 0, bytes, 0, 8);
        RingFileException e = refused("magic.ring", bytes);
        assertEquals(0, e.offset());
        assertTrue(e.reason().contains("bad magic") && e.reason().contains("NOTARING"), e.reason());

        e = refused(
                "text.ring",
                "# not a ring file but a backends file\nserver 127.0.0.1\n"
                        .repeat(5)
                        .getBytes(StandardCharsets.US_ASCII));
        assertTrue(e.reason().contains("bad magic"), e.reason());
    }

    @Test
    void unsupportedFormatVersionNamesTheVersionAndTheSupportedRange() throws IOException {
        for (int version : new int[] {0, RingFileDescriptor.MAX_SUPPORTED_VERSION + 1, 0xFFFF}) {
            byte[] bytes = good.clone();
            bytes[RingFileDescriptor.FORMAT_VERSION_OFFSET] = (byte) version;
            bytes[RingFileDescriptor.FORMAT_VERSION_OFFSET + 1] = (byte) (version >> 8);
            RingFileException e = refused("version.ring", bytes);
            assertEquals(RingFileDescriptor.FORMAT_VERSION_OFFSET, e.offset());
            assertTrue(e.reason().contains("version " + version), e.reason());
            assertTrue(
                    e.reason()
                            .contains(RingFileDescriptor.MIN_SUPPORTED_VERSION + " to "
                                    + RingFileDescriptor.MAX_SUPPORTED_VERSION),
                    e.reason());
        }
    }

    @Test
    void tableOffsetsOutsideTheFileAreRefused() throws IOException {
        for (long value : new long[] {good.length + 1L, 1L << 40, -1L, Long.MIN_VALUE}) {
            for (int field : new int[] {
                RingFileDescriptor.BACKEND_TABLE_LENGTH_OFFSET,
                RingFileDescriptor.FEATURE_TABLE_OFFSET_OFFSET,
                RingFileDescriptor.RING_INDEX_OFFSET_OFFSET,
                RingFileDescriptor.RING_INDEX_LENGTH_OFFSET
            }) {
                byte[] bytes = good.clone();
                ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).putLong(field, value);
                RingFileException e = refused("offsets.ring", bytes);
                assertEquals(field, e.offset(), e.getMessage());
                assertTrue(
                        e.reason().contains("beyond the file") && e.reason().contains(Long.toUnsignedString(value)),
                        e.reason());
            }
        }
    }

    @Test
    void segmentOutsideTheFileIsRefusedEvenWithAValidChecksum() throws IOException {
        long firstEntry = ByteBuffer.wrap(good)
                .order(ByteOrder.LITTLE_ENDIAN)
                .getLong(RingFileDescriptor.RING_INDEX_OFFSET_OFFSET);
        int field = (int) firstEntry + RingFileDescriptor.ENTRY_SEGMENT_OFFSET_OFFSET;
        for (long value : new long[] {good.length, good.length - 6L, 1L << 40, -64L, 64}) {
            byte[] bytes = good.clone();
            ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).putLong(field, value);
            fixMetadataChecksum(bytes);
            RingFileException e = refused("segment.ring", bytes);
            assertEquals(field, e.offset(), e.getMessage());
            assertTrue(e.reason().contains("outside the segment area"), e.reason());
        }
    }

    @Test
    void fileLongerOrShorterThanItsHeaderSaysIsRefused() throws IOException {
        byte[] longer = Arrays.copyOf(good, good.length + 1);
        RingFileException e = refused("longer.ring", longer);
        assertEquals(RingFileDescriptor.FILE_LENGTH_OFFSET, e.offset());
        assertTrue(
                e.reason().contains(String.valueOf(good.length)) && e.reason().contains(String.valueOf(longer.length)),
                e.reason());

        e = refused("shorter.ring", Arrays.copyOf(good, good.length - 1));
        assertTrue(e.reason().contains("truncated"), e.reason());

        e = refused("header.ring", Arrays.copyOf(good, RingFileDescriptor.HEADER_LENGTH - 1));
        assertEquals(RingFileDescriptor.HEADER_LENGTH - 1, e.offset());
        assertTrue(e.reason().contains("header"), e.reason());
    }

    @Test
    void emptyFileIsRefused() throws IOException {
        RingFileException e = refused("empty.ring", new byte[0]);
        assertEquals(0, e.offset());
        assertTrue(e.reason().contains("0 bytes"), e.reason());
    }

    @Test
    void missingFileIsRefused() {
        Path missing = dir.resolve("missing.ring");
        RingFileException e = assertThrows(RingFileException.class, () -> RingStore.open(missing));
        checkMessage(e, missing, 0, "missing");
        assertEquals(-1, e.offset());
        assertTrue(e.reason().contains("no such file"), e.reason());
    }

    @Test
    void directoryIsRefused() throws IOException {
        Path sub = Files.createDirectory(dir.resolve("a-directory.ring"));
        RingFileException e = assertThrows(RingFileException.class, () -> RingStore.open(sub));
        checkMessage(e, sub, Long.MAX_VALUE, "directory");
    }

    @Test
    void directoryIsRefusedSayingItIsADirectory() throws IOException {
        Path sub = Files.createDirectory(dir.resolve("a-directory.ring"));
        RingFileException e = assertThrows(RingFileException.class, () -> RingStore.open(sub));
        assertTrue(e.reason().contains("directory"), e.reason());
    }

    /** Makes a FIFO with mkfifo(1); skips the test where there is none. */
    static Path mkfifo(Path path) throws IOException, InterruptedException {
        Process p;
        try {
            p = new ProcessBuilder("mkfifo", path.toString())
                    .redirectErrorStream(true)
                    .start();
        } catch (IOException e) {
            Assumptions.abort("no mkfifo: " + e.getMessage());
            throw e;
        }
        Assumptions.assumeTrue(p.waitFor() == 0, "mkfifo failed");
        return path;
    }

    /** A FIFO would block the open (or the first read) until a writer comes: refused before it is opened. */
    @Test
    void fifoIsRefusedWithoutBlocking() throws Exception {
        Path fifo = mkfifo(dir.resolve("fifo.ring"));
        RingFileException e = assertTimeoutPreemptively(
                Duration.ofSeconds(10), () -> assertThrows(RingFileException.class, () -> RingStore.open(fifo)));
        checkMessage(e, fifo, Long.MAX_VALUE, "fifo");
        assertTrue(e.reason().contains("not a regular file"), e.reason());
    }

    /** A device: /dev/zero would map as an endless file of zeros, /dev/null as an empty one. */
    @Test
    void devicesAreRefused() {
        for (String device : new String[] {"/dev/zero", "/dev/null"}) {
            Path p = Path.of(device);
            Assumptions.assumeTrue(Files.exists(p), device);
            RingFileException e = assertThrows(RingFileException.class, () -> RingStore.open(p));
            assertTrue(e.reason().contains("not a regular file"), e.reason());
        }
    }

    /** A symbolic link is followed: to a ring file it opens, to a FIFO it is refused. */
    @Test
    void symbolicLinksAreFollowedToTheirTarget() throws Exception {
        Path link = Files.createSymbolicLink(dir.resolve("link.ring"), original);
        try (RingStore store = RingStore.open(link)) {
            store.verify();
        }
        Path toFifo = Files.createSymbolicLink(dir.resolve("link-to-fifo.ring"), mkfifo(dir.resolve("fifo2")));
        RingFileException e = assertTimeoutPreemptively(
                Duration.ofSeconds(10), () -> assertThrows(RingFileException.class, () -> RingStore.open(toFifo)));
        assertTrue(e.reason().contains("not a regular file"), e.reason());
    }

    @Test
    void segmentDamageIsReportedAtItsOffset() throws Exception {
        long[] segment = segments[0];
        byte[] bytes = good.clone();
        bytes[(int) segment[0] + 6] ^= 0x40; // a hash byte of the second point
        Path file = dir.resolve("segment-damage.ring");
        Files.write(file, bytes);
        try (RingStore store = RingStore.open(file)) {
            RingFileException e = assertThrows(RingFileException.class, store::verify);
            assertEquals(segment[0], e.offset(), e.getMessage());
            assertTrue(e.reason().contains("checksum"), e.reason());
        }
    }

    /** An empty ring has no segment, so nothing for a checksum to cover: the index must say 0. */
    @Test
    void anEmptyRingWithANonZeroSegmentChecksumIsRefused() throws Exception {
        Path file = dir.resolve("empty-ring.ring");
        build(file, """
                server 127.0.0.1:8080 features=a
                server 127.0.0.2:8080 features=b
                """);
        byte[] bytes = Files.readAllBytes(file);
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        int ab = (int) b.getLong(RingFileDescriptor.RING_INDEX_OFFSET_OFFSET) + 3 * RingFileDescriptor.ENTRY_LENGTH;
        assertEquals(0, b.getInt(ab + RingFileDescriptor.ENTRY_POINT_COUNT_OFFSET), "ring a+b has no member");
        b.putInt(ab + RingFileDescriptor.ENTRY_SEGMENT_CRC_OFFSET, 0xDEAD_BEEF);
        TestRings.fixMetadataChecksum(bytes);
        RingFileException e = refused("empty-ring.ring", bytes);
        assertEquals(ab + RingFileDescriptor.ENTRY_SEGMENT_CRC_OFFSET, e.offset(), e.getMessage());
        assertEquals("ring 3 segment checksum of an empty ring: expected 0, found 3735928559", e.reason());
    }

    /**
     * A writer ends the file with its last segment. Bytes appended after it (header length updated,
     * checksum fixed) are refused: no reader would ever look at them.
     */
    @Test
    void bytesAfterTheLastSegmentAreRefused() throws IOException {
        byte[] bytes = Arrays.copyOf(good, good.length + 64);
        ByteBuffer.wrap(bytes)
                .order(ByteOrder.LITTLE_ENDIAN)
                .putLong(RingFileDescriptor.FILE_LENGTH_OFFSET, bytes.length);
        fixMetadataChecksum(bytes);
        RingFileException e = refused("trailing.ring", bytes);
        assertEquals(good.length, e.offset(), e.getMessage());
        assertEquals(
                "64 bytes after the last segment, which ends at " + good.length + " (the file must end there)",
                e.reason());
    }

    /** The header's segment count must be the number of distinct non-empty segments the index names. */
    @Test
    void aSegmentCountOtherThanTheIndexsIsRefused() throws IOException {
        byte[] bytes = good.clone();
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        int segments = b.getInt(RingFileDescriptor.SEGMENT_COUNT_OFFSET);
        b.putInt(RingFileDescriptor.SEGMENT_COUNT_OFFSET, segments - 1);
        fixMetadataChecksum(bytes);
        RingFileException e = refused("segment-count.ring", bytes);
        assertEquals(RingFileDescriptor.SEGMENT_COUNT_OFFSET, e.offset(), e.getMessage());
        assertEquals(
                "segment count (distinct non-empty segments in the index): expected " + (segments - 1) + ", found "
                        + segments,
                e.reason());
    }

    // ---- helpers ----

    private RingFileException refused(String name, byte[] bytes) throws IOException {
        Path file = dir.resolve(name);
        Files.write(file, bytes);
        RingFileException e =
                assertThrows(RingFileException.class, () -> RingStore.open(file).close());
        checkMessage(e, file, bytes.length, name);
        return e;
    }

    /** Recomputes the metadata CRC-32C where the undamaged file has it. */
    private void fixMetadataChecksum(byte[] bytes) {
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, (int) metadataEnd);
        ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).putInt((int) metadataEnd, (int) crc.getValue());
    }
}
