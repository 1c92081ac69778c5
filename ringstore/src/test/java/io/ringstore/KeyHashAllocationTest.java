package io.ringstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.ringstore.family.KeyHash;
import io.ringstore.internal.hash.Md5;
import io.ringstore.internal.hash.Murmur2x64;
import io.ringstore.internal.hash.Xxh64;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.IntToLongFunction;
import org.junit.jupiter.api.Test;

/**
 * Every key hash of the ring families (MD5, XXH64, MurmurHash2-64, twemproxy's), in every key shape,
 * allocates nothing once compiled: 100,000 calls after a warm-up
 * must allocate under 1 KB in all, by the thread's allocation counter
 * ({@link AllocationMeter}). An allocation of even one
 * small object a call would show as megabytes.
 *
 * <p>Not a matter of timing: a hash that does not allocate passes in some round of 100,000 calls
 * once the JIT has compiled it, however long that takes; one that allocates fails every round.
 */
@org.junit.jupiter.api.Tag("slow") // seconds of warm-up and 100,000 calls a case: the full lane
class KeyHashAllocationTest {
    private static final int CALLS = 100_000;
    private static final int WARM_UP = 20_000;
    private static final int ROUNDS = 20;
    private static final long LIMIT = 1024;
    /** 63 bytes: two MD5 blocks, an XXH64 stripe and every tail (8, 4, 3 bytes), hsieh's 3-byte tail. */
    private static final int LENGTH = 63;
    /** 40 bytes: one MD5 block. */
    private static final int ONE_BLOCK = 40;

    @Test
    void noHashAllocatesInAnyShape() {
        AllocationMeter meter = AllocationMeter.create();
        assumeTrue(meter != null, "this JVM counts no allocated bytes per thread");
        SplittableRandom random = new SplittableRandom(0xA110C);
        byte[] padded = new byte[LENGTH + 4];
        random.nextBytes(padded);
        int offset = 3;
        try (Arena arena = Arena.ofConfined()) {
            ByteBuffer heap = ByteBuffer.wrap(padded, offset, LENGTH);
            ByteBuffer readOnly = heap.asReadOnlyBuffer();
            ByteBuffer direct = ByteBuffer.allocateDirect(padded.length);
            direct.put(padded).position(offset).limit(offset + LENGTH);
            MemorySegment heapSegment = MemorySegment.ofArray(padded).asSlice(offset, LENGTH);
            MemorySegment nativeSegment = arena.allocate(LENGTH + 1).asSlice(1, LENGTH);
            MemorySegment.copy(padded, offset, nativeSegment, ValueLayout.JAVA_BYTE, 0, LENGTH);

            Map<String, IntToLongFunction> calls = new LinkedHashMap<>();
            for (KeyHash h : KeyHashFamiliesTest.allHashes()) {
                if (h == KeyHash.CRC32 || h == KeyHash.CRC32C) {
                    // Their array paths make a java.util.zip.CRC32 / CRC32C a call and rely on the JIT to
                    // scalar-replace it, which it does in some call contexts and not in others (16 bytes a
                    // call, measured on JDK 25): not the hashes this test is for.
                    continue;
                }
                // hash and hash64 in turn (a 32-bit hash64 and a 64-bit hash are one step from the other)
                calls.put(h + " hash(byte[], int, int)", i -> h.hash(padded, offset, LENGTH));
                calls.put(h + " hash64(heap ByteBuffer)", i -> h.hash64(heap));
                calls.put(h + " hash(read-only ByteBuffer)", i -> h.hash(readOnly));
                calls.put(h + " hash64(direct ByteBuffer)", i -> h.hash64(direct));
                calls.put(h + " hash(heap MemorySegment)", i -> h.hash(heapSegment));
                calls.put(h + " hash64(native MemorySegment)", i -> h.hash64(nativeSegment));
            }
            int[] words = new int[4];
            calls.put("Md5.words", i -> {
                Md5.words(padded, offset, LENGTH, words);
                return words[3];
            });
            calls.put("Md5.le32WithDecimalPrefix", i -> Md5.le32WithDecimalPrefix(i, padded, offset, LENGTH));
            // 40 bytes: MD5's one-block path (the calls above are of two blocks)
            calls.put("Md5.le32 (one block)", i -> Md5.le32(padded, offset, ONE_BLOCK));
            calls.put("Md5.words (one block)", i -> {
                Md5.words(padded, offset, ONE_BLOCK, words);
                return words[3];
            });
            MemorySegment oneBlockSegment = nativeSegment.asSlice(0, ONE_BLOCK);
            ByteBuffer oneBlockDirect = direct.duplicate().limit(offset + ONE_BLOCK);
            calls.put("md5 hash(native MemorySegment) (one block)", i -> KeyHash.MD5.hash(oneBlockSegment));
            calls.put("md5 hash64(direct ByteBuffer) (one block)", i -> KeyHash.MD5.hash64(oneBlockDirect));
            calls.put("Xxh64.hash(seeded)", i -> Xxh64.hash(padded, offset, LENGTH, i));
            calls.put("Murmur2x64.hash(seeded)", i -> Murmur2x64.hash(nativeSegment, 0, nativeSegment.byteSize(), i));

            List<String> allocating = new ArrayList<>();
            for (Map.Entry<String, IntToLongFunction> c : calls.entrySet()) {
                long bytes = meter.leastAllocated(c.getValue(), WARM_UP, CALLS, ROUNDS, LIMIT);
                System.out.println(c.getKey() + ": " + bytes + " bytes allocated in " + CALLS + " calls");
                if (bytes >= LIMIT) {
                    allocating.add(c.getKey() + ": " + bytes + " bytes in " + CALLS + " calls");
                }
            }
            assertEquals(List.of(), allocating, "key hashes that allocate");
            assertEquals(offset, heap.position());
            assertEquals(offset, direct.position());
        }
    }
}
