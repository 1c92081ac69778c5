package io.ringstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.ringstore.family.Families;
import io.ringstore.family.KeyHash;
import io.ringstore.family.RingFamily;
import io.ringstore.family.RingVersion;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A ring hashes a key by its own family ({@link Ring#hash(byte[])}), so a caller that hashes first and
 * then looks up, fails over or asks for the key's position gets {@link Ring#lookup}'s answer, in every
 * family ({@link FamilyLookupAllocationTest#VERSIONS}) and every key shape. The static CRC-32
 * {@code Ring.hash} that this replaced answered wrong, without a sign, on every family that does not
 * hash keys by CRC-32: {@link #crc32AnswersOnlyNginxAndPingora} counts them.
 */
class RingHashTest {
    private static final int KEYS = 300;

    @TempDir
    Path dir;

    @Test
    void theRingsHashLooksUpAsTheKey() throws Exception {
        List<byte[]> keys = keys();
        for (String name : FamilyLookupAllocationTest.VERSIONS) {
            RingVersion version = RingVersion.parse(name);
            try (RingStore store = open(name, version)) {
                Ring ring = store.ring(Set.of(), version);
                for (byte[] key : keys) {
                    String what = name + " key " + new String(key, StandardCharsets.US_ASCII);
                    int expected = ring.lookup(key);
                    long hash = ring.hash(key);
                    byte[] padded = new byte[key.length + 5];
                    System.arraycopy(key, 0, padded, 3, key.length);
                    assertEquals(hash, ring.hash(padded, 3, key.length), what);
                    assertEquals(hash, ring.hash(ByteBuffer.wrap(padded, 3, key.length)), what);
                    assertEquals(hash, ring.hash(MemorySegment.ofArray(key)), what);
                    assertEquals(hash, ring.keyHash().hash64(key, 0, key.length), what);
                    assertEquals(expected, ring.lookupHash(hash), what);
                    assertEquals(expected, ring.select(hash, 1, b -> true), what);
                    assertSame(store.backend(expected), ring.selectBackend(hash, 1, b -> true), what);
                    assertEquals(expected, ring.select(hash, key, 0, key.length, 1, b -> true), what);
                    assertEquals(expected, ring.select(key, 0, key.length, 1, b -> true), what);
                    assertEquals(expected, ring.pointBackend(ring.pointIndex(hash)), what);
                    if (!ring.isWide()) {
                        // A 32-bit ring reads the low 32 bits: an int hash widened with its sign lands alike.
                        assertEquals(expected, ring.lookupHash((int) hash), what);
                    }
                }
            }
        }
    }

    /**
     * What a caller of the static CRC-32 {@code Ring.hash} got: {@code lookupHash(CRC-32(key))} differs
     * from {@code lookup(key)} for some key in every family but nginx's and pingora's.
     */
    @Test
    void crc32AnswersOnlyNginxAndPingora() throws Exception {
        List<byte[]> keys = keys();
        Map<RingFamily, Boolean> crc32Answers = new LinkedHashMap<>();
        for (String name : FamilyLookupAllocationTest.VERSIONS) {
            RingVersion version = RingVersion.parse(name);
            if (crc32Answers.containsKey(version.family())) {
                continue;
            }
            try (RingStore store = open(name, version)) {
                Ring ring = store.ring(Set.of(), version);
                boolean same = true;
                for (byte[] key : keys) {
                    same &= ring.lookupHash(Integer.toUnsignedLong(KeyHash.CRC32.hash(key))) == ring.lookup(key);
                }
                crc32Answers.put(version.family(), same);
            }
        }
        assertEquals(Families.all(), List.copyOf(crc32Answers.keySet()), "every family once");
        List<RingFamily> right = new ArrayList<>();
        crc32Answers.forEach((family, same) -> {
            if (same) {
                right.add(family);
            }
        });
        assertEquals(List.of(Families.NGINX, Families.PINGORA), right);
        assertEquals(
                Families.all().size() - 2, crc32Answers.size() - right.size(), "families a CRC-32 hash answered wrong");
    }

    private RingStore open(String name, RingVersion version) throws Exception {
        Path file = dir.resolve(name.replace(':', '-') + ".ring");
        if (!java.nio.file.Files.exists(file)) {
            TestRings.build(file, fleet(new SplittableRandom(name.hashCode())), version);
        }
        return RingStore.open(file);
    }

    /** 40 servers of weights 1 to 10, as {@link FamilyLookupAllocationTest} builds them. */
    private static String fleet(SplittableRandom random) {
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < 40; i++) {
            text.append("server 10.0.0.")
                    .append(i + 1)
                    .append(":11211 weight=")
                    .append(1 + random.nextInt(10))
                    .append(";\n");
        }
        return text.toString();
    }

    private static List<byte[]> keys() {
        SplittableRandom random = new SplittableRandom(0x4A5);
        List<byte[]> keys = new ArrayList<>();
        for (int k = 0; k < KEYS; k++) {
            keys.add(("/objects/" + random.nextLong() + "/" + k).getBytes(StandardCharsets.US_ASCII));
        }
        return keys;
    }
}
