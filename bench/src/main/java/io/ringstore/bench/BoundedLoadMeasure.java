package io.ringstore.bench;

import io.ringstore.Ring;
import io.ringstore.RingStore;
import io.ringstore.balance.BoundedLoad;
import io.ringstore.balance.LoadView;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Bounded-load selection ({@link BoundedLoad}) measured in a discrete-event simulation: no bound, the
 * clockwise walk and the random jump, for c = 1.1, 1.25 and 1.5.
 *
 * <p>Workload: requests arrive as a Poisson process; each asks for one of {@code --keys} keys drawn by
 * Zipf({@code --zipf}) (rank 1 the most requested) and holds the backend it is sent to for an
 * exponential service time of mean 1; the arrival rate makes {@code --load} requests in flight per
 * backend on average. The ring is the benchmark ring {@code BACKENDSx160} (v1, weight 1, built by the
 * real builder). The same seed gives the same arrivals, keys and service times to every strategy. The
 * first 10 % of requests warm the system up and are not counted.
 *
 * <p>Figures, sampled at every arrival just after the request is placed (Poisson arrivals see time
 * averages): the most loaded backend's in-flight count over the mean (in flight / backends), peak and
 * averaged; affinity (share of requests sent to their ring backend); probes per request (candidate
 * points examined: mean, 99th percentile, max); requests whose every probe was full (served over capacity); the load of the
 * hottest key's ring backend and of the next 4 distinct backends clockwise from its point (where a
 * clockwise walk sends its overflow), over the mean; and how many backends are at capacity on
 * average. Then bytes allocated per {@code choose} call ({@code ThreadMXBean.getThreadAllocatedBytes})
 * and its rough cost in ns, over a fixed view with a tenth of the backends full.
 *
 * <pre>
 * java -cp bench/target/benchmarks.jar io.ringstore.bench.BoundedLoadMeasure [--backends 50] [--keys 100000]
 *     [--zipf 1.1] [--load 32] [--requests 1000000] [--seed N]
 * </pre>
 */
public final class BoundedLoadMeasure {
    private static final double[] CS = {1.1, 1.25, 1.5};
    private static final int NEIGHBOURS = 4;
    private static final int ALLOC_CALLS = 2_000_000;
    private static volatile long sink;

    private BoundedLoadMeasure() {}

    public static void main(String[] args) throws Exception {
        int backends = 50;
        int keys = 100_000;
        double zipf = 1.1;
        int load = 32;
        int requests = 1_000_000;
        long seed = BenchRings.KEY_SEED;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--backends" -> backends = Integer.parseInt(args[++i]);
                case "--keys" -> keys = Integer.parseInt(args[++i]);
                case "--zipf" -> zipf = Double.parseDouble(args[++i]);
                case "--load" -> load = Integer.parseInt(args[++i]);
                case "--requests" -> requests = Integer.parseInt(args[++i]);
                case "--seed" -> seed = Long.parseLong(args[++i]);
                default -> throw new IllegalArgumentException("unknown argument: " + args[i]);
            }
        }
        try (RingStore store = BenchRings.open(backends + "x160")) {
            Ring ring = store.ring(java.util.Set.of(), io.ringstore.family.RingVersion.V1);
            Workload workload = new Workload(ring, keys, zipf, seed);
            System.out.printf(
                    "ring %dx160 (%,d points), %,d keys Zipf(%.2f) (rank 1: %.1f %% of requests), "
                            + "%d in flight per backend on average, %,d requests (first 10 %% not counted), seed %d%n",
                    backends, ring.pointCount(), keys, zipf, 100 * workload.cdf[0], load, requests, seed);
            System.out.printf(
                    "hottest key's backend %d; next %d distinct backends clockwise %s%n%n",
                    workload.hotBackend, NEIGHBOURS, Arrays.toString(workload.neighbours));
            System.out.printf(
                    "%-12s %5s | %9s %9s | %8s | %6s %4s %4s | %9s | %8s %10s | %9s%n",
                    "walk",
                    "c",
                    "peak max",
                    "avg max",
                    "affinity",
                    "probes",
                    "p99",
                    "max",
                    "over cap",
                    "hot/mean",
                    "neigh/mean",
                    "full bknd");
            System.out.printf(
                    "%-12s %5s | %9s %9s | %8s | %6s %4s %4s | %9s | %8s %10s | %9s%n",
                    "", "", "/mean", "/mean", "", "mean", "", "", "", "(avg)", "(avg)", "(avg)");
            simulate(workload, null, load, requests, seed).print("no bound", "-");
            List<BoundedLoad> rules = new ArrayList<>();
            for (double c : CS) {
                for (BoundedLoad.Walk walk :
                        new BoundedLoad.Walk[] {BoundedLoad.Walk.CLOCKWISE, BoundedLoad.Walk.RANDOM_JUMP}) {
                    BoundedLoad rule = BoundedLoad.of(c).walk(walk);
                    rules.add(rule);
                    simulate(workload, rule, load, requests, seed)
                            .print(walk.name().toLowerCase(), Double.toString(c));
                }
            }
            System.out.printf(
                    "%nchoose(), %,d calls on a fixed view with every 10th backend at twice the mean, after as many to warm up:%n",
                    ALLOC_CALLS);
            for (BoundedLoad rule : rules.subList(2, 4)) {
                allocation(workload, rule, load);
            }
        }
    }

    /** The keys, their Zipf distribution, and the hottest key's ring neighbourhood. */
    static final class Workload {
        final Ring ring;
        final int backends;
        final int[] hashes;
        final double[] cdf;
        final int hotBackend;
        final int[] neighbours = new int[NEIGHBOURS];

        Workload(Ring ring, int keys, double s, long seed) {
            this.ring = ring;
            this.backends = ring.store().backendCount();
            hashes = new int[keys];
            cdf = new double[keys];
            double sum = 0;
            for (int k = 0; k < keys; k++) {
                hashes[k] = (int) ring.hash(("/object/" + seed + "/" + k).getBytes(StandardCharsets.US_ASCII));
                sum += Math.pow(k + 1, -s);
                cdf[k] = sum;
            }
            for (int k = 0; k < keys; k++) {
                cdf[k] /= sum;
            }
            int point = ring.pointIndex(hashes[0]);
            hotBackend = ring.pointBackend(point);
            boolean[] seen = new boolean[backends];
            seen[hotBackend] = true;
            for (int found = 0; found < NEIGHBOURS; ) {
                point = point + 1 == ring.pointCount() ? 0 : point + 1;
                int b = ring.pointBackend(point);
                if (!seen[b]) {
                    seen[b] = true;
                    neighbours[found++] = b;
                }
            }
        }

        int key(double u) {
            int i = Arrays.binarySearch(cdf, u);
            return Math.min(i >= 0 ? i : -i - 1, cdf.length - 1);
        }
    }

    /** In-flight counts of every backend, all available; counts the candidates examined. */
    static final class Counts implements LoadView {
        final long[] inFlight;
        long total;
        long examined;

        Counts(int backends) {
            inFlight = new long[backends];
        }

        @Override
        public boolean available(int backend) {
            examined++;
            return true;
        }

        @Override
        public long inFlight(int backend) {
            return inFlight[backend];
        }

        @Override
        public long totalInFlight() {
            return total;
        }

        @Override
        public int availableBackends() {
            return inFlight.length;
        }
    }

    /** Departures ordered by time: a binary min-heap over primitive arrays. */
    static final class Departures {
        double[] time = new double[1024];
        int[] backend = new int[1024];
        int size;

        void add(double t, int b) {
            if (size == time.length) {
                time = Arrays.copyOf(time, size * 2);
                backend = Arrays.copyOf(backend, size * 2);
            }
            int i = size++;
            while (i > 0 && time[(i - 1) / 2] > t) {
                time[i] = time[(i - 1) / 2];
                backend[i] = backend[(i - 1) / 2];
                i = (i - 1) / 2;
            }
            time[i] = t;
            backend[i] = b;
        }

        /** Removes the earliest departure; returns its backend. */
        int poll() {
            int first = backend[0];
            double t = time[--size];
            int b = backend[size];
            int i = 0;
            while (2 * i + 1 < size) {
                int child = 2 * i + 1;
                if (child + 1 < size && time[child + 1] < time[child]) {
                    child++;
                }
                if (time[child] >= t) {
                    break;
                }
                time[i] = time[child];
                backend[i] = backend[child];
                i = child;
            }
            time[i] = t;
            backend[i] = b;
            return first;
        }
    }

    record Result(
            double peakRatio,
            double meanRatio,
            double affinity,
            double meanProbes,
            int p99Probes,
            long maxProbes,
            double overCapacity,
            double hotRatio,
            double neighbourRatio,
            double fullBackends) {
        void print(String walk, String c) {
            System.out.printf(
                    "%-12s %5s | %9.3f %9.3f | %7.1f%% | %6.2f %4d %4d | %8.3f%% | %8.2f %10.2f | %9.2f%n",
                    walk,
                    c,
                    peakRatio,
                    meanRatio,
                    100 * affinity,
                    meanProbes,
                    p99Probes,
                    maxProbes,
                    100 * overCapacity,
                    hotRatio,
                    neighbourRatio,
                    fullBackends);
        }
    }

    static Result simulate(Workload w, BoundedLoad rule, int load, int requests, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        Counts counts = new Counts(w.backends);
        Departures departures = new Departures();
        double arrivalRate = (double) load * w.backends; // service time mean 1: Little's law
        double now = 0;
        int warmUp = requests / 10;
        double peakRatio = 0, ratioSum = 0, hotSum = 0, neighbourSum = 0, fullSum = 0;
        long home = 0, probeSum = 0, maxProbes = 0, overCapacity = 0;
        long[] probeCounts = new long[BoundedLoad.MAX_PROBES_LIMIT + 1];
        for (int r = 0; r < requests; r++) {
            now += -Math.log(1 - random.nextDouble()) / arrivalRate;
            while (departures.size > 0 && departures.time[0] <= now) {
                counts.inFlight[departures.poll()]--;
                counts.total--;
            }
            int hash = w.hashes[w.key(random.nextDouble())];
            long examinedBefore = counts.examined;
            long capacity = rule == null ? Long.MAX_VALUE : rule.capacity(counts);
            int b = rule == null ? w.ring.lookupHash(hash) : rule.choose(w.ring, hash, counts);
            long probes = rule == null ? 1 : counts.examined - examinedBefore;
            boolean over = counts.inFlight[b] >= capacity;
            counts.inFlight[b]++;
            counts.total++;
            departures.add(now - Math.log(1 - random.nextDouble()), b);
            if (r < warmUp) {
                continue;
            }
            double mean = (double) counts.total / w.backends;
            long max = 0;
            int full = 0;
            for (long n : counts.inFlight) {
                max = Math.max(max, n);
                full += n >= capacity ? 1 : 0;
            }
            double ratio = max / mean;
            peakRatio = Math.max(peakRatio, ratio);
            ratioSum += ratio;
            hotSum += counts.inFlight[w.hotBackend] / mean;
            long neighbours = 0;
            for (int n : w.neighbours) {
                neighbours += counts.inFlight[n];
            }
            neighbourSum += neighbours / (mean * NEIGHBOURS);
            fullSum += full;
            home += b == w.ring.lookupHash(hash) ? 1 : 0;
            probeSum += probes;
            maxProbes = Math.max(maxProbes, probes);
            probeCounts[(int) probes]++;
            overCapacity += over ? 1 : 0;
        }
        double counted = requests - warmUp;
        int p99 = 0;
        for (long below = probeCounts[0]; below < 0.99 * counted; below += probeCounts[++p99]) {}
        return new Result(
                peakRatio,
                ratioSum / counted,
                home / counted,
                probeSum / counted,
                p99,
                maxProbes,
                overCapacity / counted,
                hotSum / counted,
                neighbourSum / counted,
                fullSum / counted);
    }

    /** Bytes allocated and rough ns per call of {@code rule.choose}, on a fixed view with every 10th backend at twice the mean load. */
    static void allocation(Workload w, BoundedLoad rule, int load) {
        Counts counts = new Counts(w.backends);
        for (int b = 0; b < w.backends; b++) {
            counts.inFlight[b] = load;
            counts.total += load;
        }
        for (int b = 0; b < w.backends; b += 10) { // twice the mean: over capacity for any c below 1.8
            counts.inFlight[b] = 2L * load;
            counts.total += load;
        }
        int[] hashes = w.hashes;
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long threadId = Thread.currentThread().threadId();
        long acc = 0;
        for (int i = 0; i < ALLOC_CALLS; i++) { // warm-up: let the JIT compile choose
            acc += rule.choose(w.ring, hashes[i % hashes.length], counts);
        }
        long examined = counts.examined;
        long bytesBefore = threads.getThreadAllocatedBytes(threadId);
        long start = System.nanoTime();
        for (int i = 0; i < ALLOC_CALLS; i++) {
            acc += rule.choose(w.ring, hashes[i % hashes.length], counts);
        }
        long elapsed = System.nanoTime() - start;
        long bytes = threads.getThreadAllocatedBytes(threadId) - bytesBefore;
        sink = acc;
        System.out.printf(
                "  %-40s %8.4f bytes/call (%,d bytes in all), %6.1f ns/call, %.2f probes/call%n",
                rule,
                (double) bytes / ALLOC_CALLS,
                bytes,
                (double) elapsed / ALLOC_CALLS,
                (double) (counts.examined - examined) / ALLOC_CALLS);
    }
}
