package io.ringstore.family;

import io.ringstore.internal.hash.HaproxyHash;
import io.ringstore.internal.hash.LibmemcachedHash;
import io.ringstore.internal.hash.TwemproxyHash;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;

/**
 * A key hash: what a ring family looks keys up by (and what the rollout buckets keys by), for the
 * three shapes a key comes in. The shapes agree: the same bytes hash the same as an array slice, a
 * buffer (heap or direct, between position and limit) or a segment (heap or native).
 *
 * <p>Contract of every implementation: a pure function of the key's bytes, thread-safe, allocation-free
 * (the lookup path calls it per key), and it neither moves a buffer's position, limit or mark nor
 * writes the key.
 *
 * <p>A hash has 32 or 64 bits ({@link #bits()}). {@link #hash} is always 32 bits: the whole value of
 * a 32-bit hash, the high word of a 64-bit one. {@link #hash64} is the whole value: a 32-bit hash's
 * unsigned, a 64-bit hash's all 64 bits.
 *
 * <p>Implementations live in this package ({@link #CRC32}, {@link #CRC32C}, {@link #MD5}, {@link #XXH64}, {@link #XXH64_SIGNED},
 * {@link #MURMUR2_64}, {@link #twemproxy(String)}, {@link #libmemcached(String)}); a ring family names one ({@link RingVersion#keyHash()}).
 */
public abstract class KeyHash {
    /** CRC-32 (IEEE 802.3), {@link java.util.zip.CRC32}'s checksum: nginx's and pingora-ketama's key hash. */
    public static final KeyHash CRC32 = new Crc32KeyHash();
    /** CRC-32C (Castagnoli), {@link java.util.zip.CRC32C}'s checksum: the rollout's bucket hash. */
    public static final KeyHash CRC32C = new Crc32cKeyHash();
    /**
     * Word 0 of the key's MD5 digest, bytes 0..3 little-endian: libketama's {@code ketama_hashi}, the
     * key hash of every ketama client (libmemcached's and twemproxy's {@code md5}, spymemcached's
     * {@code KETAMA_HASH}).
     */
    public static final KeyHash MD5 = new Md5KeyHash();
    /** XXH64 with seed 0, 64 bits: Envoy's default {@code ring_hash} hash and gRPC's. */
    public static final KeyHash XXH64 = new Xxh64KeyHash("xxh64", 0);
    /**
     * XXH64 with seed 0, its sign bit flipped: grpc-java's request hash ({@code XxHash64.hashAsciiString})
     * as a {@code grpc-java} ring looks it up. grpc-java orders its ring by signed {@code long}; flipping
     * the sign bit of the key hash and of every point maps that order onto the unsigned one the rings
     * search (FORMAT.md, "64-bit rings").
     */
    public static final KeyHash XXH64_SIGNED = new Xxh64KeyHash("xxh64-signed", Long.MIN_VALUE);
    /**
     * libstdc++'s 64-bit {@code std::_Hash_bytes} (a MurmurHash2 variant) with seed 0xc70f6907, 64 bits:
     * Envoy's {@code MURMUR_HASH_2} ring hash ({@code MurmurHash::murmurHash2} with {@code STD_HASH_SEED}).
     */
    public static final KeyHash MURMUR2_64 = new Murmur2x64KeyHash(0xc70f6907L);
    /** twemproxy's hash names ({@code hash:} in a pool's configuration), in twemproxy's own order. */
    public static final List<String> TWEMPROXY_HASHES =
            Arrays.stream(TwemproxyHash.values()).map(TwemproxyHash::configName).toList();
    /** libmemcached's hash names ({@code memcached_hash_t}, lower case), in libmemcached's own order. */
    public static final List<String> LIBMEMCACHED_HASHES = Arrays.stream(LibmemcachedHash.values())
            .map(LibmemcachedHash::configName)
            .toList();

    /**
     * HAProxy's hash names ({@code hash-type consistent FUNCTION [avalanche]}): each function, then each
     * with {@value #AVALANCHE} ({@code full_hash} of its value).
     */
    public static final List<String> HAPROXY_HASHES = haproxyNames();

    /** The suffix of a HAProxy hash name that applies {@code full_hash} to the function's value. */
    static final String AVALANCHE = "-avalanche";

    /** Eight key bytes as one little-endian word: how the table CRCs read a segment's key. */
    static final ValueLayout.OfLong LONG_LE = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private static final KeyHash[] TWEMPROXY = new KeyHash[TwemproxyHash.values().length];
    /** Each of twemproxy's hashes as a pool applies it ({@link TwemproxyPoolKeyHash}). */
    private static final KeyHash[] TWEMPROXY_POOL = new KeyHash[TwemproxyHash.values().length];

    static {
        for (TwemproxyHash h : TwemproxyHash.values()) {
            TWEMPROXY[h.ordinal()] = h == TwemproxyHash.MD5 ? MD5 : new TwemproxyKeyHash(h);
            TWEMPROXY_POOL[h.ordinal()] = new TwemproxyPoolKeyHash(TWEMPROXY[h.ordinal()]);
        }
    }

    /** libmemcached's hashes; its md5 is {@link #MD5}, so that rings of it and of the other ketama clients compare as one hash. */
    private static final KeyHash[] LIBMEMCACHED = Arrays.stream(LibmemcachedHash.values())
            .map(h -> h == LibmemcachedHash.MD5 ? MD5 : new LibmemcachedKeyHash(h))
            .toArray(KeyHash[]::new);

    /** HAProxy's hashes in the order of {@link #HAPROXY_HASHES}. */
    private static final KeyHash[] HAPROXY = new KeyHash[2 * HaproxyHash.values().length];

    static {
        for (HaproxyHash h : HaproxyHash.values()) {
            HAPROXY[2 * h.ordinal()] = new HaproxyKeyHash(h, false);
            HAPROXY[2 * h.ordinal() + 1] = new HaproxyKeyHash(h, true);
        }
    }

    private final String name;
    private final int bits;

    KeyHash(String name, int bits) {
        if (bits != 32 && bits != 64) {
            throw new IllegalArgumentException("a key hash has 32 or 64 bits: bits=" + bits);
        }
        this.name = name;
        this.bits = bits;
    }

    /**
     * {@return twemproxy's key hash of that configuration name, computed as twemproxy 0.5 computes it on
     * x86-64 Linux (where {@code char} is signed: the hashes that read a key byte through {@code char}
     * take bytes of 0x80 and more sign-extended)}; {@code md5} is {@link #MD5}. Its {@link #name()} is
     * {@code twemproxy:} and the configuration name, but for {@code md5}.
     *
     * @param name one of {@link #TWEMPROXY_HASHES}
     * @throws IllegalArgumentException if twemproxy has no hash of that name
     */
    public static KeyHash twemproxy(String name) {
        TwemproxyHash h = TwemproxyHash.byConfigName(name);
        if (h == null) {
            throw new IllegalArgumentException(
                    "unknown twemproxy hash '" + name + "' (expected " + String.join(", ", TWEMPROXY_HASHES) + ")");
        }
        return TWEMPROXY[h.ordinal()];
    }

    /** twemproxy's hash at {@code position} (from 1) of {@link #TWEMPROXY_HASHES} as a pool applies it: an empty key hashes to 0. */
    static KeyHash twemproxyPool(int position) {
        return TWEMPROXY_POOL[position - 1];
    }

    /**
     * {@return libmemcached's key hash of that name ({@code MEMCACHED_BEHAVIOR_HASH}), as libhashkit 1.1
     * computes it on x86-64 Linux (bytes read through a signed {@code char} where the C does so, as
     * twemproxy's)}: the hash of every key, the empty one too. Its {@link #name()} is
     * {@code libmemcached:} and the name, but for {@code md5}, which is {@link #MD5}.
     *
     * @param name one of {@link #LIBMEMCACHED_HASHES}
     * @throws IllegalArgumentException if libmemcached has no hash of that name
     */
    public static KeyHash libmemcached(String name) {
        int at = LIBMEMCACHED_HASHES.indexOf(name);
        if (at < 0) {
            throw new IllegalArgumentException("unknown libmemcached hash '" + name + "' (expected "
                    + String.join(", ", LIBMEMCACHED_HASHES) + ")");
        }
        return LIBMEMCACHED[at];
    }

    /** libmemcached's hash at {@code position} (from 1) of {@link #LIBMEMCACHED_HASHES}. */
    static KeyHash libmemcached(int position) {
        return LIBMEMCACHED[position - 1];
    }

    /**
     * {@return HAProxy 2.6's key hash of that name, as a backend with {@code hash-type consistent}
     * applies it}: {@code sdbm}, {@code djb2}, {@code wt6} or {@code crc32}, with {@code -avalanche}
     * when the backend says {@code avalanche}. Its {@link #name()} is {@code haproxy:} and the name.
     *
     * @param name one of {@link #HAPROXY_HASHES}
     * @throws IllegalArgumentException if HAProxy has no hash of that name
     */
    public static KeyHash haproxy(String name) {
        int i = HAPROXY_HASHES.indexOf(name);
        if (i < 0) {
            throw new IllegalArgumentException(
                    "unknown HAProxy hash '" + name + "' (expected " + String.join(", ", HAPROXY_HASHES) + ")");
        }
        return HAPROXY[i];
    }

    /** HAProxy's hash at {@code position} (from 1) of {@link #HAPROXY_HASHES}. */
    static KeyHash haproxy(int position) {
        return HAPROXY[position - 1];
    }

    private static List<String> haproxyNames() {
        return Arrays.stream(HaproxyHash.values())
                .flatMap(h -> java.util.stream.Stream.of(h.configName(), h.configName() + "-avalanche"))
                .toList();
    }

    /** {@return the hash's name: {@code crc32}, {@code crc32c}, {@code md5}, {@code xxh64}, {@code murmur2}, {@code twemproxy:fnv1a_64}, ...} */
    public final String name() {
        return name;
    }

    /** {@return how many bits the hash has: 32 or 64} */
    public final int bits() {
        return bits;
    }

    /**
     * {@return the hash of {@code length} bytes of {@code key} from {@code offset}}
     *
     * @param key    the key's array
     * @param offset where the key starts
     * @param length the key's length in bytes
     */
    public abstract int hash(byte[] key, int offset, int length);

    /**
     * {@return the hash of all of {@code key}}
     *
     * @param key the key
     */
    public final int hash(byte[] key) {
        return hash(key, 0, key.length);
    }

    /**
     * {@return the hash of the bytes from the buffer's position to its limit, heap or direct; the buffer is left as it was}
     *
     * @param key the key
     */
    public abstract int hash(ByteBuffer key);

    /**
     * {@return the hash of every byte of the segment, heap or native}
     *
     * @param key the key
     */
    public abstract int hash(MemorySegment key);

    /**
     * {@return the whole hash of {@code length} bytes of {@code key} from {@code offset}: a 32-bit hash's
     * value unsigned, a 64-bit hash's 64 bits}
     *
     * @param key    the key's array
     * @param offset where the key starts
     * @param length the key's length in bytes
     */
    public long hash64(byte[] key, int offset, int length) {
        return Integer.toUnsignedLong(hash(key, offset, length));
    }

    /**
     * {@return the whole hash of the bytes from the buffer's position to its limit (see
     * {@link #hash64(byte[], int, int)}), heap or direct; the buffer is left as it was}
     *
     * @param key the key
     */
    public long hash64(ByteBuffer key) {
        return Integer.toUnsignedLong(hash(key));
    }

    /**
     * {@return the whole hash of every byte of the segment (see {@link #hash64(byte[], int, int)}), heap
     * or native}
     *
     * @param key the key
     */
    public long hash64(MemorySegment key) {
        return Integer.toUnsignedLong(hash(key));
    }

    @Override
    public String toString() {
        return name;
    }
}
