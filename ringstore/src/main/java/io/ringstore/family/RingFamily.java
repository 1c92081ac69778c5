package io.ringstore.family;

/**
 * A ring family: one way of turning a backends list into ring points and of looking keys up in them,
 * exactly as some client or proxy does. A family is a row of small parts, one per axis on which the
 * families differ, declared once in {@link Families}' table:
 *
 * <ul>
 *   <li>its {@link #name()} and {@link #code()}: how the command line names it, and the byte the ring
 *       index stores (FORMAT.md);</li>
 *   <li>its {@link #parameters()}: the grammar of a {@link RingVersion}'s parameters and name;</li>
 *   <li>its key hash: what keys are looked up by ({@link RingVersion#keyHash()});</li>
 *   <li>its {@link #points(int[])} source (a CRC-32 chain, the MD5 of point texts, a 64-bit hash of them),
 *       {@link #weights()} rule (how many points each member gets, and whether a {@code down} one
 *       leaves the ring) and {@link #ties()} rule (who keeps a hash two backends produce);</li>
 *   <li>its {@link #failover()}: how a lookup goes on past a backend it cannot use, and its
 *       {@link #landing()}: which point a key's hash goes to;</li>
 *   <li>its {@link #addresses()}: the backends it refuses, the default port, the answer text.</li>
 * </ul>
 *
 * <p>Its traits are computed from the parts, not declared beside them: {@link #viewable()},
 * {@link #downLeavesRing()}, {@link #pointBits()}, {@link #crcChain()}. The builder, the reader,
 * verify, the analysis and the CLI ask the parts instead of testing which family it is. A family is
 * immutable and thread-safe. Adding a family is one row in {@link Families}, its digest tag in
 * FORMAT.md, and one subclass of the family contract test ({@code RingFamilyContract}: reference
 * vectors, a golden checksum, monotonicity, owned points, ties) with its vectors.
 */
public final class RingFamily {
    private final String name;
    private final String writtenName;
    private final int code;
    private final Parameters parameters;
    private final KeyHashChoice keyHash;
    private final PointChoice points;
    private final WeightRule weights;
    private final TieRule ties;
    private final Failover failover;
    private final Landing landing;
    private final Addresses addresses;

    /** What keys of a version are hashed with: the family's hash, or one its parameters name. */
    @FunctionalInterface
    interface KeyHashChoice {
        KeyHash of(int[] parameters);
    }

    /** How a version's points are made: the family's source, or one its parameters choose (the hash of libmemcached's texts). */
    @FunctionalInterface
    interface PointChoice {
        PointSource of(int[] parameters);
    }

    /** A row of the table whose points do not depend on the version's parameters and whose keys land on the next point. */
    RingFamily(
            String name,
            String writtenName,
            int code,
            int defaultPort,
            Parameters parameters,
            KeyHashChoice keyHash,
            PointSource points,
            WeightRule weights,
            TieRule ties,
            Failover failover,
            Addresses.Rule addressRule,
            Addresses.Answer answer) {
        this(
                name,
                writtenName,
                code,
                defaultPort,
                parameters,
                keyHash,
                p -> points,
                weights,
                ties,
                failover,
                Landing.NEXT,
                addressRule,
                answer);
    }

    /**
     * A row of the table: its keys land by {@code landing} ({@link Landing#NEAREST}: HAProxy's; the
     * others' on the next point), its points may depend on the version's parameters.
     *
     * @param name        the family's name ({@code nginx})
     * @param writtenName the name its versions are written with ({@code v1}; the name but for nginx and
     *                    pingora), which the input digest hashes, and which names the family too
     * @param code        the ring index byte, 1 to 255
     * @param defaultPort the port of a backend written without one
     */
    RingFamily(
            String name,
            String writtenName,
            int code,
            int defaultPort,
            Parameters parameters,
            KeyHashChoice keyHash,
            PointChoice points,
            WeightRule weights,
            TieRule ties,
            Failover failover,
            Landing landing,
            Addresses.Rule addressRule,
            Addresses.Answer answer) {
        if (code < 1 || code > 255) {
            throw new IllegalArgumentException("a family code is one byte, 0 unused: code=" + code);
        }
        this.name = name;
        this.writtenName = writtenName;
        this.code = code;
        this.parameters = parameters;
        this.keyHash = keyHash;
        this.points = points;
        this.weights = weights;
        this.ties = ties;
        this.failover = failover;
        this.landing = landing;
        this.addresses = new Addresses(writtenName, addressRule, answer, defaultPort);
    }

    /** {@return the family's name: {@code nginx}, {@code pingora}, {@code libketama}, …} */
    public String name() {
        return name;
    }

    /** {@return the byte the ring index stores for a ring of this family (FORMAT.md)} */
    public int code() {
        return code;
    }

    /** {@return the grammar of its versions' parameters and names} */
    public Parameters parameters() {
        return parameters;
    }

    /**
     * {@return how the points of a version with {@code parameters} are made ({@link RingVersion#points()})}
     *
     * @param parameters a version's parameters
     */
    public PointSource points(int[] parameters) {
        return points.of(parameters);
    }

    /** {@return how many points each member of a ring gets} */
    public WeightRule weights() {
        return weights;
    }

    /** {@return who keeps a hash several backends produce} */
    public TieRule ties() {
        return ties;
    }

    /** {@return how a lookup goes on past a backend it cannot use} */
    public Failover failover() {
        return failover;
    }

    /** {@return where a key lands: the next point, or the nearer of the two around its hash (HAProxy)} */
    public Landing landing() {
        return landing;
    }

    /** {@return which backends it refuses, the default port, how it prints an answer} */
    public Addresses addresses() {
        return addresses;
    }

    /**
     * {@return whether a feature ring can be a view of the ring of all backends: a backend's points
     * depend on itself alone, not on who else is in the ring (its weight rule), and ties go by rank}
     * False for the share rules, Envoy's scaling, xmemcached's ties and HAProxy's nearer node (whose
     * cursor reads the point before a key's as well, which a view's walk does not give).
     */
    public boolean viewable() {
        return weights.ownWeightOnly() && ties.byRank() && landing == Landing.NEXT;
    }

    /**
     * {@return whether a {@code down} backend leaves the ring, which is built from the others (its
     * weight rule's: the memcached C clients' auto-eject, Dubbo, Couchbase, Envoy)} False for nginx,
     * pingora and the clients that keep a down backend's points and skip it in failover.
     */
    public boolean downLeavesRing() {
        return weights.ejectsDown();
    }

    /** {@return the width of a point's hash: 32, or 64 for Envoy's and gRPC's rings (FORMAT.md, "64-bit rings")} */
    public int pointBits() {
        return points(parameters.defaults()).bits(); // one width a family
    }

    /** {@return whether its points are a CRC-32 chain (nginx, pingora): the builder's fast path, what the analysis simulates} */
    public boolean crcChain() {
        return points(parameters.defaults()) instanceof PointSource.CrcChain;
    }

    /** What keys of a version with {@code parameters} are hashed with. */
    KeyHash keyHash(int[] parameters) {
        return keyHash.of(parameters);
    }

    /**
     * {@return the name its versions are written with and printed as: {@code v1}, {@code v2},
     * {@code libketama}} That is the family's own name but for nginx ({@code v1}) and pingora
     * ({@code v2}), whose versions kept their first names; both names name the family.
     */
    @Override
    public String toString() {
        return writtenName;
    }
}
