package io.ringstore.family;

import io.ringstore.internal.hash.Md5;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/** Word 0 of the key's MD5 digest, little-endian ({@link KeyHash#MD5}); allocation-free ({@link Md5}). */
final class Md5KeyHash extends KeyHash {
    Md5KeyHash() {
        super("md5", 32);
    }

    @Override
    public int hash(byte[] key, int offset, int length) {
        return Md5.le32(key, offset, length);
    }

    @Override
    public int hash(ByteBuffer key) {
        return Md5.le32(key);
    }

    @Override
    public int hash(MemorySegment key) {
        return Md5.le32(key);
    }
}
