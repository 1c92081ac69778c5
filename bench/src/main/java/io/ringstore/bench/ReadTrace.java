package io.ringstore.bench;

import java.util.Arrays;

/**
 * The cache lines one search read, recorded by {@link PointSearch} when tracing is on. Addresses are
 * byte offsets in the points segment (which starts on a page boundary), or {@link #INDEX_ADDRESS} plus
 * a byte offset in a sampled index. Single-threaded: only {@link SearchCacheModel} traces.
 */
final class ReadTrace {
    static final int LINE_SHIFT = 6; // 64-byte cache lines
    static final long INDEX_ADDRESS = 1L << 56;

    private static long[] lines = new long[64];
    private static int count;

    private ReadTrace() {}

    static void read(long address, int length) {
        for (long line = address >>> LINE_SHIFT; line <= (address + length - 1) >>> LINE_SHIFT; line++) {
            if (count > 0 && lines[count - 1] == line) {
                continue;
            }
            if (count == lines.length) {
                lines = Arrays.copyOf(lines, count * 2);
            }
            lines[count++] = line;
        }
    }

    /** Lines read since the last call, in order, consecutive repeats merged; then starts afresh. */
    static long[] drain() {
        long[] out = Arrays.copyOf(lines, count);
        count = 0;
        return out;
    }
}
