package io.ringstore.internal.hash;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Objects;

/**
 * Reads a key's bytes whatever shape it comes in, so that each hash is written once: a key is an
 * {@code Object} that is a {@code byte[]}, a {@link MemorySegment} (heap or native) or a
 * {@link ByteBuffer} (direct or read-only; a buffer with an accessible array is passed as that
 * array), with an absolute index into it. Multi-byte reads are little-endian, unaligned, whatever a
 * buffer's own byte order. Nothing here allocates or moves a buffer's position.
 */
final class KeyBytes {
    private static final VarHandle INT_LE = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle LONG_LE =
            MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt SEGMENT_INT_LE =
            ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong SEGMENT_LONG_LE =
            ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private KeyBytes() {}

    // Each read is split in two so that the array case, the common one, stays under the JIT's
    // MaxInlineSize (35 bytes of bytecode) and is inlined at every call site, hot or not; the other
    // shapes take a call when the site is cold.

    /** {@return the byte at {@code index}, signed (as C's {@code char} on x86-64)} */
    static byte get(Object key, long index) {
        return key instanceof byte[] array ? array[(int) index] : getOther(key, index);
    }

    /** {@return the four bytes from {@code index}, little-endian} */
    static int le32(Object key, long index) {
        return key instanceof byte[] array ? (int) INT_LE.get(array, (int) index) : le32Other(key, index);
    }

    /** {@return the eight bytes from {@code index}, little-endian} */
    static long le64(Object key, long index) {
        return key instanceof byte[] array ? (long) LONG_LE.get(array, (int) index) : le64Other(key, index);
    }

    private static byte getOther(Object key, long index) {
        if (key instanceof MemorySegment segment) {
            return segment.get(ValueLayout.JAVA_BYTE, index);
        }
        return ((ByteBuffer) key).get((int) index);
    }

    private static int le32Other(Object key, long index) {
        if (key instanceof MemorySegment segment) {
            return segment.get(SEGMENT_INT_LE, index);
        }
        ByteBuffer buffer = (ByteBuffer) key;
        int word = buffer.getInt((int) index);
        return buffer.order() == ByteOrder.LITTLE_ENDIAN ? word : Integer.reverseBytes(word);
    }

    private static long le64Other(Object key, long index) {
        if (key instanceof MemorySegment segment) {
            return segment.get(SEGMENT_LONG_LE, index);
        }
        ByteBuffer buffer = (ByteBuffer) key;
        long word = buffer.getLong((int) index);
        return buffer.order() == ByteOrder.LITTLE_ENDIAN ? word : Long.reverseBytes(word);
    }

    /** Checks an array slice, as the public entry points take one. */
    static void checkSlice(byte[] key, int offset, int length) {
        Objects.checkFromIndexSize(offset, length, key.length);
    }
}
