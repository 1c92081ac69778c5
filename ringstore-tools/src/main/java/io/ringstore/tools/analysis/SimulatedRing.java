package io.ringstore.tools.analysis;

import io.ringstore.Algorithm;
import io.ringstore.internal.Crc32;
import io.ringstore.internal.ServerAddress;

import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * The backends of a ring to simulate, as the ring builder sees them: each one's CRC-32 base state
 * (over the address bytes its algorithm hashes), its tie rank (lower keeps a shared hash) and its
 * number of points. Index i is backend i.
 */
public record SimulatedRing(int[] bases, int[] ranks, int[] points) {
    public SimulatedRing {
        if (bases.length != ranks.length || bases.length != points.length || bases.length == 0) {
            throw new IllegalArgumentException("need a base, a rank and a point count per backend, at least one backend");
        }
        if (bases.length > 65_536) {
            throw new IllegalArgumentException("at most 65536 backends (16-bit index): backends=" + bases.length);
        }
        boolean[] taken = new boolean[ranks.length];
        for (int r : ranks) {
            if (r < 0 || r >= ranks.length || taken[r]) {
                throw new IllegalArgumentException("ranks must be 0.." + (ranks.length - 1) + ", each once: rank=" + r);
            }
            taken[r] = true;
        }
        for (int p : points) {
            if (p < 1) {
                throw new IllegalArgumentException("every backend needs at least one point: points=" + p);
            }
        }
    }

    /**
     * The ring of {@code addresses} in listing order under {@code algorithm}: v1 hashes the text as
     * written and the first listed wins a tie, v2 hashes the socket address and the smallest wins.
     */
    public static SimulatedRing of(List<ServerAddress> addresses, Algorithm algorithm, int[] points) {
        int n = addresses.size();
        int[] bases = new int[n];
        int[] ranks = new int[n];
        for (int i = 0; i < n; i++) {
            ServerAddress a = addresses.get(i);
            bases[i] = Crc32.update(Crc32.INITIAL, algorithm == Algorithm.V1 ? a.nginxHashInput() : a.pingoraHashInput());
        }
        if (algorithm == Algorithm.V1) {
            Arrays.setAll(ranks, i -> i);
        } else {
            Integer[] order = new Integer[n];
            Arrays.setAll(order, i -> i);
            Arrays.sort(order, (x, y) -> addresses.get(x).compareTo(addresses.get(y)));
            for (int r = 0; r < n; r++) {
                ranks[order[r]] = r;
            }
        }
        return new SimulatedRing(bases, ranks, points.clone());
    }

    /** {@code n} backends of {@code k} points each. */
    public static SimulatedRing equal(List<ServerAddress> addresses, Algorithm algorithm, int k) {
        int[] points = new int[addresses.size()];
        Arrays.fill(points, k);
        return of(addresses, algorithm, points);
    }

    /** {@code n} distinct random IPv4 endpoints {@code a.b.c.d:port}, the same for the same seed. */
    public static List<ServerAddress> randomAddresses(int n, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        Set<String> seen = new HashSet<>();
        ServerAddress[] out = new ServerAddress[n];
        int i = 0;
        while (i < n) {
            int ip = random.nextInt();
            String text = (1 + random.nextInt(223)) + "." + ((ip >>> 16) & 0xFF) + "." + ((ip >>> 8) & 0xFF) + "." + (ip & 0xFF)
                    + ":" + (1024 + random.nextInt(65536 - 1024));
            if (seen.add(text)) {
                out[i++] = ServerAddress.parse(text);
            }
        }
        return List.of(out);
    }

    public int backends() {
        return bases.length;
    }

    public long totalPoints() {
        long total = 0;
        for (int p : points) {
            total += p;
        }
        return total;
    }

    /** Point counts as longs, in backend order. */
    public long[] pointCounts() {
        return Arrays.stream(points).asLongStream().toArray();
    }

    /** Point counts in tie order (rank 0 first), what {@link CollisionModel} takes. */
    public long[] pointsInTieOrder() {
        long[] out = new long[points.length];
        for (int i = 0; i < points.length; i++) {
            out[ranks[i]] = points[i];
        }
        return out;
    }
}
