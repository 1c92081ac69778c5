package io.ringstore.internal.hash;

import java.util.Objects;

/**
 * MD5 (RFC 1321), written for hashing keys and ketama points without allocating: the digest's state
 * lives in local variables and the padding is produced word by word as the last block is read, so no
 * buffer or {@link java.security.MessageDigest} is made per call.
 *
 * <p>The ketama families read a digest as four little-endian 32-bit words: word {@code j} is digest
 * bytes {@code 4j..4j+3}, byte {@code 4j} lowest ({@code LE32(d, j)}). libketama's {@code ketama_hashi},
 * libmemcached's {@code hashkit_md5}, twemproxy's {@code hash_md5} and spymemcached's
 * {@code KETAMA_HASH} are word 0 of the key's digest ({@link #le32(byte[], int, int)}); the points of a
 * ketama ring are all four words of the digest of each point text ({@link #words}).
 *
 * <p>Thread-safe (no state), allocation-free.
 */
public final class Md5 {
    private static final int A0 = 0x67452301;
    private static final int B0 = 0xefcdab89;
    private static final int C0 = 0x98badcfe;
    private static final int D0 = 0x10325476;
    /** Powers of ten up to the largest an {@code int}'s magnitude needs (2^31 has ten digits). */
    private static final long[] POW10 = {
        1L, 10L, 100L, 1_000L, 10_000L, 100_000L, 1_000_000L, 10_000_000L, 100_000_000L, 1_000_000_000L
    };

    private Md5() {}

    /**
     * {@return word 0 of the MD5 digest of {@code length} bytes of {@code key} from {@code offset}: digest
     * bytes 0..3, little-endian}
     *
     * @param key    the key's array
     * @param offset where the key starts
     * @param length the key's length in bytes
     */
    public static int le32(byte[] key, int offset, int length) {
        KeyBytes.checkSlice(key, offset, length);
        return digest(key, offset, length, 0, 0, null);
    }

    /**
     * {@return word 0 of the MD5 digest of {@code length} bytes of {@code key} from {@code from}}: the
     * one entry of the key hashes ({@code io.ringstore.family}), which take each key shape to it;
     * unchecked.
     *
     * @param key    a {@code byte[]}, a {@link java.lang.foreign.MemorySegment} or a {@link java.nio.ByteBuffer}
     *               without an accessible array (as {@link KeyBytes} reads them)
     * @param from   where the key starts
     * @param length the key's length in bytes
     */
    public static int core(Object key, long from, long length) {
        return digest(key, from, length, 0, 0, null);
    }

    /**
     * Computes the MD5 digest of {@code length} bytes of {@code in} from {@code offset} as its four
     * little-endian words: {@code out4[j]} is digest bytes {@code 4j..4j+3}, byte {@code 4j} lowest.
     *
     * @param in     the bytes' array
     * @param offset where they start
     * @param length how many
     * @param out4   receives the four words (its first four elements)
     */
    public static void words(byte[] in, int offset, int length, int[] out4) {
        KeyBytes.checkSlice(in, offset, length);
        Objects.checkFromIndexSize(0, 4, out4.length);
        digest(in, offset, length, 0, 0, out4);
    }

    /**
     * {@return word 0 of the MD5 digest of the ASCII decimal of {@code n} (as {@link Integer#toString(int)}
     * writes it) followed by the key}: spymemcached's failover rehash, which hashes {@code tries + key},
     * without building the string
     *
     * @param n      the number in front of the key
     * @param key    the key's array
     * @param offset where the key starts
     * @param length the key's length in bytes
     */
    public static int le32WithDecimalPrefix(int n, byte[] key, int offset, int length) {
        KeyBytes.checkSlice(key, offset, length);
        return digest(key, offset, length, n, decimalLength(n), null);
    }

    /**
     * The digest of {@code prefixLength} bytes of the decimal of {@code prefix} (no prefix when 0) followed
     * by {@code length} bytes of the key from {@code from}; writes the four words to {@code out} if it is
     * not null and returns word 0.
     */
    private static int digest(Object key, long from, long length, int prefix, int prefixLength, int[] out) {
        long message = prefixLength + length;
        // The message, one 0x80 byte, zeros, its length in bits as 8 bytes: whole 64-byte blocks.
        long blocks = (message + 8) / 64 + 1;
        int a = A0;
        int b = B0;
        int c = C0;
        int d = D0;
        for (long block = 0; block < blocks; block++) {
            long p = block << 6;
            int x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15;
            if (prefixLength == 0 && p + 64 <= length) {
                long at = from + p;
                x0 = KeyBytes.le32(key, at);
                x1 = KeyBytes.le32(key, at + 4);
                x2 = KeyBytes.le32(key, at + 8);
                x3 = KeyBytes.le32(key, at + 12);
                x4 = KeyBytes.le32(key, at + 16);
                x5 = KeyBytes.le32(key, at + 20);
                x6 = KeyBytes.le32(key, at + 24);
                x7 = KeyBytes.le32(key, at + 28);
                x8 = KeyBytes.le32(key, at + 32);
                x9 = KeyBytes.le32(key, at + 36);
                x10 = KeyBytes.le32(key, at + 40);
                x11 = KeyBytes.le32(key, at + 44);
                x12 = KeyBytes.le32(key, at + 48);
                x13 = KeyBytes.le32(key, at + 52);
                x14 = KeyBytes.le32(key, at + 56);
                x15 = KeyBytes.le32(key, at + 60);
            } else {
                long lengthAt = (blocks << 6) - 8;
                x0 = word(key, from, length, prefix, prefixLength, lengthAt, p);
                x1 = word(key, from, length, prefix, prefixLength, lengthAt, p + 4);
                x2 = word(key, from, length, prefix, prefixLength, lengthAt, p + 8);
                x3 = word(key, from, length, prefix, prefixLength, lengthAt, p + 12);
                x4 = word(key, from, length, prefix, prefixLength, lengthAt, p + 16);
                x5 = word(key, from, length, prefix, prefixLength, lengthAt, p + 20);
                x6 = word(key, from, length, prefix, prefixLength, lengthAt, p + 24);
                x7 = word(key, from, length, prefix, prefixLength, lengthAt, p + 28);
                x8 = word(key, from, length, prefix, prefixLength, lengthAt, p + 32);
                x9 = word(key, from, length, prefix, prefixLength, lengthAt, p + 36);
                x10 = word(key, from, length, prefix, prefixLength, lengthAt, p + 40);
                x11 = word(key, from, length, prefix, prefixLength, lengthAt, p + 44);
                x12 = word(key, from, length, prefix, prefixLength, lengthAt, p + 48);
                x13 = word(key, from, length, prefix, prefixLength, lengthAt, p + 52);
                x14 = word(key, from, length, prefix, prefixLength, lengthAt, p + 56);
                x15 = word(key, from, length, prefix, prefixLength, lengthAt, p + 60);
            }
            int a0 = a;
            int b0 = b;
            int c0 = c;
            int d0 = d;
            // round 1
            a = ff(a, b, c, d, x0, 7, 0xd76aa478);
            d = ff(d, a, b, c, x1, 12, 0xe8c7b756);
            c = ff(c, d, a, b, x2, 17, 0x242070db);
            b = ff(b, c, d, a, x3, 22, 0xc1bdceee);
            a = ff(a, b, c, d, x4, 7, 0xf57c0faf);
            d = ff(d, a, b, c, x5, 12, 0x4787c62a);
            c = ff(c, d, a, b, x6, 17, 0xa8304613);
            b = ff(b, c, d, a, x7, 22, 0xfd469501);
            a = ff(a, b, c, d, x8, 7, 0x698098d8);
            d = ff(d, a, b, c, x9, 12, 0x8b44f7af);
            c = ff(c, d, a, b, x10, 17, 0xffff5bb1);
            b = ff(b, c, d, a, x11, 22, 0x895cd7be);
            a = ff(a, b, c, d, x12, 7, 0x6b901122);
            d = ff(d, a, b, c, x13, 12, 0xfd987193);
            c = ff(c, d, a, b, x14, 17, 0xa679438e);
            b = ff(b, c, d, a, x15, 22, 0x49b40821);
            // round 2
            a = gg(a, b, c, d, x1, 5, 0xf61e2562);
            d = gg(d, a, b, c, x6, 9, 0xc040b340);
            c = gg(c, d, a, b, x11, 14, 0x265e5a51);
            b = gg(b, c, d, a, x0, 20, 0xe9b6c7aa);
            a = gg(a, b, c, d, x5, 5, 0xd62f105d);
            d = gg(d, a, b, c, x10, 9, 0x02441453);
            c = gg(c, d, a, b, x15, 14, 0xd8a1e681);
            b = gg(b, c, d, a, x4, 20, 0xe7d3fbc8);
            a = gg(a, b, c, d, x9, 5, 0x21e1cde6);
            d = gg(d, a, b, c, x14, 9, 0xc33707d6);
            c = gg(c, d, a, b, x3, 14, 0xf4d50d87);
            b = gg(b, c, d, a, x8, 20, 0x455a14ed);
            a = gg(a, b, c, d, x13, 5, 0xa9e3e905);
            d = gg(d, a, b, c, x2, 9, 0xfcefa3f8);
            c = gg(c, d, a, b, x7, 14, 0x676f02d9);
            b = gg(b, c, d, a, x12, 20, 0x8d2a4c8a);
            // round 3
            a = hh(a, b, c, d, x5, 4, 0xfffa3942);
            d = hh(d, a, b, c, x8, 11, 0x8771f681);
            c = hh(c, d, a, b, x11, 16, 0x6d9d6122);
            b = hh(b, c, d, a, x14, 23, 0xfde5380c);
            a = hh(a, b, c, d, x1, 4, 0xa4beea44);
            d = hh(d, a, b, c, x4, 11, 0x4bdecfa9);
            c = hh(c, d, a, b, x7, 16, 0xf6bb4b60);
            b = hh(b, c, d, a, x10, 23, 0xbebfbc70);
            a = hh(a, b, c, d, x13, 4, 0x289b7ec6);
            d = hh(d, a, b, c, x0, 11, 0xeaa127fa);
            c = hh(c, d, a, b, x3, 16, 0xd4ef3085);
            b = hh(b, c, d, a, x6, 23, 0x04881d05);
            a = hh(a, b, c, d, x9, 4, 0xd9d4d039);
            d = hh(d, a, b, c, x12, 11, 0xe6db99e5);
            c = hh(c, d, a, b, x15, 16, 0x1fa27cf8);
            b = hh(b, c, d, a, x2, 23, 0xc4ac5665);
            // round 4
            a = ii(a, b, c, d, x0, 6, 0xf4292244);
            d = ii(d, a, b, c, x7, 10, 0x432aff97);
            c = ii(c, d, a, b, x14, 15, 0xab9423a7);
            b = ii(b, c, d, a, x5, 21, 0xfc93a039);
            a = ii(a, b, c, d, x12, 6, 0x655b59c3);
            d = ii(d, a, b, c, x3, 10, 0x8f0ccc92);
            c = ii(c, d, a, b, x10, 15, 0xffeff47d);
            b = ii(b, c, d, a, x1, 21, 0x85845dd1);
            a = ii(a, b, c, d, x8, 6, 0x6fa87e4f);
            d = ii(d, a, b, c, x15, 10, 0xfe2ce6e0);
            c = ii(c, d, a, b, x6, 15, 0xa3014314);
            b = ii(b, c, d, a, x13, 21, 0x4e0811a1);
            a = ii(a, b, c, d, x4, 6, 0xf7537e82);
            d = ii(d, a, b, c, x11, 10, 0xbd3af235);
            c = ii(c, d, a, b, x2, 15, 0x2ad7d2bb);
            b = ii(b, c, d, a, x9, 21, 0xeb86d391);
            a += a0;
            b += b0;
            c += c0;
            d += d0;
        }
        if (out != null) {
            out[0] = a;
            out[1] = b;
            out[2] = c;
            out[3] = d;
        }
        return a;
    }

    /**
     * The little-endian word at byte {@code p} of the padded message (prefix, key, 0x80, zeros, bit
     * length at {@code lengthAt}), for the blocks that are not wholly key bytes. Small, so that the JIT
     * inlines it and its key read into {@link #digest}; the rest is {@link #paddingWord}.
     */
    private static int word(Object key, long from, long length, int prefix, int prefixLength, long lengthAt, long p) {
        if (p >= prefixLength && p + 4 <= prefixLength + length) {
            return KeyBytes.le32(key, from + p - prefixLength);
        }
        return paddingWord(key, from, length, prefix, prefixLength, lengthAt, p);
    }

    /**
     * A word of the padded message that is not four key bytes: prefix, the key's last bytes, 0x80, zeros, the length.
     */
    private static int paddingWord(
            Object key, long from, long length, int prefix, int prefixLength, long lengthAt, long p) {
        long message = prefixLength + length;
        if (p >= lengthAt) {
            long bits = message << 3;
            return p == lengthAt ? (int) bits : (int) (bits >>> 32);
        }
        if (p > message) {
            return 0;
        }
        int word = 0;
        for (int i = 0; i < 4; i++) {
            long q = p + i;
            int octet;
            if (q < prefixLength) {
                octet = decimalByte(prefix, prefixLength, (int) q);
            } else if (q < message) {
                octet = KeyBytes.get(key, from + q - prefixLength) & 0xFF;
            } else {
                octet = q == message ? 0x80 : 0;
            }
            word |= octet << (8 * i);
        }
        return word;
    }

    /** {@return how many characters {@link Integer#toString(int)} writes for {@code n}} */
    private static int decimalLength(int n) {
        long magnitude = Math.abs((long) n);
        int digits = 1;
        while (digits < POW10.length && magnitude >= POW10[digits]) {
            digits++;
        }
        return n < 0 ? digits + 1 : digits;
    }

    /** {@return character {@code i} of the decimal of {@code n}, which is {@code length} characters long} */
    private static int decimalByte(int n, int length, int i) {
        int sign = n < 0 ? 1 : 0;
        if (i < sign) {
            return '-';
        }
        long magnitude = Math.abs((long) n);
        return '0' + (int) (magnitude / POW10[length - 1 - i] % 10);
    }

    private static int ff(int a, int b, int c, int d, int x, int s, int t) {
        return b + Integer.rotateLeft(a + ((b & c) | (~b & d)) + x + t, s);
    }

    private static int gg(int a, int b, int c, int d, int x, int s, int t) {
        return b + Integer.rotateLeft(a + ((b & d) | (c & ~d)) + x + t, s);
    }

    private static int hh(int a, int b, int c, int d, int x, int s, int t) {
        return b + Integer.rotateLeft(a + (b ^ c ^ d) + x + t, s);
    }

    private static int ii(int a, int b, int c, int d, int x, int s, int t) {
        return b + Integer.rotateLeft(a + (c ^ (b | ~d)) + x + t, s);
    }
}
