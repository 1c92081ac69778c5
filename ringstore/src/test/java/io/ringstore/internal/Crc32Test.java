package io.ringstore.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import java.util.zip.CRC32;
import org.junit.jupiter.api.Test;

class Crc32Test {

    private static int reference(byte[]... parts) {
        CRC32 crc = new CRC32();
        for (byte[] p : parts) {
            crc.update(p);
        }
        return (int) crc.getValue();
    }

    private static byte[] littleEndian(int v) {
        return new byte[] {(byte) v, (byte) (v >>> 8), (byte) (v >>> 16), (byte) (v >>> 24)};
    }

    @Test
    void checkValueOfTheStandard() {
        // The CRC-32/ISO-HDLC check value: CRC of "123456789".
        assertEquals(
                0xCBF4_3926,
                Crc32.finish(Crc32.update(Crc32.INITIAL, "123456789".getBytes(StandardCharsets.US_ASCII))));
        assertEquals(0, Crc32.finish(Crc32.update(Crc32.INITIAL, new byte[0])));
    }

    @Test
    void equalsJavaUtilZipCrc32ForRandomInputs() {
        SplittableRandom r = new SplittableRandom(1);
        for (int i = 0; i < 3000; i++) {
            byte[] data = new byte[r.nextInt(i < 300 ? 8 : 600)];
            r.nextBytes(data);
            assertEquals(
                    reference(data), Crc32.finish(Crc32.update(Crc32.INITIAL, data)), () -> "length " + data.length);
            // Feeding in two pieces continues the state.
            int cut = data.length == 0 ? 0 : r.nextInt(data.length + 1);
            byte[] a = java.util.Arrays.copyOfRange(data, 0, cut);
            byte[] b = java.util.Arrays.copyOfRange(data, cut, data.length);
            assertEquals(reference(data), Crc32.finish(Crc32.update(Crc32.update(Crc32.INITIAL, a), b)));
        }
    }

    @Test
    void updateIntLeEqualsFeedingFourLittleEndianBytes() {
        SplittableRandom r = new SplittableRandom(2);
        for (int i = 0; i < 100_000; i++) {
            int state = r.nextInt();
            int word = i < 16 ? (1 << (i * 2)) * (i & 1) : r.nextInt();
            assertEquals(Crc32.update(state, littleEndian(word)), Crc32.updateIntLE(state, word));
        }
    }

    @Test
    void pointChainEqualsCrc32OfBaseInputAndPreviousHash() {
        SplittableRandom r = new SplittableRandom(3);
        for (int i = 0; i < 300; i++) {
            byte[] input = ("127.0.0." + r.nextInt(256) + "\0" + r.nextInt(65536)).getBytes(StandardCharsets.US_ASCII);
            int base = Crc32.update(Crc32.INITIAL, input);
            int previous = 0;
            for (int point = 0; point < 200; point++) {
                int expected = reference(input, littleEndian(previous));
                int actual = Crc32.nextPoint(base, previous);
                assertEquals(expected, actual, "point " + point);
                previous = actual;
            }
        }
        // Arbitrary previous values, not only chained ones.
        for (int i = 0; i < 10_000; i++) {
            byte[] input = new byte[r.nextInt(50)];
            r.nextBytes(input);
            int previous = r.nextInt();
            assertEquals(
                    reference(input, littleEndian(previous)),
                    Crc32.nextPoint(Crc32.update(Crc32.INITIAL, input), previous));
        }
    }

    /**
     * The chain computed {@value Crc32#LANES} lanes at a time gives nextPoint's points in order: every
     * point count around the lane and buffer boundaries, buffers of several sizes, one PointChain reused.
     */
    @Test
    void pointChainGivesTheChainOfNextPoint() {
        SplittableRandom r = new SplittableRandom(4);
        Crc32.PointChain chain = new Crc32.PointChain();
        int lanes = Crc32.LANES;
        int[] counts = {
            0, 1, lanes - 1, lanes, lanes + 1, 2 * lanes - 1, 2 * lanes, 2 * lanes + 1, 63, 64, 65, 1000, 5000
        };
        for (int bufferLength : new int[] {lanes, 2 * lanes, 64, 4096}) {
            int[] buffer = new int[bufferLength];
            for (int points : counts) {
                int base = r.nextInt();
                chain.start(base, points);
                int previous = 0;
                int produced = 0;
                for (int k; (k = chain.next(buffer)) > 0; ) {
                    assertEquals(Math.min(bufferLength, points - produced), k, "a full buffer, or what remains");
                    for (int j = 0; j < k; j++) {
                        previous = Crc32.nextPoint(base, previous);
                        int at = produced + j;
                        assertEquals(
                                previous,
                                buffer[j],
                                () -> "point " + at + " of " + points + ", buffer " + bufferLength);
                    }
                    produced += k;
                }
                assertEquals(points, produced);
                assertEquals(0, chain.next(buffer), "a finished chain stays finished");
            }
        }
    }

    @Test
    void pointChainRefusesABufferNotInWholeLanesAndNegativeCounts() {
        Crc32.PointChain chain = new Crc32.PointChain();
        chain.start(Crc32.INITIAL, 10);
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> chain.next(new int[Crc32.LANES + 1]));
        assertEquals(
                "the buffer's length must be a positive multiple of " + Crc32.LANES + ": length=" + (Crc32.LANES + 1),
                e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> chain.next(new int[0]));
        assertThrows(IllegalArgumentException.class, () -> chain.start(Crc32.INITIAL, -1));
    }
}
