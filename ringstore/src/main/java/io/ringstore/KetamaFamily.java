package io.ringstore;

import io.ringstore.internal.ServerAddress;
import io.ringstore.internal.TextLines;
import io.ringstore.internal.hash.Md5;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * What the memcached clients' "ketama" rings share: each backend's point texts ({@link #pointText},
 * {@code identity-i} in most), MD5 of each text giving four points (its digest's four little-endian
 * words, {@code LE32(d, 0..3)}), keys hashed with MD5's first word, ceil-and-wrap lookups, answers
 * printed {@code ip:port} with port 11211 for a backend written without one. A subclass gives the
 * text, the weight rule and the tie rule. rings.md's sections 1 to 7 give each client's rules.
 */
abstract class KetamaFamily extends RingFamily {
    /** The memcached port: the clients leave it out of some texts, and it is a backend's port when none is written. */
    static final int MEMCACHED_PORT = 11211;
    /** Points per MD5 digest: its four little-endian words. */
    static final int POINTS_PER_DIGEST = 4;

    KetamaFamily(String name, int code, KeyHash keyHash) {
        super(name, code, keyHash);
    }

    /**
     * {@return the text of {@code backend}'s digest {@code i} (0, 1, …) whose MD5 gives its points 4i to 4i+3}
     *
     * @param backend a backend
     * @param i       the digest's number
     */
    abstract String pointText(Backend backend, int i);

    @Override
    public void pointHashes(Backend backend, RingVersion version, int count, long[] out) {
        int[] words = new int[POINTS_PER_DIGEST];
        for (int d = 0, j = 0; j < count; d++) {
            byte[] text = pointText(backend, d).getBytes(StandardCharsets.UTF_8);
            Md5.words(text, 0, text.length, words);
            for (int h = 0; h < POINTS_PER_DIGEST && j < count; h++) {
                out[j++] = Integer.toUnsignedLong(words[h]);
            }
        }
    }

    @Override
    public int defaultPort() {
        return MEMCACHED_PORT;
    }

    /** A share rule or a fixed count gives at most the parameter (160, or K) points a backend. */
    @Override
    public long pointBound(RingVersion version, long totalWeight, int backends) {
        return (long) version.pointMultiple() * backends;
    }

    @Override
    public String answer(Backend backend) {
        return address(backend).endpointText(defaultPort());
    }

    @Override
    public String addressProblem(Backend backend) {
        if (address(backend).hasScope()) {
            return "address " + TextLines.quote(address(backend).text()) + " has a scope id, which " + name()
                    + " cannot take (it hashes the address without one): remove it";
        }
        return null;
    }

    /** The port of {@code backend}, 11211 when none is written. */
    int port(Backend backend) {
        return address(backend).port(defaultPort());
    }

    /** {@code backend}'s name, or the IP as written: the host part of the clients' texts. */
    static String host(Backend backend) {
        return backend.name() != null ? backend.name() : address(backend).hostText();
    }

    /**
     * {@code String.valueOf(InetSocketAddress)} of a resolved address, as the Java clients build their
     * texts: {@code /10.0.1.1:11211}, or {@code cache1/10.0.1.1:11211} with a name (the host name the
     * client resolved); IPv6 as this JDK prints it ({@code /[0:0:0:0:0:0:0:1]:11211} since JDK 14).
     */
    String javaSocketAddress(Backend backend) {
        ServerAddress a = address(backend);
        try {
            return new InetSocketAddress(InetAddress.getByAddress(backend.name(), a.ipBytes()), port(backend))
                    .toString(); // no lookup: the bytes are given
        } catch (UnknownHostException e) {
            throw new IllegalStateException("an address of 4 or 16 bytes is always accepted", e);
        }
    }

    // ---- parameters: one (the points at equal weights, or a multiple), none written unless a subclass says ----

    @Override
    public int parameterCount() {
        return 1;
    }

    @Override
    public int writtenParameters() {
        return 0;
    }

    @Override
    public int[] defaultParameters() {
        return new int[] {NginxFamily.POINT_MULTIPLE};
    }

    @Override
    long maxWrittenParameter() {
        return 0;
    }

    @Override
    List<String> syntax() {
        return List.of(name());
    }

    @Override
    public void checkParameters(int[] parameters) {
        if (parameters.length != 1 || parameters[0] != NginxFamily.POINT_MULTIPLE) {
            throw new IllegalArgumentException(
                    name() + " has 160 points per server at equal weights: parameters=" + Arrays.toString(parameters));
        }
    }

    @Override
    int[] fromWritten(int[] written) {
        return defaultParameters();
    }

    @Override
    int[] written(int[] parameters) {
        return new int[0];
    }

    @Override
    String digestTag() {
        return name();
    }

    // ---- weight rules (rings.md section 13): Java float and double in each original's operation order ----

    /**
     * libketama's rule K: {@code float pct = (float) w / (float) W; ks = floorf(pct * 40.0 * (float) n)}:
     * the float share times the double 40.0 times the float count in double, rounded once to float by
     * {@code floorf}'s parameter, floored; 4 points a digest.
     */
    static long[] shareK(long[] weights) {
        long total = Arrays.stream(weights).sum();
        float n = weights.length;
        long[] points = new long[weights.length];
        for (int i = 0; i < weights.length; i++) {
            float pct = (float) weights[i] / (float) total;
            float product = (float) (pct * 40.0 * n);
            points[i] = (long) Math.floor(product) * POINTS_PER_DIGEST;
        }
        return points;
    }

    /**
     * libmemcached's rule L: {@code floor((float)(pct * 160 / 4 * (float) n + 0.0000000001F)) * 4}, all
     * float ({@code hosts.cc} {@code update_continuum}).
     */
    static long[] shareL(long[] weights) {
        long total = Arrays.stream(weights).sum();
        float n = weights.length;
        long[] points = new long[weights.length];
        for (int i = 0; i < weights.length; i++) {
            float pct = (float) weights[i] / (float) total;
            float x = pct * 160f / 4f * n + 0.0000000001F;
            points[i] = (long) Math.floor(x) * POINTS_PER_DIGEST;
        }
        return points;
    }

    /**
     * twemproxy's and spymemcached's weighted rule: the float product {@code pct * 160 / 4 * (float) n}
     * plus the double {@code 0.0000000001}, rounded to float, floored, times 4 ({@code nc_ketama.c},
     * {@code KetamaNodeLocator}).
     */
    static long[] shareFloatPlusDouble(long[] weights) {
        long total = Arrays.stream(weights).sum();
        float n = weights.length;
        long[] points = new long[weights.length];
        for (int i = 0; i < weights.length; i++) {
            float pct = (float) weights[i] / (float) total;
            float x = (float) ((double) (pct * 160f / 4f * n) + 0.0000000001);
            points[i] = (long) Math.floor(x) * POINTS_PER_DIGEST;
        }
        return points;
    }

    /** The same number of points for every backend: {@code perBackend} rounded down to whole digests (the weight is not used). */
    static long[] unweighted(long[] weights, int perBackend) {
        long[] points = new long[weights.length];
        Arrays.fill(points, (long) (perBackend / POINTS_PER_DIGEST) * POINTS_PER_DIGEST);
        return points;
    }

    /** {@code perUnit} points per weight unit, in whole digests ({@code numReps *= weight}, {@code numReps / 4} digests). */
    static long[] linearDigests(long[] weights, int perUnit) {
        long[] points = new long[weights.length];
        for (int i = 0; i < weights.length; i++) {
            points[i] = Math.multiplyExact(weights[i], (long) perUnit) / POINTS_PER_DIGEST * POINTS_PER_DIGEST;
        }
        return points;
    }

    // ---- tie rules ----

    /** The first listed keeps a tie (C clients: libmemcached's host index, glibc's stable qsort). */
    static int[] firstListed(List<Backend> backends) {
        int[] rank = new int[backends.size()];
        Arrays.setAll(rank, i -> i);
        return rank;
    }

    /** The last listed keeps a tie (Java's {@code TreeMap.put}: the last put wins). */
    static int[] lastListed(List<Backend> backends) {
        int n = backends.size();
        int[] rank = new int[n];
        Arrays.setAll(rank, i -> n - 1 - i);
        return rank;
    }
}
