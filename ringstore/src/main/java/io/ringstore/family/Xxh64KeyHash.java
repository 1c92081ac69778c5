package io.ringstore.family;

import io.ringstore.internal.hash.Xxh64;

/**
 * XXH64 with seed 0 ({@link KeyHash#XXH64}), Envoy's and gRPC's ring hash, or the same with its sign bit
 * flipped ({@link KeyHash#XXH64_SIGNED}, grpc-java's signed order); allocation-free ({@link Xxh64}).
 */
final class Xxh64KeyHash extends CoreKeyHash {
    /** XORed into the hash: 0, or the sign bit. */
    private final long flip;

    Xxh64KeyHash(String name, long flip) {
        super(name, 64);
        this.flip = flip;
    }

    @Override
    long core(Object key, long from, long length) {
        return Xxh64.hash(key, from, length, 0) ^ flip;
    }
}
