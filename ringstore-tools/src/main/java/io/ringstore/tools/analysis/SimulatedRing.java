package io.ringstore.tools.analysis;

import io.ringstore.family.RingFamily;
import io.ringstore.internal.BackendRecord;
import io.ringstore.internal.PointGenerator;
import io.ringstore.internal.ServerAddress;
import io.ringstore.internal.ServerParameters;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * The backends of a ring to simulate, as the ring builder sees them ({@link PointGenerator.Members}):
 * where their points come from (their family's point source: a CRC-32 chain over the address bytes
 * it hashes), each one's tie rank (lower keeps a shared hash) and its number of points, at least one.
 * Index i is backend i.
 */
public record SimulatedRing(PointGenerator.Members members) {
    public SimulatedRing {
        if (members.points().length == 0) {
            throw new IllegalArgumentException("need at least one backend");
        }
        for (int p : members.points()) {
            if (p < 1) {
                throw new IllegalArgumentException("every backend needs at least one point: points=" + p);
            }
        }
    }

    /**
     * The ring of {@code addresses} in listing order under {@code family}'s point source and tie
     * rule (v1 hashes the text as written and the first listed wins a tie, v2 hashes the socket
     * address and the smallest wins), backend i with {@code points[i]} points.
     */
    public static SimulatedRing of(List<ServerAddress> addresses, RingFamily family, int[] points) {
        List<BackendRecord> backends = new ArrayList<>(addresses.size());
        for (ServerAddress a : addresses) {
            backends.add(new BackendRecord(a, 1, 0, ServerParameters.DEFAULTS));
        }
        return new SimulatedRing(new PointGenerator.Members(
                family.points(family.parameters().defaults()).source(backends),
                family.ties().ranks(backends),
                points.clone()));
    }

    /** {@code n} backends of {@code k} points each. */
    public static SimulatedRing equal(List<ServerAddress> addresses, RingFamily family, int k) {
        int[] points = new int[addresses.size()];
        Arrays.fill(points, k);
        return of(addresses, family, points);
    }

    /** {@code n} distinct random IPv4 endpoints {@code a.b.c.d:port}, the same for the same seed. */
    public static List<ServerAddress> randomAddresses(int n, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        Set<String> seen = new HashSet<>();
        ServerAddress[] out = new ServerAddress[n];
        int i = 0;
        while (i < n) {
            int ip = random.nextInt();
            String text = (1 + random.nextInt(223)) + "." + ((ip >>> 16) & 0xFF) + "." + ((ip >>> 8) & 0xFF) + "."
                    + (ip & 0xFF) + ":" + (1024 + random.nextInt(65536 - 1024));
            if (seen.add(text)) {
                out[i++] = ServerAddress.parse(text);
            }
        }
        return List.of(out);
    }

    public int[] ranks() {
        return members.ranks();
    }

    public int[] points() {
        return members.points();
    }

    public int backends() {
        return members.points().length;
    }

    public long totalPoints() {
        return members.totalPoints();
    }

    /** Point counts as longs, in backend order. */
    public long[] pointCounts() {
        return Arrays.stream(points()).asLongStream().toArray();
    }

    /** Point counts in tie order (rank 0 first), what {@link CollisionModel} takes. */
    public long[] pointsInTieOrder() {
        int[] points = points();
        long[] out = new long[points.length];
        for (int i = 0; i < points.length; i++) {
            out[ranks()[i]] = points[i];
        }
        return out;
    }
}
