package io.ringstore.internal.format;

import static io.ringstore.internal.format.RingFileDescriptor.POINT_HASH_LENGTH;
import static io.ringstore.internal.format.RingFileDescriptor.POINT_HASH_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.POINT_LENGTH;
import static io.ringstore.internal.format.RingFileDescriptor.U32;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link SearchTrace}: off in a JVM that did not ask for it; on, every search reports the reads that
 * decide its answer, in the rounds the cache model replays (a child JVM started with the property, as
 * bench's SearchCacheModel runs).
 */
class SearchTraceTest {
    private static final int POINTS = 200_000;
    private static final int KEYS = 20_000;

    @Test
    void offUnlessTheJvmAsks() {
        assertFalse(SearchTrace.ON);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> SearchTrace.listen(new Recorder()));
        assertTrue(e.getMessage().contains("-Dringstore.traceSearch=true"), e.getMessage());
    }

    @Test
    @Tag("process")
    void aTracedSearchReportsTheReadsThatDecideItsAnswer() throws Exception {
        Process child = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-Dringstore.traceSearch=true",
                        "-cp",
                        System.getProperty("java.class.path"),
                        Child.class.getName())
                .redirectErrorStream(true)
                .start();
        String output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(child.waitFor(60, TimeUnit.SECONDS), output);
        assertEquals(0, child.exitValue(), output);
        assertTrue(output.startsWith("traced " + KEYS + " indexed and " + KEYS + " binary searches"), output);
    }

    /** One reported event: an index read, a point read (offsets in bytes) or a round of reads issued together. */
    private record Event(char kind, long offset, int length) {}

    private static final class Recorder implements SearchTrace.Listener {
        final List<Event> events = new ArrayList<>();

        @Override
        public void indexRead(long offset, int length) {
            events.add(new Event('i', offset, length));
        }

        @Override
        public void pointRead(long offset, int length) {
            events.add(new Event('p', offset, length));
        }

        @Override
        public void together(int reads) {
            events.add(new Event('t', reads, 0));
        }
    }

    /**
     * Runs in a JVM with tracing on: searches random hashes in sorted random points, with the index and
     * without, and checks each search's events against the answer a plain binary search gives.
     */
    static final class Child {
        public static void main(String[] args) {
            SplittableRandom random = new SplittableRandom(29);
            long[] hashes =
                    random.longs(POINTS, 0, 1L << 32).sorted().distinct().toArray();
            int n = hashes.length;
            MemorySegment points = MemorySegment.ofArray(new byte[n * POINT_LENGTH]);
            for (int i = 0; i < n; i++) {
                points.set(U32, (long) i * POINT_LENGTH + POINT_HASH_OFFSET, (int) hashes[i]);
            }
            PointSearch.Index index = PointSearch.index(points, n);
            long slices = index.bytes() / 4 - 1;
            Recorder recorder = new Recorder();
            SearchTrace.listen(recorder);
            for (int i = 0; i < KEYS; i++) {
                long key = random.nextLong(1L << 32);
                recorder.events.clear();
                int answer = PointSearch.pointIndex(points, n, index, (int) key);
                int k = (int) ((key * slices) >>> 32);
                int lo = lowerBound(hashes, Math.ceilDiv((long) k << 32, slices));
                int hi = k + 1 == slices ? n : lowerBound(hashes, Math.ceilDiv((long) (k + 1) << 32, slices));
                List<Event> events = recorder.events;
                check(events.get(0).equals(new Event('i', 4L * k, 8)), "first the slice's two starts", key, events);
                if (hi > lo) {
                    check(events.get(1).equals(new Event('t', 3, 0)), "then the window's three reads", key, events);
                    check(events.size() >= 5, "three reads after the window's start", key, events);
                }
                checkBracketed(events.subList(hi > lo ? 2 : 1, events.size()), hashes, key, answer, lo, hi);
            }
            for (int i = 0; i < KEYS; i++) {
                long key = random.nextLong(1L << 32);
                recorder.events.clear();
                int answer = PointSearch.pointIndex(points, n, (int) key);
                checkBracketed(recorder.events, hashes, key, answer, 0, n);
            }
            System.out.println("traced " + KEYS + " indexed and " + KEYS + " binary searches of " + n + " points");
        }

        /**
         * The search's answer is a plain binary search's, every event is a point read in [lo, hi), and
         * the reads include the points on each side of the answer unless that side is the range's end:
         * what the search read is what decided its answer.
         */
        private static void checkBracketed(List<Event> events, long[] hashes, long key, int answer, int lo, int hi) {
            int first = lowerBound(hashes, key);
            check(answer == (first == hashes.length ? 0 : first), "the answer a binary search gives", key, events);
            Set<Long> read = new HashSet<>();
            for (Event e : events) {
                long position = e.offset() / POINT_LENGTH;
                check(
                        e.kind() == 'p'
                                && e.length() == POINT_HASH_LENGTH
                                && e.offset() == position * POINT_LENGTH + POINT_HASH_OFFSET
                                && position >= lo
                                && position < hi,
                        "a point's hash in the searched range [" + lo + ", " + hi + ")",
                        key,
                        events);
                read.add(position);
            }
            check(first == lo || read.contains(first - 1L), "the point before the answer read", key, events);
            check(first == hi || read.contains((long) first), "the answer's point read", key, events);
        }

        private static int lowerBound(long[] hashes, long key) {
            int from = 0;
            int to = hashes.length;
            while (from < to) {
                int mid = (from + to) >>> 1;
                if (hashes[mid] < key) {
                    from = mid + 1;
                } else {
                    to = mid;
                }
            }
            return from;
        }

        private static void check(boolean holds, String what, long key, List<Event> events) {
            if (!holds) {
                throw new AssertionError("key " + key + ": expected " + what + "; events " + events);
            }
        }
    }
}
