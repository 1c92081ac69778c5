package io.ringstore.bench;

import io.ringstore.internal.format.SearchTrace;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The cache lines the library's search reads ({@link SearchTrace}), in rounds: the reads of one round
 * have addresses known before any of them returns, so a processor waits for their misses together; a
 * read whose address, or whose being done at all, depends on an earlier read is a round of its own.
 * Addresses are byte offsets in the points segment (which starts on a page boundary), or
 * {@link #INDEX_ADDRESS} plus a byte offset in the search's index. Single-threaded: only
 * {@link SearchCacheModel} traces.
 */
final class ReadTrace implements SearchTrace.Listener {
    static final int LINE_SHIFT = 6; // 64-byte cache lines
    static final long INDEX_ADDRESS = 1L << 56;

    /** Closed rounds since the last {@link #drainRounds()}, each the lines it read in order. */
    private final List<long[]> rounds = new ArrayList<>();
    /** The open round's lines, consecutive repeats merged. */
    private long[] lines = new long[64];

    private int count;
    /** Reads still to come in the open round of reads issued together; 0 when none is open. */
    private int together;

    @Override
    public void indexRead(long offset, int length) {
        read(INDEX_ADDRESS + offset, length);
    }

    @Override
    public void pointRead(long offset, int length) {
        read(offset, length);
    }

    @Override
    public void together(int reads) {
        endRound();
        together = reads;
    }

    /** A read of {@code length} bytes at {@code address}: in the open round of reads issued together, else a round of its own. */
    void read(long address, int length) {
        if (together == 0) {
            endRound();
        }
        for (long line = address >>> LINE_SHIFT; line <= (address + length - 1) >>> LINE_SHIFT; line++) {
            if (count > 0 && lines[count - 1] == line) {
                continue;
            }
            if (count == lines.length) {
                lines = Arrays.copyOf(lines, count * 2);
            }
            lines[count++] = line;
        }
        if (together > 0 && --together == 0) {
            endRound();
        }
    }

    /** The rounds of reads since the last call, each the lines it read in order; then starts afresh. */
    List<long[]> drainRounds() {
        endRound();
        List<long[]> out = List.copyOf(rounds);
        rounds.clear();
        return out;
    }

    private void endRound() {
        if (count > 0) {
            rounds.add(Arrays.copyOf(lines, count));
            count = 0;
        }
    }
}
