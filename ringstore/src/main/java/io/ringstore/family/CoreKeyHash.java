package io.ringstore.family;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * A key hash written once, over any key shape: a subclass gives {@link #core}, the hash of bytes of a
 * key that is an array, a segment or a buffer without an accessible array (as the hashes of
 * {@code io.ringstore.internal.hash} read them), and this class takes the three shapes of
 * {@link KeyHash} to it. {@link #hash} is the whole value of a 32-bit hash and the high word of a
 * 64-bit one. Allocation-free as its core is.
 */
abstract class CoreKeyHash extends KeyHash {
    /** How far {@link #hash} shifts the whole value: 0 for a 32-bit hash, 32 for the high word of a 64-bit one. */
    private final int shift;

    CoreKeyHash(String name, int bits) {
        super(name, bits);
        this.shift = bits - 32;
    }

    /**
     * {@return the whole hash of {@code length} bytes of {@code key} from {@code from}: a 32-bit hash's
     * value unsigned, a 64-bit hash's 64 bits}
     *
     * @param key a {@code byte[]}, a {@link MemorySegment} or a {@link ByteBuffer} without an accessible
     *            array
     */
    abstract long core(Object key, long from, long length);

    @Override
    public final long hash64(byte[] key, int offset, int length) {
        Objects.checkFromIndexSize(offset, length, key.length);
        return core(key, offset, length);
    }

    @Override
    public final long hash64(ByteBuffer key) {
        int from = key.position();
        int length = key.limit() - from;
        return key.hasArray() ? core(key.array(), key.arrayOffset() + from, length) : core(key, from, length);
    }

    @Override
    public final long hash64(MemorySegment key) {
        return core(key, 0, key.byteSize());
    }

    @Override
    public final int hash(byte[] key, int offset, int length) {
        return (int) (hash64(key, offset, length) >>> shift);
    }

    @Override
    public final int hash(ByteBuffer key) {
        return (int) (hash64(key) >>> shift);
    }

    @Override
    public final int hash(MemorySegment key) {
        return (int) (hash64(key) >>> shift);
    }
}
