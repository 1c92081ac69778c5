package io.ringstore.tools;

import io.ringstore.internal.format.RingFileDescriptor;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.CRC32C;

/**
 * A valid ring file's bytes with fields changed, written with the metadata CRC-32C recomputed: a file
 * that passes the checksum and reaches the value checks behind it.
 */
final class RingPatch {
    private final byte[] bytes;
    private final ByteBuffer b;

    private RingPatch(byte[] bytes) {
        this.bytes = bytes;
        this.b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
    }

    static RingPatch of(Path ring) throws IOException {
        return of(Files.readAllBytes(ring));
    }

    /** Patches a copy of {@code bytes}. */
    static RingPatch of(byte[] bytes) {
        return new RingPatch(bytes.clone());
    }

    /** Where backend {@code index}'s record starts. */
    private int backend(int index) {
        int p = (int) b.getLong(RingFileDescriptor.BACKEND_TABLE_OFFSET_OFFSET);
        for (int i = 0; i < index; i++) {
            p += RingFileDescriptor.BACKEND_FIXED_LENGTH
                    + Short.toUnsignedInt(b.getShort(p + RingFileDescriptor.BACKEND_ADDRESS_LENGTH_OFFSET));
        }
        return p;
    }

    /** Sets the header's u64 generation. */
    RingPatch generation(long generation) {
        b.putLong(RingFileDescriptor.GENERATION_OFFSET, generation);
        return this;
    }

    RingPatch backendWeight(int index, long weight) {
        b.putInt(backend(index) + RingFileDescriptor.BACKEND_WEIGHT_OFFSET, (int) weight);
        return this;
    }

    RingPatch backendMask(int index, int mask) {
        b.putInt(backend(index) + RingFileDescriptor.BACKEND_FEATURES_OFFSET, mask);
        return this;
    }

    /** Sets the point multiple of every ring of version {@code version} (the file's version order). */
    RingPatch pointMultiple(int version, int multiple) {
        int masks = 1 << Short.toUnsignedInt(b.getShort(RingFileDescriptor.FEATURE_COUNT_OFFSET));
        int index = (int) b.getLong(RingFileDescriptor.RING_INDEX_OFFSET_OFFSET);
        for (int m = 0; m < masks; m++) {
            b.putInt(
                    index
                            + (version * masks + m) * RingFileDescriptor.ENTRY_LENGTH
                            + RingFileDescriptor.ENTRY_POINT_MULTIPLE_OFFSET,
                    multiple);
        }
        return this;
    }

    int backendCount() {
        return b.getInt(RingFileDescriptor.BACKEND_COUNT_OFFSET);
    }

    int featureCount() {
        return Short.toUnsignedInt(b.getShort(RingFileDescriptor.FEATURE_COUNT_OFFSET));
    }

    int ringCount() {
        return b.getInt(RingFileDescriptor.RING_COUNT_OFFSET);
    }

    private int entry(int ring) {
        return (int) b.getLong(RingFileDescriptor.RING_INDEX_OFFSET_OFFSET) + ring * RingFileDescriptor.ENTRY_LENGTH;
    }

    int pointCount(int ring) {
        return b.getInt(entry(ring) + RingFileDescriptor.ENTRY_POINT_COUNT_OFFSET);
    }

    /** Cuts ring {@code ring} to its first {@code points} points (count and length; the checksum follows on write). */
    RingPatch pointCount(int ring, int points) {
        b.putInt(entry(ring) + RingFileDescriptor.ENTRY_POINT_COUNT_OFFSET, points);
        b.putLong(
                entry(ring) + RingFileDescriptor.ENTRY_SEGMENT_LENGTH_OFFSET,
                (long) points * RingFileDescriptor.POINT_LENGTH);
        return this;
    }

    /** Point {@code point} of ring {@code ring} names {@code backend}. */
    RingPatch pointBackend(int ring, int point, int backend) {
        b.putShort(pointAt(ring, point) + RingFileDescriptor.POINT_BACKEND_OFFSET, (short) backend);
        return this;
    }

    RingPatch pointHash(int ring, int point, int hash) {
        b.putInt(pointAt(ring, point) + RingFileDescriptor.POINT_HASH_OFFSET, hash);
        return this;
    }

    private int pointAt(int ring, int point) {
        return (int) b.getLong(entry(ring) + RingFileDescriptor.ENTRY_SEGMENT_OFFSET_OFFSET)
                + point * RingFileDescriptor.POINT_LENGTH;
    }

    /**
     * Writes the bytes with the metadata CRC recomputed and every non-empty ring's segment CRC too
     * (segments before the metadata, whose CRC covers the index).
     */
    Path write(Path target) throws IOException {
        for (int r = 0; r < ringCount(); r++) {
            int e = entry(r);
            long offset = b.getLong(e + RingFileDescriptor.ENTRY_SEGMENT_OFFSET_OFFSET);
            long length = b.getLong(e + RingFileDescriptor.ENTRY_SEGMENT_LENGTH_OFFSET);
            if (length > 0 && offset > 0 && offset + length <= bytes.length) {
                CRC32C segment = new CRC32C();
                segment.update(bytes, (int) offset, (int) length);
                b.putInt(e + RingFileDescriptor.ENTRY_SEGMENT_CRC_OFFSET, (int) segment.getValue());
            }
        }
        int end = (int) (b.getLong(RingFileDescriptor.RING_INDEX_OFFSET_OFFSET)
                + b.getLong(RingFileDescriptor.RING_INDEX_LENGTH_OFFSET));
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, end);
        b.putInt(end, (int) crc.getValue());
        return Files.write(target, bytes);
    }
}
