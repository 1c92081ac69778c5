package io.ringstore.family;

import io.ringstore.internal.Crc32;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32;

/**
 * CRC-32 (IEEE) of a key ({@link KeyHash#CRC32}). Arrays go to {@link CRC32}'s intrinsic; direct
 * buffers and native segments are read eight bytes at a time through {@link Crc32}'s slicing-by-8
 * tables, which allocates nothing (the intrinsic through a buffer view of the key, a duplicate or a
 * segment's {@code asByteBuffer()}, was measured on 2 December 2026: in some call contexts the JIT
 * does not scalar-replace the view, 64 bytes a call in {@code FamilyLookupAllocationTest}).
 */
final class Crc32KeyHash extends KeyHash {
    Crc32KeyHash() {
        super("crc32", 32);
    }

    @Override
    public int hash(byte[] key, int offset, int length) {
        CRC32 crc = new CRC32(); // scalar-replaced by the JIT: no allocation on the hot path
        crc.update(key, offset, length);
        return (int) crc.getValue();
    }

    @Override
    public int hash(ByteBuffer key) {
        int from = key.position();
        int to = key.limit();
        if (key.hasArray()) {
            return hash(key.array(), key.arrayOffset() + from, to - from);
        }
        // Direct or read-only: absolute reads, which move nothing. CRC32.update(ByteBuffer) would move
        // the position, and MemorySegment.ofBuffer allocates its view (72 bytes a call, measured with
        // bench SelectAllocation on JDK 25).
        boolean bigEndian = key.order() == ByteOrder.BIG_ENDIAN;
        int words = from + ((to - from) & ~7);
        int state = Crc32.INITIAL;
        for (int i = from; i < words; i += 8) {
            long word = key.getLong(i);
            state = Crc32.updateLongLE(state, bigEndian ? Long.reverseBytes(word) : word);
        }
        for (int i = words; i < to; i++) {
            state = Crc32.updateByte(state, key.get(i));
        }
        return Crc32.finish(state);
    }

    @Override
    public int hash(MemorySegment key) {
        // Measured on JDK 25 (ThreadMXBean over 5 million calls): CRC32.update(key.asByteBuffer())
        // allocates the buffer view, 56-64 bytes a call, not scalar-replaced. So a segment over a
        // byte[] goes to CRC32's intrinsic over that array (heapBase's Optional is scalar-replaced),
        // and any other segment is read eight bytes at a time through the table CRC: no allocation.
        if (!key.isNative() && key.heapBase().orElse(null) instanceof byte[] array) {
            return hash(array, Math.toIntExact(key.address()), Math.toIntExact(key.byteSize()));
        }
        long length = key.byteSize();
        long words = length & ~7L;
        int state = Crc32.INITIAL;
        for (long i = 0; i < words; i += 8) {
            state = Crc32.updateLongLE(state, key.get(LONG_LE, i));
        }
        for (long i = words; i < length; i++) {
            state = Crc32.updateByte(state, key.get(ValueLayout.JAVA_BYTE, i));
        }
        return Crc32.finish(state);
    }
}
