package io.ringstore.family;

import io.ringstore.internal.hash.HaproxyHash;

/**
 * One of HAProxy's key hashes as a backend applies it ({@link KeyHash#haproxy(String)}): the function of
 * the bytes, then {@code full_hash} when {@code avalanche} is set ({@code gen_hash} and
 * {@code BE_LB_HMOD_AVAL} in {@code src/backend.c}); allocation-free.
 */
final class HaproxyKeyHash extends CoreKeyHash {
    private final HaproxyHash function;
    private final boolean avalanche;

    HaproxyKeyHash(HaproxyHash function, boolean avalanche) {
        super("haproxy:" + function.configName() + (avalanche ? KeyHash.AVALANCHE : ""), 32);
        this.function = function;
        this.avalanche = avalanche;
    }

    @Override
    long core(Object key, long from, long length) {
        int h = function.core(key, from, length);
        return Integer.toUnsignedLong(avalanche ? HaproxyHash.fullHash(h) : h);
    }
}
