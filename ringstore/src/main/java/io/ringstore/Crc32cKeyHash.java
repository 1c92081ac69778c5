package io.ringstore;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * CRC-32C (Castagnoli, reflected polynomial 0x82F63B78) of a key ({@link KeyHash#CRC32C}), equal to
 * {@link CRC32C}'s. Every key goes to the JDK's intrinsic (the processor's CRC-32C instruction):
 * arrays and buffers and segments over one directly, direct buffers and native segments through a
 * view of their own ({@code CRC32C.update(ByteBuffer)} moves the position of the buffer it reads, and
 * another thread may be reading the caller's), which the JIT scalar-replaces. Read-only heap buffers
 * and segments over other arrays, which {@code CRC32C} would copy, and segments that map a file (the
 * intrinsic reading a mapping of a file truncated under it crashes the JVM with SIGBUS, where a plain
 * read raises {@link InternalError}) are read with absolute gets a byte at a time. Allocates nothing
 * once compiled.
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
        if (key.isDirect()) {
            return ofDirect(key.duplicate());
        }
        int c = 0xFFFF_FFFF; // a read-only heap buffer: CRC32C would copy it into an array it allocates
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
        if (key.isNative() && !key.isMapped() && key.byteSize() <= Integer.MAX_VALUE) {
            return ofDirect(key.asByteBuffer());
        }
        int c = 0xFFFF_FFFF; // mapped, or a heap segment over another array type
        long n = key.byteSize();
        for (long i = 0; i < n; i++) {
            c = TABLE[(c ^ key.get(ValueLayout.JAVA_BYTE, i)) & 0xFF] ^ (c >>> 8);
        }
        return ~c;
    }

    /**
     * The JDK's intrinsic over a direct buffer that is the caller's own view of the key (a duplicate, a
     * segment's buffer): {@link CRC32C#update(ByteBuffer)} moves the position of the buffer it reads,
     * so it is given the view, never the caller's buffer. Once compiled, the view and the checksum
     * object are scalar-replaced (bench {@code SelectAllocation}: 0 bytes a call).
     */
    private static int ofDirect(ByteBuffer view) {
        CRC32C crc = new CRC32C();
        crc.update(view);
        return (int) crc.getValue();
    }
}
