package io.ringstore.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import java.util.zip.CRC32;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

/** {@link KeyCrcs}: both CRCs of one pass are the JDK's, for every length, alignment and byte order. */
class KeyCrcsTest {

    private static long reference(byte[] key) {
        CRC32 a = new CRC32();
        a.update(key);
        CRC32C c = new CRC32C();
        c.update(key);
        return (a.getValue() << 32) | c.getValue();
    }

    @Test
    void checkValuesOfTheStandards() {
        byte[] check = "123456789".getBytes(StandardCharsets.US_ASCII);
        ByteBuffer direct = ByteBuffer.allocateDirect(check.length).put(0, check);
        long both = KeyCrcs.of(direct);
        assertEquals(0xCBF4_3926L, KeyCrcs.crc32(both), "CRC-32/ISO-HDLC check value");
        assertEquals(0xE306_9283, KeyCrcs.crc32c(both), "CRC-32C check value");
        assertEquals(0L, KeyCrcs.of(ByteBuffer.allocateDirect(0)), "the empty key");
    }

    @Test
    void equalsTheJdksCrcsForDirectBuffersAndNativeSegments() {
        SplittableRandom r = new SplittableRandom(21);
        try (Arena arena = Arena.ofConfined()) {
            ByteBuffer big = ByteBuffer.allocateDirect(200 + 16);
            ByteBuffer little = ByteBuffer.allocateDirect(200 + 16).order(ByteOrder.LITTLE_ENDIAN);
            MemorySegment segment = arena.allocate(200 + 16);
            for (int i = 0; i < 4000; i++) {
                byte[] key = new byte[r.nextInt(i < 1000 ? 24 : 200)];
                r.nextBytes(key);
                int at = r.nextInt(16); // unaligned starts too
                long expected = reference(key);
                big.put(at, key);
                little.put(at, key);
                MemorySegment.copy(key, 0, segment, ValueLayout.JAVA_BYTE, at, key.length);
                String what = "length " + key.length + " at " + at;
                ByteBuffer b = big.duplicate().position(at).limit(at + key.length);
                assertEquals(expected, KeyCrcs.of(b), "big-endian direct buffer, " + what);
                assertEquals(at, b.position(), "the buffer is not moved");
                assertEquals(
                        expected,
                        KeyCrcs.of(little.duplicate()
                                .order(ByteOrder.LITTLE_ENDIAN)
                                .position(at)
                                .limit(at + key.length)),
                        "little-endian direct buffer, " + what);
                assertEquals(
                        expected,
                        KeyCrcs.of(ByteBuffer.wrap(key).asReadOnlyBuffer()),
                        "read-only heap buffer, " + what);
                assertEquals(expected, KeyCrcs.of(segment.asSlice(at, key.length)), "native segment, " + what);
            }
        }
    }

    @Test
    void bucketIsTheRolloutPolicysOfTheCrc32c() {
        SplittableRandom r = new SplittableRandom(7);
        for (int i = 0; i < 2000; i++) {
            byte[] key = new byte[r.nextInt(100)];
            r.nextBytes(key);
            CRC32C c = new CRC32C();
            c.update(key);
            assertEquals(
                    io.ringstore.migration.RolloutPolicy.bucket(key, 0, key.length),
                    KeyCrcs.bucket((int) c.getValue()),
                    () -> "key of " + key.length + " bytes");
        }
    }
}
