package io.ringstore;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.ringstore.family.KeyHash;
import io.ringstore.family.RingVersion;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.zip.CRC32;
import java.util.zip.CRC32C;
import java.util.zip.Checksum;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Every key hash gives the JDK checksum's value for every key shape, and moves no buffer. */
class KeyHashTest {
    @Test
    void crc32AndCrc32cAgreeWithTheJdkInEveryShape() {
        check(KeyHash.CRC32, new CRC32());
        check(KeyHash.CRC32C, new CRC32C());
        assertEquals("crc32", KeyHash.CRC32.name());
        assertEquals("crc32c", KeyHash.CRC32C.name());
    }

    @Test
    void ringHashIsTheFamiliesKeyHash(@TempDir Path dir) throws Exception {
        byte[] key = "some key".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        Path file = dir.resolve("v1-v2.ring");
        TestRings.build(file, "server 10.0.0.1:80;\nserver 10.0.0.2:80;\n", RingVersion.V1, RingVersion.v2(160));
        try (RingStore store = RingStore.open(file)) {
            assertEquals(
                    Integer.toUnsignedLong(RingVersion.V1.keyHash().hash(key)),
                    store.ring(Set.of(), RingVersion.V1).hash(key));
            assertEquals(
                    Integer.toUnsignedLong(RingVersion.v2(160).keyHash().hash(ByteBuffer.wrap(key))),
                    store.ring(Set.of(), RingVersion.v2(160)).hash(MemorySegment.ofArray(key)));
        }
    }

    private static void check(KeyHash hash, Checksum jdk) {
        SplittableRandom random = new SplittableRandom(0x4B);
        for (int length = 0; length < 40; length++) {
            byte[] padded = new byte[length + 7];
            random.nextBytes(padded);
            int offset = 3;
            jdk.reset();
            jdk.update(padded, offset, length);
            int expected = (int) jdk.getValue();
            String what = hash + " length " + length;
            assertEquals(expected, hash.hash(padded, offset, length), what + " array");
            byte[] exact = java.util.Arrays.copyOfRange(padded, offset, offset + length);
            assertEquals(expected, hash.hash(exact), what + " whole array");
            ByteBuffer heap = ByteBuffer.wrap(padded, offset, length);
            assertEquals(expected, hash.hash(heap), what + " heap buffer");
            assertEquals(offset, heap.position(), what + " position kept");
            assertEquals(expected, hash.hash(heap.asReadOnlyBuffer()), what + " read-only buffer");
            for (ByteOrder order : new ByteOrder[] {ByteOrder.BIG_ENDIAN, ByteOrder.LITTLE_ENDIAN}) {
                ByteBuffer direct = ByteBuffer.allocateDirect(padded.length).order(order);
                direct.put(padded).position(offset).limit(offset + length);
                assertEquals(expected, hash.hash(direct), what + " direct buffer " + order);
                assertEquals(offset, direct.position(), what + " position kept");
            }
            assertEquals(
                    expected, hash.hash(MemorySegment.ofArray(padded).asSlice(offset, length)), what + " heap segment");
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment native_ = arena.allocate(length + 1).asSlice(1, length);
                MemorySegment.copy(MemorySegment.ofArray(exact), 0, native_, 0, length);
                assertEquals(expected, hash.hash(native_), what + " native segment");
            }
        }
    }
}
