package io.ringstore;

import io.ringstore.build.BuildResult;
import io.ringstore.internal.format.RingFileDescriptor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.zip.CRC32C;

import static io.ringstore.TestRings.build;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link RingStore#verify()} on segments shared by many rings. */
class VerifyTest {
    /**
     * 100 backends all having 16 features: 65,536 rings share one segment of about 160,000 points, which verify
     * reads once (one check a point), not once per ring (10^10 checks, tens of seconds).
     */
    @Test
    void aSegmentSharedByEveryRingIsReadOnce(@TempDir Path dir) throws Exception {
        StringBuilder text = new StringBuilder();
        String all = String.join(",", java.util.stream.IntStream.range(0, 16).mapToObj(i -> "f" + i).toList());
        for (int i = 1; i <= 100; i++) {
            text.append("server 10.0.0.").append(i).append(":80 weight=10 features=").append(all).append('\n');
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
        int second = RingFileDescriptor.HEADER_LENGTH + RingFileDescriptor.BACKEND_FIXED_LENGTH
                + Short.toUnsignedInt(b.getShort(RingFileDescriptor.HEADER_LENGTH + RingFileDescriptor.BACKEND_ADDRESS_LENGTH_OFFSET));
        assertEquals(0b11, b.getInt(second + RingFileDescriptor.BACKEND_FEATURES_OFFSET));
        b.putInt(second + RingFileDescriptor.BACKEND_FEATURES_OFFSET, 0b01); // eu only
        int metadataEnd = (int) (b.getLong(RingFileDescriptor.RING_INDEX_OFFSET_OFFSET) + b.getLong(RingFileDescriptor.RING_INDEX_LENGTH_OFFSET));
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, metadataEnd);
        b.putInt(metadataEnd, (int) crc.getValue());
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
            assertEquals(store.layout().segmentOf(ssd).offset() + (long) point * RingFileDescriptor.POINT_LENGTH
                    + RingFileDescriptor.POINT_BACKEND_OFFSET, e.offset());
            assertEquals("ring v1 ssd: point " + point + " names backend 1 (127.0.0.2:8080) which lacks the ring's features", e.reason());
        }
    }
}
