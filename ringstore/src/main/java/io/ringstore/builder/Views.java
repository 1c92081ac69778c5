package io.ringstore.builder;

/**
 * How a build stores feature rings ({@link RingBuilder#views(Views)}, {@code ringstore build --views}).
 *
 * <p>A feature ring's points are its members' points of the version's ring of all backends (a
 * backend's points depend only on its own address), so a ring can be stored as a <em>view</em>: no
 * points of its own, a lookup searching the ring of all backends and taking the first point of a
 * member from the key's point on. Equal hashes are kept in that ring, in tie order, so a view answers
 * exactly what the ring stored as its own points answers (FORMAT.md, "Views"). That ring is followed
 * by its points' feature bits (one bit a point and feature, FORMAT.md "Feature bits"), by which a
 * view finds its first member point in one or two blocks of 64 points at any member fraction; they
 * cost featureCount / 48 of that ring's bytes, once, however many views read them.
 *
 * <p>The default is {@link #NONE}: a file with a view is format version 3, which readers older than
 * views refuse (and readers older than feature bits by feature, issue 32, refuse its storage 4), so a fleet turns views on
 * (usually {@link #AUTO}) once every reader of its files is new enough, as with any format change
 * (FORMAT.md, "Versioning").
 */
public enum Views {
    /**
     * A view where its members hold at least 1/{@value RingBuilder#AUTO_MAX_EXPECTED_WALK} of the
     * points (one block of feature bits on average), the other rings as their own points; no view at
     * all when the rings that would be views hold fewer bytes than the feature bits. Measured in
     * BENCHMARKS.md, "Views".
     */
    AUTO,
    /** Every feature ring that has members and is not the ring of all backends, as a view. */
    ALL,
    /** Every ring as its own points: the file of a build before views (format version 1 or 2). The default. */
    NONE
}
