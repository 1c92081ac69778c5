package io.ringstore.internal;

/**
 * CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of {@link java.util.zip.CRC32C},
 * by slicing-by-8 tables, for the keys the JDK's intrinsic cannot take without a copy or an allocation
 * (direct buffers, native segments). A state is the register before the final inversion: start from
 * {@link #INITIAL}, feed bytes, finish with {@link #finish}.
 */
public final class Crc32c {
    public static final int INITIAL = 0xFFFF_FFFF;

    /** Slicing-by-8: {@code TABLE[k * 256 + b]} is the register after byte b followed by k zero bytes. */
    private static final int[] TABLE = new int[8 * 256];

    static {
        System.arraycopy(Crc32.byteTable(0x82F6_3B78), 0, TABLE, 0, 256);
        for (int k = 1; k < 8; k++) {
            for (int b = 0; b < 256; b++) {
                int prev = TABLE[(k - 1) * 256 + b];
                TABLE[k * 256 + b] = (prev >>> 8) ^ TABLE[prev & 0xFF];
            }
        }
    }

    private Crc32c() {}

    /** The register after the eight little-endian bytes of {@code word}: eight independent lookups. */
    public static int updateLongLE(int c, long word) {
        int l = c ^ (int) word;
        int h = (int) (word >>> 32);
        return TABLE[7 * 256 + (l & 0xFF)]
                ^ TABLE[6 * 256 + ((l >>> 8) & 0xFF)]
                ^ TABLE[5 * 256 + ((l >>> 16) & 0xFF)]
                ^ TABLE[4 * 256 + (l >>> 24)]
                ^ TABLE[3 * 256 + (h & 0xFF)]
                ^ TABLE[2 * 256 + ((h >>> 8) & 0xFF)]
                ^ TABLE[256 + ((h >>> 16) & 0xFF)]
                ^ TABLE[h >>> 24];
    }

    public static int updateByte(int c, byte b) {
        return TABLE[(c ^ b) & 0xFF] ^ (c >>> 8);
    }

    public static int finish(int c) {
        return ~c;
    }
}
