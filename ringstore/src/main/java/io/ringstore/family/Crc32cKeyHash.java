package io.ringstore.family;

import io.ringstore.internal.Crc32c;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * CRC-32C (Castagnoli, reflected polynomial 0x82F63B78) of a key ({@link KeyHash#CRC32C}), equal to
 * {@link CRC32C}'s. Arrays (and buffers and segments over one) go to the JDK's intrinsic; the rest is
 * read with absolute gets eight bytes at a time through {@link Crc32c}'s slicing-by-8 tables (the tail a byte at a
 * time), for the keys {@code CRC32C} cannot take without a copy or an allocation: its {@code
 * update(ByteBuffer)} moves the buffer's position (another thread may be reading the same buffer),
 * and it has no segment method. (Giving it a view of the key, a duplicate or a segment's {@code
 * asByteBuffer()}, was measured: the JIT scalar-replaces the view in some call contexts and not in
 * others, 64 bytes a call in {@code FamilyLookupAllocationTest}.) Allocates nothing.
 */
final class Crc32cKeyHash extends KeyHash {
    Crc32cKeyHash() {
        super("crc32c", 32);
    }

    @Override
    public int hash(byte[] key, int offset, int length) {
        CRC32C crc = new CRC32C(); // scalar-replaced by the JIT
        crc.update(key, offset, length);
        return (int) crc.getValue();
    }

    @Override
    public int hash(ByteBuffer key) {
        if (key.hasArray()) {
            return hash(key.array(), key.arrayOffset() + key.position(), key.remaining());
        }
        boolean bigEndian = key.order() == ByteOrder.BIG_ENDIAN;
        int from = key.position();
        int to = key.limit();
        int words = from + ((to - from) & ~7);
        int c = 0xFFFF_FFFF;
        for (int i = from; i < words; i += 8) {
            long word = key.getLong(i);
            c = Crc32c.updateLongLE(c, bigEndian ? Long.reverseBytes(word) : word);
        }
        for (int i = words; i < to; i++) {
            c = Crc32c.updateByte(c, key.get(i));
        }
        return ~c;
    }

    @Override
    public int hash(MemorySegment key) {
        if (!key.isNative() && key.heapBase().orElse(null) instanceof byte[] array) {
            return hash(array, Math.toIntExact(key.address()), Math.toIntExact(key.byteSize())); // the JDK's intrinsic
        }
        int c = 0xFFFF_FFFF;
        long n = key.byteSize();
        long words = n & ~7L;
        for (long i = 0; i < words; i += 8) {
            c = Crc32c.updateLongLE(c, key.get(LONG_LE, i));
        }
        for (long i = words; i < n; i++) {
            c = Crc32c.updateByte(c, key.get(ValueLayout.JAVA_BYTE, i));
        }
        return ~c;
    }
}
