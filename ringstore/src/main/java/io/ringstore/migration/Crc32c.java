package io.ringstore.migration;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;

/**
 * CRC-32C (Castagnoli, reflected polynomial 0x82F63B78) of a direct buffer's or a memory segment's
 * bytes, equal to {@link java.util.zip.CRC32C}'s, for the keys {@code CRC32C} cannot take without a
 * copy or an allocation: its {@code update(ByteBuffer)} moves the buffer's position (another thread
 * may be reading the same buffer), and it has no segment method. Reads with absolute gets, allocates
 * nothing. Byte at a time: a key is tens of bytes, and heap arrays keep the JDK's intrinsic.
 */
final class Crc32c {
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

    private Crc32c() {
    }

    /** CRC-32C of {@code buffer}'s bytes from {@code from} (inclusive) to {@code to} (exclusive); the buffer is not moved. */
    static int of(ByteBuffer buffer, int from, int to) {
        int c = 0xFFFF_FFFF;
        for (int i = from; i < to; i++) {
            c = TABLE[(c ^ buffer.get(i)) & 0xFF] ^ (c >>> 8);
        }
        return ~c;
    }

    /** CRC-32C of all of {@code segment}'s bytes. */
    static int of(MemorySegment segment) {
        int c = 0xFFFF_FFFF;
        long n = segment.byteSize();
        for (long i = 0; i < n; i++) {
            c = TABLE[(c ^ segment.get(ValueLayout.JAVA_BYTE, i)) & 0xFF] ^ (c >>> 8);
        }
        return ~c;
    }
}
