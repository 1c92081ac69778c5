package io.ringstore.family;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/**
 * A twemproxy pool's key hash as {@code server_pool_hash} applies it ({@code nc_server.c}): the
 * pool's hash of the key, except that an empty key hashes to 0 (the first point of the ring). One per
 * hash, shared; allocation-free.
 */
final class TwemproxyPoolKeyHash extends KeyHash {
    private final KeyHash hash;

    TwemproxyPoolKeyHash(KeyHash hash) {
        super(hash.name(), 32);
        this.hash = hash;
    }

    @Override
    public int hash(byte[] key, int offset, int length) {
        return length == 0 ? 0 : hash.hash(key, offset, length);
    }

    @Override
    public int hash(ByteBuffer key) {
        return key.hasRemaining() ? hash.hash(key) : 0;
    }

    @Override
    public int hash(MemorySegment key) {
        return key.byteSize() == 0 ? 0 : hash.hash(key);
    }
}
