package io.ringstore.tools.analysis;

import io.ringstore.Backend;
import io.ringstore.family.RingFamily;
import io.ringstore.family.RingVersion;
import io.ringstore.internal.BackendAccess;
import java.util.List;
import java.util.Set;

/**
 * One feature ring of a real backend list: its member backends with their point counts (the family's
 * weight rule: weight × point multiple for v1 and v2, a share of 160 for libketama), and what
 * {@link LoadFormula} and {@link CollisionModel} predict for it. The members are the backends that
 * hold points: a {@code down} backend is not one in a family that builds its ring without it
 * ({@link RingFamily#downLeavesRing()}). The tie order is the family's: listing order
 * for v1, socket-address order for v2.
 */
public final class FleetRing {
    private final List<Backend> members;
    private final long[] points;
    private final long[] pointsInTieOrder;

    private FleetRing(List<Backend> members, long[] points, long[] pointsInTieOrder) {
        this.members = members;
        this.points = points;
        this.pointsInTieOrder = pointsInTieOrder;
    }

    /** The members of the ring of {@code features}: every backend that has all of them, in listing order. */
    public static List<Backend> members(List<Backend> backends, Set<String> features) {
        return backends.stream().filter(b -> b.features().containsAll(features)).toList();
    }

    /**
     * The ring of {@code members} in {@code version}: its family's weight rule and tie rule, without
     * the down members when the family leaves them out of the ring.
     */
    public static FleetRing of(List<Backend> members, RingVersion version) {
        RingFamily family = version.family();
        List<Backend> placed = family.downLeavesRing()
                ? members.stream().filter(b -> !b.down()).toList()
                : members;
        long[] points = family.weights()
                .points(placed.stream().mapToLong(Backend::weight).toArray(), version);
        int[] rank =
                family.ties().ranks(placed.stream().map(BackendAccess::record).toList());
        long[] tie = new long[points.length];
        for (int i = 0; i < tie.length; i++) {
            tie[rank[i]] = points[i];
        }
        return new FleetRing(placed, points, tie);
    }

    /** {@return the backends holding points, in listing order} */
    public List<Backend> members() {
        return members;
    }

    /** Points generated, before equal hashes are dropped. */
    public long points() {
        long total = 0;
        for (long p : points) {
            total += p;
        }
        return total;
    }

    /** {@return each member's share of the points the weight rule gives (its weight share for v1 and v2)} */
    public double[] pointShares() {
        double total = points();
        double[] shares = new double[points.length];
        for (int i = 0; i < shares.length; i++) {
            shares[i] = points[i] / total;
        }
        return shares;
    }

    /** Point counts in tie order (first keeps a shared hash). */
    public long[] pointsInTieOrder() {
        return pointsInTieOrder.clone();
    }

    /** The continuous-ring CV ({@link LoadFormula#ringCv}); 0 for an empty ring. */
    public double predictedCv() {
        return LoadFormula.ringCv(points);
    }

    /** The 32-bit model: CV, expected dropped and remaining points. */
    public CollisionModel.Result model() {
        return CollisionModel.ring(pointsInTieOrder);
    }

    /**
     * The measured shares against the weight shares.
     *
     * @param lineShares each backend's share of the line, indexed by backend index ({@code Ring.lineShares()})
     */
    public ShareStats measured(double[] lineShares) {
        double[] shares = new double[members.size()];
        double[] expected = new double[members.size()];
        long total = points();
        for (int i = 0; i < shares.length; i++) {
            shares[i] = lineShares[members.get(i).index()];
            expected[i] = (double) points[i] / total;
        }
        return ShareStats.of(shares, expected);
    }
}
