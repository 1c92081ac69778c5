package io.ringstore.internal;

import java.io.InterruptedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Generates the points of a ring in ring order: every point of every member backend, as the ring
 * family's point source makes them ({@link Source}: a CRC-32 chain from the backend's base state, as
 * nginx and pingora-ketama do, or the hashes of its point texts), packed with the tie rank that
 * decides equal hashes, sorted. The one implementation of point generation: the builder writes what
 * it returns, the analysis measures what it returns, and the bench times it.
 *
 * <p>It knows no ring family: its input is a {@link Source} of hashes by backend, tie ranks and point
 * counts ({@link Members}), which the family makes (its point source, tie rule and weight rule). Two
 * ways in: the builder's ({@link #PointGenerator(Consumer)}, then {@link #generateSorted(Members)} per
 * ring) and the simulator's ({@link #PointGenerator(int)}, then
 * {@link #generateSorted(Members, int, Consumer)} with a shorter hash line). Both end in the same generation.
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
     * Where a ring's points come from: each backend's point hashes, in the order its family generates
     * them (which matters to ties of a backend with itself), as {@link Stream}s, one per thread.
     */
    public interface Source {
        /** {@return the backends it has points of: backend i for index i} */
        int backends();

        /** {@return the width of a point's hash: 32, or 64 (a ring sorted and kept on all 64 bits)} */
        int bits();

        /** {@return a new reader of the points, for one thread} */
        Stream stream();

        /**
         * {@return whether the generator makes the points again for its second pass rather than keep them
         * from the first (4 bytes a point): a CRC-32 chain's point costs about what keeping it does, 1 ns;
         * the hash of a point text 50 to 300 ns}
         */
        boolean regenerates();
    }

    /** One thread's reader of a {@link Source}'s points, backend after backend. */
    public interface Stream {
        /** Starts backend {@code backend}'s points: its first {@code count}. */
        void start(int backend, int count);

        /**
         * Writes the next point hashes of the backend started into {@code high} (a 64-bit source's high
         * words) and, for a 64-bit source, their low words into {@code low} (null for a 32-bit one): as
         * many as {@code high} holds or as remain; returns how many, 0 when the backend's are done.
         *
         * @param high its length a positive multiple of 8 (the last round may write past the count returned)
         */
        int next(int[] high, int[] low);
    }

    /**
     * A ring's members, index i for backend i: where their points come from, their tie ranks (lower
     * keeps a shared hash) and their numbers of points (0: not in the ring).
     */
    public record Members(Source source, int[] ranks, int[] points) {
        public Members {
            if (source.backends() != ranks.length || ranks.length != points.length) {
                throw new IllegalArgumentException("need a source, a rank and a point count per backend: backends="
                        + source.backends() + " ranks=" + ranks.length + " points=" + points.length);
            }
            if (ranks.length > 65_536) {
                throw new IllegalArgumentException("at most 65536 backends (16-bit index): backends=" + ranks.length);
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

    /** {@link #generateSorted(Members, int, Consumer)} on the 32-bit line with this generator's progress: what the builder writes. */
    public Sorted generateSorted(Members members) throws InterruptedIOException {
        return generateSorted(members, 32, progress);
    }

    /**
     * Generates every point of {@code members} into a packed array sorted by (hash, rank): a counting
     * pass on the top bits of the hash, a second generation pass that places each point in its bucket,
     * then a small sort per bucket ({@link PointSorter}). Nothing is boxed; the array is reused across
     * rings. The backends are split into one share per thread (each thread counts and places its own
     * points into its own slots of every bucket), then the buckets are split between the threads for
     * sorting; the result does not depend on the number of threads.
     *
     * <p>The hashes are read a chunk at a time into a small buffer that stays in L1 (a CRC-32 chain
     * several points at a time, {@link Crc32.PointChain}). Generating again for the second pass (about 1
     * ns a point of a CRC-32 chain on one core, measured) costs about what keeping the hashes between
     * the passes would (4 bytes a point written and read back: within L3 at 3.3 M points), and keeping
     * them would take 0.8 GB more heap at 204.8 M.
     *
     * <p>A 64-bit source's points ({@link Source#bits()}) are sorted on all 64 bits, one kept per hash
     * (the lowest rank; {@link WidePoints}), and come with their low words ({@link Sorted#low()}).
     *
     * @param hashBits 32 for the real line; fewer keeps only the top bits of every hash, a smaller line on
     *                 which collisions come sooner (the analysis's tests use it to reach that regime with
     *                 small rings; a 32-bit source's only)
     * @param progress gets lines as the phases go
     */
    public Sorted generateSorted(Members members, int hashBits, Consumer<String> progress)
            throws InterruptedIOException {
        if (hashBits < 1 || hashBits > 32 || (hashBits < 32 && members.source().bits() == 64)) {
            throw new IllegalArgumentException("hashBits must be from 1 to 32 (32 for 64-bit points): hashBits="
                    + hashBits + ", " + members.source().bits() + "-bit points");
        }
        long total = members.totalPoints();
        if (total > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException(
                    "a ring holds at most " + (Integer.MAX_VALUE - 8) + " points: points=" + total);
        }
        int n = (int) total;
        if (members.source().bits() == 64) {
            return generateWide(members, n);
        }
        if (buffer.length < n) {
            buffer = null; // let the old one go before the new one is allocated
            buffer = new long[n];
        }
        long[] a = buffer;
        int mask = hashBits == 32 ? -1 : -1 << (32 - hashBits);
        int bits = PointSorter.bucketBits(n);
        int parts = n < PARALLEL_MIN_POINTS ? 1 : threads;
        int[][] shares = splitByPoints(members.points(), parts);
        int last = parts - 1; // the calling thread's share: the one that reports progress

        progress.accept("counting " + n + " points per bucket");
        int[][] next = new int[parts][];
        Kept[] kept = new Kept[parts];
        inParallel(
                parts,
                t -> next[t] = countBuckets(
                        members.source().regenerates()
                                ? members.source().stream()
                                : (kept[t] = new Kept(members, shares[t])).recording(),
                        members,
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
                        kept[t] == null ? members.source().stream() : kept[t].replay(),
                        members,
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
        return new Sorted(a, n, null, 0);
    }

    /**
     * A 64-bit source's ring: every point's whole hash, sorted by hash then rank (then generation order)
     * and one kept per hash (64-bit rings are small: Envoy caps them at 8,388,608 entries).
     */
    private static Sorted generateWide(Members members, int n) {
        long[] hashes = new long[n];
        int[] ranks = new int[n];
        int[] owners = new int[n];
        Stream stream = members.source().stream();
        int[] high = new int[CHUNK];
        int[] low = new int[CHUNK];
        int k = 0;
        for (int b = 0; b < members.points().length; b++) {
            if (members.points()[b] == 0) {
                continue;
            }
            stream.start(b, members.points()[b]);
            for (int c; (c = stream.next(high, low)) > 0; ) {
                for (int j = 0; j < c; j++, k++) {
                    hashes[k] = (long) high[j] << 32 | Integer.toUnsignedLong(low[j]);
                    ranks[k] = members.ranks()[b];
                    owners[k] = b;
                }
            }
        }
        WidePoints wide = WidePoints.sorted(hashes, ranks, owners, n);
        long[] packed = new long[wide.count()];
        int[] lowWords = new int[wide.count()];
        for (int i = 0; i < wide.count(); i++) {
            int b = wide.backends()[i];
            packed[i] = PointSorter.pack((int) (wide.hashes()[i] >>> 32), members.ranks()[b], b);
            lowWords[i] = (int) wide.hashes()[i];
        }
        return new Sorted(packed, wide.count(), lowWords, wide.dropped());
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

    private static int[] countBuckets(Stream stream, Members members, int[] share, int mask, int bits, Done done) {
        int[] counts = new int[1 << bits];
        int[] hashes = new int[CHUNK];
        for (int i = 0; i < share.length; i++) {
            int b = share[i];
            stream.start(b, members.points()[b]);
            for (int k; (k = stream.next(hashes, null)) > 0; ) {
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

    private static void place(
            Stream stream, Members members, int[] share, int mask, int bits, int[] next, long[] a, Done done) {
        int[] hashes = new int[CHUNK];
        for (int i = 0; i < share.length; i++) {
            int b = share[i];
            int rank = members.ranks()[b];
            stream.start(b, members.points()[b]);
            for (int k; (k = stream.next(hashes, null)) > 0; ) {
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

    /**
     * A share's hashes as its first pass read them from a source that does not regenerate, for its second
     * pass to read again in the same order.
     */
    private static final class Kept {
        private final Stream source;
        private final int[] hashes;
        private int size;

        Kept(Members members, int[] share) {
            this.source = members.source().stream();
            long points = 0;
            for (int b : share) {
                points += members.points()[b];
            }
            this.hashes = new int[Math.toIntExact(points)];
        }

        /** The source's stream, keeping what it reads. */
        Stream recording() {
            return new Stream() {
                @Override
                public void start(int backend, int count) {
                    source.start(backend, count);
                }

                @Override
                public int next(int[] high, int[] low) {
                    int k = source.next(high, low);
                    System.arraycopy(high, 0, hashes, size, k);
                    size += k;
                    return k;
                }
            };
        }

        /** What {@link #recording()} read, backend after backend as it was read. */
        Stream replay() {
            return new Stream() {
                private int at;
                private int left;

                @Override
                public void start(int backend, int count) {
                    left = count;
                }

                @Override
                public int next(int[] high, int[] low) {
                    int k = Math.min(left, high.length);
                    System.arraycopy(hashes, at, high, 0, k);
                    at += k;
                    left -= k;
                    return k;
                }
            };
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

    /**
     * The first {@code count} entries of {@code points}, packed ({@link PointSorter}) and in ring order.
     *
     * @param low     a 64-bit ring's low words, one a point (its points are one a hash already); null for a 32-bit ring
     * @param dropped a 64-bit ring's points another backend's point of the same hash displaced
     */
    public record Sorted(long[] points, int count, int[] low, long dropped) {}
}
