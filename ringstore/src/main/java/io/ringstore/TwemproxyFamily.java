package io.ringstore;

import io.ringstore.internal.TextLines;
import java.util.List;

/**
 * twemproxy (nutcracker) {@code distribution: ketama} ({@code src/hashkit/nc_ketama.c}),
 * {@code twemproxy:HASH}: a server's identity is its name, or {@code host} when its port is 11211 and
 * {@code host:port} otherwise ({@code conf_add_server}); point texts {@code identity-i}, four points
 * an MD5; the share rule in float with a double {@code 0.0000000001} added; the server whose name
 * sorts first (shorter, then bytewise) keeps a tie (nutcracker sorts the servers so, and glibc's qsort is
 * stable); keys hashed with the pool's {@code hash} (one of twelve; a bare
 * {@code twemproxy} is its default, {@code fnv1a_64}). A {@code down} backend leaves the ring
 * ({@code auto_eject_hosts} rebuilds it from the live servers).
 *
 * <p>The one parameter is the hash: its position in {@link KeyHash#TWEMPROXY_HASHES} from 1, which the
 * ring index stores and a name writes by the hash's own name.
 */
final class TwemproxyFamily extends ShareRuleFamily {
    /** twemproxy's default {@code hash:} ({@code CONF_DEFAULT_HASH}). */
    static final String DEFAULT_HASH = "fnv1a_64";

    TwemproxyFamily() {
        super("twemproxy", 6, new TwemproxyPoolKeyHash(KeyHash.twemproxy(DEFAULT_HASH)));
    }

    @Override
    String pointText(Backend backend, int i) {
        return identity(backend) + "-" + i;
    }

    /** The server's name, else {@code host} for port 11211 and {@code host:port} otherwise. */
    String identity(Backend backend) {
        if (backend.name() != null) {
            return backend.name();
        }
        int port = port(backend);
        return port == MEMCACHED_PORT
                ? address(backend).hostText()
                : address(backend).hostText() + ":" + port;
    }

    /** Each hash as a pool applies it: an empty key hashes to 0 ({@code server_pool_hash}). */
    private static final KeyHash[] POOL_HASHES = KeyHash.TWEMPROXY_HASHES.stream()
            .map(h -> new TwemproxyPoolKeyHash(KeyHash.twemproxy(h)))
            .toArray(KeyHash[]::new);

    @Override
    public KeyHash keyHash(int[] parameters) {
        return POOL_HASHES[parameters[0] - 1];
    }

    @Override
    public long[] points(long[] weights, RingVersion version) {
        return shareFloatPlusDouble(weights);
    }

    /**
     * nutcracker sorts a pool's servers by name before it builds the continuum ({@code conf_validate_server}:
     * shorter names first, then byte order), and glibc's stable qsort keeps equal points in that order:
     * the server whose name sorts first keeps a shared point, wherever it is listed.
     */
    @Override
    public int[] tieRanks(List<Backend> backends) {
        int n = backends.size();
        Integer[] order = new Integer[n];
        java.util.Arrays.setAll(order, i -> i);
        java.util.Arrays.sort(
                order,
                java.util.Comparator.comparingInt(
                                (Integer i) -> identity(backends.get(i)).length())
                        .thenComparing(
                                i -> identity(backends.get(i)),
                                (x, y) -> java.util.Arrays.compareUnsigned(
                                        x.getBytes(java.nio.charset.StandardCharsets.UTF_8),
                                        y.getBytes(java.nio.charset.StandardCharsets.UTF_8))));
        int[] rank = new int[n];
        for (int r = 0; r < n; r++) {
            rank[order[r]] = r;
        }
        return rank;
    }

    // ---- the parameter: the hash ----

    @Override
    public int writtenParameters() {
        return 1;
    }

    @Override
    int minWrittenParameters() {
        return 0;
    }

    @Override
    public int[] defaultParameters() {
        return new int[] {KeyHash.TWEMPROXY_HASHES.indexOf(DEFAULT_HASH) + 1};
    }

    @Override
    long maxWrittenParameter() {
        return KeyHash.TWEMPROXY_HASHES.size();
    }

    @Override
    int parseWritten(int i, String text) {
        int at = KeyHash.TWEMPROXY_HASHES.indexOf(text);
        return at < 0 ? -1 : at + 1;
    }

    @Override
    String writtenText(int i, int value) {
        return value >= 1 && value <= KeyHash.TWEMPROXY_HASHES.size()
                ? KeyHash.TWEMPROXY_HASHES.get(value - 1)
                : Integer.toUnsignedString(value);
    }

    @Override
    List<String> syntax() {
        return List.of("twemproxy", "twemproxy:HASH with HASH one of " + String.join(", ", KeyHash.TWEMPROXY_HASHES));
    }

    @Override
    public void checkParameters(int[] parameters) {
        if (parameters.length != 1 || parameters[0] < 1 || parameters[0] > KeyHash.TWEMPROXY_HASHES.size()) {
            throw new IllegalArgumentException(
                    "twemproxy has one parameter, its hash, 1 to " + KeyHash.TWEMPROXY_HASHES.size() + " ("
                            + TextLines.quote(String.join(",", KeyHash.TWEMPROXY_HASHES)) + "): parameters="
                            + java.util.Arrays.toString(parameters));
        }
    }

    @Override
    int[] fromWritten(int[] written) {
        return written.clone();
    }

    @Override
    int[] written(int[] parameters) {
        return parameters.clone();
    }
}
