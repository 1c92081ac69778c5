package io.ringstore;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/**
 * A key hash: what a ring family looks keys up by (and what the rollout buckets keys by), for the
 * three shapes a key comes in. The shapes agree: the same bytes hash the same as an array slice, a
 * buffer (heap or direct, between position and limit) or a segment (heap or native).
 *
 * <p>Contract of every implementation: a pure function of the key's bytes, thread-safe, allocation-free
 * (the lookup path calls it per key), and it neither moves a buffer's position, limit or mark nor
 * writes the key.
 *
 * <p>Implementations live in this package ({@link #CRC32}, {@link #CRC32C}); a ring family names one.
 */
public abstract class KeyHash {
    /** CRC-32 (IEEE 802.3), {@link java.util.zip.CRC32}'s checksum: nginx's and pingora-ketama's key hash. */
    public static final KeyHash CRC32 = new Crc32KeyHash();
    /** CRC-32C (Castagnoli), {@link java.util.zip.CRC32C}'s checksum: the rollout's bucket hash. */
    public static final KeyHash CRC32C = new Crc32cKeyHash();

    private final String name;

    KeyHash(String name) {
        this.name = name;
    }

    /** {@return the hash's name: {@code crc32}, {@code crc32c}} */
    public final String name() {
        return name;
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

    @Override
    public String toString() {
        return name;
    }
}
