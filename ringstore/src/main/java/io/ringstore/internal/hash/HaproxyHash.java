package io.ringstore.internal.hash;

import io.ringstore.internal.Crc32;
import java.lang.foreign.MemorySegment;

/**
 * HAProxy's four key hashes ({@code hash-type consistent <function>}), as HAProxy 2.6 computes them
 * ({@code src/hash.c}), and its avalanche, {@link #fullHash} ({@code include/haproxy/intops.h}
 * {@code __full_hash}): what {@code gen_hash} and {@code BE_LB_HMOD_AVAL} make of the bytes a
 * {@code balance} rule hashes, and what {@code lb_chash.c} makes of a server's id and node number.
 *
 * <p>Each hash reads the key as {@code unsigned char}, so a byte's value does not depend on the CPU;
 * each is the C function's {@code unsigned int}, as a Java {@code int}. Thread-safe, allocation-free.
 */
public enum HaproxyHash {
    /** {@code hash_sdbm}: {@code hash = c + (hash << 6) + (hash << 16) - hash}, from 0; HAProxy's default. */
    SDBM("sdbm"),
    /** {@code hash_djb2}: {@code hash = hash * 33 + c}, from 5381. */
    DJB2("djb2"),
    /** {@code hash_wt6}: Willy Tarreau's 6-bit rotating hash. */
    WT6("wt6"),
    /** {@code hash_crc32}: the CRC-32 (IEEE), as {@link java.util.zip.CRC32}. */
    CRC32("crc32");

    private final String configName;

    HaproxyHash(String configName) {
        this.configName = configName;
    }

    /** {@return the name {@code hash-type} gives the function, such as {@code sdbm}} */
    public String configName() {
        return configName;
    }

    /**
     * {@return the hash of {@code length} bytes of {@code key} from {@code from}}, unchecked.
     *
     * @param key    a {@code byte[]}, a {@link MemorySegment} or a {@link java.nio.ByteBuffer} without an
     *               accessible array (as {@link KeyBytes} reads them)
     * @param from   where the key starts
     * @param length the key's length in bytes
     */
    public int core(Object key, long from, long length) {
        return switch (this) {
            case SDBM -> sdbm(key, from, length);
            case DJB2 -> djb2(key, from, length);
            case WT6 -> wt6(key, from, length);
            case CRC32 -> crc32(key, from, length);
        };
    }

    /**
     * {@return HAProxy's {@code full_hash}: Bob Jenkins' 32-bit integer hash, then times 3221225473}
     * A bijection of the 32-bit values (each step is invertible), so two inputs share an output only
     * when they are equal.
     *
     * @param a the value
     */
    public static int fullHash(int a) {
        a = (a + 0x7ed55d16) + (a << 12);
        a = (a ^ 0xc761c23c) ^ (a >>> 19);
        a = (a + 0x165667b1) + (a << 5);
        a = (a + 0xd3a2646c) ^ (a << 9);
        a = (a + 0xfd7046c5) + (a << 3);
        a = (a ^ 0xb55a4f09) ^ (a >>> 16);
        return a * 0xC0000001; // 3221225473U
    }

    private static int sdbm(Object key, long from, long length) {
        int h = 0;
        for (long p = from, end = from + length; p < end; p++) {
            h = (KeyBytes.get(key, p) & 0xFF) + (h << 6) + (h << 16) - h;
        }
        return h;
    }

    private static int djb2(Object key, long from, long length) {
        int h = 5381;
        for (long p = from, end = from + length; p < end; p++) {
            h = (h << 5) + h + (KeyBytes.get(key, p) & 0xFF);
        }
        return h;
    }

    private static int wt6(Object key, long from, long length) {
        int h0 = 0xa53c965a;
        int h1 = 0x5ca6953a;
        int step0 = 6;
        int step1 = 18;
        for (long p = from, end = from + length; p < end; p++) {
            int t = KeyBytes.get(key, p) & 0xFF;
            h0 = ~(h0 ^ t);
            h1 = ~(h1 + t);
            t = Integer.rotateLeft(h1, step0); // (h1 << s) | (h1 >> (32 - s)): a rotation for 0 < s < 32
            h1 = Integer.rotateLeft(h0, step1);
            h0 = t;
            t = ((h0 >>> 16) ^ h1) & 0xffff;
            step0 = t & 0x1F;
            step1 = t >>> 11;
        }
        return h0 ^ h1;
    }

    private static int crc32(Object key, long from, long length) {
        int state = Crc32.INITIAL;
        for (long p = from, end = from + length; p < end; p++) {
            state = Crc32.updateByte(state, KeyBytes.get(key, p));
        }
        return ~state;
    }
}
