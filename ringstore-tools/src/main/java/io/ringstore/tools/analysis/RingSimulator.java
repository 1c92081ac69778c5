package io.ringstore.tools.analysis;

import io.ringstore.internal.Crc32;
import io.ringstore.internal.PointSorter;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Consumer;
import java.util.function.IntConsumer;

/**
 * Builds rings in memory exactly as the ring builder does (CRC-32 point chains, packed points,
 * bucket sort, one point per hash in tie order) and measures every backend's exact share of the
 * line. One ring at a time: the point array is reused between rings and grows only when a ring needs
 * more. Work is split over {@code threads} (generation by backends, sorting by buckets, measuring by
 * slices); results do not depend on the thread count.
 *
 * <p>{@code hashBits} below 32 keeps only the top bits of every point hash, a smaller line on which
 * collisions come sooner: tests use it to reach the collision regime with small rings.
 *
 * <p>Progress goes to the caller's consumer from the calling thread only (the share of the work the
 * calling thread does itself stands for the whole), so the consumer need not be thread-safe.
 *
 * <p>Not thread-safe: one ring at a time.
 */
public final class RingSimulator implements AutoCloseable {
    private static final int SORT_CHUNK = 1 << 16; // buckets sorted between progress reports
    private static final long TABLE_BYTES = 2L * 4 << 22; // bucket counts and cursors at the largest bucket count

    private final int threads;
    private final ExecutorService pool;
    private long[] sorted = new long[0];

    public RingSimulator(int threads) {
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be at least 1: threads=" + threads);
        }
        this.threads = threads;
        this.pool = threads > 1 ? Executors.newFixedThreadPool(threads - 1, r -> {
            Thread t = new Thread(r, "ring-simulator");
            t.setDaemon(true);
            return t;
        }) : null;
    }

    /** Heap a ring of {@code points} points needs beyond what is already allocated: its packed array and tables. */
    public static long heapBytes(long points, int threads) {
        return 8 * points + threads * TABLE_BYTES + (64L << 20);
    }

    /**
     * One ring's measurement.
     *
     * @param owned   hashes of the line each backend owns (they sum to 2³²)
     * @param points  points generated (before equal hashes are dropped)
     * @param dropped points dropped because a backend earlier in tie order holds their hash
     */
    public record Measurement(long[] owned, long points, long dropped) {
    }

    /** Builds and measures {@code ring}; {@code progress} gets lines as the phases go, each prefixed with {@code label}. */
    public Measurement simulate(SimulatedRing ring, int hashBits, String label, Consumer<String> progress) {
        if (hashBits < 1 || hashBits > 32) {
            throw new IllegalArgumentException("hashBits must be from 1 to 32: hashBits=" + hashBits);
        }
        long total = ring.totalPoints();
        if (total > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("a ring holds at most " + (Integer.MAX_VALUE - 8) + " points: points=" + total);
        }
        int n = (int) total;
        int mask = hashBits == 32 ? -1 : -1 << (32 - hashBits);
        int bits = PointSorter.bucketBits(n);
        int parts = Math.min(threads, ring.backends());
        int[] firstBackend = splitBackends(ring, parts);
        if (sorted.length < n) {
            sorted = null; // let the old array go before the larger one is allocated
            sorted = new long[n];
        }
        long[] a = sorted;

        progress.accept(label + ": generating " + n + " points");
        int[][] cursors = new int[parts][1 << bits];
        parallel(parts, p -> {
            int[] count = cursors[p];
            for (int b = firstBackend[p]; b < firstBackend[p + 1]; b++) {
                int base = ring.bases()[b];
                int prev = 0;
                for (int j = ring.points()[b]; j > 0; j--) {
                    prev = Crc32.nextPoint(base, prev);
                    count[PointSorter.bucket(prev & mask, bits)]++;
                }
                if (p == 0) {
                    progress.accept(label + ": generating " + n + " points, " + percent(b + 1, firstBackend[1]) + " done");
                }
            }
        });
        int[] starts = new int[1 << bits];
        int at = 0;
        for (int bucket = 0; bucket < starts.length; bucket++) {
            starts[bucket] = at;
            for (int p = 0; p < parts; p++) {
                int c = cursors[p][bucket];
                cursors[p][bucket] = at;
                at += c;
            }
        }

        progress.accept(label + ": placing " + n + " points in " + starts.length + " buckets");
        parallel(parts, p -> {
            int[] next = cursors[p];
            for (int b = firstBackend[p]; b < firstBackend[p + 1]; b++) {
                int base = ring.bases()[b];
                int rank = ring.ranks()[b];
                int prev = 0;
                for (int j = ring.points()[b]; j > 0; j--) {
                    prev = Crc32.nextPoint(base, prev);
                    int h = prev & mask;
                    a[next[PointSorter.bucket(h, bits)]++] = PointSorter.pack(h, rank, b);
                }
                if (p == 0) {
                    progress.accept(label + ": placing " + n + " points, " + percent(b + 1, firstBackend[1]) + " done");
                }
            }
        });

        progress.accept(label + ": sorting " + n + " points");
        int[] firstBucket = splitBuckets(starts, n, parts);
        parallel(parts, p -> {
            for (int from = firstBucket[p]; from < firstBucket[p + 1]; from += SORT_CHUNK) {
                int to = Math.min(firstBucket[p + 1], from + SORT_CHUNK);
                PointSorter.sortBuckets(a, starts, n, from, to);
                if (p == 0) {
                    progress.accept(label + ": sorting " + n + " points, " + percent(to, firstBucket[1]) + " done");
                }
            }
        });

        progress.accept(label + ": measuring arcs of " + n + " points");
        long[][] owned = new long[parts][ring.backends()];
        long[] dropped = new long[parts];
        parallel(parts, p -> dropped[p] = ArcShares.accumulate(a, n, (int) ((long) n * p / parts), (int) ((long) n * (p + 1) / parts), owned[p]));
        long[] sum = owned[0];
        long drops = dropped[0];
        for (int p = 1; p < parts; p++) {
            for (int b = 0; b < sum.length; b++) {
                sum[b] += owned[p][b];
            }
            drops += dropped[p];
        }
        return new Measurement(sum, n, drops);
    }

    private static String percent(long done, long total) {
        return (100 * done / Math.max(1, total)) + " %";
    }

    /** Backend ranges of about equal point counts: part p is backends [first[p], first[p+1]). */
    private static int[] splitBackends(SimulatedRing ring, int parts) {
        int[] first = new int[parts + 1];
        long total = ring.totalPoints();
        long running = 0;
        int part = 1;
        for (int b = 0; b < ring.backends() && part < parts; b++) {
            running += ring.points()[b];
            while (part < parts && running >= total * part / parts) {
                first[part++] = b + 1;
            }
        }
        first[parts] = ring.backends();
        return first;
    }

    /** Bucket ranges of about equal point counts. */
    private static int[] splitBuckets(int[] starts, int n, int parts) {
        int[] first = new int[parts + 1];
        int bucket = 0;
        for (int p = 1; p < parts; p++) {
            long target = (long) n * p / parts;
            while (bucket < starts.length && starts[bucket] < target) {
                bucket++;
            }
            first[p] = bucket;
        }
        first[parts] = starts.length;
        return first;
    }

    /** Runs task(0..parts-1), part 0 on the calling thread, and waits for all. */
    private void parallel(int parts, IntConsumer task) {
        List<Future<?>> futures = new ArrayList<>();
        for (int p = 1; p < parts; p++) {
            int part = p;
            futures.add(pool.submit(() -> task.accept(part)));
        }
        task.accept(0);
        for (Future<?> f : futures) {
            try {
                f.get();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while simulating a ring", e);
            } catch (ExecutionException e) {
                if (e.getCause() instanceof RuntimeException r) {
                    throw r;
                }
                if (e.getCause() instanceof Error err) {
                    throw err;
                }
                throw new IllegalStateException(e.getCause());
            }
        }
    }

    @Override
    public void close() {
        if (pool != null) {
            pool.shutdownNow();
        }
    }
}
