package io.ringstore.family;

import io.ringstore.internal.hash.Murmur2x64;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/**
 * libstdc++'s 64-bit {@code std::_Hash_bytes} with a fixed seed ({@link KeyHash#MURMUR2_64}: Envoy's
 * 0xc70f6907); allocation-free ({@link Murmur2x64}).
 */
final class Murmur2x64KeyHash extends KeyHash64 {
    private final long seed;

    Murmur2x64KeyHash(long seed) {
        super("murmur2");
        this.seed = seed;
    }

    @Override
    public long hash64(byte[] key, int offset, int length) {
        return Murmur2x64.hash(key, offset, length, seed);
    }

    @Override
    public long hash64(ByteBuffer key) {
        return Murmur2x64.hash(key, seed);
    }

    @Override
    public long hash64(MemorySegment key) {
        return Murmur2x64.hash(key, seed);
    }
}
