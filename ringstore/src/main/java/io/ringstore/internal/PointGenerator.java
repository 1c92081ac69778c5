package io.ringstore.internal;

import io.ringstore.Algorithm;
import io.ringstore.RingVersion;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Generates the points of a ring in ring order: every point of every member backend (CRC-32 chained
 * from the backend's hash input, as nginx and pingora-ketama do), packed with the tie rank that
 * decides equal hashes, sorted. The one implementation of point generation: the builder writes what
 * it returns, and the analysis simulates with it.
 *
 * <p>Not thread-safe (it reuses one array across rings); one generator per build.
 */
public final class PointGenerator {
    private final ServerAddress[] addresses;
    private final long[] weights;
    private final Consumer<String> progress;

    /**
     * @param addresses backend i's address
     * @param weights   backend i's weight
     * @param progress  receives a line now and then during long generations
     */
    public PointGenerator(ServerAddress[] addresses, long[] weights, Consumer<String> progress) {
        if (addresses.length != weights.length) {
            throw new IllegalArgumentException("one weight per address: addresses=" + addresses.length + " weights=" + weights.length);
        }
        this.addresses = addresses.clone();
        this.weights = weights.clone();
        this.progress = Objects.requireNonNull(progress, "progress");
    }

    /** Who keeps a point when two backends produce the same hash: lower rank wins. */
    public int[] tieRanks(Algorithm algorithm) {
        int n = addresses.length;
        int[] rank = new int[n];
        if (algorithm == Algorithm.V1) {
            Arrays.setAll(rank, i -> i); // nginx: the backend listed first
        } else {
            Integer[] order = new Integer[n];
            Arrays.setAll(order, i -> i);
            Arrays.sort(order, (a, b) -> addresses[a].compareTo(addresses[b]));
            for (int r = 0; r < n; r++) {
                rank[order[r]] = r; // pingora v2: the smallest socket address
            }
        }
        return rank;
    }

    private long[] buffer = new long[0];

    /**
     * Generates every point of the member backends into a packed array sorted by (hash, rank): a counting
     * pass on the top bits of the hash, a second generation pass that places each point in its bucket,
     * then a small sort per bucket. Nothing is boxed; the array is reused across rings. The backends
     * are split into one share per thread (each thread counts and places its own points into its own
     * slots of every bucket), then the buckets are split between the threads for sorting; the result
     * does not depend on the number of threads.
     */
    public Sorted generateSorted(BitSet members, RingVersion version, int[] rank) throws IOException {
        int k = version.pointMultiple();
        long total = 0;
        for (int b = members.nextSetBit(0); b >= 0; b = members.nextSetBit(b + 1)) {
            total += weights[b] * k;
        }
        int n = (int) total; // checked against MAX_POINTS_PER_RING before
        if (buffer.length < n) {
            buffer = null; // let the old one go before the new one is allocated
            buffer = new long[n];
        }
        long[] a = buffer;
        int bits = PointSorter.bucketBits(n);
        int threads = n < PARALLEL_MIN_POINTS ? 1 : THREADS;
        int[][] shares = splitByPoints(members, k, threads);
        int[] bases = new int[addresses.length];
        for (int b = members.nextSetBit(0); b >= 0; b = members.nextSetBit(b + 1)) {
            bases[b] = baseState(addresses[b], version.algorithm());
        }
        int[][] counts = new int[threads][];
        inParallel(threads, t -> counts[t] = countBuckets(shares[t], bases, k, bits));
        int[] starts = new int[1 << bits];
        int[][] next = new int[threads][1 << bits];
        int position = 0;
        for (int bucket = 0; bucket < starts.length; bucket++) {
            starts[bucket] = position;
            for (int t = 0; t < threads; t++) {
                next[t][bucket] = position;
                position += counts[t][bucket];
            }
        }
        progress.accept("placing " + n + " points of " + version + " in hash order");
        inParallel(threads, t -> place(shares[t], bases, rank, k, bits, next[t], a));
        progress.accept("sorting " + n + " points of " + version + " within " + starts.length + " buckets");
        inParallel(threads, t -> PointSorter.sortBuckets(a, starts, n,
                (int) ((long) starts.length * t / threads), (int) ((long) starts.length * (t + 1) / threads)));
        progress.accept("writing " + n + " points of " + version);
        return new Sorted(a, n);
    }

    /** Points below which one thread builds alone: starting threads costs more than it saves. */
    private static final int PARALLEL_MIN_POINTS = 1 << 20;
    private static final int THREADS = Math.clamp(Runtime.getRuntime().availableProcessors(), 1, 8);

    /** The member backends in {@code threads} runs of about equal point counts. */
    private int[][] splitByPoints(BitSet members, int k, int threads) {
        int[] all = members.stream().toArray();
        long total = 0;
        for (int b : all) {
            total += weights[b] * k;
        }
        int[][] out = new int[threads][];
        int from = 0;
        long sum = 0;
        for (int t = 0; t < threads; t++) {
            long target = total * (t + 1) / threads;
            int to = from;
            while (to < all.length && (t == threads - 1 || sum < target)) {
                sum += weights[all[to]] * k;
                to++;
            }
            out[t] = Arrays.copyOfRange(all, from, to);
            from = to;
        }
        return out;
    }

    private int[] countBuckets(int[] share, int[] bases, int k, int bits) {
        int[] counts = new int[1 << bits];
        for (int b : share) {
            int points = (int) (weights[b] * k);
            int base = bases[b];
            int prev = 0;
            for (int j = 0; j < points; j++) {
                prev = Crc32.nextPoint(base, prev);
                counts[PointSorter.bucket(prev, bits)]++;
            }
        }
        return counts;
    }

    private void place(int[] share, int[] bases, int[] rank, int k, int bits, int[] next, long[] a) {
        for (int b : share) {
            int points = (int) (weights[b] * k);
            int base = bases[b];
            long low = ((long) rank[b] << 16) | b;
            int prev = 0;
            for (int j = 0; j < points; j++) {
                prev = Crc32.nextPoint(base, prev);
                a[next[PointSorter.bucket(prev, bits)]++] = ((prev & 0xFFFF_FFFFL) << 32) | low;
            }
        }
    }

    private interface Task {
        void run(int thread);
    }

    /** Runs {@code task} for threads 0..n-1, the last on the calling thread, and waits for all. */
    private static void inParallel(int n, Task task) throws IOException {
        if (n == 1) {
            task.run(0);
            return;
        }
        List<Thread> started = new ArrayList<>();
        Throwable[] failure = new Throwable[1];
        for (int t = 0; t < n - 1; t++) {
            int id = t;
            Thread th = Thread.ofPlatform().name("ringstore-build-" + t).start(() -> {
                try {
                    task.run(id);
                } catch (Throwable e) {
                    synchronized (failure) {
                        failure[0] = e;
                    }
                }
            });
            started.add(th);
        }
        task.run(n - 1);
        try {
            for (Thread th : started) {
                th.join();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while building");
        }
        synchronized (failure) {
            if (failure[0] instanceof RuntimeException re) {
                throw re;
            }
            if (failure[0] instanceof Error err) {
                throw err;
            }
        }
    }

    private static int baseState(ServerAddress address, Algorithm algorithm) {
        byte[] input = algorithm == Algorithm.V1 ? address.nginxHashInput() : address.pingoraHashInput();
        return Crc32.update(Crc32.INITIAL, input);
    }

    /** The first {@code count} entries of {@code points}, packed ({@link PointSorter}) and in ring order. */
    public record Sorted(long[] points, int count) {
    }
}
