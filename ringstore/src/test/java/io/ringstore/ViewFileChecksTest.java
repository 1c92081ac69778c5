package io.ringstore;

import static io.ringstore.internal.format.RingFileDescriptor.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.builder.BackendList;
import io.ringstore.builder.RingBuilder;
import io.ringstore.builder.Views;
import io.ringstore.family.RingVersion;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The checks FORMAT.md adds for format version 3 (open 29, 33, 36; verify 9, 10, 12), each on a file
 * whose checksums are made to match again, so that only the check under test can refuse it; and a
 * file of the release before feature bits (storage 1 under the views) answering as one with them.
 */
class ViewFileChecksTest {
    /** v2 ignores scope ids: the two fe80::1 backends tie on every point, so the base keeps ties. */
    private static final String FLEET = """
            server [fe80::1%3]:80 weight=2; # ringstore: features=a
            server [fe80::1%4]:80; # ringstore: features=a,b
            server 127.0.0.1:8080 weight=3; # ringstore: features=b
            server 127.0.0.2:8080 weight=2;
            """;

    @TempDir
    Path dir;

    private Path file;
    private ByteBuffer b;
    private int indexAt;
    private long metadataEnd;

    @BeforeEach
    void build() throws Exception {
        build(4);
    }

    /** Builds v2:{@code pointMultiple} of {@link #FLEET} with every feature ring a view, into {@link #b}. */
    private void build(int pointMultiple) throws Exception {
        file = dir.resolve("views-" + pointMultiple + ".ring");
        RingBuilder.of(BackendList.parse("views.conf", FLEET))
                .views(Views.ALL)
                .version(RingVersion.v2(pointMultiple))
                .build(file);
        try (RingStore store = RingStore.open(file)) {
            store.verify();
            assertEquals(FORMAT_VERSION_VIEWS, store.layout().formatVersion());
            assertEquals(
                    RingFileLayout.Storage.POINTS_WITH_TIES_AND_FEATURE_BITS_BY_FEATURE,
                    store.layout().storage(store.ring(Set.of())));
            assertEquals(RingFileLayout.Storage.VIEW, store.layout().storage(store.ring(Set.of("a"))));
            assertEquals(RingFileLayout.Storage.VIEW, store.layout().storage(store.ring(Set.of("b"))));
            assertEquals(RingFileLayout.Storage.VIEW, store.layout().storage(store.ring(Set.of("a", "b"))));
        }
        b = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
        indexAt = (int) b.getLong(RING_INDEX_OFFSET_OFFSET);
        metadataEnd = indexAt + b.getLong(RING_INDEX_LENGTH_OFFSET);
    }

    private int entry(int mask) {
        return indexAt + mask * ENTRY_LENGTH;
    }

    /** Writes the buffer back with the metadata CRC made to match. */
    private void save() throws Exception {
        CRC32C crc = new CRC32C();
        crc.update(b.array(), 0, (int) metadataEnd);
        b.putInt((int) metadataEnd, (int) crc.getValue());
        Files.write(file, b.array());
    }

    private RingFileException refusedAtOpen() {
        return assertThrows(RingFileException.class, () -> RingStore.open(file).close());
    }

    private RingFileException refusedByVerify() throws Exception {
        try (RingStore store = RingStore.open(file)) {
            return assertThrows(RingFileException.class, store::verify);
        }
    }

    @Test
    void anUnknownStorageIsRefusedAtOpen() throws Exception {
        b.put(entry(1) + ENTRY_STORAGE_OFFSET, (byte) 5);
        save();
        RingFileException e = refusedAtOpen();
        assertEquals(
                "ring 1 storage 5 is unknown (expected 0 = points, 1 = points with ties, 2 = view, 3 = points with ties"
                        + " and feature bits or 4 = points with ties and feature bits by feature)",
                e.reason());
        assertEquals(entry(1) + ENTRY_STORAGE_OFFSET, e.offset());
    }

    @Test
    void aViewFileLabelledVersion2IsRefusedAsReservedBytes() throws Exception {
        b.putShort(FORMAT_VERSION_OFFSET, (short) FORMAT_VERSION_BACKEND_FLAGS);
        save();
        assertEquals("ring 0 reserved bytes are not zero", refusedAtOpen().reason());
    }

    @Test
    void ringPointsOfARingStoredAsPointsMustBeZero() throws Exception {
        // Make ring 1 claim to be stored as points with its own (the base's) segment: refused for the
        // storage mismatch or, first, for ringPoints.
        b.put(entry(1) + ENTRY_STORAGE_OFFSET, (byte) STORAGE_POINTS);
        b.putLong(
                entry(1) + ENTRY_SEGMENT_LENGTH_OFFSET,
                (long) b.getInt(entry(1) + ENTRY_POINT_COUNT_OFFSET) * POINT_LENGTH); // no feature bits
        save();
        RingFileException e = refusedAtOpen();
        assertTrue(
                e.reason().startsWith("ring 1 ring point count of a ring stored as its points: expected 0, found "),
                e.reason());
    }

    @Test
    void ringPointsOutsideItsSegmentIsRefusedAtOpen() throws Exception {
        int points = b.getInt(entry(0) + ENTRY_POINT_COUNT_OFFSET);
        b.putInt(entry(2) + ENTRY_RING_POINTS_OFFSET, points + 1);
        save();
        assertEquals(
                "ring 2 ring point count " + (points + 1) + " is outside 1-" + points
                        + " (the points of the segment it views)",
                refusedAtOpen().reason());
    }

    @Test
    void theMask0RingCannotBeAView() throws Exception {
        b.put(entry(0) + ENTRY_STORAGE_OFFSET, (byte) STORAGE_VIEW);
        save();
        assertEquals(
                "ring 0 is a view but is its version's mask-0 ring, which views read",
                refusedAtOpen().reason());
    }

    @Test
    void aViewMustNameItsBaseSegment() throws Exception {
        b.putInt(entry(3) + ENTRY_SEGMENT_CRC_OFFSET, b.getInt(entry(3) + ENTRY_SEGMENT_CRC_OFFSET) ^ 1);
        save();
        RingFileException e = refusedAtOpen();
        assertTrue(
                e.reason()
                        .startsWith(
                                "ring 3 is a view but does not name its version's mask-0 ring stored with ties (offset "),
                e.reason());
    }

    @Test
    void aViewsPointCountIsCheckedByVerify() throws Exception {
        int ringPoints = b.getInt(entry(1) + ENTRY_RING_POINTS_OFFSET);
        b.putInt(entry(1) + ENTRY_RING_POINTS_OFFSET, ringPoints - 1);
        save();
        RingFileException e = refusedByVerify();
        assertTrue(
                e.reason()
                        .matches("ring v2:4 a: its members have points at " + ringPoints
                                + " distinct hashes of the segment at \\d+, " + "the ring index says "
                                + (ringPoints - 1) + " \\(corrupt ring index\\?\\)"),
                e.reason());
        assertEquals(entry(1) + ENTRY_RING_POINTS_OFFSET, e.offset());
    }

    @Test
    void theBasesDistinctHashesAreCheckedByVerify() throws Exception {
        int ringPoints = b.getInt(entry(0) + ENTRY_RING_POINTS_OFFSET);
        b.putInt(entry(0) + ENTRY_RING_POINTS_OFFSET, ringPoints - 1);
        save();
        RingFileException e = refusedByVerify();
        assertTrue(
                e.reason()
                        .matches("ring v2:4 \\(all\\): its segment at \\d+ has " + ringPoints
                                + " distinct hashes, the ring index says " + (ringPoints - 1)
                                + " \\(corrupt ring index\\?\\)"),
                e.reason());
    }

    @Test
    void equalHashesOutOfTieOrderAreRefusedByVerify() throws Exception {
        long at = b.getLong(entry(0) + ENTRY_SEGMENT_OFFSET_OFFSET);
        int n = b.getInt(entry(0) + ENTRY_POINT_COUNT_OFFSET);
        int swapped = -1;
        for (int i = 1; i < n && swapped < 0; i++) {
            long p = at + (long) i * POINT_LENGTH;
            if (b.getInt((int) p) == b.getInt((int) (p - POINT_LENGTH))) {
                short first = b.getShort((int) (p - POINT_LENGTH + POINT_BACKEND_OFFSET));
                b.putShort(
                        (int) (p - POINT_LENGTH + POINT_BACKEND_OFFSET), b.getShort((int) (p + POINT_BACKEND_OFFSET)));
                b.putShort((int) (p + POINT_BACKEND_OFFSET), first);
                swapped = i;
            }
        }
        assertTrue(swapped > 0, "the fe80::1 twins tie");
        fixSegmentCrc();
        save();
        RingFileException e = refusedByVerify();
        assertTrue(e.reason().startsWith("ring v2:4 (all): point " + swapped + " repeats hash "), e.reason());
        assertTrue(
                e.reason().endsWith("in v2:4 tie order (equal hashes must be stored in tie order, each backend once)"),
                e.reason());
        assertEquals(at + (long) swapped * POINT_LENGTH + POINT_BACKEND_OFFSET, e.offset());
    }

    /** Sets every entry's segmentCrc to the CRC-32C of the (one) segment as it now is: points and feature bits. */
    private void fixSegmentCrc() {
        long at = b.getLong(entry(0) + ENTRY_SEGMENT_OFFSET_OFFSET);
        long length = b.getLong(entry(0) + ENTRY_SEGMENT_LENGTH_OFFSET);
        CRC32C crc = new CRC32C();
        crc.update(b.array(), (int) at, (int) length);
        for (int mask = 0; mask < 4; mask++) {
            b.putInt(entry(mask) + ENTRY_SEGMENT_CRC_OFFSET, (int) crc.getValue());
        }
    }

    /**
     * The byte offset of block {@code block}'s word for feature {@code feature} in the segment's feature
     * bits, stored by feature (storage 4: all of feature 0's words, then feature 1's).
     */
    private int featureWord(int block, int feature) {
        return featureWord(block, feature, STORAGE_POINTS_WITH_FEATURE_BITS_BY_FEATURE);
    }

    /** {@link #featureWord(int, int)} for bits stored as {@code storage} (3: by block, 4: by feature). */
    private int featureWord(int block, int feature, int storage) {
        long at = b.getLong(entry(0) + ENTRY_SEGMENT_OFFSET_OFFSET);
        int n = b.getInt(entry(0) + ENTRY_POINT_COUNT_OFFSET);
        long blocks = (n + 63) / 64;
        return (int) (at + (long) n * POINT_LENGTH + featureWordOffset(storage, blocks, 2, block, feature));
    }

    /**
     * Storage 3, the feature bits by block as every build wrote them before issue 32, and storage 4, by
     * feature, hold the same words in another order: a file of 5 blocks (v2:40) with its bits moved
     * back to storage 3 verifies and answers every hash as the file built, failover included; a flipped
     * bit in block 2 is named at its own offset in each layout.
     */
    @Test
    void bitsByBlockAndByFeatureAnswerAlikeAndAreCheckedAtTheirOwnOffsets() throws Exception {
        build(40);
        int n = b.getInt(entry(0) + ENTRY_POINT_COUNT_OFFSET);
        int blocks = (n + 63) / 64;
        assertTrue(blocks >= 3, "blocks: " + blocks);
        byte[] byFeature = b.array().clone();
        for (int block = 0; block < blocks; block++) {
            for (int f = 0; f < 2; f++) {
                long word = ByteBuffer.wrap(byFeature)
                        .order(ByteOrder.LITTLE_ENDIAN)
                        .getLong(featureWord(block, f, STORAGE_POINTS_WITH_FEATURE_BITS_BY_FEATURE));
                b.putLong(featureWord(block, f, STORAGE_POINTS_WITH_FEATURE_BITS), word);
            }
        }
        assertTrue(!java.util.Arrays.equals(byFeature, b.array()), "the two layouts differ on 5 blocks");
        b.put(entry(0) + ENTRY_STORAGE_OFFSET, (byte) STORAGE_POINTS_WITH_FEATURE_BITS);
        fixSegmentCrc();
        save();
        Path byFeatureFile = dir.resolve("by-feature.ring");
        Files.write(byFeatureFile, byFeature);
        try (RingStore byBlock = RingStore.open(file);
                RingStore now = RingStore.open(byFeatureFile)) {
            byBlock.verify();
            byBlock.verifyDeep();
            assertEquals(
                    RingFileLayout.Storage.POINTS_WITH_TIES_AND_FEATURE_BITS,
                    byBlock.layout().storage(byBlock.ring(Set.of())));
            assertAnswerAlike(byBlock, now, 32);
        }
        for (int storage : new int[] {STORAGE_POINTS_WITH_FEATURE_BITS, STORAGE_POINTS_WITH_FEATURE_BITS_BY_FEATURE}) {
            b = ByteBuffer.wrap(Files.readAllBytes(storage == STORAGE_POINTS_WITH_FEATURE_BITS ? file : byFeatureFile))
                    .order(ByteOrder.LITTLE_ENDIAN);
            int word = featureWord(2, 1, storage);
            long before = b.getLong(word);
            b.putLong(word, before ^ 1L << 5); // point 133's bit for feature b
            fixSegmentCrc();
            save();
            RingFileException e = refusedByVerify();
            assertEquals(
                    "ring v2:40 (all): feature bits of points 128-191 for feature 1 are 0x"
                            + Long.toHexString(before ^ 1L << 5) + ", their backends' features give 0x"
                            + Long.toHexString(before) + " (corrupted feature bits?)",
                    e.reason(),
                    "storage " + storage);
            assertEquals(word, e.offset(), "storage " + storage);
        }
    }

    @Test
    void theFeatureBitsFollowThePoints() throws Exception {
        int n = b.getInt(entry(0) + ENTRY_POINT_COUNT_OFFSET);
        assertEquals(
                (long) n * POINT_LENGTH + (n + 63) / 64 * 2 * 8L, b.getLong(entry(0) + ENTRY_SEGMENT_LENGTH_OFFSET));
        for (int mask = 1; mask < 4; mask++) { // the views name the same segment, bits included
            assertEquals(
                    b.getLong(entry(0) + ENTRY_SEGMENT_LENGTH_OFFSET),
                    b.getLong(entry(mask) + ENTRY_SEGMENT_LENGTH_OFFSET));
        }
        // Point 0's backend and its bit: feature a is bit 0 of the backend mask, b bit 1.
        long at = b.getLong(entry(0) + ENTRY_SEGMENT_OFFSET_OFFSET);
        int backend = b.getShort((int) at + POINT_BACKEND_OFFSET);
        int[] masks = {0b01, 0b11, 0b10, 0b00}; // the fleet's backends, in file order
        assertEquals(masks[backend] & 1, b.getLong(featureWord(0, 0)) & 1);
        assertEquals(masks[backend] >> 1 & 1, b.getLong(featureWord(0, 1)) & 1);
    }

    @Test
    void aSegmentLengthWithoutItsFeatureBitsIsRefusedAtOpen() throws Exception {
        int n = b.getInt(entry(0) + ENTRY_POINT_COUNT_OFFSET);
        long length = b.getLong(entry(0) + ENTRY_SEGMENT_LENGTH_OFFSET);
        b.putLong(entry(0) + ENTRY_SEGMENT_LENGTH_OFFSET, (long) n * POINT_LENGTH);
        save();
        RingFileException e = refusedAtOpen();
        assertEquals(
                "ring 0 segment length (points × 6 + ⌈points / 64⌉ × 8 × 2 features): expected " + length + ", found "
                        + n * POINT_LENGTH,
                e.reason());
        assertEquals(entry(0) + ENTRY_SEGMENT_LENGTH_OFFSET, e.offset());
    }

    @Test
    void aFlippedFeatureBitIsRefusedByVerify() throws Exception {
        int word = featureWord(0, 1);
        long before = b.getLong(word);
        b.putLong(word, before ^ 1L << 2); // point 2's bit for feature b
        fixSegmentCrc(); // so that only check 12 can see it
        save();
        RingFileException e = refusedByVerify();
        int n = b.getInt(entry(0) + ENTRY_POINT_COUNT_OFFSET);
        assertEquals(
                "ring v2:4 (all): feature bits of points 0-" + (Math.min(n, 64) - 1) + " for feature 1 are 0x"
                        + Long.toHexString(before ^ 1L << 2) + ", their backends' features give 0x"
                        + Long.toHexString(before) + " (corrupted feature bits?)",
                e.reason());
        assertEquals(word, e.offset());
    }

    @Test
    void aFlippedFeatureBitFailsTheSegmentChecksum() throws Exception {
        int word = featureWord(0, 0);
        b.putLong(word, b.getLong(word) ^ 1L);
        save();
        assertTrue(refusedByVerify().reason().startsWith("segment checksum mismatch: expected CRC-32C "));
    }

    @Test
    void aBitPastTheLastPointIsRefusedByVerify() throws Exception {
        int n = b.getInt(entry(0) + ENTRY_POINT_COUNT_OFFSET);
        assertTrue(n % 64 != 0, "the last block is partly used: " + n + " points");
        int word = featureWord((n - 1) / 64, 0);
        b.putLong(word, b.getLong(word) | 1L << 63);
        fixSegmentCrc();
        save();
        assertTrue(refusedByVerify().reason().contains("for feature 0 are 0x8"));
    }

    /**
     * The release before feature bits wrote the same file without them: the ring of all backends
     * stored with ties (1), its segment the points alone. Made from this file by cutting the bits off
     * (the segment is the file's last bytes), its views answer every hash alike, walking point by point.
     */
    @Test
    void aFileWithoutFeatureBitsAnswersAlike() throws Exception {
        long at = b.getLong(entry(0) + ENTRY_SEGMENT_OFFSET_OFFSET);
        long length = b.getLong(entry(0) + ENTRY_SEGMENT_LENGTH_OFFSET);
        int n = b.getInt(entry(0) + ENTRY_POINT_COUNT_OFFSET);
        assertEquals(b.capacity(), at + length, "one segment, at the end of the file");
        Path withBits = dir.resolve("with-bits.ring");
        Files.copy(file, withBits);
        int oldLength = (int) (at + (long) n * POINT_LENGTH);
        b.putLong(FILE_LENGTH_OFFSET, oldLength);
        b.put(entry(0) + ENTRY_STORAGE_OFFSET, (byte) STORAGE_POINTS_WITH_TIES);
        CRC32C crc = new CRC32C();
        crc.update(b.array(), (int) at, n * POINT_LENGTH);
        for (int mask = 0; mask < 4; mask++) {
            b.putLong(entry(mask) + ENTRY_SEGMENT_LENGTH_OFFSET, (long) n * POINT_LENGTH);
            b.putInt(entry(mask) + ENTRY_SEGMENT_CRC_OFFSET, (int) crc.getValue());
        }
        CRC32C meta = new CRC32C();
        meta.update(b.array(), 0, (int) metadataEnd);
        b.putInt((int) metadataEnd, (int) meta.getValue());
        Files.write(file, java.util.Arrays.copyOf(b.array(), oldLength));
        try (RingStore old = RingStore.open(file);
                RingStore now = RingStore.open(withBits)) {
            old.verify();
            assertEquals(RingFileLayout.Storage.POINTS_WITH_TIES, old.layout().storage(old.ring(Set.of())));
            assertAnswerAlike(old, now, 21);
        }
    }

    /** Each feature set's view in the two files answers 20,000 random hashes alike, failover walks too. */
    private static void assertAnswerAlike(RingStore one, RingStore other, long seed) {
        java.util.SplittableRandom random = new java.util.SplittableRandom(seed);
        for (Set<String> f : java.util.List.of(Set.of("a"), Set.of("b"), Set.of("a", "b"))) {
            Ring o = one.ring(f);
            Ring w = other.ring(f);
            for (int i = 0; i < 20_000; i++) {
                int h = random.nextInt();
                assertEquals(o.lookupHash(h), w.lookupHash(h), f + " hash " + Integer.toUnsignedString(h));
                assertEquals(
                        o.select(h, 3, x -> x != 1),
                        w.select(h, 3, x -> x != 1),
                        f + " select hash " + Integer.toUnsignedString(h));
            }
        }
    }
}
