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
        return new RingPatch(Files.readAllBytes(ring));
    }

    /** Where backend {@code index}'s record starts. */
    private int backend(int index) {
        int p = (int) b.getLong(RingFileDescriptor.BACKEND_TABLE_OFFSET_OFFSET);
        for (int i = 0; i < index; i++) {
            p += RingFileDescriptor.BACKEND_FIXED_LENGTH + Short.toUnsignedInt(b.getShort(p + RingFileDescriptor.BACKEND_ADDRESS_LENGTH_OFFSET));
        }
        return p;
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
            b.putInt(index + (version * masks + m) * RingFileDescriptor.ENTRY_LENGTH + RingFileDescriptor.ENTRY_POINT_MULTIPLE_OFFSET, multiple);
        }
        return this;
    }

    Path write(Path target) throws IOException {
        int end = (int) (b.getLong(RingFileDescriptor.RING_INDEX_OFFSET_OFFSET) + b.getLong(RingFileDescriptor.RING_INDEX_LENGTH_OFFSET));
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, end);
        b.putInt(end, (int) crc.getValue());
        return Files.write(target, bytes);
    }
}
