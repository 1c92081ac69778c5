package io.ringstore.internal.hash;

/**
 * libmemcached's key hashes ({@code memcached_hash_t}, {@code MEMCACHED_BEHAVIOR_HASH}), in the order of
 * its enum ({@code HASHKIT_HASH_DEFAULT} to {@code HASHKIT_HASH_MURMUR3}), as libhashkit 1.1
 * ({@code awesomized/libmemcached} {@code src/libhashkit/*.cc}) computes them on x86-64 Linux.
 *
 * <p>All but murmur3 are twemproxy's functions of the same code ({@link TwemproxyHash}: twemproxy copied
 * libhashkit's), bytes read through a signed {@code char} alike: {@code default} is one_at_a_time,
 * {@code crc} the 15-bit {@code (~crc >> 16) & 0x7fff}. murmur3 is MurmurHash3 x86_32 with the seed
 * {@code 0xdeadbeef * length}, as {@code hashkit_murmur3} seeds it. Unlike a twemproxy pool, the empty
 * key is hashed like any other. Each hash is the C function's {@code uint32_t}, as a Java {@code int}.
 * Thread-safe, allocation-free.
 */
public enum LibmemcachedHash {
    /** {@code MEMCACHED_HASH_DEFAULT}: Bob Jenkins' one-at-a-time, bytes sign-extended. */
    DEFAULT("default", TwemproxyHash.ONE_AT_A_TIME),
    MD5("md5", TwemproxyHash.MD5),
    /** {@code hashkit_crc32}: bits 16..30 of the CRC-32 (IEEE). */
    CRC("crc", TwemproxyHash.CRC32),
    FNV1_64("fnv1_64", TwemproxyHash.FNV1_64),
    FNV1A_64("fnv1a_64", TwemproxyHash.FNV1A_64),
    FNV1_32("fnv1_32", TwemproxyHash.FNV1_32),
    FNV1A_32("fnv1a_32", TwemproxyHash.FNV1A_32),
    /** Only in a libhashkit built with {@code HAVE_HSIEH_HASH} (Debian's is not: the setting is refused there). */
    HSIEH("hsieh", TwemproxyHash.HSIEH),
    MURMUR("murmur", TwemproxyHash.MURMUR),
    JENKINS("jenkins", TwemproxyHash.JENKINS),
    /** MurmurHash3 x86_32, seed {@code 0xdeadbeef * length} ({@code murmur3_api.cc}). */
    MURMUR3("murmur3", null);

    private final String configName;
    /** The same function in twemproxy's table; null for murmur3. */
    private final TwemproxyHash twemproxy;

    LibmemcachedHash(String configName, TwemproxyHash twemproxy) {
        this.configName = configName;
        this.twemproxy = twemproxy;
    }

    /** {@return the hash's name: {@code libmemcached_string_hash} in lower case ({@code default}, {@code fnv1a_64})} */
    public String configName() {
        return configName;
    }

    /**
     * {@return the hash of {@code length} bytes of {@code key} from {@code from}}; unchecked.
     *
     * @param key    a {@code byte[]}, a {@link java.lang.foreign.MemorySegment} or a {@link java.nio.ByteBuffer}
     *               without an accessible array (as {@link KeyBytes} reads them)
     * @param from   where the key starts
     * @param length the key's length in bytes
     */
    public int core(Object key, long from, long length) {
        return twemproxy != null ? twemproxy.core(key, from, length) : murmur3(key, from, length);
    }

    private static int murmur3(Object key, long from, long length) {
        final int c1 = 0xCC9E_2D51;
        final int c2 = 0x1B87_3593;
        int h = 0xDEAD_BEEF * (int) length;
        long p = from;
        long end = from + length;
        for (; end - p >= 4; p += 4) {
            int k = KeyBytes.le32(key, p);
            k *= c1;
            k = Integer.rotateLeft(k, 15);
            k *= c2;
            h ^= k;
            h = Integer.rotateLeft(h, 13);
            h = h * 5 + 0xE654_6B64;
        }
        int k = 0;
        for (int i = (int) (end - p) - 1; i >= 0; i--) {
            k |= (KeyBytes.get(key, p + i) & 0xFF) << (8 * i); // uint8_t: unsigned
        }
        k *= c1; // a zero tail mixes in nothing
        k = Integer.rotateLeft(k, 15);
        k *= c2;
        h ^= k;
        h ^= (int) length;
        h ^= h >>> 16;
        h *= 0x85EB_CA6B;
        h ^= h >>> 13;
        h *= 0xC2B2_AE35;
        h ^= h >>> 16;
        return h;
    }
}
