package io.ringstore.family;

import io.ringstore.internal.hash.Murmur2x64;

/**
 * libstdc++'s 64-bit {@code std::_Hash_bytes} with a fixed seed ({@link KeyHash#MURMUR2_64}: Envoy's
 * 0xc70f6907); allocation-free ({@link Murmur2x64}).
 */
final class Murmur2x64KeyHash extends CoreKeyHash {
    private final long seed;

    Murmur2x64KeyHash(long seed) {
        super("murmur2", 64);
        this.seed = seed;
    }

    @Override
    long core(Object key, long from, long length) {
        return Murmur2x64.hash(key, from, length, seed);
    }
}
