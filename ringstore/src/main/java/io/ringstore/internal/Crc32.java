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

    // Slicing-by-4 tables: T[k][b] is the register after byte b followed by k zero bytes.
    private static final int[] T0 = new int[256];
    private static final int[] T1 = new int[256];
    private static final int[] T2 = new int[256];
    private static final int[] T3 = new int[256];

    static {
        for (int b = 0; b < 256; b++) {
            int c = b;
            for (int k = 0; k < 8; k++) {
                c = (c & 1) != 0 ? (c >>> 1) ^ 0xEDB8_8320 : c >>> 1;
            }
            T0[b] = c;
        }
        for (int b = 0; b < 256; b++) {
            T1[b] = (T0[b] >>> 8) ^ T0[T0[b] & 0xFF];
            T2[b] = (T1[b] >>> 8) ^ T0[T1[b] & 0xFF];
            T3[b] = (T2[b] >>> 8) ^ T0[T2[b] & 0xFF];
        }
    }

    private Crc32() {
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
}
