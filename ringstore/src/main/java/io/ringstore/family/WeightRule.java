package io.ringstore.family;

import io.ringstore.internal.BackendRecord;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;

/**
 * Weight rule: how many points each member of a ring gets, from the members' weights and the
 * version's parameters, in the original's arithmetic (rings.md, section 13: Java float and double in
 * each client's operation order); and what a {@code down} member does: keeps its points (failover
 * skips it) or leaves the ring, which is then counted from the others (the memcached C clients'
 * auto-eject, Dubbo's invoker list, Couchbase's cluster map, Envoy's healthy hosts).
 *
 * <p>Module-internal in what it takes (the module's backend records). Immutable and thread-safe.
 */
@SuppressWarnings("exports") // takes the module's BackendRecord: its callers are the module's builder and verifier
public final class WeightRule {
    /** Each member's count from all the members' weights and a version's parameters. */
    @FunctionalInterface
    private interface Counts {
        long[] of(long[] weights, int[] parameters);
    }

    /**
     * A share rule's digests for a member whose share of the total weight is {@code pct}, among
     * {@code n} members, in its client's own float and double arithmetic, before the floor.
     */
    @FunctionalInterface
    private interface Digests {
        float of(float pct, float n);
    }

    /** The most points a ring of the members can have: what a reader checks before trusting a file. */
    @FunctionalInterface
    private interface Bound {
        long of(int[] parameters, long totalWeight, int backends);
    }

    /** Weight × the point multiple: nginx's and pingora's rule. */
    static final WeightRule PER_WEIGHT_UNIT =
            new WeightRule(WeightRule::perWeightUnit, WeightRule::weightTimesFirst, true, false);
    /**
     * libketama's rule K: {@code float pct = (float) w / (float) W; ks = floorf(pct * 40.0 * (float) n)}:
     * the float share times the double 40.0 times the float count in double, rounded once to float by
     * {@code floorf}'s parameter, floored; 4 points a digest.
     */
    static final WeightRule SHARE_K = share((pct, n) -> (float) (pct * 40.0 * n));
    /**
     * libmemcached's rule L: {@code floor((float)(pct * 160 / 4 * (float) n + 0.0000000001F)) * 4}, all
     * float ({@code hosts.cc} {@code update_continuum}).
     */
    static final WeightRule SHARE_L = share((pct, n) -> pct * 160f / 4f * n + 0.0000000001F);
    /**
     * twemproxy's and spymemcached's weighted rule: the float product {@code pct * 160 / 4 * (float) n}
     * plus the double {@code 0.0000000001}, rounded to float, floored, times 4 ({@code nc_ketama.c},
     * {@code KetamaNodeLocator}).
     */
    static final WeightRule SHARE_FLOAT_PLUS_DOUBLE =
            share((pct, n) -> (float) ((double) (pct * 160f / 4f * n) + 0.0000000001));
    /** The first parameter's points for every member, rounded down to whole digests; the weight is not used. */
    static final WeightRule EQUAL = new WeightRule(
            (w, p) -> equal(w.length, p[0]), (p, total, backends) -> (long) p[0] * backends, true, false);
    /** The first parameter's points per weight unit, in whole digests ({@code numReps *= weight}, {@code numReps / 4} digests). */
    static final WeightRule PER_WEIGHT_UNIT_IN_DIGESTS =
            new WeightRule(WeightRule::perWeightUnitInDigests, WeightRule::weightTimesFirst, true, false);
    /**
     * Envoy's entry counts ({@code RingHashLoadBalancer::Ring::Ring}), in its double arithmetic: the
     * scale {@code min(ceil(minWeight · MIN) / minWeight, MAX)} of the normalized weights, and for each
     * host in file order a running target {@code target += scale · weight}, one entry per whole step.
     * The scale is at most MAX, and each host's running target rounds up by less than one entry.
     */
    static final WeightRule ENVOY_SCALE = new WeightRule(
            (w, p) -> envoyEntries(w, p[0], p[1]), (p, total, backends) -> (long) p[1] + backends, false, false);

    /**
     * {@code count} points for every member, whatever its weight and the version's parameters (libmemcached's
     * unweighted continuum: {@code MEMCACHED_POINTS_PER_SERVER}, one point a text).
     */
    static WeightRule perMember(int count) {
        return new WeightRule(
                (w, p) -> {
                    long[] points = new long[w.length];
                    Arrays.fill(points, count);
                    return points;
                },
                (p, total, backends) -> (long) count * backends,
                true,
                false);
    }

    /** HAProxy's {@code BE_WEIGHT_SCALE}: nodes a unit of weight. */
    static final int HAPROXY_NODES_PER_WEIGHT = 16;

    /**
     * HAProxy's consistent hash ({@code chash_init_server_tree}): {@code uweight × BE_WEIGHT_SCALE} nodes,
     * 16 a unit of weight; a {@code down} server leaves the tree. A member's nodes depend on its id, which
     * HAProxy numbers from the servers before it: not on its own weight alone.
     */
    static final WeightRule HAPROXY_NODES = new WeightRule(
            (w, p) -> perWeightUnit(w, new int[] {HAPROXY_NODES_PER_WEIGHT}),
            (p, total, backends) -> weightTimesFirst(new int[] {HAPROXY_NODES_PER_WEIGHT}, total, backends),
            false,
            true);

    private final Counts counts;
    private final Bound bound;
    private final boolean ownWeightOnly;
    private final boolean ejectsDown;
    /** The order in which the rule visits a ring's members (their indexes), null for their order in the file. */
    private final Function<List<BackendRecord>, int[]> order;

    private WeightRule(Counts counts, Bound bound, boolean ownWeightOnly, boolean ejectsDown) {
        this(counts, bound, ownWeightOnly, ejectsDown, null);
    }

    private WeightRule(
            Counts counts,
            Bound bound,
            boolean ownWeightOnly,
            boolean ejectsDown,
            Function<List<BackendRecord>, int[]> order) {
        this.counts = counts;
        this.bound = bound;
        this.ownWeightOnly = ownWeightOnly;
        this.ejectsDown = ejectsDown;
        this.order = order;
    }

    /** The points of a share rule's member at equal weights: 40 digests. */
    private static final int SHARE_POINTS = 160;

    /** A share rule: a member's count is its share of the members' weight, 160 points a member at equal weights. */
    private static WeightRule share(Digests digests) {
        return new WeightRule(
                (weights, parameters) -> shares(weights, digests),
                (p, total, backends) -> (long) SHARE_POINTS * backends,
                false,
                false);
    }

    /** {@return this rule, with a {@code down} member leaving the ring: no points, and not counted in the others'} */
    WeightRule ejectingDown() {
        return new WeightRule(counts, bound, ownWeightOnly, true, order);
    }

    /**
     * {@return this rule, visiting a ring's members in the order {@code order} gives (their indexes among
     * the counted members) instead of file order} grpc-java's entry counts
     * ({@code RingHashLoadBalancer.buildRing}) are Envoy's, its running target taken over the hosts in
     * its {@code HashMap}'s order ({@link PointText#hashMapOrder}).
     */
    WeightRule visitingIn(Function<List<BackendRecord>, int[]> order) {
        return new WeightRule(counts, bound, ownWeightOnly, ejectsDown, order);
    }

    /** {@return whether a member's count depends on its own weight alone, not on who else is in the ring} */
    boolean ownWeightOnly() {
        return ownWeightOnly;
    }

    /** {@return whether a {@code down} member leaves the ring} */
    boolean ejectsDown() {
        return ejectsDown;
    }

    /**
     * {@return each member's point count in a ring of {@code version} whose members have {@code weights},
     * every member counted}
     *
     * @param weights each member's weight
     * @param version a version of the rule's family
     * @throws ArithmeticException when a count does not fit a long
     */
    public long[] points(long[] weights, RingVersion version) {
        return weights.length == 0 ? new long[0] : counts.of(weights, version.parameters());
    }

    /**
     * Each member's point count in a ring of {@code version}, after a {@code down} member left the ring
     * if the rule says so (0 points, and not counted in the others' shares).
     *
     * @param members the ring's members, in file order
     * @param version a version of the rule's family
     * @return each member's point count, in the same order
     * @throws ArithmeticException when a count does not fit a long
     */
    public long[] memberPoints(List<BackendRecord> members, RingVersion version) {
        List<BackendRecord> counted =
                members.stream().filter(b -> !ejectsDown || !b.down()).toList();
        long[] live;
        if (order == null) {
            live = points(counted.stream().mapToLong(BackendRecord::weight).toArray(), version);
        } else { // counted in the rule's order, given back in file order
            int[] visit = order.apply(counted);
            long[] weights = new long[visit.length];
            for (int i = 0; i < visit.length; i++) {
                weights[i] = counted.get(visit[i]).weight();
            }
            long[] inOrder = points(weights, version);
            live = new long[visit.length];
            for (int i = 0; i < visit.length; i++) {
                live[visit[i]] = inOrder[i];
            }
        }
        long[] out = new long[members.size()];
        int k = 0;
        for (int i = 0; i < out.length; i++) {
            if (!ejectsDown || !members.get(i).down()) {
                out[i] = live[k++];
            }
        }
        return out;
    }

    /**
     * {@return the most points a ring of {@code version} can have whose {@code backends} members weigh
     * {@code totalWeight} in all, saturating at {@link Long#MAX_VALUE}: what a reader checks against the
     * format's limit before trusting a file}
     *
     * @param version     a version of the rule's family
     * @param totalWeight the members' weights, summed
     * @param backends    how many members
     */
    public long bound(RingVersion version, long totalWeight, int backends) {
        return bound.of(version.parameters(), totalWeight, backends);
    }

    // ---- the rules ----

    private static long[] perWeightUnit(long[] weights, int[] parameters) {
        long k = parameters[0];
        long[] points = new long[weights.length];
        for (int i = 0; i < weights.length; i++) {
            points[i] = Math.multiplyExact(weights[i], k);
        }
        return points;
    }

    private static long weightTimesFirst(int[] parameters, long totalWeight, int backends) {
        return totalWeight > Long.MAX_VALUE / parameters[0] ? Long.MAX_VALUE : totalWeight * parameters[0];
    }

    /** The share rules' loop: each member's float share of the total, its digests floored, 4 points a digest. */
    private static long[] shares(long[] weights, Digests digests) {
        long total = Arrays.stream(weights).sum();
        float n = weights.length;
        long[] points = new long[weights.length];
        for (int i = 0; i < weights.length; i++) {
            float pct = (float) weights[i] / (float) total;
            points[i] = (long) Math.floor(digests.of(pct, n)) * PointSource.POINTS_PER_DIGEST;
        }
        return points;
    }

    private static long[] equal(int members, int perBackend) {
        long[] points = new long[members];
        Arrays.fill(points, (long) (perBackend / PointSource.POINTS_PER_DIGEST) * PointSource.POINTS_PER_DIGEST);
        return points;
    }

    private static long[] perWeightUnitInDigests(long[] weights, int[] parameters) {
        long[] points = new long[weights.length];
        for (int i = 0; i < weights.length; i++) {
            points[i] = Math.multiplyExact(weights[i], (long) parameters[0])
                    / PointSource.POINTS_PER_DIGEST
                    * PointSource.POINTS_PER_DIGEST;
        }
        return points;
    }

    private static long[] envoyEntries(long[] weights, long minRingSize, long maxRingSize) {
        long sum = 0;
        for (long w : weights) {
            sum = Math.addExact(sum, w);
        }
        double[] normalized = new double[weights.length];
        double min = Double.MAX_VALUE;
        for (int i = 0; i < weights.length; i++) {
            normalized[i] = (double) weights[i] * 1.0 / (double) sum;
            min = Math.min(min, normalized[i]);
        }
        double scale = Math.min(Math.ceil(min * (double) minRingSize) / min, (double) maxRingSize);
        long[] counts = new long[weights.length];
        double current = 0;
        double target = 0;
        for (int i = 0; i < weights.length; i++) {
            target += scale * normalized[i];
            long c = 0;
            while (current < target) {
                c++;
                current++;
            }
            counts[i] = c;
        }
        return counts;
    }
}
