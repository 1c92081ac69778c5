package io.ringstore.build;

/**
 * How a build stores feature rings ({@link RingBuilder#views(Views)}, {@code ringstore build --views}).
 *
 * <p>A feature ring's points are its members' points of the version's ring of all backends (a
 * backend's points depend only on its own address), so a ring can be stored as a <em>view</em>: no
 * points of its own, a lookup walking the ring of all backends from the key's point to the first
 * point of a member. Equal hashes are kept in that ring, in tie order, so a view answers exactly what
 * the ring stored as its own points answers (FORMAT.md, "Views"). A view costs no file or page-cache
 * bytes; its lookups read about 1/f points where f is its members' share of the points.
 *
 * <p>The default is {@link #NONE}: a file with a view is format version 3, which readers older than
 * views refuse, so a fleet turns views on (usually {@link #AUTO}) once every reader of its files is
 * new enough, as with any format change (FORMAT.md, "Versioning").
 */
public enum Views {
    /**
     * A view where its members hold at least 1/{@value RingBuilder#AUTO_MAX_EXPECTED_WALK} of the
     * points (an expected walk of at most that many points), the other rings as their own points: the
     * bytes of the small rings, where a view's walk is longest, are few. Measured (BENCHMARKS.md,
     * "Views"): on 2,048 backends with 5 features, a file 4.47× smaller than {@link #NONE}; a lookup
     * through a view costs 2–5× the stored ring's (the search covers the ring of all backends, then
     * the walk), a router's mix over all 32 rings 1.2–1.5×.
     */
    AUTO,
    /** Every feature ring that has members and is not the ring of all backends, as a view. */
    ALL,
    /** Every ring as its own points: the file of a build before views (format version 1 or 2). The default. */
    NONE
}
