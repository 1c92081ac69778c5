package io.ringstore.bench;

/**
 * The floor of an MD5 of one block on this machine: the 64 dependent steps alone, no message read and no
 * padding, each step as short as its operations allow ({@code b + rotl(a + k + F(b, c, d), s)} with
 * {@code a + k} ready before the newest value {@code b}, which enters F last). The step's addend
 * {@code k} (x + T in a real MD5) is read from an array, as a constant would be moved by the JIT to
 * after F. {@link Md5Benchmark} measures it beside ringstore's MD5 and the JDK's.
 */
final class Md5Floor {
    /** RFC 1321's table T, one entry a step, standing for x + T. */
    private static final int[] K = {
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

    /**
     * MD5's initial state, read from an array: from constants the JIT would fold the first steps and carry
     * constant offsets through the rest of the chain.
     */
    private static final int[] INITIAL = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476};

    private Md5Floor() {}

    /** {@return word 0 after the 64 steps from a state that depends on {@code seed}} */
    static int chain(int seed) {
        int a = INITIAL[0] + seed;
        int b = INITIAL[1];
        int c = INITIAL[2];
        int d = INITIAL[3];
        // round 1
        a = ff(a, b, c, d, K[0], 7);
        d = ff(d, a, b, c, K[1], 12);
        c = ff(c, d, a, b, K[2], 17);
        b = ff(b, c, d, a, K[3], 22);
        a = ff(a, b, c, d, K[4], 7);
        d = ff(d, a, b, c, K[5], 12);
        c = ff(c, d, a, b, K[6], 17);
        b = ff(b, c, d, a, K[7], 22);
        a = ff(a, b, c, d, K[8], 7);
        d = ff(d, a, b, c, K[9], 12);
        c = ff(c, d, a, b, K[10], 17);
        b = ff(b, c, d, a, K[11], 22);
        a = ff(a, b, c, d, K[12], 7);
        d = ff(d, a, b, c, K[13], 12);
        c = ff(c, d, a, b, K[14], 17);
        b = ff(b, c, d, a, K[15], 22);
        // round 2
        a = gg(a, b, c, d, K[16], 5);
        d = gg(d, a, b, c, K[17], 9);
        c = gg(c, d, a, b, K[18], 14);
        b = gg(b, c, d, a, K[19], 20);
        a = gg(a, b, c, d, K[20], 5);
        d = gg(d, a, b, c, K[21], 9);
        c = gg(c, d, a, b, K[22], 14);
        b = gg(b, c, d, a, K[23], 20);
        a = gg(a, b, c, d, K[24], 5);
        d = gg(d, a, b, c, K[25], 9);
        c = gg(c, d, a, b, K[26], 14);
        b = gg(b, c, d, a, K[27], 20);
        a = gg(a, b, c, d, K[28], 5);
        d = gg(d, a, b, c, K[29], 9);
        c = gg(c, d, a, b, K[30], 14);
        b = gg(b, c, d, a, K[31], 20);
        // round 3
        a = hh(a, b, c, d, K[32], 4);
        d = hh(d, a, b, c, K[33], 11);
        c = hh(c, d, a, b, K[34], 16);
        b = hh(b, c, d, a, K[35], 23);
        a = hh(a, b, c, d, K[36], 4);
        d = hh(d, a, b, c, K[37], 11);
        c = hh(c, d, a, b, K[38], 16);
        b = hh(b, c, d, a, K[39], 23);
        a = hh(a, b, c, d, K[40], 4);
        d = hh(d, a, b, c, K[41], 11);
        c = hh(c, d, a, b, K[42], 16);
        b = hh(b, c, d, a, K[43], 23);
        a = hh(a, b, c, d, K[44], 4);
        d = hh(d, a, b, c, K[45], 11);
        c = hh(c, d, a, b, K[46], 16);
        b = hh(b, c, d, a, K[47], 23);
        // round 4
        a = ii(a, b, c, d, K[48], 6);
        d = ii(d, a, b, c, K[49], 10);
        c = ii(c, d, a, b, K[50], 15);
        b = ii(b, c, d, a, K[51], 21);
        a = ii(a, b, c, d, K[52], 6);
        d = ii(d, a, b, c, K[53], 10);
        c = ii(c, d, a, b, K[54], 15);
        b = ii(b, c, d, a, K[55], 21);
        a = ii(a, b, c, d, K[56], 6);
        d = ii(d, a, b, c, K[57], 10);
        c = ii(c, d, a, b, K[58], 15);
        b = ii(b, c, d, a, K[59], 21);
        a = ii(a, b, c, d, K[60], 6);
        d = ii(d, a, b, c, K[61], 10);
        c = ii(c, d, a, b, K[62], 15);
        b = ii(b, c, d, a, K[63], 21);
        return a + b + c + d;
    }

    private static int ff(int a, int b, int c, int d, int k, int s) {
        return b + Integer.rotateLeft(a + k + (d ^ (b & (c ^ d))), s);
    }

    private static int gg(int a, int b, int c, int d, int k, int s) {
        return b + Integer.rotateLeft(a + k + (c & ~d) + (b & d), s);
    }

    private static int hh(int a, int b, int c, int d, int k, int s) {
        return b + Integer.rotateLeft(a + k + ((c ^ d) ^ b), s);
    }

    private static int ii(int a, int b, int c, int d, int k, int s) {
        return b + Integer.rotateLeft(a + k + (c ^ (b | ~d)), s);
    }
}
