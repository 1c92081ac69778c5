package io.ringstore.internal;

/**
 * CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), the checksum of {@link java.util.zip.CRC32},
 * with its running state exposed so that a point hash can continue from a per-backend base state
 * (nginx and pingora-ketama both do), which {@code java.util.zip.CRC32} cannot.
 *
 * <p>A state is the register before the final inversion: start from {@link #INITIAL}, feed bytes
 * with {@link #update}, finish with {@link #finish}.
 */
public final class Crc32 {
    public static final int INITIAL = 0xFFFF_FFFF;

    // Slicing-by-8 tables: T[k][b] is the register after byte b followed by k zero bytes.
    private static final int[] T0 = new int[256];
    private static final int[] T1 = new int[256];
    private static final int[] T2 = new int[256];
    private static final int[] T3 = new int[256];
    private static final int[] T4 = new int[256];
    private static final int[] T5 = new int[256];
    private static final int[] T6 = new int[256];
    private static final int[] T7 = new int[256];

    /**
     * Points of one chain computed at once, each from the point {@value} places before it
     * ({@link PointChain}): 8 counted 3.3 M points into buckets in 4.6 ms on one core where 4 took 5.7
     * and one at a time 10.
     */
    public static final int LANES = 8;

    // The jump of a point chain by LANES points, by byte: J[k][b] is S^LANES(b << 8k), where
    // S(c) = updateIntLE(c, 0), the linear map of feeding four bytes.
    private static final int[] J0 = new int[256];
    private static final int[] J1 = new int[256];
    private static final int[] J2 = new int[256];
    private static final int[] J3 = new int[256];

    static {
        System.arraycopy(byteTable(0xEDB8_8320), 0, T0, 0, 256);
        for (int b = 0; b < 256; b++) {
            T1[b] = (T0[b] >>> 8) ^ T0[T0[b] & 0xFF];
            T2[b] = (T1[b] >>> 8) ^ T0[T1[b] & 0xFF];
            T3[b] = (T2[b] >>> 8) ^ T0[T2[b] & 0xFF];
            T4[b] = (T3[b] >>> 8) ^ T0[T3[b] & 0xFF];
            T5[b] = (T4[b] >>> 8) ^ T0[T4[b] & 0xFF];
            T6[b] = (T5[b] >>> 8) ^ T0[T5[b] & 0xFF];
            T7[b] = (T6[b] >>> 8) ^ T0[T6[b] & 0xFF];
        }
        int[][] jump = {J0, J1, J2, J3};
        for (int k = 0; k < 4; k++) {
            for (int b = 0; b < 256; b++) {
                int c = b << (8 * k);
                for (int i = 0; i < LANES; i++) {
                    c = updateIntLE(c, 0);
                }
                jump[k][b] = c;
            }
        }
    }

    private Crc32() {}

    /**
     * {@return the register after each byte b, from a zero register, of the reflected CRC-32 of
     * {@code polynomial}}: the first table of slicing-by-8, here and in {@link Crc32c}
     */
    static int[] byteTable(int polynomial) {
        int[] table = new int[256];
        for (int b = 0; b < 256; b++) {
            int c = b;
            for (int k = 0; k < 8; k++) {
                c = (c & 1) != 0 ? (c >>> 1) ^ polynomial : c >>> 1;
            }
            table[b] = c;
        }
        return table;
    }

    public static int update(int state, byte[] bytes) {
        for (byte b : bytes) {
            state = T0[(state ^ b) & 0xFF] ^ (state >>> 8);
        }
        return state;
    }

    public static int updateByte(int state, byte b) {
        return T0[(state ^ b) & 0xFF] ^ (state >>> 8);
    }

    /** The state after feeding the four little-endian bytes of {@code word}. */
    public static int updateIntLE(int state, int word) {
        int c = state ^ word;
        return T3[c & 0xFF] ^ T2[(c >>> 8) & 0xFF] ^ T1[(c >>> 16) & 0xFF] ^ T0[c >>> 24];
    }

    /**
     * The state after feeding the eight little-endian bytes of {@code word}: one step where two
     * {@link #updateIntLE} would be two in a row (the eight lookups are independent of each other).
     */
    public static int updateLongLE(int state, long word) {
        int c = state ^ (int) word;
        int h = (int) (word >>> 32);
        return T7[c & 0xFF]
                ^ T6[(c >>> 8) & 0xFF]
                ^ T5[(c >>> 16) & 0xFF]
                ^ T4[c >>> 24]
                ^ T3[h & 0xFF]
                ^ T2[(h >>> 8) & 0xFF]
                ^ T1[(h >>> 16) & 0xFF]
                ^ T0[h >>> 24];
    }

    public static int finish(int state) {
        return ~state;
    }

    /**
     * The point hashes of one backend, as nginx and pingora-ketama generate them: point i is the
     * CRC-32 continued from {@code base} over the previous point's hash as 4 little-endian bytes
     * (the first "previous" is 0).
     */
    public static int nextPoint(int base, int previousHash) {
        return ~updateIntLE(base, previousHash);
    }

    /**
     * The point hashes of one backend ({@link #nextPoint}) in order, {@value #LANES} chains at a time.
     *
     * <p>Why it is fast: one point follows from the previous by a table lookup, so a single chain waits
     * on each lookup in turn. But feeding bytes is linear over GF(2): with S(c) = {@code updateIntLE(c, 0)},
     * {@code nextPoint(base, h) = ~S(base) ^ S(h)}, an affine map f(h) = K ^ S(h). Applying it m times
     * gives f^m(h) = S^m(h) ^ f^m(0), and f^m(0) is point m of the chain (the chain starts from 0).
     * So point i + m follows from point i by a jump S^m (four lookups in tables made once) and one XOR
     * with point m: points 1..m start m independent chains that the processor runs side by side.
     *
     * <p>Not thread-safe; reused for backend after backend ({@link #start}).
     */
    public static final class PointChain {
        private final int[] lanes = new int[LANES];
        /** Point LANES of the chain: f^LANES(0), the constant of the jump. */
        private int step;

        private long left;
        private boolean first;

        /**
         * Starts the chain of the backend whose address leaves the CRC state {@code base}, for {@code points} points.
         */
        public void start(int base, long points) {
            if (points < 0) {
                throw new IllegalArgumentException("points cannot be negative: points=" + points);
            }
            int h = 0;
            for (int l = 0; l < LANES; l++) {
                h = nextPoint(base, h);
                lanes[l] = h;
            }
            step = h;
            left = points;
            first = true;
        }

        /**
         * Writes the next point hashes into {@code out}, as many as it holds or as remain; returns how
         * many (0 when the chain is done).
         *
         * @param out its length a multiple of {@value #LANES} (the last round may write past the count returned)
         */
        public int next(int[] out) {
            if (out.length % LANES != 0 || out.length == 0) {
                throw new IllegalArgumentException(
                        "the buffer's length must be a positive multiple of " + LANES + ": length=" + out.length);
            }
            int n = (int) Math.min(left, out.length);
            if (n == 0) {
                return 0;
            }
            int l0 = lanes[0];
            int l1 = lanes[1];
            int l2 = lanes[2];
            int l3 = lanes[3];
            int l4 = lanes[4];
            int l5 = lanes[5];
            int l6 = lanes[6];
            int l7 = lanes[7];
            int from = 0;
            if (first) {
                out[0] = l0;
                out[1] = l1;
                out[2] = l2;
                out[3] = l3;
                out[4] = l4;
                out[5] = l5;
                out[6] = l6;
                out[7] = l7;
                from = LANES;
                first = false;
            }
            int s = step;
            for (int i = from; i < n; i += LANES) {
                l0 = jump(l0) ^ s;
                l1 = jump(l1) ^ s;
                l2 = jump(l2) ^ s;
                l3 = jump(l3) ^ s;
                l4 = jump(l4) ^ s;
                l5 = jump(l5) ^ s;
                l6 = jump(l6) ^ s;
                l7 = jump(l7) ^ s;
                out[i] = l0;
                out[i + 1] = l1;
                out[i + 2] = l2;
                out[i + 3] = l3;
                out[i + 4] = l4;
                out[i + 5] = l5;
                out[i + 6] = l6;
                out[i + 7] = l7;
            }
            lanes[0] = l0;
            lanes[1] = l1;
            lanes[2] = l2;
            lanes[3] = l3;
            lanes[4] = l4;
            lanes[5] = l5;
            lanes[6] = l6;
            lanes[7] = l7;
            left -= n;
            return n;
        }

        private static int jump(int h) {
            return J0[h & 0xFF] ^ J1[(h >>> 8) & 0xFF] ^ J2[(h >>> 16) & 0xFF] ^ J3[h >>> 24];
        }
    }
}
