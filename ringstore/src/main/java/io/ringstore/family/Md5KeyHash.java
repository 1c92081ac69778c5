package io.ringstore.family;

import io.ringstore.internal.hash.Md5;

/** Word 0 of the key's MD5 digest, little-endian ({@link KeyHash#MD5}); allocation-free ({@link Md5}). */
final class Md5KeyHash extends CoreKeyHash {
    Md5KeyHash() {
        super("md5", 32);
    }

    @Override
    long core(Object key, long from, long length) {
        return Integer.toUnsignedLong(Md5.core(key, from, length));
    }
}
