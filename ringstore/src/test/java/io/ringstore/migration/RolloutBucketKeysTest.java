package io.ringstore.migration;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** A key's rollout bucket is the same from a byte[] slice, a heap, direct or read-only ByteBuffer, and a heap or native MemorySegment. */
class RolloutBucketKeysTest {
    @Test
    void everyKeyFormGivesTheBucketOfItsBytes() {
        SplittableRandom random = new SplittableRandom(11);
        try (Arena arena = Arena.ofConfined()) {
            for (int n = 0; n < 2_000; n++) {
                byte[] bytes = new byte[random.nextInt(0, 300)];
                random.nextBytes(bytes);
                int pad = random.nextInt(0, 8);
                byte[] padded = new byte[bytes.length + 2 * pad];
                System.arraycopy(bytes, 0, padded, pad, bytes.length);
                int want = RolloutPolicy.bucket(bytes, 0, bytes.length);
                assertEquals(want, RolloutPolicy.bucket(padded, pad, bytes.length));

                ByteBuffer heap = ByteBuffer.wrap(padded, pad, bytes.length).slice();
                ByteBuffer direct = ByteBuffer.allocateDirect(padded.length)
                        .put(padded)
                        .position(pad)
                        .limit(pad + bytes.length);
                ByteBuffer readOnly = ByteBuffer.wrap(padded)
                        .position(pad)
                        .limit(pad + bytes.length)
                        .asReadOnlyBuffer();
                for (ByteBuffer b : new ByteBuffer[] {heap, direct, readOnly}) {
                    int position = b.position();
                    assertEquals(want, RolloutPolicy.bucket(b), "n=" + n);
                    assertEquals(position, b.position(), "the buffer is not moved");
                }
                MemorySegment nativeKey =
                        arena.allocate(Math.max(1, bytes.length)).asSlice(0, bytes.length);
                MemorySegment.copy(MemorySegment.ofArray(bytes), 0, nativeKey, 0, bytes.length);
                assertEquals(want, RolloutPolicy.bucket(nativeKey));
                assertEquals(
                        want, RolloutPolicy.bucket(MemorySegment.ofArray(padded).asSlice(pad, bytes.length)));

                RolloutPolicy p = RolloutPolicy.everywhere(random.nextInt(0, 101));
                boolean migrates = p.migrates(want);
                assertEquals(migrates, p.migrates(bytes, 0, bytes.length));
                assertEquals(migrates, p.migrates(direct));
                assertEquals(migrates, p.migrates(nativeKey));
            }
        }
    }
}
