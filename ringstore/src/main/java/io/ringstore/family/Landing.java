package io.ringstore.family;

/**
 * Where a key lands on a ring: which point a key's hash goes to. The ring's cursor
 * ({@code internal.format.PointRing}, picked once when the ring opens) is the one place that reads it;
 * failover walks on from the point a key lands on, whichever rule placed it there.
 *
 * <ul>
 *   <li>{@link #NEXT}: the first point at or after the hash, wrapping (every client but HAProxy and
 *       grpc-java).</li>
 *   <li>{@link #NEXT_OR_LAST}: the first point at or after the hash; past the last point, the last
 *       (grpc-java's {@code RingHashPicker}, whose binary search does not wrap).</li>
 *   <li>{@link #NEAREST}: the nearer of the point at or after the hash ({@code next}) and the point
 *       before that one ({@code prev}), wrapping both ways, in 32-bit unsigned distances: {@code prev}
 *       when {@code hash - prev <= next - hash} (HAProxy's {@code chash_get_server_hash}). A hash on a
 *       point goes to it; a hash exactly midway goes to {@code prev}.</li>
 * </ul>
 *
 * <p>Immutable and thread-safe.
 */
public enum Landing {
    /** The first point at or after the hash, wrapping. */
    NEXT,
    /** The first point at or after the hash, the last point past it (grpc-java). */
    NEXT_OR_LAST,
    /** The nearer of the points around the hash, the one before it at equal distance (HAProxy). */
    NEAREST;

    /** {@return whether a key goes to the nearer of the two points around its hash} */
    public boolean nearest() {
        return this == NEAREST;
    }

    /** {@return whether a hash past the last point lands on the first point (else on the last: grpc-java's)} */
    public boolean wraps() {
        return this != NEXT_OR_LAST;
    }
}
