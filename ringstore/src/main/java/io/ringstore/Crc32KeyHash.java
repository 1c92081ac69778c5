package io.ringstore;

import io.ringstore.internal.Crc32;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32;

import static io.ringstore.internal.format.RingFileDescriptor.U64;

/**
 * CRC-32 (IEEE) of a key ({@link KeyHash#CRC32}). Arrays, direct buffers and native segments go to
 * {@link CRC32}'s intrinsic (the last two through a view of their own, which the JIT scalar-replaces);
 * read-only heap buffers, heap segments over other arrays and segments that map a file are read a
 * word at a time through {@link Crc32}'s tables (the intrinsic reading a mapping of a file truncated
 * under it crashes the JVM with SIGBUS, where a plain read raises {@link InternalError}; a direct
 * buffer cannot be told from a mapped one, and is read as {@code CRC32.update(ByteBuffer)} reads it).
 * Allocates nothing once compiled. The static methods are what {@link Ring}'s lookups call, so the hot path has
 * no virtual call.
 */
final class Crc32KeyHash extends KeyHash {
    Crc32KeyHash() {
        super("crc32", 32);
    }

    @Override
    public int hash(byte[] key, int offset, int length) {
        return of(key, offset, length);
    }

    @Override
    public int hash(ByteBuffer key) {
        return of(key);
    }

    @Override
    public int hash(MemorySegment key) {
        return of(key);
    }

    static int of(byte[] key, int offset, int length) {
        CRC32 crc = new CRC32(); // scalar-replaced by the JIT: no allocation on the hot path
        crc.update(key, offset, length);
        return (int) crc.getValue();
    }

    static int of(ByteBuffer key) {
        int from = key.position();
        int to = key.limit();
        if (key.hasArray()) {
            return of(key.array(), key.arrayOffset() + from, to - from);
        }
        if (key.isDirect()) {
            return ofDirect(key.duplicate());
        }
        // Read-only heap: absolute reads, which move nothing (CRC32 would copy the bytes into an array
        // it allocates).
        boolean bigEndian = key.order() == ByteOrder.BIG_ENDIAN;
        int words = from + ((to - from) & ~3);
        int state = Crc32.INITIAL;
        for (int i = from; i < words; i += 4) {
            int word = key.getInt(i);
            state = Crc32.updateIntLE(state, bigEndian ? Integer.reverseBytes(word) : word);
        }
        for (int i = words; i < to; i++) {
            state = Crc32.updateByte(state, key.get(i));
        }
        return Crc32.finish(state);
    }

    static int of(MemorySegment key) {
        // A segment over a byte[] goes to CRC32's intrinsic over that array (heapBase's Optional is
        // scalar-replaced), a native one to the intrinsic through its buffer view, and a mapped one or
        // a heap segment over another array type is read eight bytes at a time through the table CRC.
        if (!key.isNative() && key.heapBase().orElse(null) instanceof byte[] array) {
            return of(array, Math.toIntExact(key.address()), Math.toIntExact(key.byteSize()));
        }
        if (key.isNative() && !key.isMapped() && key.byteSize() <= Integer.MAX_VALUE) {
            return ofDirect(key.asByteBuffer());
        }
        long length = key.byteSize();
        long words = length & ~7L;
        int state = Crc32.INITIAL;
        for (long i = 0; i < words; i += 8) {
            long word = key.get(U64, i);
            state = Crc32.updateIntLE(Crc32.updateIntLE(state, (int) word), (int) (word >>> 32));
        }
        for (long i = words; i < length; i++) {
            state = Crc32.updateByte(state, key.get(ValueLayout.JAVA_BYTE, i));
        }
        return Crc32.finish(state);
    }

    /**
     * The JDK's intrinsic over a direct buffer that is the caller's own view of the key (a duplicate, a
     * segment's buffer): {@link CRC32#update(ByteBuffer)} moves the position of the buffer it reads,
     * so it is given the view, never the caller's buffer (another thread may be reading that one).
     * Once compiled, the view and the checksum object are scalar-replaced (bench {@code
     * SelectAllocation} and {@code RolloutCost}: 0 bytes a call on JDK 25).
     */
    private static int ofDirect(ByteBuffer view) {
        CRC32 crc = new CRC32();
        crc.update(view);
        return (int) crc.getValue();
    }
}
