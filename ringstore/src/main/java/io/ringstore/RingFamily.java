package io.ringstore;

import io.ringstore.internal.BackendAccess;
import io.ringstore.internal.Crc32;
import io.ringstore.internal.ServerAddress;
import io.ringstore.internal.TextLines;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;

/**
 * A ring family: one way of turning a backends list into ring points and of looking keys up in them,
 * exactly as some client or proxy does. Everything that differs between families is a method here,
 * so that the builder, the reader, verify, the analysis and the CLI ask the family instead of
 * testing which family it is:
 *
 * <ul>
 *   <li>{@link #name()} and {@link #code()}: how the command line names it, and the byte the ring
 *       index stores (FORMAT.md);</li>
 *   <li>its parameters: how many a {@link RingVersion} of it has, which of them are written in its
 *       name ({@code v2:K}), their defaults and limits ({@link #checkParameters});</li>
 *   <li>{@link #keyHash()}: what keys are looked up by;</li>
 *   <li>the point source ({@link #pointInput}): the bytes of a backend whose CRC-32 chain gives its
 *       points, and the weight rule ({@link #points}): how many points each backend gets;</li>
 *   <li>the tie rule ({@link #tieRanks}): who keeps a hash two backends produce;</li>
 *   <li>the address check ({@link #addressProblem}): a backend the family cannot place;</li>
 *   <li>{@link #answer}: how the chosen backend is printed, as the original prints it.</li>
 * </ul>
 *
 * <p>The families are {@link #all()}, found by {@link #forName} and {@link #forCode}. A family is
 * immutable and thread-safe. Families are defined in this package only (the constructor is not
 * public): each is one small class ({@code NginxFamily}, {@code PingoraV2Family}), passing the family
 * contract test ({@code RingFamilyContract} in the tests: reference vectors, a golden checksum,
 * monotonicity, owned points, ties). Adding a family is one class, a line in {@link #all()}'s list,
 * its digest tag in FORMAT.md, and one subclass of the contract with its vectors.
 */
public abstract class RingFamily {
    /** nginx {@code hash $key consistent} ({@code v1}): 160 points per weight unit, the first listed keeps a tie. */
    public static final RingFamily NGINX = new NginxFamily();
    /** pingora-ketama {@code Version::V2 { point_multiple }} ({@code v2:K}): K points per weight unit, the smallest address keeps a tie. */
    public static final RingFamily PINGORA_V2 = new PingoraV2Family();

    /** libketama (last.fm's C library): the point text as written, the share rule in its float/double order, the first listed keeps a tie. */
    public static final RingFamily LIBKETAMA = new LibketamaFamily();
    /** libmemcached {@code MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED}: {@code host-i} (port 11211 left out), float share rule, lowest index keeps a tie. */
    public static final RingFamily LIBMEMCACHED = new LibmemcachedFamily(false);
    /** libmemcached {@code MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA_SPY}: {@code /host:port-i}. */
    public static final RingFamily LIBMEMCACHED_SPY = new LibmemcachedFamily(true);
    /** twemproxy (nutcracker) {@code distribution: ketama} with one of its twelve key hashes ({@code twemproxy:HASH}). */
    public static final RingFamily TWEMPROXY = new TwemproxyFamily();
    /** spymemcached {@code KetamaNodeLocator} with {@code KETAMA_HASH}, K repetitions ({@code spymemcached[:K]}). */
    public static final RingFamily SPYMEMCACHED = new SpymemcachedFamily(false);
    /** spymemcached {@code KetamaNodeLocator} with a weights map: the float share rule. */
    public static final RingFamily SPYMEMCACHED_WEIGHTED = new SpymemcachedFamily(true);
    /** xmemcached {@code KetamaMemcachedSessionLocator}: {@code /ip:port-i}, 160 points per weight unit. */
    public static final RingFamily XMEMCACHED = new XmemcachedFamily(false);
    /** xmemcached with {@code cwNginxUpstreamConsistent}: {@code ip-i} (port 11211 left out). */
    public static final RingFamily XMEMCACHED_NGINX = new XmemcachedFamily(true);
    /** Apache Dubbo {@code ConsistentHashLoadBalance} ({@code dubbo[:K]}, K = {@code hash.nodes}). */
    public static final RingFamily DUBBO = new DubboFamily();
    /** The Couchbase Java SDK's {@code KetamaRing} (memcached buckets). */
    public static final RingFamily COUCHBASE = new CouchbaseFamily();
    /** Envoy {@code ring_hash} with xxHash64 ({@code envoy[:MIN[:MAX]]}): 64-bit points. */
    public static final RingFamily ENVOY = new EnvoyFamily("envoy", 13, KeyHash.XXH64, EnvoyFamily.ENVOY_MAX_RING_SIZE);
    /** Envoy {@code ring_hash} with {@code MURMUR_HASH_2} ({@code envoy-murmur2[:MIN[:MAX]]}). */
    public static final RingFamily ENVOY_MURMUR2 =
            new EnvoyFamily("envoy-murmur2", 14, KeyHash.MURMUR2_64, EnvoyFamily.ENVOY_MAX_RING_SIZE);
    /** gRPC {@code ring_hash} as C-core and Go build it ({@code grpc[:MIN[:MAX]]}): Envoy's ring, capped at 4096 entries by default. */
    public static final RingFamily GRPC = new EnvoyFamily("grpc", 15, KeyHash.XXH64, EnvoyFamily.GRPC_MAX_RING_SIZE);

    private static final List<RingFamily> ALL = List.of(
            NGINX,
            PINGORA_V2,
            LIBKETAMA,
            LIBMEMCACHED,
            LIBMEMCACHED_SPY,
            TWEMPROXY,
            SPYMEMCACHED,
            SPYMEMCACHED_WEIGHTED,
            XMEMCACHED,
            XMEMCACHED_NGINX,
            DUBBO,
            COUCHBASE,
            ENVOY,
            ENVOY_MURMUR2,
            GRPC);

    private final String name;
    private final int code;
    private final KeyHash keyHash;

    RingFamily(String name, int code, KeyHash keyHash) {
        if (code < 1 || code > 255) {
            throw new IllegalArgumentException("a family code is one byte, 0 unused: code=" + code);
        }
        this.name = name;
        this.code = code;
        this.keyHash = keyHash;
    }

    /** {@return every family, in code order} */
    public static List<RingFamily> all() {
        return ALL;
    }

    /**
     * {@return the family named {@code name} on the command line}
     *
     * @param name the family's name: {@code v1}, {@code v2}
     * @throws IllegalArgumentException for a name no family has
     */
    public static RingFamily forName(String name) {
        for (RingFamily f : ALL) {
            if (f.name.equals(name)) {
                return f;
            }
        }
        throw new IllegalArgumentException("unknown algorithm " + TextLines.quote(name) + " (expected "
                + names(ALL.stream().map(RingFamily::name).toList()) + ")");
    }

    /**
     * {@return the family whose ring index byte is {@code code}, if any}
     *
     * @param code the ring index's algorithm byte
     */
    public static Optional<RingFamily> forCode(int code) {
        for (RingFamily f : ALL) {
            if (f.code == code) {
                return Optional.of(f);
            }
        }
        return Optional.empty();
    }

    /** {@code a}, {@code a or b}, {@code a, b or c}. */
    static String names(List<String> items) {
        if (items.size() == 1) {
            return items.getFirst();
        }
        return String.join(", ", items.subList(0, items.size() - 1)) + " or " + items.getLast();
    }

    /** {@return the name on the command line and in dumps: {@code v1}, {@code v2}} */
    public final String name() {
        return name;
    }

    /** {@return the byte the ring index stores for a ring of this family (FORMAT.md)} */
    public final int code() {
        return code;
    }

    /** {@return what keys are hashed with before the ring is searched} */
    public final KeyHash keyHash() {
        return keyHash;
    }

    /**
     * {@return what keys of a version with {@code parameters} are hashed with: {@link #keyHash()} unless
     * a parameter chooses the hash ({@code twemproxy:HASH})}
     *
     * @param parameters a version's parameters
     */
    public KeyHash keyHash(int[] parameters) {
        return keyHash;
    }

    // ---- parameters -------------------------------------------------------------------------

    /**
     * {@return how many parameters a version of this family has (the ring index stores the first in
     * its parameter word)}
     */
    public abstract int parameterCount();

    /**
     * {@return how many of the parameters, from the last, a version's name writes ({@code v2:K}: 1;
     * {@code v1}, whose point multiple is fixed: 0)}
     */
    public abstract int writtenParameters();

    /** {@return the parameters of a version named by the family's bare name ({@code v2} is {@code v2:160})} */
    public abstract int[] defaultParameters();

    /** {@return the largest value a written parameter may have} */
    abstract long maxWrittenParameter();

    /**
     * {@return whether the family's one written parameter is a point count that {@code --point-multiple}
     * may give a bare name ({@code v2}, {@code spymemcached}, {@code dubbo}); false unless the family says}
     */
    public boolean writtenPointMultiple() {
        return false;
    }

    /** {@return how many written parameters a name must give at least (the rest take their defaults): as many as it writes unless the family says} */
    int minWrittenParameters() {
        return writtenParameters();
    }

    /**
     * {@return written parameter {@code i} read from {@code text}, or -1 when it is not one} Decimal
     * from 1 to {@link #maxWrittenParameter()} unless the family says ({@code twemproxy:md5} names a hash).
     */
    int parseWritten(int i, String text) {
        long value = TextLines.decimal(text, maxWrittenParameter());
        return value >= 1 && value <= maxWrittenParameter() ? (int) value : -1;
    }

    /** {@return written parameter {@code i} as a name writes it: decimal unless the family says} */
    String writtenText(int i, int value) {
        return Integer.toUnsignedString(value);
    }

    /** {@return the forms a name of this family's versions takes, for error messages: {@code v2}, {@code v2:K with K from 1 to …}} */
    abstract List<String> syntax();

    /**
     * Checks a version's parameters.
     *
     * @param parameters the version's parameters, as many as {@link #parameterCount()}
     * @throws IllegalArgumentException naming the parameter and the rule it breaks
     */
    public abstract void checkParameters(int[] parameters);

    /** {@return the parameters of a version whose written parameters are {@code written} (as many as {@link #writtenParameters()})} */
    abstract int[] fromWritten(int[] written);

    /** {@return the written part of {@code parameters}: the name's {@code :K} values} */
    abstract int[] written(int[] parameters);

    /**
     * {@return the version's name: the family's name and each written parameter after a colon
     * ({@code v1}, {@code v2:16}); {@link RingVersion#parse} reads it back}
     */
    final String versionName(int[] parameters) {
        StringBuilder s = new StringBuilder(name);
        int[] w = written(parameters);
        for (int i = 0; i < w.length; i++) {
            s.append(':').append(writtenText(i, w[i]));
        }
        return s.toString();
    }

    /**
     * The bytes of a version in the file's input digest (FORMAT.md, "input digest"): the family's
     * digest tag ({@link #digestTag()}, fixed per code), then {@code ':'} and the decimal digits (no
     * leading zero) of each written parameter, then a zero byte. For v1 that is {@code "v1" 00}, for
     * v2:K {@code "v2:" K 00}: the bytes the digest has always hashed.
     *
     * @param parameters a version's parameters
     * @return the encoding
     */
    public final byte[] digestEncoding(int[] parameters) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(digestTag().getBytes(StandardCharsets.US_ASCII));
        int[] w = written(parameters);
        for (int i = 0; i < w.length; i++) {
            out.writeBytes((":" + writtenText(i, w[i])).getBytes(StandardCharsets.US_ASCII));
        }
        out.write(0);
        return out.toByteArray();
    }

    /** {@return the ASCII tag of this family's code in the input digest (FORMAT.md lists one per code); never changes} */
    abstract String digestTag();

    // ---- points -----------------------------------------------------------------------------

    /**
     * {@return whether the family's points are a CRC-32 chain from {@link #pointInput} (nginx, pingora):
     * the builder's fast path; the other families give their points by {@link #pointHashes}}
     */
    public boolean crcChain() {
        return false;
    }

    /**
     * {@return the bytes of {@code backend} its CRC-32 point chain starts from (families whose
     * {@link #crcChain()} is true)}
     *
     * @param backend a backend
     * @throws UnsupportedOperationException for a family whose points are not a CRC-32 chain
     */
    public byte[] pointInput(Backend backend) {
        throw new UnsupportedOperationException(name + " points are not a CRC-32 chain");
    }

    /**
     * {@return the CRC-32 state {@code backend}'s point chain starts from: {@link #pointInput} fed to CRC-32}
     *
     * @param backend a backend
     */
    public final int chainBase(Backend backend) {
        return Crc32.update(Crc32.INITIAL, pointInput(backend));
    }

    /** {@return the width of a point's hash: 32, or 64 for Envoy's and gRPC's rings (FORMAT.md, "64-bit rings")} */
    public int pointBits() {
        return 32;
    }

    /**
     * The first {@code count} point hashes of {@code backend} in a ring of {@code version}, in the order
     * the original generates them (which matters to its tie rule), into {@code out[0..count)}: the
     * unsigned hash for 32-bit families, the full hash for 64-bit ones. The default is the CRC-32 chain.
     *
     * @param backend a backend
     * @param version a version of this family
     * @param count   how many points ({@link #points} gives the backend's count)
     * @param out     receives the hashes
     */
    public void pointHashes(Backend backend, RingVersion version, int count, long[] out) {
        int base = chainBase(backend);
        int h = 0;
        for (int j = 0; j < count; j++) {
            h = Crc32.nextPoint(base, h);
            out[j] = Integer.toUnsignedLong(h);
        }
    }

    /**
     * {@return whether a {@code down} backend leaves the ring, which is rebuilt from the others (the
     * share-based memcached clients' auto-eject: the other backends' counts change with it)} False for
     * nginx, pingora and the clients that keep a down backend's points and skip it in failover.
     */
    public boolean downLeavesRing() {
        return false;
    }

    /**
     * Each member's point count in a ring of {@code version}: the weight rule ({@link #points}) over
     * the members, after a {@code down} member left the ring if the family says so ({@link #downLeavesRing()}: 0 points, and
     * not counted in the others' shares).
     *
     * @param members the ring's members, in file order
     * @param version a version of this family
     * @return each member's point count, in the same order
     * @throws ArithmeticException when a count does not fit a long
     */
    public final long[] memberPoints(List<Backend> members, RingVersion version) {
        boolean eject = downLeavesRing();
        long[] weights = members.stream()
                .filter(b -> !eject || !b.down())
                .mapToLong(Backend::weight)
                .toArray();
        long[] live = weights.length == 0 ? new long[0] : points(weights, version);
        long[] out = new long[members.size()];
        int k = 0;
        for (int i = 0; i < out.length; i++) {
            if (!eject || !members.get(i).down()) {
                out[i] = live[k++];
            }
        }
        return out;
    }

    /**
     * {@return whether equal hashes go by a total order of backends ({@link #tieRanks}), which views
     * need; a family whose tie depends on the hash (xmemcached) stores each ring as its points}
     */
    public boolean tiesByRank() {
        return true;
    }

    /**
     * {@return whether a feature ring of this family can be a view of the ring of all backends: a
     * backend's points depend on itself alone, not on who else is in the ring, and ties go by rank}
     * False for the share rules (a backend's count depends on the members' weights) and Envoy's scaling.
     */
    public boolean viewable() {
        return tiesByRank();
    }

    /** {@return the port of a backend written without one: 80 (nginx) unless the family says (11211 for the memcached clients)} */
    public int defaultPort() {
        return ServerAddress.DEFAULT_PORT;
    }

    /**
     * {@return how a lookup fails over when its backend cannot be used} {@link Failover#WALK}: to the
     * next point of another hash (nginx, pingora); {@link Failover#NEXT_ENTRY}: to the next entry of the
     * ring, which may be the same backend (Envoy, gRPC); {@link Failover#REHASH}: the key hashed again
     * with the try number (spymemcached's and xmemcached's sequence).
     */
    public Failover failover() {
        return Failover.WALK;
    }

    /** How a family's lookup goes on past a backend it cannot use. */
    public enum Failover {
        /** To the next ring point of another hash, wrapping (nginx's and pingora's walk). */
        WALK,
        /** To the next ring entry, wrapping, whoever's it is (Envoy's retry: {@code (index + attempt) % size}). */
        NEXT_ENTRY,
        /** The key hashed again with the try number, then looked up afresh (spymemcached's {@code KetamaIterator}). */
        REHASH
    }

    /**
     * The hash of try {@code attempt} (1, 2, …) of a {@link Failover#REHASH} family's sequence, from the
     * previous try's hash and the key.
     *
     * @param previous the previous try's hash (the key's hash for try 1)
     * @param key      the key's bytes
     * @param offset   where the key starts
     * @param length   the key's length
     * @param attempt  the try number, from 1
     * @return the hash to look up
     */
    public int rehash(int previous, byte[] key, int offset, int length, int attempt) {
        throw new UnsupportedOperationException(name + " does not rehash");
    }

    /**
     * {@return how many tries a {@link Failover#REHASH} lookup makes in all, the first included}
     *
     * @param members the backends of the ring's file
     */
    public int rehashTries(int members) {
        return 1;
    }

    /**
     * For a family whose ties do not go by rank ({@link #tiesByRank()} false): which of the backends
     * that produce {@code hash} keeps it.
     *
     * @param hash  the shared hash (unsigned)
     * @param tied  the backends producing it, in file order, each once
     * @return the index in {@code tied} of the one that keeps it
     */
    public int tieWinner(long hash, List<Backend> tied) {
        return 0;
    }

    /**
     * The weight rule: each backend's number of points in a ring of {@code version} whose members
     * have {@code weights}.
     *
     * @param weights each member's weight
     * @param version a version of this family
     * @return each member's point count, in the same order
     * @throws ArithmeticException when a count does not fit a long
     */
    public abstract long[] points(long[] weights, RingVersion version);

    /**
     * {@return the most points a ring of {@code version} can have whose {@code backends} members weigh
     * {@code totalWeight} in all, saturating at {@link Long#MAX_VALUE}: what a reader checks against the
     * format's limit before trusting a file} Weight × the point multiple unless the family says.
     *
     * @param version     a version of this family
     * @param totalWeight the members' weights, summed
     * @param backends    how many members
     */
    public long pointBound(RingVersion version, long totalWeight, int backends) {
        return totalWeight > Long.MAX_VALUE / version.pointMultiple()
                ? Long.MAX_VALUE
                : totalWeight * version.pointMultiple();
    }

    /**
     * The tie rule: who keeps a hash that several of {@code backends} produce, as a rank per backend
     * (index i for backend i, 0 to n-1 each once; lower keeps it).
     *
     * @param backends the ring's backends, in file order
     * @return each backend's rank
     */
    public abstract int[] tieRanks(List<Backend> backends);

    /**
     * {@return why {@code backend} cannot be in a ring of this family, or null when it can}
     *
     * @param backend a backend
     */
    public abstract String addressProblem(Backend backend);

    /**
     * {@return {@code backend} as the original client prints the backend it chose}
     *
     * @param backend the backend a lookup chose
     */
    public abstract String answer(Backend backend);

    /** The address of {@code backend} as parsed: for the family classes. */
    static ServerAddress address(Backend backend) {
        return BackendAccess.record(backend).address();
    }

    /** Every family's version syntax, for the parse error: {@code v1, v2 or v2:K with K from 1 to …}. */
    static String allSyntax() {
        return names(ALL.stream().flatMap(f -> f.syntax().stream()).toList());
    }

    @Override
    public String toString() {
        return name;
    }
}
