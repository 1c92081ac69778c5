package io.ringstore.family;

import io.ringstore.internal.hash.LibmemcachedHash;

/**
 * One of libmemcached's key hashes ({@link KeyHash#libmemcached(String)}), as libhashkit computes it on
 * x86-64 Linux ({@link LibmemcachedHash}); allocation-free.
 */
final class LibmemcachedKeyHash extends CoreKeyHash {
    private final LibmemcachedHash algorithm;

    LibmemcachedKeyHash(LibmemcachedHash algorithm) {
        super("libmemcached:" + algorithm.configName(), 32);
        this.algorithm = algorithm;
    }

    @Override
    long core(Object key, long from, long length) {
        return Integer.toUnsignedLong(algorithm.core(key, from, length));
    }
}
