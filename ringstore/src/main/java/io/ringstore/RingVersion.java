package io.ringstore;

/**
 * One way of building a ring: the algorithm and its points per weight unit. A file holds one or more
 * versions of every feature ring (see FORMAT.md).
 *
 * @param algorithm     how points are generated
 * @param pointMultiple points per weight unit; always 160 for {@link Algorithm#V1}
 */
public record RingVersion(Algorithm algorithm, int pointMultiple) {
    /** nginx-compatible: v1, 160 points per weight unit. */
    public static final RingVersion V1 = new RingVersion(Algorithm.V1, Algorithm.NGINX_POINT_MULTIPLE);

    /**
     * Checks the version: an algorithm, and a point multiple of at least 1 (160 for v1).
     *
     * @throws IllegalArgumentException for a missing algorithm or a point multiple v1 cannot have
     */
    public RingVersion {
        if (algorithm == null) {
            throw new IllegalArgumentException("algorithm must not be null");
        }
        if (pointMultiple < 1) {
            throw new IllegalArgumentException("point multiple must be at least 1: pointMultiple=" + pointMultiple);
        }
        if (algorithm == Algorithm.V1 && pointMultiple != Algorithm.NGINX_POINT_MULTIPLE) {
            throw new IllegalArgumentException("v1 always has 160 points per weight unit (nginx): pointMultiple=" + pointMultiple);
        }
    }

    /**
     * {@return pingora-ketama's V2 with {@code pointMultiple} points per weight unit}
     *
     * @param pointMultiple points per weight unit, at least 1
     */
    public static RingVersion v2(int pointMultiple) {
        return new RingVersion(Algorithm.V2, pointMultiple);
    }

    /** {@code v1} or {@code v2:K}. */
    @Override
    public String toString() {
        return algorithm == Algorithm.V1 ? "v1" : "v2:" + pointMultiple;
    }
}
