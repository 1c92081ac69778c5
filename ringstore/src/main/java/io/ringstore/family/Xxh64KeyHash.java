package io.ringstore.family;

import io.ringstore.internal.hash.Xxh64;

/** XXH64 with seed 0 ({@link KeyHash#XXH64}), Envoy's and gRPC's ring hash; allocation-free ({@link Xxh64}). */
final class Xxh64KeyHash extends CoreKeyHash {
    Xxh64KeyHash() {
        super("xxh64", 64);
    }

    @Override
    long core(Object key, long from, long length) {
        return Xxh64.hash(key, from, length, 0);
    }
}
