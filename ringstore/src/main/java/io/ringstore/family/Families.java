package io.ringstore.family;

import io.ringstore.internal.ServerAddress;
import io.ringstore.internal.TextLines;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * The table of ring families: each family one row of parts ({@link RingFamily}), in code order, found
 * by name ({@link #forName}) and by the code a ring file stores ({@link #forCode}). rings.md and
 * families.md give each family's rules and sources; the parts' own javadoc gives each rule.
 *
 * <p>A row reads: name, the name its versions are written with, code, default port; then the parts:
 * parameter grammar, key hash, point source (with its point text), weight rule, tie rule, failover,
 * address rule, answer text.
 */
public final class Families {
    /** nginx's points per weight unit, and the memcached clients' points per server at equal weights. */
    static final int NGINX_POINT_MULTIPLE = 160;
    /** The memcached port: the clients leave it out of some texts, and it is a backend's port when none is written. */
    static final int MEMCACHED_PORT = 11211;
    /** Dubbo's default protocol port. */
    private static final int DUBBO_PORT = 20880;
    /** Couchbase's data (KV) port. */
    private static final int COUCHBASE_KV_PORT = 11210;
    /** Points a memcached client gives a server at equal weights: 40 MD5 digests. */
    private static final int KETAMA_POINTS = 160;
    /** The most {@code spymemcached:K} repetitions and {@code dubbo:K} nodes a version has. */
    private static final int MAX_POINT_COUNT = 1 << 20;
    /** {@code char addr[22]}: the characters of a server libketama keeps, without the zero. */
    private static final int LIBKETAMA_MAX_SERVER = 21;
    /** Envoy's {@code minimum_ring_size} default, gRPC's too. */
    private static final int MIN_RING_SIZE = 1_024;
    /** Envoy's {@code maximum_ring_size} default, the most either takes. */
    private static final int ENVOY_MAX_RING_SIZE = 8_388_608;
    /** gRPC's ring size cap ({@code kRingSizeCapDefault}, {@code RingHashOptions.DEFAULT_RING_SIZE_CAP}). */
    private static final int GRPC_MAX_RING_SIZE = 4_096;
    /** libstdc++'s {@code std::_Hash_bytes} seed, Envoy's {@code MurmurHash::STD_HASH_SEED}. */
    private static final long STD_HASH_SEED = 0xc70f6907L;

    /** libmemcached's {@code MEMCACHED_POINTS_PER_SERVER}: a server's points in its unweighted continuum. */
    private static final int LIBMEMCACHED_UNWEIGHTED_POINTS = 100;

    /** HAProxy's nodes, from each server's id. */
    private static final PointSource HAPROXY_NODES = PointSource.haproxyNodes();

    /** The grammar of the clients whose point count is fixed: 160 points a server at equal weights. */
    private static final Parameters KETAMA_FIXED = Parameters.fixed(KETAMA_POINTS);

    /** libketama's servers as written. */
    private static final PointText LIBKETAMA_SERVERS = new PointText(PointText::asWritten, MEMCACHED_PORT, "-");
    /** libmemcached's hosts, the port when it is not memcached's. */
    private static final PointText LIBMEMCACHED_HOSTS =
            new PointText(PointText::hostUnlessMemcachedPort, MEMCACHED_PORT, "-");
    /** libmemcached's spy distribution's {@code /host:port}. */
    private static final PointText LIBMEMCACHED_SPY_HOSTS =
            new PointText(PointText::slashHostPort, MEMCACHED_PORT, "-");
    /** twemproxy's server names ({@code conf_add_server}): its point texts and its tie order. */
    private static final PointText TWEMPROXY_NAMES = new PointText(PointText::twemproxyName, MEMCACHED_PORT, "-");
    /** spymemcached's node texts. */
    private static final PointText SPYMEMCACHED_NODES =
            new PointText(PointText::javaSocketAddressStripped, MEMCACHED_PORT, "-");
    /** xmemcached's {@code sockStr}: its point texts and its tie pick. */
    private static final PointText XMEMCACHED_SESSIONS =
            new PointText(PointText::javaSocketAddress, MEMCACHED_PORT, "-");
    /** xmemcached's {@code sockStr} with {@code cwNginxUpstreamConsistent}. */
    private static final PointText XMEMCACHED_NGINX_SESSIONS =
            new PointText(PointText::ipUnlessMemcachedPort, MEMCACHED_PORT, "-");
    /** Dubbo's providers, {@code host:port} ({@code [v6]:port}) and no separator. */
    private static final PointText DUBBO_PROVIDERS = new PointText(PointText::dubboAddress, DUBBO_PORT, "");
    /** Couchbase's nodes, {@code host:port} with the KV port, IPv6 as the JDK prints it. */
    private static final PointText COUCHBASE_NODES =
            new PointText(PointText::couchbaseAuthority, COUCHBASE_KV_PORT, "-");
    /** Envoy's and gRPC's host texts, {@code identity_i}. */
    private static final PointText ENVOY_HOSTS = new PointText(PointText::envoyHost, ServerAddress.DEFAULT_PORT, "_");
    /** grpc-java's endpoints, {@code String.valueOf(InetSocketAddress)} and {@code _i}: its point texts, its order of hosts. */
    private static final PointText GRPC_JAVA_ENDPOINTS =
            new PointText(PointText::javaSocketAddress, ServerAddress.DEFAULT_PORT, "_");
    /** grpc-java's entries: XXH64 of its texts, sign-flipped. */
    private static final PointSource GRPC_JAVA_POINTS = PointSource.xxh64Signed(GRPC_JAVA_ENDPOINTS);

    /**
     * nginx {@code hash $key consistent} (ngx_http_upstream_hash_module), written {@code v1}: the
     * {@code server} text as written is the point source (host, a zero byte, port), 160 points per
     * weight unit, equal hashes go to the backend listed first, keys hashed with CRC-32, answers printed
     * as nginx's {@code $upstream_addr}. Its one parameter, the point multiple, is always 160.
     */
    public static final RingFamily NGINX = crcChain(
            "nginx",
            "v1",
            1,
            Parameters.fixedPointMultiple(NGINX_POINT_MULTIPLE, "points per weight unit (nginx)"),
            ServerAddress::nginxHashInput,
            TieRule.FIRST_LISTED,
            Addresses.NGINX,
            Addresses.UPSTREAM_ADDRESS);

    /**
     * pingora-ketama {@code Version::V2 { point_multiple }}, written {@code v2:K}: the parsed socket
     * address as Rust prints it is the point source (IP, a zero byte, port), K points per weight unit,
     * equal hashes go to the smallest socket address, keys hashed with CRC-32, answers printed as Rust's
     * {@code SocketAddr}. A bare {@code v2} is {@code v2:160}.
     */
    public static final RingFamily PINGORA = crcChain(
            "pingora",
            "v2",
            2,
            Parameters.pointMultiple(NGINX_POINT_MULTIPLE),
            ServerAddress::pingoraHashInput,
            TieRule.SMALLEST_ADDRESS,
            Addresses.ANY,
            Addresses.SOCKET_ADDRESS);

    /**
     * libketama (last.fm's C library, {@code libketama/ketama.c}): point texts {@code addr-k} with the
     * address exactly as written (or the name), four points an MD5; the share rule K; the first listed
     * keeps a tie (glibc's stable qsort); a {@code down} server leaves the ring (it is not in the
     * servers file); a server of more than 21 characters is refused ({@code char addr[22]}).
     */
    public static final RingFamily LIBKETAMA = new RingFamily(
            "libketama",
            "libketama",
            3,
            MEMCACHED_PORT,
            KETAMA_FIXED,
            p -> KeyHash.MD5,
            PointSource.md5(LIBKETAMA_SERVERS),
            WeightRule.SHARE_K.ejectingDown(),
            TieRule.FIRST_LISTED,
            Failover.WALK,
            Addresses.noScopeAndAtMost(LIBKETAMA_MAX_SERVER),
            Addresses.ENDPOINT);

    /**
     * libmemcached's weighted ketama ({@code MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED}, {@code hosts.cc}):
     * point texts {@code host-i}, or {@code host:port-i} when the port is not 11211; the all-float share
     * rule L; the lowest host index keeps a tie ({@code continuum_item_cmp}); a {@code down} server
     * leaves the ring (auto-eject rebuilds the continuum from the live servers).
     */
    public static final RingFamily LIBMEMCACHED = libmemcached("libmemcached", 4, LIBMEMCACHED_HOSTS);

    /** libmemcached's {@code MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA_SPY}: {@link #LIBMEMCACHED} with point texts {@code /host:port-i}. */
    public static final RingFamily LIBMEMCACHED_SPY = libmemcached("libmemcached-spy", 5, LIBMEMCACHED_SPY_HOSTS);

    /**
     * twemproxy (nutcracker) {@code distribution: ketama} ({@code nc_ketama.c}), {@code twemproxy:HASH}:
     * point texts {@code name-i} (the server's name, or {@code host} for port 11211 and
     * {@code host:port} otherwise); the float share rule with a double {@code 0.0000000001} added; the
     * name that sorts first keeps a tie; keys hashed with the pool's {@code hash} (one of twelve, the one
     * parameter, written by its name; a bare {@code twemproxy} is {@code fnv1a_64}); a {@code down}
     * server leaves the ring ({@code auto_eject_hosts}).
     */
    public static final RingFamily TWEMPROXY = new RingFamily(
            "twemproxy",
            "twemproxy",
            6,
            MEMCACHED_PORT,
            Parameters.named("its hash", "HASH", KeyHash.TWEMPROXY_HASHES, "fnv1a_64"),
            p -> KeyHash.twemproxyPool(p[0]),
            PointSource.md5(TWEMPROXY_NAMES),
            WeightRule.SHARE_FLOAT_PLUS_DOUBLE.ejectingDown(),
            TieRule.nameOrder(TWEMPROXY_NAMES),
            Failover.WALK,
            Addresses.NO_SCOPE,
            Addresses.ENDPOINT);

    /**
     * spymemcached's {@code KetamaNodeLocator} with {@code KETAMA_HASH}, {@code spymemcached[:K]}: point
     * texts {@code String.valueOf(socketAddress)} without its leading {@code /}, K repetitions a node
     * (default 160, K/4 digests), the weight not used; the last listed keeps a tie ({@code TreeMap.put});
     * a {@code down} node keeps its points and lookups go on by the rehash sequence
     * ({@code KetamaIterator}: 7 tries).
     */
    public static final RingFamily SPYMEMCACHED =
            spymemcached("spymemcached", 7, pointCount("the node repetitions"), WeightRule.EQUAL);

    /** {@link #SPYMEMCACHED} with a weights map: the float share rule of twemproxy, {@code down} nodes keeping their points. */
    public static final RingFamily SPYMEMCACHED_WEIGHTED =
            spymemcached("spymemcached-weighted", 8, KETAMA_FIXED, WeightRule.SHARE_FLOAT_PLUS_DOUBLE);

    /**
     * xmemcached's {@code KetamaMemcachedSessionLocator} with {@code KETAMA_HASH}: point texts
     * {@code String.valueOf(remoteSocketAddress) + "-" + i}, the leading {@code /} kept; 160 points per
     * weight unit in whole digests; equal hashes picked by the hash among the sessions' texts; a closed
     * session makes the lookup go on by the rehash of spymemcached ({@code nextHash}: one retry a server).
     */
    public static final RingFamily XMEMCACHED = xmemcached("xmemcached", 9, XMEMCACHED_SESSIONS);

    /** {@link #XMEMCACHED} with {@code cwNginxUpstreamConsistent}: point texts the IP, plus {@code :port} when it is not 11211. */
    public static final RingFamily XMEMCACHED_NGINX = xmemcached("xmemcached-nginx", 10, XMEMCACHED_NGINX_SESSIONS);

    /**
     * Apache Dubbo's {@code ConsistentHashLoadBalance}, {@code dubbo[:K]}: point texts {@code host:port}
     * ({@code URL.getAddress()}: IPv6 in brackets, as written) and the digest number with no separator, K/4 digests a provider ({@code hash.nodes}, default 160),
     * the weight not used, the last listed keeps a tie; a provider without a port has Dubbo's 20880; a
     * {@code down} provider leaves the ring, as it leaves the invoker list.
     */
    public static final RingFamily DUBBO = clusterMember("dubbo", 11, pointCount("hash.nodes"), DUBBO_PROVIDERS);

    /**
     * The Couchbase Java SDK's {@code KetamaRing} (memcached buckets): point texts {@code host:port-i}
     * (IPv6 as the JDK prints it, {@code 0:0:0:0:0:0:0:1}; the KV port, 11210 when none is written), 160 points a node whatever its weight, the last listed
     * keeps a tie; a {@code down} node leaves the ring, as it leaves the cluster map.
     */
    public static final RingFamily COUCHBASE = clusterMember("couchbase", 12, KETAMA_FIXED, COUCHBASE_NODES);

    /**
     * Envoy's {@code ring_hash} ({@code ring_hash_lb.cc}), {@code envoy[:MIN[:MAX]]}: 64-bit points,
     * {@code identity_i} hashed with xxHash64 seed 0 (the identity: the name, or the address as Envoy
     * prints it); Envoy's scaled entry counts, MIN and MAX the minimum and maximum ring size (defaults
     * 1,024 and 8,388,608); the first listed keeps a (never seen) 64-bit tie; failover to the next entry;
     * a {@code down} host leaves the ring (Envoy builds it from the healthy hosts).
     */
    public static final RingFamily ENVOY = envoy("envoy", 13, KeyHash.XXH64, ENVOY_MAX_RING_SIZE);

    /** {@link #ENVOY} with {@code MURMUR_HASH_2}: libstdc++'s 64-bit MurmurHash2, seed {@code 0xc70f6907}. */
    public static final RingFamily ENVOY_MURMUR2 = envoy("envoy-murmur2", 14, KeyHash.MURMUR2_64, ENVOY_MAX_RING_SIZE);

    /** gRPC's {@code ring_hash} as C-core and Go build it (gRFC A42), {@code grpc[:MIN[:MAX]]}: Envoy's ring, MAX 4,096 by default. */
    public static final RingFamily GRPC = envoy("grpc", 15, KeyHash.XXH64, GRPC_MAX_RING_SIZE);

    /**
     * libmemcached's {@code MEMCACHED_DISTRIBUTION_CONSISTENT} without {@code KETAMA_WEIGHTED}
     * ({@code hosts.cc} {@code update_continuum}), {@code libmemcached-consistent:HASH}: PHP's
     * {@code Memcached::DISTRIBUTION_CONSISTENT} with {@code OPT_HASH}, pylibmc's {@code "ketama": True}
     * (the {@code default} hash). Point texts {@code host-i}, or {@code host:port-i} when the port is not
     * 11211, i from 0; 100 points a server ({@code MEMCACHED_POINTS_PER_SERVER}), each the key hash of
     * one text; the weight not used; keys hashed with HASH (one of eleven, {@code memcached_hash_t}, the
     * one parameter, written by its name; a bare name is {@code default}, one-at-a-time); the lowest host
     * index keeps a tie ({@code continuum_item_cmp}); a {@code down} server leaves the ring (auto-eject).
     */
    public static final RingFamily LIBMEMCACHED_CONSISTENT =
            libmemcachedUnweighted("libmemcached-consistent", 16, LIBMEMCACHED_HOSTS);

    /**
     * libmemcached's {@code MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA_SPY} without {@code KETAMA_WEIGHTED},
     * {@code libmemcached-spy-unweighted:HASH}: {@link #LIBMEMCACHED_CONSISTENT} with point texts
     * {@code /host:port-i}.
     */
    public static final RingFamily LIBMEMCACHED_SPY_UNWEIGHTED =
            libmemcachedUnweighted("libmemcached-spy-unweighted", 17, LIBMEMCACHED_SPY_HOSTS);

    /**
     * HAProxy 2.6's {@code hash-type consistent} ({@code lb_chash.c}), {@code haproxy:HASH}: 16 nodes a
     * unit of weight ({@code BE_WEIGHT_SCALE}), node j of the server of id {@code puid} at
     * {@code full_hash(puid * 4096 + j)}; the id is the backend's {@code # ringstore: id=N}, else
     * HAProxy's own numbering ({@link HaproxyIds}); a key goes to the <em>nearer</em> of the nodes
     * around its hash, the one before at equal distance ({@link Landing#NEAREST}); the first listed
     * keeps a (rare: ids 2^20 apart) shared node; keys hashed with the backend's function, {@code sdbm},
     * {@code djb2}, {@code wt6} or {@code crc32}, and {@code full_hash} of it with {@code -avalanche}: a
     * bare {@code haproxy} is a bare {@code hash-type consistent}, {@code sdbm-avalanche}; a {@code down}
     * server leaves the tree; failover walks on to the next node, as HAProxy's {@code avoid} does.
     */
    public static final RingFamily HAPROXY = new RingFamily(
            "haproxy",
            "haproxy",
            18,
            ServerAddress.DEFAULT_PORT,
            Parameters.named("its hash", "HASH", KeyHash.HAPROXY_HASHES, "sdbm-avalanche"),
            p -> KeyHash.haproxy(p[0]),
            p -> HAPROXY_NODES,
            WeightRule.HAPROXY_NODES,
            TieRule.FIRST_LISTED,
            Failover.WALK,
            Landing.NEAREST,
            Addresses.HAPROXY_SERVER,
            Addresses.ENDPOINT);

    /**
     * grpc-java's {@code ring_hash} ({@code io.grpc.xds.RingHashLoadBalancer}, 1.85),
     * {@code grpc-java[:MIN[:MAX]]}: 64-bit points, {@code String.valueOf(InetSocketAddress) + "_" + i}
     * ({@code /10.0.0.1:8080_0}, {@code /[2001:db8:0:0:0:0:0:a]:8080_0}) hashed with xxHash64 seed 0;
     * Envoy's scaled entry counts over the hosts in the order of grpc-java's {@code HashMap} of them; the
     * ring in signed order (stored with each hash's sign bit flipped, and so the key hash); a hash past
     * the last entry lands on the last (no wrap); failover to the next entry, wrapping; the first in that
     * {@code HashMap} order keeps a (never seen) 64-bit tie; a {@code down} host leaves the ring. MIN and
     * MAX as {@code RingHashOptions} leaves them: 1,024 and 4,096 by default, a MAX above 4,096 only for a
     * client that raised {@code setRingSizeCap} (at most 8,388,608).
     */
    public static final RingFamily GRPC_JAVA = new RingFamily(
            "grpc-java",
            "grpc-java",
            19,
            ServerAddress.DEFAULT_PORT,
            Parameters.minMax(
                    "the minimum and maximum ring size", MIN_RING_SIZE, GRPC_MAX_RING_SIZE, ENVOY_MAX_RING_SIZE),
            p -> KeyHash.XXH64_SIGNED,
            p -> GRPC_JAVA_POINTS,
            WeightRule.ENVOY_SCALE.visitingIn(GRPC_JAVA_ENDPOINTS::hashMapOrder).ejectingDown(),
            TieRule.hashMapOrder(GRPC_JAVA_ENDPOINTS),
            Failover.NEXT_ENTRY,
            Landing.NEXT_OR_LAST,
            Addresses.NO_SCOPE,
            Addresses.ENDPOINT);

    private static final List<RingFamily> ALL = List.of(
            NGINX,
            PINGORA,
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
            GRPC,
            LIBMEMCACHED_CONSISTENT,
            LIBMEMCACHED_SPY_UNWEIGHTED,
            HAPROXY,
            GRPC_JAVA);

    private Families() {}

    /** nginx's ring and pingora's: a CRC-32 chain from bytes of the address, keys hashed with CRC-32, K points a weight unit. */
    private static RingFamily crcChain(
            String name,
            String writtenName,
            int code,
            Parameters parameters,
            Function<ServerAddress, byte[]> input,
            TieRule ties,
            Addresses.Rule addressRule,
            Addresses.Answer answer) {
        return new RingFamily(
                name,
                writtenName,
                code,
                ServerAddress.DEFAULT_PORT,
                parameters,
                p -> KeyHash.CRC32,
                PointSource.crcChain(input),
                WeightRule.PER_WEIGHT_UNIT,
                ties,
                Failover.WALK,
                addressRule,
                answer);
    }

    /** libmemcached's ketama and its spy distribution: they differ in the point texts. */
    private static RingFamily libmemcached(String name, int code, PointText text) {
        return ketama(
                name, code, KETAMA_FIXED, text, WeightRule.SHARE_L.ejectingDown(), TieRule.FIRST_LISTED, Failover.WALK);
    }

    /**
     * libmemcached's unweighted continuum and its spy kin: the key hash the parameter names, of each point
     * text too; they differ in the point texts.
     */
    private static RingFamily libmemcachedUnweighted(String name, int code, PointText text) {
        return new RingFamily(
                name,
                name,
                code,
                MEMCACHED_PORT,
                Parameters.named("its hash", "HASH", KeyHash.LIBMEMCACHED_HASHES, "default"),
                p -> KeyHash.libmemcached(p[0]),
                p -> PointSource.keyHashed(text, KeyHash.libmemcached(p[0])),
                WeightRule.perMember(LIBMEMCACHED_UNWEIGHTED_POINTS).ejectingDown(),
                TieRule.FIRST_LISTED,
                Failover.WALK,
                Landing.NEXT,
                Addresses.NO_SCOPE,
                Addresses.ENDPOINT);
    }

    /** spymemcached's ring without a weights map and with one: they differ in the grammar and the weight rule. */
    private static RingFamily spymemcached(String name, int code, Parameters parameters, WeightRule weights) {
        return ketama(name, code, parameters, SPYMEMCACHED_NODES, weights, TieRule.LAST_LISTED, Failover.SPYMEMCACHED);
    }

    /** xmemcached's ring and its nginx-compatible kin: they differ in the session texts, which also pick a tie. */
    private static RingFamily xmemcached(String name, int code, PointText sessions) {
        return ketama(
                name,
                code,
                KETAMA_FIXED,
                sessions,
                WeightRule.PER_WEIGHT_UNIT_IN_DIGESTS,
                TieRule.sessionText(sessions),
                Failover.XMEMCACHED);
    }

    /**
     * Dubbo's ring and Couchbase's: a member's points whatever its weight, the last listed keeps a tie,
     * a {@code down} member leaves the ring as it leaves the member list; they differ in the grammar and
     * the point texts (whose IPv6 form was fixed in issue 30: the old one stays their legacy texts).
     */
    private static RingFamily clusterMember(String name, int code, Parameters parameters, PointText text) {
        return new RingFamily(
                name,
                name,
                code,
                text.defaultPort(),
                parameters,
                p -> KeyHash.MD5,
                PointSource.md5(text, new PointText(PointText::legacyHostPort, text.defaultPort(), text.separator())),
                WeightRule.EQUAL.ejectingDown(),
                TieRule.LAST_LISTED,
                Failover.WALK,
                Addresses.NO_SCOPE,
                Addresses.ENDPOINT);
    }

    /**
     * A memcached client's ketama ring: the MD5 of its point texts, four points a digest, keys hashed
     * with MD5, the port of its texts the default port, backends with a scope refused, answers printed
     * as endpoints.
     */
    private static RingFamily ketama(
            String name,
            int code,
            Parameters parameters,
            PointText text,
            WeightRule weights,
            TieRule ties,
            Failover failover) {
        return new RingFamily(
                name,
                name,
                code,
                text.defaultPort(),
                parameters,
                p -> KeyHash.MD5,
                PointSource.md5(text),
                weights,
                ties,
                failover,
                Addresses.NO_SCOPE,
                Addresses.ENDPOINT);
    }

    /** The grammar of {@code spymemcached:K} and {@code dubbo:K}: K points a member, 160 by default, whole digests. */
    private static Parameters pointCount(String what) {
        return Parameters.pointCount(what, KETAMA_POINTS, PointSource.POINTS_PER_DIGEST, MAX_POINT_COUNT);
    }

    /** Envoy's ring and its kin: they differ in the key hash (and the points' hash with it) and MAX's default. */
    private static RingFamily envoy(String name, int code, KeyHash hash, int defaultMax) {
        return new RingFamily(
                name,
                name,
                code,
                ServerAddress.DEFAULT_PORT,
                Parameters.minMax("the minimum and maximum ring size", MIN_RING_SIZE, defaultMax, ENVOY_MAX_RING_SIZE),
                p -> hash,
                hash == KeyHash.MURMUR2_64
                        ? PointSource.murmur2(ENVOY_HOSTS, STD_HASH_SEED)
                        : PointSource.xxh64(ENVOY_HOSTS),
                WeightRule.ENVOY_SCALE.ejectingDown(),
                TieRule.FIRST_LISTED,
                Failover.NEXT_ENTRY,
                Addresses.ANY,
                Addresses.ENDPOINT);
    }

    /** {@return every family, in code order} */
    public static List<RingFamily> all() {
        return ALL;
    }

    /**
     * {@return the family named {@code name} on the command line: its name ({@code nginx}) or the
     * name its versions are written with ({@code v1})}
     *
     * @param name a family's name
     * @throws IllegalArgumentException for a name no family has
     */
    public static RingFamily forName(String name) {
        for (RingFamily f : ALL) {
            if (f.name().equals(name) || f.toString().equals(name)) {
                return f;
            }
        }
        throw new IllegalArgumentException("unknown algorithm " + TextLines.quote(name) + " (expected "
                + TextLines.list(ALL.stream().map(RingFamily::toString).toList()) + ")");
    }

    /**
     * {@return the family whose ring index byte is {@code code}, if any}
     *
     * @param code the ring index's algorithm byte
     */
    public static Optional<RingFamily> forCode(int code) {
        for (RingFamily f : ALL) {
            if (f.code() == code) {
                return Optional.of(f);
            }
        }
        return Optional.empty();
    }
}
