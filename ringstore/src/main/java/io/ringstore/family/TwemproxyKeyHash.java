package io.ringstore.family;

import io.ringstore.internal.hash.TwemproxyHash;

/**
 * One of twemproxy's key hashes but md5 ({@link KeyHash#twemproxy(String)}), as twemproxy computes it on
 * x86-64 Linux ({@link TwemproxyHash}); allocation-free.
 */
final class TwemproxyKeyHash extends CoreKeyHash {
    private final TwemproxyHash algorithm;

    TwemproxyKeyHash(TwemproxyHash algorithm) {
        super("twemproxy:" + algorithm.configName(), 32);
        this.algorithm = algorithm;
    }

    @Override
    long core(Object key, long from, long length) {
        return Integer.toUnsignedLong(algorithm.core(key, from, length));
    }
}
