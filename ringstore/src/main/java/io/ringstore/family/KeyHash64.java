package io.ringstore.family;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/**
 * A 64-bit key hash: {@link #hash64} is the value, {@link #hash} its high word, the 32 bits that order
 * keys as the 64-bit values do (up to ties).
 */
abstract class KeyHash64 extends KeyHash {
    KeyHash64(String name) {
        super(name, 64);
    }

    @Override
    public abstract long hash64(byte[] key, int offset, int length);

    @Override
    public abstract long hash64(ByteBuffer key);

    @Override
    public abstract long hash64(MemorySegment key);

    @Override
    public final int hash(byte[] key, int offset, int length) {
        return (int) (hash64(key, offset, length) >>> 32);
    }

    @Override
    public final int hash(ByteBuffer key) {
        return (int) (hash64(key) >>> 32);
    }

    @Override
    public final int hash(MemorySegment key) {
        return (int) (hash64(key) >>> 32);
    }
}
