package io.ringstore.family;

import io.ringstore.internal.hash.TwemproxyHash;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/**
 * One of twemproxy's key hashes but md5 ({@link KeyHash#twemproxy(String)}), as twemproxy computes it on
 * x86-64 Linux ({@link TwemproxyHash}); allocation-free.
 */
final class TwemproxyKeyHash extends KeyHash {
    private final TwemproxyHash algorithm;

    TwemproxyKeyHash(TwemproxyHash algorithm) {
        super("twemproxy:" + algorithm.configName(), 32);
        this.algorithm = algorithm;
    }

    @Override
    public int hash(byte[] key, int offset, int length) {
        return algorithm.hash(key, offset, length);
    }

    @Override
    public int hash(ByteBuffer key) {
        return algorithm.hash(key);
    }

    @Override
    public int hash(MemorySegment key) {
        return algorithm.hash(key);
    }
}
