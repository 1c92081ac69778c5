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
 * <p><b>Written for the chain.</b> MD5 is 64 steps, each waiting for the value the step before made, so
 * its time is that chain's latency; everything else can run beside it. Each step adds what is known
 * early first ({@code a + (x + T)}, and for G the part {@code c & ~d} of the old values) and the
 * newest value last, through the shortest F: {@code d ^ (b & (c ^ d))}, {@code (b & d) + (c & ~d)},
 * {@code (c ^ d) ^ b}, {@code c ^ (b | ~d)}; then the rotation and {@code + b}. The message is read
 * eight bytes at a time, a block's eight reads before its first step, the last block's padding made
 * as it is read ({@link #padded}), so a key of up to 55 bytes is one block read once; word 0 alone
 * (the key hashes) skips the last three steps, which make only words 1 to 3. A key hash of 8 to 55
 * bytes, one block, takes {@link #oneBlock}: no loop, no saved state, the first word read without a
 * choice and the seventh pair made without a read (115.3 → 104 ns a key on AMD Zen 4 with the block's
 * reads first, issue 32).
 *
 * <p>Thread-safe (no state), allocation-free.
 */
public final class Md5 {
    /**
     * The initial state (A, B, C, D), read from this array: from constants, the JIT would carry each
     * value of the first block as an offset from one and add it back on the chain, step after step.
     */
    private static final int[] INITIAL = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476};
    /**
     * RFC 1321's table T, one entry a step, read from this array rather than written as constants: the
     * JIT (C2) moves a constant addend to the outermost add of a sum ({@code (x + 1) + y} into
     * {@code (x + y) + 1}), which would put it after F, on the chain.
     */
    private static final int[] T = {
        0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee,
        0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
        0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be,
        0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
        //
        0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa,
        0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
        0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed,
        0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
        //
        0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c,
        0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
        0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05,
        0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
        //
        0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039,
        0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
        0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1,
        0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
    };
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
        return core(key, offset, length);
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
        if (length >= 8 && length <= 55) {
            return oneBlock(key, from, length);
        }
        return digest(key, from, length, 0, 0, null);
    }

    /**
     * Word 0 of the digest of a key of 8 to 55 bytes: one block, its message words made before the first
     * step (the eighth pair is the bit length), the padding from {@link #tail}; the steps written here
     * rather than called, as a method of them is too large for the JIT to inline (measured 2.5 ns a key
     * slower with its 16 words passed as arguments).
     */
    private static int oneBlock(Object key, long from, long length) {
        long tail = tail(key, from, length);
        long w0 = KeyBytes.le64(key, from); // 8 ≤ length: the first eight bytes are the key's
        long w1 = padded(key, from, length, tail, 8);
        long w2 = padded(key, from, length, tail, 16);
        long w3 = padded(key, from, length, tail, 24);
        long w4 = padded(key, from, length, tail, 32);
        long w5 = padded(key, from, length, tail, 40);
        long w6 = (length & ~7L) == 48 ? tail : 0; // length ≤ 55: no key byte of its own
        int x0 = (int) w0;
        int x1 = (int) (w0 >>> 32);
        int x2 = (int) w1;
        int x3 = (int) (w1 >>> 32);
        int x4 = (int) w2;
        int x5 = (int) (w2 >>> 32);
        int x6 = (int) w3;
        int x7 = (int) (w3 >>> 32);
        int x8 = (int) w4;
        int x9 = (int) (w4 >>> 32);
        int x10 = (int) w5;
        int x11 = (int) (w5 >>> 32);
        int x12 = (int) w6;
        int x13 = (int) (w6 >>> 32);
        int x14 = (int) length << 3;
        int x15 = 0;
        int a = INITIAL[0];
        int b = INITIAL[1];
        int c = INITIAL[2];
        int d = INITIAL[3];
        a = ff(a, b, c, d, x0 + T[0], 7);
        d = ff(d, a, b, c, x1 + T[1], 12);
        c = ff(c, d, a, b, x2 + T[2], 17);
        b = ff(b, c, d, a, x3 + T[3], 22);
        a = ff(a, b, c, d, x4 + T[4], 7);
        d = ff(d, a, b, c, x5 + T[5], 12);
        c = ff(c, d, a, b, x6 + T[6], 17);
        b = ff(b, c, d, a, x7 + T[7], 22);
        a = ff(a, b, c, d, x8 + T[8], 7);
        d = ff(d, a, b, c, x9 + T[9], 12);
        c = ff(c, d, a, b, x10 + T[10], 17);
        b = ff(b, c, d, a, x11 + T[11], 22);
        a = ff(a, b, c, d, x12 + T[12], 7);
        d = ff(d, a, b, c, x13 + T[13], 12);
        c = ff(c, d, a, b, x14 + T[14], 17);
        b = ff(b, c, d, a, x15 + T[15], 22);
        // round 2
        a = gg(a, b, c, d, x1 + T[16], 5);
        d = gg(d, a, b, c, x6 + T[17], 9);
        c = gg(c, d, a, b, x11 + T[18], 14);
        b = gg(b, c, d, a, x0 + T[19], 20);
        a = gg(a, b, c, d, x5 + T[20], 5);
        d = gg(d, a, b, c, x10 + T[21], 9);
        c = gg(c, d, a, b, x15 + T[22], 14);
        b = gg(b, c, d, a, x4 + T[23], 20);
        a = gg(a, b, c, d, x9 + T[24], 5);
        d = gg(d, a, b, c, x14 + T[25], 9);
        c = gg(c, d, a, b, x3 + T[26], 14);
        b = gg(b, c, d, a, x8 + T[27], 20);
        a = gg(a, b, c, d, x13 + T[28], 5);
        d = gg(d, a, b, c, x2 + T[29], 9);
        c = gg(c, d, a, b, x7 + T[30], 14);
        b = gg(b, c, d, a, x12 + T[31], 20);
        // round 3
        a = hh(a, b, c, d, x5 + T[32], 4);
        d = hh(d, a, b, c, x8 + T[33], 11);
        c = hh(c, d, a, b, x11 + T[34], 16);
        b = hh(b, c, d, a, x14 + T[35], 23);
        a = hh(a, b, c, d, x1 + T[36], 4);
        d = hh(d, a, b, c, x4 + T[37], 11);
        c = hh(c, d, a, b, x7 + T[38], 16);
        b = hh(b, c, d, a, x10 + T[39], 23);
        a = hh(a, b, c, d, x13 + T[40], 4);
        d = hh(d, a, b, c, x0 + T[41], 11);
        c = hh(c, d, a, b, x3 + T[42], 16);
        b = hh(b, c, d, a, x6 + T[43], 23);
        a = hh(a, b, c, d, x9 + T[44], 4);
        d = hh(d, a, b, c, x12 + T[45], 11);
        c = hh(c, d, a, b, x15 + T[46], 16);
        b = hh(b, c, d, a, x2 + T[47], 23);
        // round 4
        a = ii(a, b, c, d, x0 + T[48], 6);
        d = ii(d, a, b, c, x7 + T[49], 10);
        c = ii(c, d, a, b, x14 + T[50], 15);
        b = ii(b, c, d, a, x5 + T[51], 21);
        a = ii(a, b, c, d, x12 + T[52], 6);
        d = ii(d, a, b, c, x3 + T[53], 10);
        c = ii(c, d, a, b, x10 + T[54], 15);
        b = ii(b, c, d, a, x1 + T[55], 21);
        a = ii(a, b, c, d, x8 + T[56], 6);
        d = ii(d, a, b, c, x15 + T[57], 10);
        c = ii(c, d, a, b, x6 + T[58], 15);
        b = ii(b, c, d, a, x13 + T[59], 21);
        a = ii(a, b, c, d, x4 + T[60], 6);
        return a + INITIAL[0];
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
        long bits = message << 3;
        // Where the bit length goes: the last 8 bytes of whole blocks holding the message and 0x80.
        long lengthAt = ((message + 8) / 64 + 1 << 6) - 8;
        long tail = prefixLength == 0 && length >= 8 ? tail(key, from, length) : 0;
        int a = INITIAL[0];
        int b = INITIAL[1];
        int c = INITIAL[2];
        int d = INITIAL[3];
        for (long p = 0; ; p += 64) {
            boolean last = p + 56 == lengthAt;
            int a0 = a;
            int b0 = b;
            int c0 = c;
            int d0 = d;
            // The block's eight reads first, all independent of the chain: on AMD Zen 4 this measured
            // 110.8 ns a key against 115.3 with each pair read just before round 1 needs it (issue 32).
            // round 1
            long w0 = eight(key, from, length, prefix, prefixLength, lengthAt, tail, p);
            int x0 = (int) w0;
            int x1 = (int) (w0 >>> 32);
            long w1 = eight(key, from, length, prefix, prefixLength, lengthAt, tail, p + 8);
            int x2 = (int) w1;
            int x3 = (int) (w1 >>> 32);
            long w2 = eight(key, from, length, prefix, prefixLength, lengthAt, tail, p + 16);
            int x4 = (int) w2;
            int x5 = (int) (w2 >>> 32);
            long w3 = eight(key, from, length, prefix, prefixLength, lengthAt, tail, p + 24);
            int x6 = (int) w3;
            int x7 = (int) (w3 >>> 32);
            long w4 = eight(key, from, length, prefix, prefixLength, lengthAt, tail, p + 32);
            int x8 = (int) w4;
            int x9 = (int) (w4 >>> 32);
            long w5 = eight(key, from, length, prefix, prefixLength, lengthAt, tail, p + 40);
            int x10 = (int) w5;
            int x11 = (int) (w5 >>> 32);
            long w6 = eight(key, from, length, prefix, prefixLength, lengthAt, tail, p + 48);
            int x12 = (int) w6;
            int x13 = (int) (w6 >>> 32);
            long w7 = eight(key, from, length, prefix, prefixLength, lengthAt, tail, p + 56) | (last ? bits : 0);
            int x14 = (int) w7;
            int x15 = (int) (w7 >>> 32);
            a = ff(a, b, c, d, x0 + T[0], 7);
            d = ff(d, a, b, c, x1 + T[1], 12);
            c = ff(c, d, a, b, x2 + T[2], 17);
            b = ff(b, c, d, a, x3 + T[3], 22);
            a = ff(a, b, c, d, x4 + T[4], 7);
            d = ff(d, a, b, c, x5 + T[5], 12);
            c = ff(c, d, a, b, x6 + T[6], 17);
            b = ff(b, c, d, a, x7 + T[7], 22);
            a = ff(a, b, c, d, x8 + T[8], 7);
            d = ff(d, a, b, c, x9 + T[9], 12);
            c = ff(c, d, a, b, x10 + T[10], 17);
            b = ff(b, c, d, a, x11 + T[11], 22);
            a = ff(a, b, c, d, x12 + T[12], 7);
            d = ff(d, a, b, c, x13 + T[13], 12);
            c = ff(c, d, a, b, x14 + T[14], 17);
            b = ff(b, c, d, a, x15 + T[15], 22);
            // round 2
            a = gg(a, b, c, d, x1 + T[16], 5);
            d = gg(d, a, b, c, x6 + T[17], 9);
            c = gg(c, d, a, b, x11 + T[18], 14);
            b = gg(b, c, d, a, x0 + T[19], 20);
            a = gg(a, b, c, d, x5 + T[20], 5);
            d = gg(d, a, b, c, x10 + T[21], 9);
            c = gg(c, d, a, b, x15 + T[22], 14);
            b = gg(b, c, d, a, x4 + T[23], 20);
            a = gg(a, b, c, d, x9 + T[24], 5);
            d = gg(d, a, b, c, x14 + T[25], 9);
            c = gg(c, d, a, b, x3 + T[26], 14);
            b = gg(b, c, d, a, x8 + T[27], 20);
            a = gg(a, b, c, d, x13 + T[28], 5);
            d = gg(d, a, b, c, x2 + T[29], 9);
            c = gg(c, d, a, b, x7 + T[30], 14);
            b = gg(b, c, d, a, x12 + T[31], 20);
            // round 3
            a = hh(a, b, c, d, x5 + T[32], 4);
            d = hh(d, a, b, c, x8 + T[33], 11);
            c = hh(c, d, a, b, x11 + T[34], 16);
            b = hh(b, c, d, a, x14 + T[35], 23);
            a = hh(a, b, c, d, x1 + T[36], 4);
            d = hh(d, a, b, c, x4 + T[37], 11);
            c = hh(c, d, a, b, x7 + T[38], 16);
            b = hh(b, c, d, a, x10 + T[39], 23);
            a = hh(a, b, c, d, x13 + T[40], 4);
            d = hh(d, a, b, c, x0 + T[41], 11);
            c = hh(c, d, a, b, x3 + T[42], 16);
            b = hh(b, c, d, a, x6 + T[43], 23);
            a = hh(a, b, c, d, x9 + T[44], 4);
            d = hh(d, a, b, c, x12 + T[45], 11);
            c = hh(c, d, a, b, x15 + T[46], 16);
            b = hh(b, c, d, a, x2 + T[47], 23);
            // round 4
            a = ii(a, b, c, d, x0 + T[48], 6);
            d = ii(d, a, b, c, x7 + T[49], 10);
            c = ii(c, d, a, b, x14 + T[50], 15);
            b = ii(b, c, d, a, x5 + T[51], 21);
            a = ii(a, b, c, d, x12 + T[52], 6);
            d = ii(d, a, b, c, x3 + T[53], 10);
            c = ii(c, d, a, b, x10 + T[54], 15);
            b = ii(b, c, d, a, x1 + T[55], 21);
            a = ii(a, b, c, d, x8 + T[56], 6);
            d = ii(d, a, b, c, x15 + T[57], 10);
            c = ii(c, d, a, b, x6 + T[58], 15);
            b = ii(b, c, d, a, x13 + T[59], 21);
            a = ii(a, b, c, d, x4 + T[60], 6);
            if (last && out == null) {
                return a + a0; // word 0 alone: the last three steps make only words 1 to 3
            }
            d = ii(d, a, b, c, x11 + T[61], 10);
            c = ii(c, d, a, b, x2 + T[62], 15);
            b = ii(b, c, d, a, x9 + T[63], 21);
            a += a0;
            b += b0;
            c += c0;
            d += d0;
            if (last) {
                break;
            }
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
     * {@return the eight bytes at {@code p} of the message (the prefix and the key), then 0x80, zeros and
     * the bit length at {@code lengthAt}, little-endian; without the length for a message without prefix
     * of at least 8 bytes}
     */
    private static long eight(
            Object key, long from, long length, int prefix, int prefixLength, long lengthAt, long tail, long p) {
        if (prefixLength == 0 && length >= 8) {
            return padded(key, from, length, tail, p);
        }
        return Integer.toUnsignedLong(word(key, from, length, prefix, prefixLength, lengthAt, p))
                | (long) word(key, from, length, prefix, prefixLength, lengthAt, p + 4) << 32;
    }

    /**
     * {@return the eight bytes of a key of at least 8 bytes where it ends: its {@code length % 8} last
     * bytes, then 0x80, zeros} Read as the key's last eight bytes, shifted.
     */
    private static long tail(Object key, long from, long length) {
        int left = (int) length & 7;
        long lastEight = KeyBytes.le64(key, from + length - 8);
        return (left == 0 ? 0 : lastEight >>> (64 - 8 * left)) | 0x80L << (8 * left);
    }

    /**
     * The eight bytes at {@code p} (a multiple of 8) of a key of at least 8 bytes followed by 0x80 and
     * zeros, little-endian: the key's while they are all the key's, {@code tail} ({@link #tail}) where it
     * ends, 0 after. The read is at {@code p} or, past the key's end, at its last eight bytes, so that it
     * is always in the key and can be made before the choice. (The choice written with masks instead,
     * branch-free, measured 5 % slower over keys of 20 to 60 bytes.)
     */
    private static long padded(Object key, long from, long length, long tail, long p) {
        long whole = KeyBytes.le64(key, from + Math.min(p, length - 8));
        long end = length & ~7L; // where the key's last whole eight bytes end
        long after = p == end ? tail : 0;
        return p < end ? whole : after;
    }

    /**
     * The little-endian word at byte {@code p} of the padded message (prefix, key, 0x80, zeros, bit
     * length at {@code lengthAt}), read byte by byte where it is not four key bytes: for a message with a
     * prefix or a key of under eight bytes ({@link #eight}). Small, so that the JIT inlines it and its
     * key read; the rest is {@link #paddingWord}.
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

    // The steps. In each, a + xt (xt is x + T, a the value of four steps before) is ready before the
    // newest value, b, which enters last: F and I take two operations after b, G and H one.

    private static int ff(int a, int b, int c, int d, int xt, int s) {
        return b + Integer.rotateLeft(a + xt + (d ^ (b & (c ^ d))), s);
    }

    private static int gg(int a, int b, int c, int d, int xt, int s) {
        return b + Integer.rotateLeft(a + xt + (c & ~d) + (b & d), s);
    }

    private static int hh(int a, int b, int c, int d, int xt, int s) {
        return b + Integer.rotateLeft(a + xt + ((c ^ d) ^ b), s);
    }

    private static int ii(int a, int b, int c, int d, int xt, int s) {
        return b + Integer.rotateLeft(a + xt + (c ^ (b | ~d)), s);
    }
}
