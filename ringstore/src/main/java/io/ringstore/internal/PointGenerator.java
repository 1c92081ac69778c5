package io.ringstore.internal;

import java.io.InterruptedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Generates the points of a ring in ring order: every point of every member backend (CRC-32 chained
 * from the backend's base state, as nginx and pingora-ketama do), packed with the tie rank that
 * decides equal hashes, sorted. The one implementation of point generation: the builder writes what
 * it returns, the analysis measures what it returns, and the bench times it.
 *
 * <p>It knows no ring family: its input is primitive ({@link Chains}: base states, tie ranks and point
 * counts), which the family computes ({@code RingFamily}'s point source, tie rule and weight rule).
 * Two ways in: the builder's ({@link #PointGenerator(Consumer)}, then {@link #generateSorted(Chains)}
 * per ring) and the simulator's ({@link #PointGenerator(int)}, then
 * {@link #generateSorted(Chains, int, Consumer)} with a shorter hash line). Both end in the same generation.
 *
 * <p>Progress lines go to the consumer from the calling thread only (the share of the work it does
 * itself stands for the whole), so the consumer need not be thread-safe.
 *
 * <p>Not thread-safe (it reuses one array across rings); one generator per build or simulation.
 */
public final class PointGenerator {
    /** Threads a build uses: one per core, at most 8 (more gain little against memory bandwidth). */
    private static final int THREADS = Math.clamp(Runtime.getRuntime().availableProcessors(), 1, 8);
    /** Points below which one thread generates alone: starting threads costs more than it saves. */
    private static final int PARALLEL_MIN_POINTS = 1 << 20;

    private final Consumer<String> progress;
    private final int threads;
    private long[] buffer = new long[0];

    /**
     * A generator for a build, on {@link #THREADS} threads.
     *
     * @param progress receives a line now and then during long generations
     */
    public PointGenerator(Consumer<String> progress) {
        this.progress = Objects.requireNonNull(progress, "progress");
        this.threads = THREADS;
    }

    /** A generator on {@code threads} threads, reporting no progress of its own. */
    public PointGenerator(int threads) {
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be at least 1: threads=" + threads);
        }
        this.progress = line -> {};
        this.threads = threads;
    }

    /**
     * The point chains of a ring's backends, index i for backend i: the CRC-32 state its chain starts
     * from, its tie rank (lower keeps a shared hash) and its number of points (0: not in the ring).
     */
    public record Chains(int[] bases, int[] ranks, int[] points) {
        public Chains {
            if (bases.length != ranks.length || bases.length != points.length) {
                throw new IllegalArgumentException("need a base, a rank and a point count per backend: bases="
                        + bases.length + " ranks=" + ranks.length + " points=" + points.length);
            }
            if (bases.length > 65_536) {
                throw new IllegalArgumentException("at most 65536 backends (16-bit index): backends=" + bases.length);
            }
            boolean[] taken = new boolean[ranks.length];
            for (int r : ranks) {
                if (r < 0 || r >= ranks.length || taken[r]) {
                    throw new IllegalArgumentException(
                            "ranks must be 0.." + (ranks.length - 1) + ", each once: rank=" + r);
                }
                taken[r] = true;
            }
            for (int p : points) {
                if (p < 0) {
                    throw new IllegalArgumentException("point counts cannot be negative: points=" + p);
                }
            }
        }

        public long totalPoints() {
            long total = 0;
            for (int p : points) {
                total += p;
            }
            return total;
        }
    }

    /** {@link #generateSorted(Chains, int, Consumer)} on the 32-bit line with this generator's progress: what the builder writes. */
    public Sorted generateSorted(Chains chains) throws InterruptedIOException {
        return generateSorted(chains, 32, progress);
    }

    /**
     * Generates every point of {@code chains} into a packed array sorted by (hash, rank): a counting
     * pass on the top bits of the hash, a second generation pass that places each point in its bucket,
     * then a small sort per bucket ({@link PointSorter}). Nothing is boxed; the array is reused across
     * rings. The backends are split into one share per thread (each thread counts and places its own
     * points into its own slots of every bucket), then the buckets are split between the threads for
     * sorting; the result does not depend on the number of threads.
     *
     * <p>The chains are computed several points at a time ({@link Crc32.PointChain}) into a small
     * buffer that stays in L1. Generating again for the second pass (about 1 ns a point on one core,
     * measured) costs about what keeping the hashes between the passes would (4 bytes a point written
     * and read back: within L3 at 3.3 M points), and keeping them would take 0.8 GB more heap at 204.8 M.
     *
     * @param hashBits 32 for the real line; fewer keeps only the top bits of every hash, a smaller line on
     *                 which collisions come sooner (the analysis's tests use it to reach that regime with small rings)
     * @param progress gets lines as the phases go
     */
    public Sorted generateSorted(Chains chains, int hashBits, Consumer<String> progress) throws InterruptedIOException {
        if (hashBits < 1 || hashBits > 32) {
            throw new IllegalArgumentException("hashBits must be from 1 to 32: hashBits=" + hashBits);
        }
        long total = chains.totalPoints();
        if (total > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException(
                    "a ring holds at most " + (Integer.MAX_VALUE - 8) + " points: points=" + total);
        }
        int n = (int) total;
        if (buffer.length < n) {
            buffer = null; // let the old one go before the new one is allocated
            buffer = new long[n];
        }
        long[] a = buffer;
        int mask = hashBits == 32 ? -1 : -1 << (32 - hashBits);
        int bits = PointSorter.bucketBits(n);
        int parts = n < PARALLEL_MIN_POINTS ? 1 : threads;
        int[][] shares = splitByPoints(chains.points(), parts);
        int last = parts - 1; // the calling thread's share: the one that reports progress

        progress.accept("counting " + n + " points per bucket");
        int[][] next = new int[parts][];
        inParallel(
                parts,
                t -> next[t] = countBuckets(
                        chains,
                        shares[t],
                        mask,
                        bits,
                        t == last
                                ? reporter(progress, "counting " + n + " points per bucket", shares[t].length)
                                : null));
        int[] starts = new int[1 << bits];
        int position = 0;
        for (int bucket = 0; bucket < starts.length; bucket++) {
            starts[bucket] = position;
            for (int t = 0; t < parts; t++) {
                int count = next[t][bucket];
                next[t][bucket] = position;
                position += count;
            }
        }

        progress.accept("placing " + n + " points in hash order");
        inParallel(
                parts,
                t -> place(
                        chains,
                        shares[t],
                        mask,
                        bits,
                        next[t],
                        a,
                        t == last
                                ? reporter(progress, "placing " + n + " points in hash order", shares[t].length)
                                : null));

        progress.accept("sorting " + n + " points within " + starts.length + " buckets");
        int[] firstBucket = splitBuckets(starts, n, parts);
        inParallel(parts, t -> PointSorter.sortBuckets(a, starts, n, firstBucket[t], firstBucket[t + 1]));
        return new Sorted(a, n);
    }

    /** Reports "{@code phase}, P % done" whenever P changes: at most 101 lines, however many backends. */
    private static Done reporter(Consumer<String> progress, String phase, int backends) {
        int[] reported = {-1};
        return done -> {
            int percent = (int) (100L * done / backends);
            if (percent != reported[0]) {
                reported[0] = percent;
                progress.accept(phase + ", " + percent + " % done");
            }
        };
    }

    /** The backends with points, in {@code parts} runs of about equal point counts. */
    private static int[][] splitByPoints(int[] points, int parts) {
        int[] all = new int[points.length];
        int withPoints = 0;
        long total = 0;
        for (int b = 0; b < points.length; b++) {
            if (points[b] > 0) {
                all[withPoints++] = b;
                total += points[b];
            }
        }
        all = Arrays.copyOf(all, withPoints);
        int[][] out = new int[parts][];
        int from = 0;
        long sum = 0;
        for (int t = 0; t < parts; t++) {
            long target = total * (t + 1) / parts;
            int to = from;
            while (to < all.length && (t == parts - 1 || sum < target)) {
                sum += points[all[to]];
                to++;
            }
            out[t] = Arrays.copyOfRange(all, from, to);
            from = to;
        }
        return out;
    }

    /** Bucket ranges of about equal point counts: part t sorts buckets [first[t], first[t+1]). */
    private static int[] splitBuckets(int[] starts, int n, int parts) {
        int[] first = new int[parts + 1];
        int bucket = 0;
        for (int t = 1; t < parts; t++) {
            long target = (long) n * t / parts;
            while (bucket < starts.length && starts[bucket] < target) {
                bucket++;
            }
            first[t] = bucket;
        }
        first[parts] = starts.length;
        return first;
    }

    /** Receives the number of backends of a share done so far. */
    private interface Done {
        void backends(int done);
    }

    /** Point hashes a share generates at a time: 16 KiB, in L1 with its tables. */
    private static final int CHUNK = 4096;

    private static int[] countBuckets(Chains chains, int[] share, int mask, int bits, Done done) {
        int[] counts = new int[1 << bits];
        Crc32.PointChain chain = new Crc32.PointChain();
        int[] hashes = new int[CHUNK];
        for (int i = 0; i < share.length; i++) {
            int b = share[i];
            chain.start(chains.bases()[b], chains.points()[b]);
            for (int k; (k = chain.next(hashes)) > 0; ) {
                for (int j = 0; j < k; j++) {
                    counts[PointSorter.bucket(hashes[j] & mask, bits)]++;
                }
            }
            if (done != null) {
                done.backends(i + 1);
            }
        }
        return counts;
    }

    private static void place(Chains chains, int[] share, int mask, int bits, int[] next, long[] a, Done done) {
        Crc32.PointChain chain = new Crc32.PointChain();
        int[] hashes = new int[CHUNK];
        for (int i = 0; i < share.length; i++) {
            int b = share[i];
            int rank = chains.ranks()[b];
            chain.start(chains.bases()[b], chains.points()[b]);
            for (int k; (k = chain.next(hashes)) > 0; ) {
                for (int j = 0; j < k; j++) {
                    int h = hashes[j]
                            & mask; // the chain continues from the full hash; only the point is cut to the line
                    a[next[PointSorter.bucket(h, bits)]++] = PointSorter.pack(h, rank, b);
                }
            }
            if (done != null) {
                done.backends(i + 1);
            }
        }
    }

    /** One share of a parallel job. */
    public interface Task {
        void run(int share);
    }

    /** Runs {@code task} for shares 0..{@link #threads()}-1 of a job, on this generator's threads. */
    public void inParallel(Task task) throws InterruptedIOException {
        inParallel(threads, task);
    }

    public int threads() {
        return threads;
    }

    /**
     * Runs {@code task} for shares 0..n-1, the last on the calling thread, and waits for all, also when a
     * share fails: no thread outlives the call. Then rethrows the first failure (the caller's share
     * first, then the started threads' in share order), the others suppressed in it.
     */
    static void inParallel(int n, Task task) throws InterruptedIOException {
        if (n == 1) {
            task.run(0);
            return;
        }
        List<Thread> started = new ArrayList<>();
        Throwable[] failures = new Throwable[n];
        try {
            for (int t = 0; t < n - 1; t++) {
                int id = t;
                started.add(Thread.ofPlatform().name("ringstore-build-" + t).start(() -> {
                    try {
                        task.run(id);
                    } catch (Throwable e) {
                        failures[id] = e; // published to the caller by join()
                    }
                }));
            }
            task.run(n - 1);
        } catch (RuntimeException | Error e) {
            failures[n - 1] = e;
        }
        boolean interrupted = false;
        for (Thread th : started) {
            while (true) {
                try {
                    th.join(); // even when interrupted: a share still running would write into the caller's arrays
                    break;
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        }
        Throwable first = failures[n - 1];
        for (int t = 0; t < n - 1; t++) {
            if (first == null) {
                first = failures[t];
            } else if (failures[t] != null) {
                first.addSuppressed(failures[t]);
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
            InterruptedIOException e = new InterruptedIOException("interrupted while generating points");
            if (first != null) {
                e.addSuppressed(first);
            }
            throw e;
        }
        if (first instanceof RuntimeException re) {
            throw re;
        }
        if (first instanceof Error err) {
            throw err;
        }
    }

    /** The first {@code count} entries of {@code points}, packed ({@link PointSorter}) and in ring order. */
    public record Sorted(long[] points, int count) {}
}
