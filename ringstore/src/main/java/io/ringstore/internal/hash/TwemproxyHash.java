package io.ringstore.internal.hash;

import io.ringstore.internal.Crc32;
import java.lang.foreign.MemorySegment;

/**
 * twemproxy's twelve key hashes ({@code hash:} in a pool's configuration), in the order of its
 * {@code HASH_CODEC} ({@code src/hashkit/nc_hashkit.h}), computed as its {@code src/hashkit/nc_*.c}
 * compute them on x86-64 Linux, twitter/twemproxy 0.5.0 (the files are unchanged up to 60aaf85).
 *
 * <p>Where the C code reads a key byte through {@code char}, which is signed on x86-64, a byte of
 * 0x80 or more enters sign-extended (0xff as 0xffffffff), and so here: one_at_a_time, the four FNVs and
 * hsieh's third tail byte. On arm64 Linux, where {@code char} is unsigned, twemproxy hashes such keys
 * differently; this is the x86-64 value. The other hashes read {@code uint8_t} or mask the byte.
 *
 * <p>Each hash is the C function's {@code uint32_t}, as a Java {@code int}. twemproxy itself gives every
 * key of a one-server pool, and the empty key, hash 0 ({@code server_pool_hash}); that is the family's
 * rule, not the hash's. Thread-safe, allocation-free.
 */
public enum TwemproxyHash {
    /** Bob Jenkins' one-at-a-time ({@code nc_one_at_a_time.c}); bytes sign-extended. */
    ONE_AT_A_TIME("one_at_a_time"),
    /** Word 0 of the MD5 digest, little-endian ({@code nc_md5.c} {@code hash_md5}), as {@link Md5#le32}. */
    MD5("md5"),
    /**
     * {@code nc_crc16.c}: CRC-16/XMODEM's table (polynomial 0x1021, initial 0) but a 32-bit register that
     * is never masked, so the value has 32 bits of which the low 16 are CRC-16/XMODEM's.
     */
    CRC16("crc16"),
    /** libmemcached's "crc": bits 16..30 of the CRC-32 (IEEE), {@code ((~crc) >> 16) & 0x7fff} ({@code nc_crc32.c}). */
    CRC32("crc32"),
    /** The whole CRC-32 (IEEE), as {@link java.util.zip.CRC32} ({@code nc_crc32.c} {@code hash_crc32a}). */
    CRC32A("crc32a"),
    /** FNV-1 over 64 bits, the low 32 bits kept ({@code nc_fnv.c}); bytes sign-extended to 64 bits. */
    FNV1_64("fnv1_64"),
    /**
     * FNV-1a computed in 32 bits with the 64-bit basis and prime truncated to 32 bits ({@code nc_fnv.c}),
     * which equals the low 32 bits of FNV-1a-64; bytes sign-extended. twemproxy's default hash.
     */
    FNV1A_64("fnv1a_64"),
    /** FNV-1, 32 bits ({@code nc_fnv.c}); bytes sign-extended. */
    FNV1_32("fnv1_32"),
    /** FNV-1a, 32 bits ({@code nc_fnv.c}); bytes sign-extended. */
    FNV1A_32("fnv1a_32"),
    /**
     * Paul Hsieh's SuperFastHash with initial hash 0 ({@code nc_hsieh.c}); 16-bit words unsigned, the
     * third byte of a 3-byte tail sign-extended ({@code (uint32_t)key[2] << 18}), the empty key 0.
     */
    HSIEH("hsieh"),
    /** MurmurHash2, 32 bits, seed {@code 0xdeadbeef * length} ({@code nc_murmur.c}); bytes unsigned. */
    MURMUR("murmur"),
    /** Bob Jenkins' lookup3 {@code hashlittle} with initial value 13 ({@code nc_jenkins.c}); bytes unsigned. */
    JENKINS("jenkins");

    private static final int FNV32_BASIS = 0x811C_9DC5;
    private static final int FNV32_PRIME = 0x0100_0193;
    private static final long FNV64_BASIS = 0xCBF2_9CE4_8422_2325L;
    private static final long FNV64_PRIME = 0x0000_0100_0000_01B3L;
    private static final int[] CRC16_TABLE = new int[256];

    static {
        for (int b = 0; b < 256; b++) {
            int c = b << 8;
            for (int k = 0; k < 8; k++) {
                c = (c & 0x8000) != 0 ? (c << 1) ^ 0x1021 : c << 1;
            }
            CRC16_TABLE[b] = c & 0xFFFF;
        }
    }

    private final String configName;

    TwemproxyHash(String configName) {
        this.configName = configName;
    }

    /** {@return the name twemproxy's configuration gives the hash, such as {@code fnv1a_64}} */
    public String configName() {
        return configName;
    }

    /**
     * {@return the hash twemproxy's configuration calls {@code name}, or null if there is none}
     *
     * @param name the configuration name, such as {@code fnv1a_64}
     */
    public static TwemproxyHash byConfigName(String name) {
        for (TwemproxyHash h : values()) {
            if (h.configName.equals(name)) {
                return h;
            }
        }
        return null;
    }

    /**
     * {@return the hash of {@code length} bytes of {@code key} from {@code from}}: the one entry of the
     * key hashes ({@code io.ringstore.family}), which take each key shape to it; unchecked.
     *
     * @param key    a {@code byte[]}, a {@link MemorySegment} or a {@link java.nio.ByteBuffer} without an
     *               accessible array (as {@link KeyBytes} reads them)
     * @param from   where the key starts
     * @param length the key's length in bytes
     */
    public int core(Object key, long from, long length) {
        return switch (this) {
            case ONE_AT_A_TIME -> oneAtATime(key, from, length);
            case MD5 -> Md5.core(key, from, length);
            case CRC16 -> crc16(key, from, length);
            case CRC32 -> (~crc32State(key, from, length) >>> 16) & 0x7FFF;
            case CRC32A -> ~crc32State(key, from, length);
            case FNV1_64 -> fnv1x64(key, from, length);
            case FNV1A_64 -> fnv1a(key, from, length, (int) FNV64_BASIS, (int) FNV64_PRIME);
            case FNV1_32 -> fnv1(key, from, length);
            case FNV1A_32 -> fnv1a(key, from, length, FNV32_BASIS, FNV32_PRIME);
            case HSIEH -> hsieh(key, from, length);
            case MURMUR -> murmur(key, from, length);
            case JENKINS -> jenkins(key, from, length);
        };
    }

    private static int oneAtATime(Object key, long from, long length) {
        int h = 0;
        for (long p = from, end = from + length; p < end; p++) {
            h += KeyBytes.get(key, p); // (uint32_t) of a signed char: sign-extended
            h += h << 10;
            h ^= h >>> 6;
        }
        h += h << 3;
        h ^= h >>> 11;
        h += h << 15;
        return h;
    }

    private static int crc16(Object key, long from, long length) {
        int crc = 0;
        for (long p = from, end = from + length; p < end; p++) {
            // (crc >> 8) ^ *key: the char is sign-extended, but the & 0xff keeps only its own 8 bits
            crc = (crc << 8) ^ CRC16_TABLE[((crc >>> 8) ^ KeyBytes.get(key, p)) & 0xFF];
        }
        return crc;
    }

    /**
     * The CRC-32 (IEEE) register after the key, before the final inversion, four bytes a step through
     * {@link Crc32}'s tables for every shape. Not {@link java.util.zip.CRC32} for arrays: whether the JIT
     * scalar-replaces a {@code new CRC32()} depends on where it is inlined (16 bytes a call measured in
     * a plain loop on JDK 25), and a key is tens of bytes.
     */
    private static int crc32State(Object key, long from, long length) {
        int state = Crc32.INITIAL;
        long end = from + length;
        long p = from;
        for (; p + 4 <= end; p += 4) {
            state = Crc32.updateIntLE(state, KeyBytes.le32(key, p));
        }
        for (; p < end; p++) {
            state = Crc32.updateByte(state, KeyBytes.get(key, p));
        }
        return state;
    }

    /** FNV-1 in 64 bits with each byte sign-extended to 64 bits; twemproxy keeps the low 32. */
    private static int fnv1x64(Object key, long from, long length) {
        long h = FNV64_BASIS;
        for (long p = from, end = from + length; p < end; p++) {
            h *= FNV64_PRIME;
            h ^= KeyBytes.get(key, p);
        }
        return (int) h;
    }

    private static int fnv1(Object key, long from, long length) {
        int h = FNV32_BASIS;
        for (long p = from, end = from + length; p < end; p++) {
            h *= FNV32_PRIME;
            h ^= KeyBytes.get(key, p);
        }
        return h;
    }

    private static int fnv1a(Object key, long from, long length, int basis, int prime) {
        int h = basis;
        for (long p = from, end = from + length; p < end; p++) {
            h ^= KeyBytes.get(key, p);
            h *= prime;
        }
        return h;
    }

    private static int hsieh(Object key, long from, long length) {
        if (length <= 0) {
            return 0;
        }
        int h = 0;
        long p = from;
        for (long words = length >>> 2; words > 0; words--, p += 4) {
            h += le16(key, p);
            int tmp = (le16(key, p + 2) << 11) ^ h;
            h = (h << 16) ^ tmp;
            h += h >>> 11;
        }
        switch ((int) (length & 3)) {
            case 3 -> {
                h += le16(key, p);
                h ^= h << 16;
                h ^= KeyBytes.get(key, p + 2) << 18; // (uint32_t)key[2] << 18, key[2] a signed char
                h += h >>> 11;
            }
            case 2 -> {
                h += le16(key, p);
                h ^= h << 11;
                h += h >>> 17;
            }
            case 1 -> {
                h += KeyBytes.get(key, p) & 0xFF; // (unsigned char)
                h ^= h << 10;
                h += h >>> 1;
            }
            default -> {}
        }
        h ^= h << 3;
        h += h >>> 5;
        h ^= h << 4;
        h += h >>> 17;
        h ^= h << 25;
        h += h >>> 6;
        return h;
    }

    private static int le16(Object key, long p) {
        return (KeyBytes.get(key, p) & 0xFF) | (KeyBytes.get(key, p + 1) & 0xFF) << 8;
    }

    private static int murmur(Object key, long from, long length) {
        final int m = 0x5BD1_E995;
        int n = (int) length;
        int h = (0xDEAD_BEEF * n) ^ n;
        long p = from;
        long end = from + length;
        for (; end - p >= 4; p += 4) {
            int k = KeyBytes.le32(key, p);
            k *= m;
            k ^= k >>> 24;
            k *= m;
            h *= m;
            h ^= k;
        }
        int tail = (int) (end - p);
        if (tail > 0) {
            if (tail == 3) {
                h ^= (KeyBytes.get(key, p + 2) & 0xFF) << 16;
            }
            if (tail >= 2) {
                h ^= (KeyBytes.get(key, p + 1) & 0xFF) << 8;
            }
            h ^= KeyBytes.get(key, p) & 0xFF;
            h *= m;
        }
        h ^= h >>> 13;
        h *= m;
        h ^= h >>> 15;
        return h;
    }

    private static int jenkins(Object key, long from, long length) {
        int a = 0xDEAD_BEEF + (int) length + 13;
        int b = a;
        int c = a;
        long p = from;
        long left = length;
        for (; left > 12; left -= 12, p += 12) {
            a += KeyBytes.le32(key, p);
            b += KeyBytes.le32(key, p + 4);
            c += KeyBytes.le32(key, p + 8);
            // mix(a, b, c)
            a -= c;
            a ^= Integer.rotateLeft(c, 4);
            c += b;
            b -= a;
            b ^= Integer.rotateLeft(a, 6);
            a += c;
            c -= b;
            c ^= Integer.rotateLeft(b, 8);
            b += a;
            a -= c;
            a ^= Integer.rotateLeft(c, 16);
            c += b;
            b -= a;
            b ^= Integer.rotateLeft(a, 19);
            a += c;
            c -= b;
            c ^= Integer.rotateLeft(b, 4);
            b += a;
        }
        if (left == 0) {
            return c; // the empty key, or none left: no final mix
        }
        // The last 1..12 bytes, little-endian, into a (bytes 0..3), b (4..7) and c (8..11).
        for (int i = (int) left - 1; i >= 0; i--) {
            int octet = (KeyBytes.get(key, p + i) & 0xFF) << (8 * (i & 3));
            if (i >= 8) {
                c += octet;
            } else if (i >= 4) {
                b += octet;
            } else {
                a += octet;
            }
        }
        // final(a, b, c)
        c ^= b;
        c -= Integer.rotateLeft(b, 14);
        a ^= c;
        a -= Integer.rotateLeft(c, 11);
        b ^= a;
        b -= Integer.rotateLeft(a, 25);
        c ^= b;
        c -= Integer.rotateLeft(b, 16);
        a ^= c;
        a -= Integer.rotateLeft(c, 4);
        b ^= a;
        b -= Integer.rotateLeft(a, 14);
        c ^= b;
        c -= Integer.rotateLeft(b, 24);
        return c;
    }
}
