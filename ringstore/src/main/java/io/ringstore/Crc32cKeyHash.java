package io.ringstore;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * CRC-32C (Castagnoli, reflected polynomial 0x82F63B78) of a key ({@link KeyHash#CRC32C}), equal to
 * {@link CRC32C}'s. Arrays (and buffers and segments over one) go to the JDK's intrinsic; the rest is
 * read with absolute gets a byte at a time, for the keys {@code CRC32C} cannot take without a copy or
 * an allocation: its {@code update(ByteBuffer)} moves the buffer's position (another thread may be
 * reading the same buffer), and it has no segment method. A key is tens of bytes. Allocates nothing.
 */
final class Crc32cKeyHash extends KeyHash {
    private static final int[] TABLE = new int[256];

    static {
        for (int b = 0; b < 256; b++) {
            int c = b;
            for (int k = 0; k < 8; k++) {
                c = (c & 1) != 0 ? (c >>> 1) ^ 0x82F6_3B78 : c >>> 1;
            }
            TABLE[b] = c;
        }
    }

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
        int c = 0xFFFF_FFFF;
        for (int i = key.position(), to = key.limit(); i < to; i++) {
            c = TABLE[(c ^ key.get(i)) & 0xFF] ^ (c >>> 8);
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
        for (long i = 0; i < n; i++) {
            c = TABLE[(c ^ key.get(ValueLayout.JAVA_BYTE, i)) & 0xFF] ^ (c >>> 8);
        }
        return ~c;
    }
}
