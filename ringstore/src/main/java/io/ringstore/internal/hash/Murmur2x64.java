package io.ringstore.internal.hash;

/**
 * The 64-bit MurmurHash2 variant of libstdc++'s {@code std::_Hash_bytes} on a 64-bit {@code size_t}
 * ({@code libstdc++-v3/libsupc++/hash_bytes.cc}), which Envoy copies as {@code MurmurHash::murmurHash2}
 * ({@code source/common/common/hash.cc}) and calls with {@code STD_HASH_SEED} 0xc70f6907 for its
 * {@code MURMUR_HASH_2} ring hash. Not Austin Appleby's MurmurHash64A: the 8-byte words are mixed
 * ({@code shift_mix(w * m) * m}) before they are folded in, and the last 1..7 bytes are not, read as a
 * little-endian number of that many bytes (unsigned). Words are little-endian, as on x86-64.
 * Thread-safe, allocation-free.
 */
public final class Murmur2x64 {
    /** libstdc++'s {@code mul}: 0xc6a4a793 in the high half, 0x5bd1e995 in the low half. */
    private static final long MUL = 0xc6a4a793_5bd1e995L;

    private Murmur2x64() {}

    /**
     * {@return the hash of {@code length} bytes of {@code key} from {@code from}}: unchecked, the one entry
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
        long h = seed ^ (length * MUL);
        long wordsEnd = from + (length & ~7L);
        for (long p = from; p < wordsEnd; p += 8) {
            h ^= shiftMix(KeyBytes.le64(key, p) * MUL) * MUL;
            h *= MUL;
        }
        int tail = (int) (length & 7);
        if (tail != 0) {
            long data = 0;
            for (int i = tail - 1; i >= 0; i--) {
                data = (data << 8) | (KeyBytes.get(key, wordsEnd + i) & 0xFFL);
            }
            h ^= data;
            h *= MUL;
        }
        h = shiftMix(h) * MUL;
        return shiftMix(h);
    }

    private static long shiftMix(long v) {
        return v ^ (v >>> 47);
    }
}
