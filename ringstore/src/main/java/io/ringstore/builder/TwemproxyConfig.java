package io.ringstore.builder;

import io.ringstore.Backend;
import io.ringstore.family.KeyHash;
import io.ringstore.family.RingVersion;
import io.ringstore.internal.ServerAddress;
import io.ringstore.internal.ServerParameters;
import io.ringstore.internal.TextLines;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * One pool of a twemproxy (nutcracker) configuration file, read as nutcracker reads it
 * ({@code src/nc_conf.c}): the pool's servers as backends, its key hash, and the ring version that
 * reproduces its {@code distribution: ketama} ring, {@code twemproxy:HASH}. The file is the
 * operator's own {@code nutcracker.yml}, unchanged:
 * <pre>
 *   alpha:                                  (a pool; a file may hold several)
 *     listen: 127.0.0.1:22121               (required, as nutcracker requires it; otherwise ignored)
 *     hash: fnv1a_64                        (default fnv1a_64; one of the twelve of {@link KeyHash#TWEMPROXY_HASHES})
 *     distribution: ketama                  (default ketama; modula and random are refused)
 *     auto_eject_hosts: true                (checked, not applied: see below)
 *     servers:
 *      - 10.0.0.1:11211:1                   (host:port:weight, the weight mandatory and above 0)
 *      - 10.0.0.2:11212:2 cache-b           (an optional name: the server's identity in the ring)
 * </pre>
 * A server's name becomes the backend's name ({@code # ringstore: name=} in a backends file); without
 * one, nutcracker names a server {@code host} when its port is 11211 and {@code host:port} otherwise,
 * which is what the {@code twemproxy} family hashes for a backend without a name. Hosts are IPv4
 * addresses or IPv6 ones without brackets ({@code ::1:11211:1}, split at the last two colons as
 * nutcracker does): a host name is refused (a ring must not depend on DNS), so are unix sockets, a
 * leading zero in an address part or a port (nutcracker's getaddrinfo reads {@code 010} as octal, and
 * it hashes the port as written), and two servers with the same name or the same address and port.
 *
 * <p>The pool's other keys are checked as nutcracker checks them (numbers, {@code true}/{@code false},
 * a two-character {@code hash_tag}, {@code redis_auth} only with {@code redis: true}) and ignored; an
 * unknown key, in any pool, is refused (a misspelt {@code hash:} would otherwise build another ring).
 * Two of them change where nutcracker sends a key and are not applied: {@code hash_tag} (nutcracker
 * hashes only the part of the key between the tags; a caller must do the same before a lookup:
 * {@link #hashTag()}) and {@code auto_eject_hosts} (nutcracker rebuilds its ring without a failing
 * server; a ring file changes when it is rebuilt: {@link #autoEjectHosts()}).
 * The file is read as the YAML subset nutcracker's files are written in (pools in the first column,
 * their keys indented, one {@code servers:} list each; plain or quoted one-line values; docs/from-config.md),
 * and every error names the file and line.
 */
public final class TwemproxyConfig {
    /** nutcracker's pool keys ({@code conf_commands}), in its order. */
    static final List<String> KEYS = List.of(
            "listen",
            "hash",
            "hash_tag",
            "distribution",
            "timeout",
            "backlog",
            "client_connections",
            "redis",
            "tcpkeepalive",
            "reuseport",
            "redis_auth",
            "redis_db",
            "preconnect",
            "auto_eject_hosts",
            "server_connections",
            "server_retry_timeout",
            "server_failure_limit",
            NutcrackerYaml.SERVERS);
    /** The keys nutcracker reads with {@code conf_set_num}: digits only. */
    private static final Set<String> NUMBERS = Set.of(
            "timeout",
            "backlog",
            "client_connections",
            "redis_db",
            "server_connections",
            "server_retry_timeout",
            "server_failure_limit");
    /** The keys nutcracker reads with {@code conf_set_bool}: {@code true} or {@code false}, exactly. */
    private static final Set<String> BOOLEANS =
            Set.of("redis", "tcpkeepalive", "reuseport", "preconnect", "auto_eject_hosts");
    /** nutcracker's distributions ({@code DIST_CODEC}). */
    static final List<String> DISTRIBUTIONS = List.of("ketama", "modula", "random");
    /** The hash a pool without {@code hash:} uses ({@code CONF_DEFAULT_HASH}). */
    public static final String DEFAULT_HASH = "fnv1a_64";
    /** The port nutcracker leaves out of a server's default name ({@code CONF_DEFAULT_KETAMA_PORT}). */
    private static final int KETAMA_PORT = 11211;

    private final BackendList backends;
    private final String pool;
    private final String hash;
    private final String hashTag;
    private final boolean autoEjectHosts;

    private TwemproxyConfig(BackendList backends, String pool, String hash, String hashTag, boolean autoEjectHosts) {
        this.backends = backends;
        this.pool = pool;
        this.hash = hash;
        this.hashTag = hashTag;
        this.autoEjectHosts = autoEjectHosts;
    }

    /**
     * Reads pool {@code pool} of a nutcracker configuration file (UTF-8, a leading byte order mark
     * skipped, a regular file of at most {@value BackendList#MAX_FILE_BYTES} bytes).
     *
     * @param file the configuration file; errors name it as given
     * @param pool the pool's name, or null for the file's only pool
     * @return the pool
     * @throws BackendsFileException when the file cannot be read, is not nutcracker's YAML, has no pool
     *                               of that name (or several and no name given), or the pool is not one ringstore can build
     */
    public static TwemproxyConfig parse(Path file, String pool) throws BackendsFileException {
        String source = file.toString();
        return parse(source, BackendList.utf8(source, BackendList.read(file)), pool);
    }

    /**
     * Reads pool {@code pool} of nutcracker configuration text.
     *
     * @param source what errors call the input (a file name)
     * @param text   the configuration (a leading byte order mark is skipped)
     * @param pool   the pool's name, or null for the only pool
     * @return the pool
     * @throws BackendsFileException as {@link #parse(Path, String)}
     */
    public static TwemproxyConfig parse(String source, String text, String pool) throws BackendsFileException {
        List<NutcrackerYaml.Pool> pools = NutcrackerYaml.read(source, BackendList.checkedText(source, text));
        for (NutcrackerYaml.Pool p : pools) {
            for (Map.Entry<String, NutcrackerYaml.Value> key : p.keys.entrySet()) {
                if (!KEYS.contains(key.getKey())) {
                    throw new BackendsFileException(
                            source,
                            key.getValue().line(),
                            "unknown key " + TextLines.quote(key.getKey()) + " in pool " + TextLines.quote(p.name)
                                    + " (nutcracker's: " + String.join(", ", KEYS) + ")");
                }
            }
        }
        List<String> names = pools.stream().map(p -> p.name).toList();
        NutcrackerYaml.Pool chosen;
        if (pool == null) {
            if (pools.size() > 1) {
                throw new BackendsFileException(
                        source,
                        0,
                        pools.size() + " pools (" + String.join(", ", names)
                                + "): name the one to build (--pool NAME)");
            }
            chosen = pools.getFirst();
        } else {
            int at = names.indexOf(pool);
            if (at < 0) {
                throw new BackendsFileException(
                        source,
                        0,
                        "no pool " + TextLines.quote(pool) + " (the file's pools: " + String.join(", ", names) + ")");
            }
            chosen = pools.get(at);
        }
        return new Reading(source, chosen).config();
    }

    /** A host name's syntax (RFC 1123 labels): what is worth a lookup. */
    private static final Pattern HOST_NAME = Pattern.compile(
            "[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\\.?");

    /** The checks and the servers of the chosen pool. */
    private static final class Reading {
        private final String source;
        private final NutcrackerYaml.Pool pool;
        private final List<Backend> backends = new ArrayList<>();
        private final Map<Object, Backend> endpoints = new HashMap<>();
        private final Map<String, Integer> nameLines = new HashMap<>();
        private final List<String> features = new ArrayList<>(); // none: a pool's servers have no features

        Reading(String source, NutcrackerYaml.Pool pool) {
            this.source = source;
            this.pool = pool;
        }

        private BackendsFileException error(int line, String reason) {
            return new BackendsFileException(source, line, reason);
        }

        TwemproxyConfig config() throws BackendsFileException {
            if (!pool.keys.containsKey("listen")) {
                throw error(
                        pool.line,
                        "pool " + TextLines.quote(pool.name) + " has no 'listen:', which nutcracker requires"
                                + " (is this nutcracker's configuration?)");
            }
            for (Map.Entry<String, NutcrackerYaml.Value> key : pool.keys.entrySet()) {
                check(key.getKey(), key.getValue());
            }
            NutcrackerYaml.Value redisAuth = pool.keys.get("redis_auth");
            NutcrackerYaml.Value redis = pool.keys.get("redis");
            if (redisAuth != null && (redis == null || !redis.text().equals("true"))) {
                throw error(
                        redisAuth.line(),
                        "'redis_auth:' without 'redis: true' (nutcracker takes it only for a redis pool)");
            }
            NutcrackerYaml.Value hash = pool.keys.get("hash");
            NutcrackerYaml.Value hashTag = pool.keys.get("hash_tag");
            NutcrackerYaml.Value eject = pool.keys.get("auto_eject_hosts");
            for (NutcrackerYaml.Value server : pool.servers) {
                server(server);
            }
            return new TwemproxyConfig(
                    BackendList.of(source, backends, List.of()),
                    pool.name,
                    hash == null ? DEFAULT_HASH : hash.text(),
                    hashTag == null ? null : hashTag.text(),
                    eject != null && eject.text().equals("true"));
        }

        /** One key's value, as nutcracker's {@code conf_set_*} checks it. */
        private void check(String key, NutcrackerYaml.Value value) throws BackendsFileException {
            String v = value.text();
            int line = value.line();
            if (NUMBERS.contains(key)) {
                long n = TextLines.decimal(v, Integer.MAX_VALUE);
                if (n < 0 || n > Integer.MAX_VALUE) {
                    throw error(
                            line,
                            "'" + key + ": " + v + "': not a number (nutcracker's are digits, at most "
                                    + Integer.MAX_VALUE + ")");
                }
                if (n == 0 && key.equals("server_connections")) {
                    throw error(line, "'server_connections: 0': nutcracker refuses 0");
                }
            } else if (BOOLEANS.contains(key)) {
                if (!v.equals("true") && !v.equals("false")) {
                    throw error(line, "'" + key + ": " + v + "': nutcracker takes true or false (lower case) only");
                }
            }
            switch (key) {
                case "hash" -> {
                    if (!KeyHash.TWEMPROXY_HASHES.contains(v)) {
                        throw error(
                                line,
                                "unknown hash " + TextLines.quote(v) + " (nutcracker's twelve: "
                                        + String.join(", ", KeyHash.TWEMPROXY_HASHES) + ")");
                    }
                }
                case "distribution" -> {
                    if (!DISTRIBUTIONS.contains(v)) {
                        throw error(
                                line,
                                "unknown distribution " + TextLines.quote(v) + " (nutcracker's: "
                                        + String.join(", ", DISTRIBUTIONS) + ")");
                    }
                    if (!v.equals("ketama")) {
                        throw error(
                                line,
                                "distribution " + TextLines.quote(v)
                                        + ": ringstore builds ketama rings only (nutcracker's " + v
                                        + " is not consistent hashing: keys do not stay put when a server is added)");
                    }
                }
                case "hash_tag" -> {
                    if (v.length() != 2) {
                        throw error(
                                line,
                                "hash_tag " + TextLines.quote(v) + ": nutcracker takes two characters, as \"{}\"");
                    }
                }
                case "listen" -> {
                    String problem = listenProblem(v);
                    if (problem != null) {
                        throw error(line, "listen " + TextLines.quote(v) + ": " + problem);
                    }
                }
                default -> {}
            }
        }

        /**
         * Why nutcracker refuses {@code listen: v}, or null: it takes {@code /path/to/socket [mode]} or
         * {@code host:port}, split at the last colon, port 1-65535, the host an IP address (as
         * getaddrinfo reads one: {@code 127.1} too) or a host name that resolves ({@code nc_resolve} at
         * start; {@code nutcracker -t} refuses the file when it does not). A text that is neither an
         * address nor a host name ({@code 12:7.0.0.1}, a U+FEFF inside) is refused without a lookup.
         */
        private static String listenProblem(String v) {
            if (v.startsWith("/")) {
                return null;
            }
            int colon = v.lastIndexOf(':');
            if (colon < 0 || !validPort(v.substring(colon + 1))) {
                return "nutcracker takes host:port (port 1-65535) or /path/to/socket";
            }
            String host = v.substring(0, colon);
            try {
                if (!host.startsWith("[")) { // getaddrinfo takes no brackets
                    InetAddress.ofLiteral(host);
                    return null;
                }
            } catch (IllegalArgumentException notAnAddress) {
                // a host name, or nothing nutcracker can resolve
            }
            if (!HOST_NAME.matcher(host).matches() || host.length() > 253 || host.matches("[0-9.]*")) {
                return "host " + TextLines.quote(host)
                        + " is neither an IP address nor a host name (nutcracker refuses it)";
            }
            try {
                InetAddress.getByName(host);
                return null;
            } catch (UnknownHostException e) {
                return "host " + TextLines.quote(host)
                        + " does not resolve on this machine (nutcracker resolves it at start, and refuses the file)";
            }
        }

        private static boolean validPort(String digits) {
            long port = TextLines.decimal(digits, 65535);
            return port >= 1 && port <= 65535;
        }

        /**
         * {@code host:port:weight [name]}, split from the end as nutcracker's {@code conf_add_server}
         * splits it: the name after the last space, then the weight and the port after the last two colons.
         */
        private void server(NutcrackerYaml.Value item) throws BackendsFileException {
            String text = item.text();
            int line = item.line();
            if (backends.size() == BackendList.MAX_BACKENDS) {
                throw error(
                        line,
                        "more than " + BackendList.MAX_BACKENDS + " servers (a point stores its backend in 16 bits)");
            }
            if (text.startsWith("/")) {
                throw error(
                        line, "unix socket " + TextLines.quote(text) + ": not supported, a ring needs IP endpoints");
            }
            int space = text.lastIndexOf(' ');
            String name = space < 0 ? null : text.substring(space + 1);
            String endpoint = space < 0 ? text : text.substring(0, space);
            int weightColon = endpoint.lastIndexOf(':');
            int portColon = weightColon <= 0 ? -1 : endpoint.lastIndexOf(':', weightColon - 1);
            if (portColon < 0) {
                throw error(
                        line,
                        "server " + TextLines.quote(text)
                                + (weightColon < 0
                                        ? " is not host:port:weight [name]"
                                        : " has no weight: nutcracker's servers are host:port:weight [name], the weight mandatory"));
            }
            String host = endpoint.substring(0, portColon);
            String portText = endpoint.substring(portColon + 1, weightColon);
            String weightText = endpoint.substring(weightColon + 1);
            long weight = TextLines.decimal(weightText, BackendList.MAX_WEIGHT);
            if (weight < 0) {
                throw error(
                        line,
                        "weight " + TextLines.quote(weightText) + " of server " + TextLines.quote(text)
                                + " is not a number (host:port:weight [name], one space before the name, none in it)");
            }
            if (weight == 0) {
                throw error(line, "weight 0 of server " + TextLines.quote(text) + ": nutcracker's weights are above 0");
            }
            if (weight > BackendList.MAX_WEIGHT) {
                throw error(
                        line,
                        "weight " + TextLines.quote(weightText) + " is too large (at most " + BackendList.MAX_WEIGHT
                                + ")");
            }
            if (!validPort(portText)) {
                throw error(
                        line,
                        "port " + TextLines.quote(portText) + " of server " + TextLines.quote(text)
                                + " is not a number from 1 to 65535");
            }
            if (portText.startsWith("0")) {
                throw error(
                        line,
                        "port " + TextLines.quote(portText)
                                + " has a leading zero: nutcracker hashes the port as written, "
                                + "write it without one");
            }
            if (name != null && name.isEmpty()) {
                throw error(line, "server " + TextLines.quote(text) + " ends with a space and no name after it");
            }
            ServerAddress address = BackendList.parseAddress(source, line, addressText(line, host, portText));
            String identity = name != null
                    ? BackendList.checkName(source, line, name)
                    : Integer.parseInt(portText) == KETAMA_PORT ? host : host + ":" + portText;
            Integer earlier = nameLines.putIfAbsent(identity, line);
            if (earlier != null) {
                throw error(
                        line,
                        "server name " + TextLines.quote(identity) + " again: the server on line " + earlier
                                + " has it already ("
                                + (name == null
                                        ? "nutcracker names a server without a name host:port, or host on port 11211; "
                                        : "")
                                + "nutcracker refuses servers with the same name)");
            }
            ServerParameters parameters =
                    name == null ? ServerParameters.DEFAULTS : ServerParameters.DEFAULTS.withName(name);
            BackendList.addBackend(
                    source, line, line, address, weight, List.of(), parameters, features, backends, endpoints);
        }

        /** The address as a backends file writes it: {@code a.b.c.d:port}, {@code [v6]:port}. */
        private String addressText(int line, String host, String port) throws BackendsFileException {
            if (host.isEmpty()) {
                throw error(line, "a server without a host before ':" + port + "'");
            }
            if (host.startsWith("[")) {
                throw error(
                        line,
                        "host " + TextLines.quote(host)
                                + ": nutcracker gives the host to getaddrinfo, which takes no brackets"
                                + " (write an IPv6 server as ::1:11211:1)");
            }
            if (host.indexOf(':') >= 0) {
                return "[" + host + "]:" + port;
            }
            for (String part : host.split("\\.", -1)) {
                if (part.length() > 1 && part.charAt(0) == '0' && part.chars().allMatch(c -> c >= '0' && c <= '9')) {
                    throw error(
                            line,
                            "host " + TextLines.quote(host)
                                    + " has a part with a leading zero, which nutcracker's getaddrinfo"
                                    + " reads as octal: write the address without leading zeros");
                }
            }
            return host + ":" + port;
        }
    }

    /** {@return the pool's servers as backends, in file order; named as the pool names them} */
    public BackendList backends() {
        return backends;
    }

    /** {@return the pool's name} */
    public String pool() {
        return pool;
    }

    /** {@return the pool's key hash: its {@code hash:}, or nutcracker's default {@value #DEFAULT_HASH}} */
    public String hash() {
        return hash;
    }

    /** {@return the ring version that reproduces the pool's ring: {@code twemproxy:HASH}} */
    public RingVersion version() {
        return RingVersion.parse("twemproxy:" + hash);
    }

    /**
     * {@return the pool's {@code hash_tag} (two characters), or null without one} nutcracker then hashes
     * only the part of a key between the two (the whole key when they are not in it); ringstore hashes the
     * key it is given, so a caller must cut it first to place keys as nutcracker does.
     */
    public String hashTag() {
        return hashTag;
    }

    /**
     * {@return whether the pool has {@code auto_eject_hosts: true}} nutcracker then rebuilds its ring
     * without a server that keeps failing; a ring file does not change by itself: rebuild it without
     * the server (or with the server {@code down}: a twemproxy ring leaves a down server out and shares
     * the points among the others, as nutcracker's ejection does).
     */
    public boolean autoEjectHosts() {
        return autoEjectHosts;
    }
}
