package io.ringstore;

import java.util.Arrays;
import java.util.zip.CRC32;

/**
 * Forges keys with a chosen CRC-32.
 *
 * <p>For messages of one fixed length CRC-32 is affine over GF(2): crc(m ^ d) = crc(m) ^ L(d). A key is
 * the given prefix followed by {@value #SUFFIX_LENGTH} characters {@code '@'..'O'} (0x40 | nibble), each
 * carrying 4 free bits. The map L from those bits to the CRC is measured by flipping one bit at a time
 * (with {@link java.util.zip.CRC32}, not ringstore's code) and solved by Gaussian elimination.
 *
 * <p>Why 9 characters: the low nibbles of 8 consecutive bytes span only 30 of the 32 dimensions
 * (whatever the prefix: L does not depend on it), 9 span all 32. The 4 spare bits stay 0.
 */
public final class CrcForge {
    static final int SUFFIX_LENGTH = 9;
    private static final int FREE_BITS = 4 * SUFFIX_LENGTH;
    private static final byte FREE_BITS_BASE = 0x40; // '@'; '@' | nibble is '@', 'A' .. 'O': plain URI characters

    private CrcForge() {}

    /** A key that starts with {@code prefix} and whose CRC-32 is {@code target}. */
    static byte[] forge(byte[] prefix, int target) {
        byte[] key = Arrays.copyOf(prefix, prefix.length + SUFFIX_LENGTH);
        Arrays.fill(key, prefix.length, key.length, FREE_BITS_BASE);
        int base = crc(key);
        // Row-reduce the vectors L(e_j), remembering which free bits make up each reduced vector.
        int[] pivotVector = new int[32];
        long[] pivotBits = new long[32];
        boolean[] hasPivot = new boolean[32];
        for (int j = 0; j < FREE_BITS; j++) {
            int v = crc(withBits(key, prefix.length, 1L << j)) ^ base;
            long bits = 1L << j;
            for (int b = 31; b >= 0 && v != 0; b--) {
                if ((v >>> b & 1) == 0) {
                    continue;
                }
                if (hasPivot[b]) {
                    v ^= pivotVector[b];
                    bits ^= pivotBits[b];
                } else {
                    pivotVector[b] = v;
                    pivotBits[b] = bits;
                    hasPivot[b] = true;
                    break;
                }
            }
        }
        int rest = target ^ base;
        long bits = 0;
        for (int b = 31; b >= 0; b--) {
            if ((rest >>> b & 1) != 0) {
                if (!hasPivot[b]) {
                    throw new AssertionError("the free bits of the suffix do not span CRC-32 bit " + b);
                }
                rest ^= pivotVector[b];
                bits ^= pivotBits[b];
            }
        }
        byte[] forged = withBits(key, prefix.length, bits);
        if (crc(forged) != target) {
            throw new AssertionError("forging CRC-32 " + Integer.toHexString(target) + " failed");
        }
        return forged;
    }

    /** CRC-32 of {@code bytes}, computed by the JDK. */
    static int crc(byte[] bytes) {
        CRC32 c = new CRC32();
        c.update(bytes);
        return (int) c.getValue();
    }

    /** {@code key} with suffix character i set to '@' | (nibble i of {@code bits}). */
    private static byte[] withBits(byte[] key, int at, long bits) {
        byte[] k = key.clone();
        for (int i = 0; i < SUFFIX_LENGTH; i++) {
            k[at + i] = (byte) (FREE_BITS_BASE | ((bits >>> (4 * i)) & 0xF));
        }
        return k;
    }
}
