package io.ringstore.live;

import io.ringstore.Ring;
import io.ringstore.migration.RolloutPolicy;
import java.util.zip.CRC32;
import java.util.zip.CRC32C;

/**
 * Test only: the rollout's choice as the code of 2 December 2026 (before issue 21's rollout work) made it,
 * frozen here so that a faster route can be held to it answer for answer. Not to be "fixed": a change
 * here is a change of which backend a key gets.
 *
 * <ul>
 * <li>bucket: CRC-32C of the key's bytes, then murmur3's fmix32, then the unsigned value modulo 10,000;</li>
 * <li>migrates: in scope, and 100 % or (more than 0 % and bucket below the basis points);</li>
 * <li>backend: the chosen version's ring looked up by the CRC-32 (IEEE) of the key's bytes.</li>
 * </ul>
 * Two CRC-32C codes, both from that day: the JDK's (what arrays went through) and the byte-at-a-time
 * table (what direct buffers and native segments went through); {@link #bucketByTable} must agree with
 * {@link #bucket}.
 */
final class RolloutReference {
    private static final int[] CRC32C_TABLE = new int[256];

    static {
        for (int b = 0; b < 256; b++) {
            int c = b;
            for (int k = 0; k < 8; k++) {
                c = (c & 1) != 0 ? (c >>> 1) ^ 0x82F6_3B78 : c >>> 1;
            }
            CRC32C_TABLE[b] = c;
        }
    }

    private RolloutReference() {}

    static int bucket(byte[] key, int offset, int length) {
        CRC32C crc = new CRC32C();
        crc.update(key, offset, length);
        return spread((int) crc.getValue());
    }

    static int bucketByTable(byte[] key, int offset, int length) {
        int c = 0xFFFF_FFFF;
        for (int i = offset; i < offset + length; i++) {
            c = CRC32C_TABLE[(c ^ key[i]) & 0xFF] ^ (c >>> 8);
        }
        return spread(~c);
    }

    private static int spread(int h) {
        h ^= h >>> 16;
        h *= 0x85eb_ca6b;
        h ^= h >>> 13;
        h *= 0xc2b2_ae35;
        h ^= h >>> 16;
        return (int) (Integer.toUnsignedLong(h) % 10_000);
    }

    static boolean migrates(RolloutPolicy policy, byte[] key, int offset, int length) {
        int bp = policy.basisPoints();
        boolean inScope = policy.scope().isEmpty() || policy.scope().contains(policy.localDataCentre());
        return inScope && (bp == 10_000 || bp > 0 && bucket(key, offset, length) < bp);
    }

    static int ringHash(byte[] key, int offset, int length) {
        CRC32 crc = new CRC32();
        crc.update(key, offset, length);
        return (int) crc.getValue();
    }

    /** {@return the backend index the key gets: the old or new ring as the policy chooses, or -1} */
    static int backend(RolloutPolicy policy, Ring oldRing, Ring newRing, byte[] key, int offset, int length) {
        Ring ring = migrates(policy, key, offset, length) ? newRing : oldRing;
        return ring.lookupHash(ringHash(key, offset, length));
    }
}
