package io.ringstore.internal;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A key's CRC-32 and CRC-32C in one pass, for a route rolling out between two versions hashed by CRC-32
 * (v1, v2): the ring position needs the CRC-32, the rollout bucket the CRC-32C. Each 8-byte read feeds
 * both table chains ({@link Crc32#updateLongLE}, {@link Crc32c#updateLongLE}), which do not depend on
 * each other, so the processor runs them side by side where two loops would run one after the other.
 *
 * <p>The result packs both: the CRC-32 in the high 32 bits, the CRC-32C in the low 32 ({@link #crc32},
 * {@link #crc32c}), so nothing is allocated. Only for keys read through the tables (direct or
 * read-only buffers, native segments, mapped ones included): no JDK intrinsic is ever handed a segment,
 * so a truncated mapped file cannot crash the JVM here (a read past the file throws instead).
 */
public final class KeyCrcs {
    /** Eight bytes little-endian at any offset (the layout of {@code RingFileDescriptor.U64}, which this package cannot name). */
    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private KeyCrcs() {}

    /** {@return the CRC-32 of a result of {@link #of}, unsigned: {@code KeyHash.CRC32.hash64} of the key} */
    public static long crc32(long both) {
        return both >>> 32;
    }

    /** {@return the CRC-32C of a result of {@link #of}} */
    public static int crc32c(long both) {
        return (int) both;
    }

    /**
     * {@return the CRC-32 (high word) and CRC-32C (low word) of the bytes from the buffer's position to its
     * limit} Absolute reads: the buffer is not moved.
     *
     * @param key a buffer without an accessible array (direct or read-only); any buffer works
     */
    public static long of(ByteBuffer key) {
        boolean bigEndian = key.order() == ByteOrder.BIG_ENDIAN;
        int from = key.position();
        int to = key.limit();
        int words = from + ((to - from) & ~7);
        int a = Crc32.INITIAL;
        int c = Crc32c.INITIAL;
        for (int i = from; i < words; i += 8) {
            long word = key.getLong(i);
            if (bigEndian) {
                word = Long.reverseBytes(word);
            }
            a = Crc32.updateLongLE(a, word);
            c = Crc32c.updateLongLE(c, word);
        }
        for (int i = words; i < to; i++) {
            byte b = key.get(i);
            a = Crc32.updateByte(a, b);
            c = Crc32c.updateByte(c, b);
        }
        return pack(a, c);
    }

    /**
     * {@return the CRC-32 (high word) and CRC-32C (low word) of every byte of the segment}
     *
     * @param key any segment (meant for native ones: heap arrays go to the JDK's intrinsics)
     */
    public static long of(MemorySegment key) {
        long length = key.byteSize();
        long words = length & ~7L;
        int a = Crc32.INITIAL;
        int c = Crc32c.INITIAL;
        for (long i = 0; i < words; i += 8) {
            long word = key.get(U64, i);
            a = Crc32.updateLongLE(a, word);
            c = Crc32c.updateLongLE(c, word);
        }
        for (long i = words; i < length; i++) {
            byte b = key.get(ValueLayout.JAVA_BYTE, i);
            a = Crc32.updateByte(a, b);
            c = Crc32c.updateByte(c, b);
        }
        return pack(a, c);
    }

    private static long pack(int crc32State, int crc32cState) {
        return ((long) Crc32.finish(crc32State) << 32) | Integer.toUnsignedLong(Crc32c.finish(crc32cState));
    }

    /**
     * {@return the rollout bucket, 0–9,999, of a key whose CRC-32C is {@code crc32c}} What
     * {@code RolloutPolicy.bucket} computes after the CRC-32C: murmur3's fmix32, then mod 10,000.
     */
    public static int bucket(int crc32c) {
        // murmur3's fmix32: spreads every input bit over the output, so the bucket is not a linear
        // function of the key bits the way both CRCs are.
        int h = crc32c;
        h ^= h >>> 16;
        h *= 0x85eb_ca6b;
        h ^= h >>> 13;
        h *= 0xc2b2_ae35;
        h ^= h >>> 16;
        return (int) (Integer.toUnsignedLong(h) % 10_000);
    }
}
