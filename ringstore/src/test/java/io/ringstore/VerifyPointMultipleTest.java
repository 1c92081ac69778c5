package io.ringstore;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.family.RingVersion;
import io.ringstore.internal.format.RingFileDescriptor;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A ring's pointMultiple relabelled (the points stored are of another K): {@code verify} compares
 * each backend's points in the segment with what the family gives it, so a v2:4 file labelled v2:160
 * (or the other way) is refused, not served.
 */
class VerifyPointMultipleTest {
    @TempDir(factory = MemoryTempDir.class)
    Path dir;

    private static final String BACKENDS = "server 127.0.0.1:80\nserver 127.0.0.2:80 weight=2\nserver 127.0.0.3:80\n";

    /** The file built as {@code built}, its one ring's pointMultiple overwritten with {@code label}. */
    private Path relabelled(RingVersion built, int label) throws Exception {
        Path ring = dir.resolve("built-" + built.name().replace(':', '-') + "-as-" + label + ".ring");
        TestRings.build(ring, BACKENDS, built);
        return relabel(ring, label, ring);
    }

    /** {@code ring} written to {@code out} with its first ring's pointMultiple overwritten with {@code label}. */
    private static Path relabel(Path ring, int label, Path out) throws Exception {
        byte[] bytes = Files.readAllBytes(ring);
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        int entry = (int) b.getLong(RingFileDescriptor.RING_INDEX_OFFSET_OFFSET);
        b.putInt(entry + RingFileDescriptor.ENTRY_POINT_MULTIPLE_OFFSET, label);
        TestRings.fixMetadataChecksum(bytes);
        Files.write(out, bytes);
        return out;
    }

    @Test
    void fewerPointsThanTheLabelGivesAreRefused() throws Exception {
        try (RingStore store = RingStore.open(relabelled(RingVersion.v2(4), 160))) {
            RingFileException e = assertThrows(RingFileException.class, store::verify);
            // The chains are checked together (sorted, merged with the ring); a failure is named as a search of
            // each backend's chain in turn names it: the first backend, its first point missing.
            assertTrue(
                    e.getMessage().contains("backend 0 (127.0.0.1:80) has 4 points in the segment")
                            && e.getMessage().contains("v2:160 gives it 160")
                            && e.getMessage().contains("its point 4 hash ")
                            && e.getMessage().contains("is not in the ring"),
                    e.getMessage());
        }
    }

    @Test
    void aFleetOfManyTiesVerifiesAndARelabelIsFoundAcrossBatches() throws Exception {
        // 700 backends x weight 10 x 160: 1.1 M points, about 150 ties. Labelled v2:161, every backend
        // is one short of 1,610 points and 1.13 M chain hashes are checked, more than one batch holds.
        StringBuilder fleet = new StringBuilder();
        for (int i = 0; i < 700; i++) {
            fleet.append("server 10.0.")
                    .append(i / 250)
                    .append('.')
                    .append(i % 250 + 1)
                    .append(":8080 weight=10\n");
        }
        Path ring = dir.resolve("fleet.ring");
        TestRings.build(ring, fleet.toString(), RingVersion.v2(160));
        try (RingStore store = RingStore.open(ring)) {
            store.verify();
            assertTrue(store.ring(java.util.Set.of()).pointCount() < 700 * 1600, "the fleet has ties");
        }
        try (RingStore store = RingStore.open(relabel(ring, 161, dir.resolve("fleet-161.ring")))) {
            RingFileException e = assertThrows(RingFileException.class, store::verify);
            assertTrue(
                    e.getMessage().contains("backend 0 (10.0.0.1:8080) has ")
                            && e.getMessage().contains("v2:161 gives it 1610, and its point 1600 hash "),
                    e.getMessage());
        }
    }

    @Test
    void morePointsThanTheLabelGivesAreRefused() throws Exception {
        try (RingStore store = RingStore.open(relabelled(RingVersion.v2(160), 4))) {
            RingFileException e = assertThrows(RingFileException.class, store::verify);
            assertTrue(
                    e.getMessage().contains("points in the segment")
                            && e.getMessage().contains("more than the"),
                    e.getMessage());
        }
    }

    @Test
    void theFileAsBuiltVerifies() throws Exception {
        Path ring = dir.resolve("ok.ring");
        TestRings.build(ring, BACKENDS, RingVersion.v2(4), RingVersion.v2(160), RingVersion.V1);
        try (RingStore store = RingStore.open(ring)) {
            store.verify();
        }
    }
}
