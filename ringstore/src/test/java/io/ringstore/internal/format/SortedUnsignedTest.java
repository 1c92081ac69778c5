package io.ringstore.internal.format;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The verifier's radix sort of chain hashes: unsigned order, duplicates kept, only the first count values. */
class SortedUnsignedTest {
    private static int[] reference(int[] values, int count) {
        long[] widened = new long[count];
        for (int i = 0; i < count; i++) {
            widened[i] = Integer.toUnsignedLong(values[i]);
        }
        Arrays.sort(widened);
        int[] out = new int[count];
        for (int i = 0; i < count; i++) {
            out[i] = (int) widened[i];
        }
        return out;
    }

    @Test
    void sortsInUnsignedOrder() {
        SplittableRandom random = new SplittableRandom(21);
        for (int n : new int[] {0, 1, 2, 17, 1000, 100_000}) {
            int[] values = new int[n + 5];
            for (int i = 0; i < values.length; i++) {
                values[i] = switch (i % 7) {
                    case 0 -> random.nextInt(4); // duplicates
                    case 1 -> 0x8000_0000 | random.nextInt(); // above 2^31 unsigned
                    case 2 -> -1;
                    default -> random.nextInt();
                };
            }
            assertArrayEquals(reference(values, n), RingFileVerifier.sortedUnsigned(values, n), "n = " + n);
        }
    }
}
