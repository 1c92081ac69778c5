package io.ringstore.internal.hash;

/**
 * XXH64, the 64-bit xxHash (Cyan4973/xxHash, {@code doc/xxhash_spec.md}): Envoy's default ring hash
 * ({@code HashUtil::xxHash64}, seed 0) and gRPC's {@code ring_hash} (seed 0), for point texts and
 * request keys alike. Input words are read little-endian, as the specification defines them on every
 * platform. Thread-safe, allocation-free.
 */
public final class Xxh64 {
    private static final long P1 = 0x9E3779B185EBCA87L;
    private static final long P2 = 0xC2B2AE3D27D4EB4FL;
    private static final long P3 = 0x165667B19E3779F9L;
    private static final long P4 = 0x85EBCA77C2B2AE63L;
    private static final long P5 = 0x27D4EB2F165667C5L;

    private Xxh64() {}

    /**
     * {@return XXH64 of {@code length} bytes of {@code key} from {@code from}}: unchecked, the one entry
     * of the key hashes ({@code io.ringstore.family}), which take each key shape to it, and of
     * the 64-bit points ({@code PointSource}).
     *
     * @param key    a {@code byte[]}, a {@link java.lang.foreign.MemorySegment} or a {@link java.nio.ByteBuffer}
     *               without an accessible array (as {@link KeyBytes} reads them)
     * @param from   where the key starts
     * @param length the key's length in bytes
     * @param seed   the seed
     */
    public static long hash(Object key, long from, long length, long seed) {
        long p = from;
        long end = from + length;
        long h;
        if (length >= 32) {
            long v1 = seed + P1 + P2;
            long v2 = seed + P2;
            long v3 = seed;
            long v4 = seed - P1;
            long lastStripe = end - 32;
            do {
                v1 = round(v1, KeyBytes.le64(key, p));
                v2 = round(v2, KeyBytes.le64(key, p + 8));
                v3 = round(v3, KeyBytes.le64(key, p + 16));
                v4 = round(v4, KeyBytes.le64(key, p + 24));
                p += 32;
            } while (p <= lastStripe);
            h = Long.rotateLeft(v1, 1) + Long.rotateLeft(v2, 7) + Long.rotateLeft(v3, 12) + Long.rotateLeft(v4, 18);
            h = merge(h, v1);
            h = merge(h, v2);
            h = merge(h, v3);
            h = merge(h, v4);
        } else {
            h = seed + P5;
        }
        h += length;
        for (; p + 8 <= end; p += 8) {
            h ^= round(0, KeyBytes.le64(key, p));
            h = Long.rotateLeft(h, 27) * P1 + P4;
        }
        if (p + 4 <= end) {
            h ^= (KeyBytes.le32(key, p) & 0xFFFF_FFFFL) * P1;
            h = Long.rotateLeft(h, 23) * P2 + P3;
            p += 4;
        }
        for (; p < end; p++) {
            h ^= (KeyBytes.get(key, p) & 0xFFL) * P5;
            h = Long.rotateLeft(h, 11) * P1;
        }
        h ^= h >>> 33;
        h *= P2;
        h ^= h >>> 29;
        h *= P3;
        h ^= h >>> 32;
        return h;
    }

    private static long round(long acc, long lane) {
        return Long.rotateLeft(acc + lane * P2, 31) * P1;
    }

    private static long merge(long acc, long v) {
        return (acc ^ round(0, v)) * P1 + P4;
    }
}
