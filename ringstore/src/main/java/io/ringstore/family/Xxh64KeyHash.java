package io.ringstore.family;

import io.ringstore.internal.hash.Xxh64;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/** XXH64 with seed 0 ({@link KeyHash#XXH64}), Envoy's and gRPC's ring hash; allocation-free ({@link Xxh64}). */
final class Xxh64KeyHash extends KeyHash64 {
    Xxh64KeyHash() {
        super("xxh64");
    }

    @Override
    public long hash64(byte[] key, int offset, int length) {
        return Xxh64.hash(key, offset, length, 0);
    }

    @Override
    public long hash64(ByteBuffer key) {
        return Xxh64.hash(key, 0);
    }

    @Override
    public long hash64(MemorySegment key) {
        return Xxh64.hash(key, 0);
    }
}
