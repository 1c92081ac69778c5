package io.ringstore;

import static io.ringstore.TestRings.build;
import static io.ringstore.TestRings.fixMetadataChecksum;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.builder.BuildResult;
import io.ringstore.family.RingVersion;
import io.ringstore.internal.format.RingFileDescriptor;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link RingStore#verify()} on segments shared by many rings. */
class VerifyTest {
    /**
     * 100 backends all having 16 features: 65,536 rings share one segment of about 160,000 points, which verify
     * reads once (one check a point), not once per ring (10^10 checks, tens of seconds).
     */
    @Test
    void aSegmentSharedByEveryRingIsReadOnce(@TempDir Path dir) throws Exception {
        StringBuilder text = new StringBuilder();
        String all = String.join(
                ",",
                java.util.stream.IntStream.range(0, 16).mapToObj(i -> "f" + i).toList());
        for (int i = 1; i <= 100; i++) {
            text.append("server 10.0.0.")
                    .append(i)
                    .append(":80 weight=10 features=")
                    .append(all)
                    .append('\n');
        }
        Path file = dir.resolve("shared.ring");
        BuildResult result = build(file, text.toString());
        try (RingStore store = RingStore.open(file)) {
            assertEquals(65_536, store.rings().size());
            assertEquals(1, store.segmentCount());
            assertEquals(result.points(), store.layout().distinctPointCount());
            assertEquals(result.points(), store.verify(), "points checked: the shared segment once");
        }
    }

    /**
     * A backend table that no longer matches the points: ring {eu} (first to use the segment of
     * backends 0 and 1) still passes, ring {ssd} sharing it names backend 1, which lost ssd. The error
     * is the one a ring-by-ring check gives: that ring, its first such point, that point's byte.
     */
    @Test
    void aLaterRingSharingASegmentStillNeedsItsFeatures(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("r.ring");
        build(file, """
                server 127.0.0.1:8080 features=eu,ssd
                server 127.0.0.2:8080 features=eu,ssd
                server 127.0.0.3:8080
                """);
        byte[] bytes = Files.readAllBytes(file);
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        int second = RingFileDescriptor.HEADER_LENGTH
                + RingFileDescriptor.BACKEND_FIXED_LENGTH
                + Short.toUnsignedInt(b.getShort(
                        RingFileDescriptor.HEADER_LENGTH + RingFileDescriptor.BACKEND_ADDRESS_LENGTH_OFFSET));
        assertEquals(0b11, b.getInt(second + RingFileDescriptor.BACKEND_FEATURES_OFFSET));
        b.putInt(second + RingFileDescriptor.BACKEND_FEATURES_OFFSET, 0b01); // eu only
        fixMetadataChecksum(bytes);
        Files.write(file, bytes);
        try (RingStore store = RingStore.open(file)) {
            Ring eu = store.ring(Set.of("eu"));
            Ring ssd = store.ring(Set.of("ssd"));
            assertEquals(store.layout().segmentIndex(eu), store.layout().segmentIndex(ssd));
            int point = 0;
            while (ssd.pointBackend(point) != 1) {
                point++;
            }
            RingFileException e = assertThrows(RingFileException.class, store::verify);
            assertEquals(
                    store.layout().segmentOf(ssd).offset()
                            + (long) point * RingFileDescriptor.POINT_LENGTH
                            + RingFileDescriptor.POINT_BACKEND_OFFSET,
                    e.offset());
            assertEquals(
                    "ring v1 ssd: point " + point + " names backend 1 (127.0.0.2:8080) which lacks the ring's features",
                    e.reason());
        }
    }
    /**
     * The file: the all-backends ring's index entry patched to point at the {eu} ring's segment
     * (counts and checksum fixed). Every point's backend is a member of the all-backends ring, so only
     * the converse catches it: backend 1, a member, has no point. Lookups would route every key to eu.
     */
    @Test
    void aRingPointingAtAnotherRingsSegmentIsRefused(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("shared.ring");
        build(file, """
                server 127.0.0.1:8080 features=eu
                server 127.0.0.2:8080 features=eu
                server [::1]:8081 weight=2
                """);
        byte[] bytes = Files.readAllBytes(file);
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        int all = (int) b.getLong(RingFileDescriptor.RING_INDEX_OFFSET_OFFSET);
        int eu = all + RingFileDescriptor.ENTRY_LENGTH;
        int from = RingFileDescriptor.ENTRY_POINT_COUNT_OFFSET;
        int to = RingFileDescriptor.ENTRY_SEGMENT_CRC_OFFSET + 4; // point count, offset, length, CRC
        System.arraycopy(bytes, eu + from, bytes, all + from, to - from);
        b.putInt(RingFileDescriptor.SEGMENT_COUNT_OFFSET, 1);
        fixMetadataChecksum(bytes);
        Files.write(file, bytes);
        try (RingStore store = RingStore.open(file)) {
            assertEquals(
                    store.ring(Set.of()).lookupHash(0), store.ring(Set.of("eu")).lookupHash(0));
            RingFileException e = assertThrows(RingFileException.class, store::verify);
            assertEquals(all + RingFileDescriptor.ENTRY_SEGMENT_OFFSET_OFFSET, e.offset(), e.getMessage());
            assertEquals(
                    "ring v1 (all): backend 2 ([::1]:8081) is a member but has no point in the ring's segment at "
                            + store.layout().segmentOf(store.ring(Set.of("eu"))).offset()
                            + " (does the ring index point at another ring's segment?)",
                    e.reason());
        }
    }

    /** An empty ring whose feature set has members: its index entry lost the segment it shares with {ssd}. */
    @Test
    void anEmptyRingWithMembersIsRefused(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("empty.ring");
        build(file, """
                server 127.0.0.1:8080 features=eu,ssd
                server 127.0.0.2:8080
                """);
        byte[] bytes = Files.readAllBytes(file);
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        int eu = (int) b.getLong(RingFileDescriptor.RING_INDEX_OFFSET_OFFSET) + RingFileDescriptor.ENTRY_LENGTH;
        Arrays.fill(
                bytes,
                eu + RingFileDescriptor.ENTRY_POINT_COUNT_OFFSET,
                eu + RingFileDescriptor.ENTRY_SEGMENT_CRC_OFFSET + 4,
                (byte) 0);
        fixMetadataChecksum(bytes);
        Files.write(file, bytes);
        try (RingStore store = RingStore.open(file)) {
            assertEquals(-1, store.ring(Set.of("eu")).lookupHash(0));
            RingFileException e = assertThrows(RingFileException.class, store::verify);
            assertEquals(eu + RingFileDescriptor.ENTRY_SEGMENT_OFFSET_OFFSET, e.offset(), e.getMessage());
            assertEquals(
                    "ring v1 eu: backend 0 (127.0.0.1:8080) is a member but the ring has no points"
                            + " (does the ring index point at another ring's segment?)",
                    e.reason());
        }
    }

    /**
     * v2 does not hash the scope: [fe80::1%3] and [fe80::1%4] produce the same points and the smaller
     * socket address keeps every one. The member with no point lost each to a tie, which verify tells
     * apart from a missing segment by regenerating its points.
     */
    @Test
    void aMemberThatLostEveryPointToTiesIsAccepted(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("ties.ring");
        build(file, """
                server [fe80::1%4]:80
                server [fe80::1%3]:80
                server 127.0.0.1:80
                """, RingVersion.v2(10));
        try (RingStore store = RingStore.open(file)) {
            Ring ring = store.ring(Set.of());
            assertEquals(
                    Set.of(1, 2),
                    TestRings.pointBackends(ring).stream().boxed().collect(java.util.stream.Collectors.toSet()));
            assertEquals(ring.pointCount(), store.verify());
        }
    }

    /**
     * The v1 and v2:160 all-backends rings' index entries swapped: same members, so every membership
     * check passes, but each ring now answers with the other algorithm's points. (Had backend 0 a
     * port, both versions would hash the same text, "127.0.0.1\0" + "8080", and the swap be harmless.)
     */
    @Test
    void ringsOfTwoVersionsWithSwappedSegmentsAreRefused(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("swapped.ring");
        build(file, """
                server 127.0.0.1
                server 127.0.0.2:8080 weight=2
                """, RingVersion.V1, RingVersion.v2(160));
        byte[] bytes = Files.readAllBytes(file);
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        int v1 = (int) b.getLong(RingFileDescriptor.RING_INDEX_OFFSET_OFFSET);
        int v2 = v1 + RingFileDescriptor.ENTRY_LENGTH;
        int from = RingFileDescriptor.ENTRY_POINT_COUNT_OFFSET;
        int length = RingFileDescriptor.ENTRY_SEGMENT_CRC_OFFSET + 4 - from;
        byte[] v1Fields = Arrays.copyOfRange(bytes, v1 + from, v1 + from + length);
        System.arraycopy(bytes, v2 + from, bytes, v1 + from, length);
        System.arraycopy(v1Fields, 0, bytes, v2 + from, length);
        fixMetadataChecksum(bytes);
        Files.write(file, bytes);
        try (RingStore store = RingStore.open(file)) {
            RingFileException e = assertThrows(RingFileException.class, store::verify);
            assertEquals(v1 + RingFileDescriptor.ENTRY_SEGMENT_OFFSET_OFFSET, e.offset(), e.getMessage());
            assertTrue(
                    e.reason()
                            .startsWith(
                                    "ring v1 (all): backend 0 (127.0.0.1) has points but not its first v1 point, hash "),
                    e.reason());
        }
    }

    /** A v2 ring's entry pointed at the v1 ring's segment (same members): sharing across versions is refused. */
    @Test
    void aSegmentSharedAcrossVersionsIsRefused(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("across.ring");
        build(file, """
                server 127.0.0.1:8080
                server 127.0.0.2:8080 weight=2
                """, RingVersion.V1, RingVersion.v2(160));
        byte[] bytes = Files.readAllBytes(file);
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        int v1 = (int) b.getLong(RingFileDescriptor.RING_INDEX_OFFSET_OFFSET);
        int v2 = v1 + RingFileDescriptor.ENTRY_LENGTH;
        int from = RingFileDescriptor.ENTRY_POINT_COUNT_OFFSET;
        System.arraycopy(bytes, v1 + from, bytes, v2 + from, RingFileDescriptor.ENTRY_SEGMENT_CRC_OFFSET + 4 - from);
        b.putInt(RingFileDescriptor.SEGMENT_COUNT_OFFSET, 1);
        // The v2 segment, now unused, is the last: cut it off so that the file ends with the v1 segment.
        long v1End = b.getLong(v1 + RingFileDescriptor.ENTRY_SEGMENT_OFFSET_OFFSET)
                + b.getLong(v1 + RingFileDescriptor.ENTRY_SEGMENT_LENGTH_OFFSET);
        b.putLong(RingFileDescriptor.FILE_LENGTH_OFFSET, v1End);
        fixMetadataChecksum(bytes);
        Files.write(file, Arrays.copyOf(bytes, (int) v1End));
        try (RingStore store = RingStore.open(file)) {
            RingFileException e = assertThrows(RingFileException.class, store::verify);
            assertEquals(v2 + RingFileDescriptor.ENTRY_SEGMENT_OFFSET_OFFSET, e.offset(), e.getMessage());
            assertEquals(
                    "ring v2:160 (all) shares the segment at "
                            + b.getLong(v1 + RingFileDescriptor.ENTRY_SEGMENT_OFFSET_OFFSET)
                            + " with ring v1 (all) of another version (corrupt ring index?)",
                    e.reason());
        }
    }
}
