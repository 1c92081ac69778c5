package io.ringstore.builder;

import io.ringstore.Backend;
import io.ringstore.family.KeyHash;
import io.ringstore.family.RingVersion;
import io.ringstore.internal.ServerAddress;
import io.ringstore.internal.ServerParameters;
import io.ringstore.internal.TextLines;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One backend of an HAProxy configuration file, read as HAProxy 2.6 reads it: its {@code server} lines
 * as backends, and the ring version that reproduces its {@code hash-type consistent} tree,
 * {@code haproxy:HASH}. The file is the operator's own {@code haproxy.cfg}, unchanged:
 * <pre>
 *   defaults                                (the last one before a backend gives it balance, hash-type, default-server)
 *       balance uri
 *   backend web                             (a backend or listen section; a file may hold several)
 *       hash-type consistent djb2 avalanche (required: consistent, an optional function and avalanche)
 *       server a 10.0.0.1:80 id 3 weight 20 (id, weight 0-256, disabled, backup read; the rest ignored)
 *       server b 10.0.0.2:80 check
 *       server c 10.0.0.3:80 backup
 * </pre>
 * Each server gets its HAProxy id: its {@code id}, else HAProxy's automatic number
 * ({@code check_config_validity}: a counter from 1, moved on after every server, gives a server without
 * an id the first free id at or above it), which the backend records as its name ({@code # ringstore:
 * id=N} in a backends file), so the ring does not depend on the servers left out. A {@code backup}
 * server is left out: HAProxy looks up its active tree alone while one active server is up (the
 * backups only when none is, then the first backup alone unless {@code option allbackups}). Two active
 * servers whose ids are a multiple of 2^20 apart are refused: they share their nodes, which HAProxy's
 * tree splits between them (a key on a shared node or below it goes to the first, one above it to the
 * second), and a ring file keeps one server a node. A server
 * with {@code weight 0} or {@code disabled} is kept {@code down}: it is not in HAProxy's tree. Addresses
 * are IPv4 or bracketed IPv6 with a port; a host name, a server without a port, a {@code server-template}
 * are refused, and every error names the file and line.
 *
 * <p>What the backend hashes is not in the ring file: {@link #balance()} says it, and a caller hashes
 * the same bytes ({@code balance uri}: the request target up to the first {@code ?}; {@code hdr(X)}:
 * the header's value).
 */
public final class HaproxyConfig {
    /** The sections that hold servers. */
    private static final Set<String> PROXIES = Set.of("backend", "listen");
    /** The other sections HAProxy 2.6 knows: they end a backend. */
    private static final Set<String> OTHER_SECTIONS = Set.of(
            "global",
            "defaults",
            "frontend",
            "resolvers",
            "peers",
            "userlist",
            "program",
            "cache",
            "mailers",
            "http-errors",
            "ring",
            "traces");
    /** The {@code balance} algorithms that hash a key, which a consistent tree looks up. */
    private static final List<String> HASHING = List.of("uri", "url_param", "hdr", "rdp-cookie", "source", "hash");
    /** Ids this far apart have the same nodes: {@code puid * SRV_EWGHT_RANGE} (4,096) wraps at 2^32. */
    private static final long SHARED_NODES_PERIOD = 1L << 20;
    /** {@code SRV_UWGHT_MAX}. */
    private static final int MAX_WEIGHT = 256;

    private final BackendList backends;
    private final String backend;
    private final String hash;
    private final String balance;
    private final List<String> notes;

    private HaproxyConfig(BackendList backends, String backend, String hash, String balance, List<String> notes) {
        this.backends = backends;
        this.backend = backend;
        this.hash = hash;
        this.balance = balance;
        this.notes = notes;
    }

    /**
     * Reads backend {@code backend} of an HAProxy configuration file (UTF-8, a regular file of at most
     * {@value BackendList#MAX_FILE_BYTES} bytes).
     *
     * @param file    the configuration file; errors name it as given
     * @param backend the backend's (or listen section's) name, or null for the file's only one
     * @return the backend
     * @throws BackendsFileException when the file cannot be read, has no backend of that name (or several
     *                               and no name given), or the backend is not one ringstore can build
     */
    public static HaproxyConfig parse(Path file, String backend) throws BackendsFileException {
        String source = file.toString();
        return parse(source, BackendList.utf8(source, BackendList.read(file)), backend);
    }

    /**
     * Reads backend {@code backend} of HAProxy configuration text.
     *
     * @param source  what errors call the input (a file name)
     * @param text    the configuration
     * @param backend the backend's name, or null for the only one
     * @return the backend
     * @throws BackendsFileException as {@link #parse(Path, String)}
     */
    public static HaproxyConfig parse(String source, String text, String backend) throws BackendsFileException {
        List<Section> sections = sections(source, BackendList.checkedText(source, text));
        List<Section> proxies =
                sections.stream().filter(s -> PROXIES.contains(s.keyword)).toList();
        List<String> names = proxies.stream().map(s -> s.name).toList();
        if (proxies.isEmpty()) {
            throw new BackendsFileException(
                    source, 0, "no backend or listen section (is this HAProxy's configuration?)");
        }
        Section chosen;
        if (backend == null) {
            if (proxies.size() > 1) {
                throw new BackendsFileException(
                        source,
                        0,
                        proxies.size() + " backends (" + String.join(", ", names)
                                + "): name the one to build (--backend NAME)");
            }
            chosen = proxies.getFirst();
        } else {
            int at = names.indexOf(backend);
            if (at < 0) {
                throw new BackendsFileException(
                        source,
                        0,
                        "no backend " + TextLines.quote(backend) + " (the file's backends: " + String.join(", ", names)
                                + ")");
            }
            chosen = proxies.get(at);
        }
        return new Reading(source, chosen).config();
    }

    /** A section: its keyword and name, its line, its directives, and the {@code defaults} section before it. */
    private static final class Section {
        final String keyword;
        final String name;
        final int line;
        final List<Directive> directives = new ArrayList<>();
        final Section defaults;

        Section(String keyword, String name, int line, Section defaults) {
            this.keyword = keyword;
            this.name = name;
            this.line = line;
            this.defaults = defaults;
        }

        /** The last directive of this keyword here, else in the defaults section; null without one. */
        Directive last(String keyword) {
            for (int i = directives.size() - 1; i >= 0; i--) {
                if (directives.get(i).words.getFirst().equals(keyword)) {
                    return directives.get(i);
                }
            }
            return defaults == null ? null : defaults.last(keyword);
        }
    }

    /** One configuration line's words. */
    private record Directive(int line, List<String> words) {}

    /** The file's sections, each line split into words as HAProxy does (blanks, quotes, backslashes, {@code #}). */
    private static List<Section> sections(String source, String text) throws BackendsFileException {
        List<Section> sections = new ArrayList<>();
        Section current = null;
        Section defaults = null;
        String[] lines = text.split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            int lineNo = i + 1;
            List<String> words = words(source, lineNo, lines[i]);
            if (words.isEmpty()) {
                continue;
            }
            String first = words.getFirst();
            if (PROXIES.contains(first) || OTHER_SECTIONS.contains(first)) {
                current = new Section(first, words.size() > 1 ? words.get(1) : "", lineNo, defaults);
                if (first.equals("defaults")) {
                    defaults = current;
                }
                sections.add(current);
            } else if (current != null) {
                current.directives.add(new Directive(lineNo, words));
            } else {
                throw new BackendsFileException(
                        source,
                        lineNo,
                        TextLines.quote(first) + " outside a section (is this HAProxy's configuration?)");
            }
        }
        return sections;
    }

    /** A line's words: blanks separate them, quotes group, a backslash escapes, an unquoted {@code #} starts a comment. */
    private static List<String> words(String source, int lineNo, String line) throws BackendsFileException {
        List<String> words = new ArrayList<>();
        StringBuilder word = null;
        char quote = 0;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (quote != 0) {
                if (c == quote) {
                    quote = 0;
                } else {
                    word.append(c);
                }
            } else if (c == '#') {
                break;
            } else if (c == ' ' || c == '\t' || c == '\r') {
                if (word != null) {
                    words.add(word.toString());
                    word = null;
                }
            } else {
                if (word == null) {
                    word = new StringBuilder();
                }
                if (c == '"' || c == '\'') {
                    quote = c;
                } else if (c == '\\' && i + 1 < line.length()) {
                    word.append(line.charAt(++i));
                } else {
                    word.append(c);
                }
            }
        }
        if (quote != 0) {
            throw new BackendsFileException(source, lineNo, "unmatched quote " + quote);
        }
        if (word != null) {
            words.add(word.toString());
        }
        return words;
    }

    /** The checks and the servers of the chosen backend. */
    private static final class Reading {
        private final String source;
        private final Section section;
        private final List<String> notes = new ArrayList<>();

        Reading(String source, Section section) {
            this.source = source;
            this.section = section;
        }

        private BackendsFileException error(int line, String reason) {
            return new BackendsFileException(source, line, reason);
        }

        HaproxyConfig config() throws BackendsFileException {
            String where = section.keyword + " " + TextLines.quote(section.name);
            Directive hashType = section.last("hash-type");
            if (hashType == null) {
                throw error(
                        section.line,
                        where + " has no 'hash-type consistent' (HAProxy's default is map-based, which is no ring)");
            }
            String hash = hashFunction(hashType);
            String balance = balance(where);
            List<Server> servers = new ArrayList<>();
            for (Directive d : section.directives) {
                switch (d.words.getFirst()) {
                    case "server" -> servers.add(server(d));
                    case "server-template" ->
                        throw error(d.line, "server-template: its servers' addresses come from DNS; list the servers");
                    default -> {}
                }
            }
            if (servers.isEmpty()) {
                throw error(section.line, where + " has no server");
            }
            assignIds(servers);
            List<Backend> backends = new ArrayList<>();
            Map<Object, Backend> endpoints = new HashMap<>();
            List<String> features = new ArrayList<>();
            int backups = 0;
            for (Server s : servers) {
                if (s.backup) {
                    backups++;
                    continue;
                }
                if (backends.size() == BackendList.MAX_BACKENDS) {
                    throw error(
                            s.line,
                            "more than " + BackendList.MAX_BACKENDS
                                    + " servers (a point stores its backend in 16 bits)");
                }
                ServerParameters parameters =
                        ServerParameters.DEFAULTS.withName(Long.toString(s.id)).withDown(s.disabled || s.weight == 0);
                BackendList.addBackend(
                        source,
                        s.line,
                        s.line,
                        s.address,
                        Math.max(1, s.weight),
                        List.of(),
                        parameters,
                        features,
                        backends,
                        endpoints);
            }
            if (backups > 0) {
                notes.add(where + " has " + backups + " backup server(s), left out: HAProxy looks up its backups only"
                        + " when no active server is up (docs/from-config.md)");
            }
            return new HaproxyConfig(
                    BackendList.of(source, backends, List.of()), section.name, hash, balance, List.copyOf(notes));
        }

        /** {@code hash-type consistent [FUNCTION [avalanche]]}, as {@code cfgparse-listen.c} reads it. */
        private String hashFunction(Directive d) throws BackendsFileException {
            List<String> w = d.words;
            if (w.size() < 2 || !w.get(1).equals("consistent")) {
                throw error(
                        d.line,
                        "'" + String.join(" ", w) + "': only 'hash-type consistent' builds a ring (map-based is a table"
                                + " of servers, not a ring)");
            }
            if (w.size() == 2) {
                return "sdbm-avalanche"; // "if consistent with no argument, then avalanche modifier is also applied"
            }
            String function = w.get(2);
            if (!KeyHash.HAPROXY_HASHES.contains(function)) {
                throw error(
                        d.line,
                        "hash function " + TextLines.quote(function)
                                + ": HAProxy 2.6 takes sdbm, djb2, wt6 or crc32 with hash-type consistent");
            }
            if (w.size() == 3) {
                return function;
            }
            if (w.size() > 4 || !w.get(3).equals("avalanche")) {
                throw error(d.line, "'" + String.join(" ", w) + "': only 'avalanche' may follow the hash function");
            }
            return function + "-avalanche";
        }

        /** The backend's {@code balance}: one that hashes a key (roundrobin, the default, does not). */
        private String balance(String where) throws BackendsFileException {
            Directive d = section.last("balance");
            if (d == null || d.words.size() < 2) {
                throw error(
                        section.line,
                        where + " has no 'balance' that hashes (its default, roundrobin, takes servers in turn"
                                + " from the tree, not by a key)");
            }
            String algorithm = d.words.get(1);
            String kind = algorithm.contains("(") ? algorithm.substring(0, algorithm.indexOf('(')) : algorithm;
            if (!HASHING.contains(kind)) {
                throw error(
                        d.line,
                        "'balance " + algorithm + "' does not hash a key: ringstore reproduces 'balance "
                                + String.join("|", HASHING) + "' with 'hash-type consistent'");
            }
            return String.join(" ", d.words.subList(1, d.words.size()));
        }

        /** {@code server NAME ADDRESS [id N] [weight N] [disabled] [backup] ...}. */
        private Server server(Directive d) throws BackendsFileException {
            List<String> w = d.words;
            if (w.size() < 3) {
                throw error(d.line, "'server' needs a name and an address");
            }
            Server s = new Server(d.line, w.get(1), address(d.line, w.get(2)));
            Directive defaults = section.last("default-server");
            if (defaults != null) {
                options(defaults, defaults.words.subList(1, defaults.words.size()), s, false);
            }
            options(d, w.subList(3, w.size()), s, true);
            return s;
        }

        private void options(Directive d, List<String> w, Server s, boolean own) throws BackendsFileException {
            for (int i = 0; i < w.size(); i++) {
                switch (w.get(i)) {
                    case "id" -> {
                        if (!own) {
                            throw error(d.line, "'id' on a default-server line: each server has its own");
                        }
                        String id = i + 1 < w.size() ? w.get(++i) : "";
                        if (!id.matches("[1-9][0-9]{0,9}") || Long.parseLong(id) > Integer.MAX_VALUE) {
                            throw error(
                                    d.line,
                                    "id " + TextLines.quote(id) + " of server " + TextLines.quote(s.name)
                                            + ": HAProxy takes an id from 1 to " + Integer.MAX_VALUE);
                        }
                        s.id = Long.parseLong(id);
                    }
                    case "weight" -> {
                        String weight = i + 1 < w.size() ? w.get(++i) : "";
                        long value = TextLines.decimal(weight, MAX_WEIGHT);
                        if (value < 0 || value > MAX_WEIGHT) {
                            throw error(
                                    d.line,
                                    "weight " + TextLines.quote(weight) + " of server " + TextLines.quote(s.name)
                                            + ": HAProxy takes a weight from 0 to " + MAX_WEIGHT);
                        }
                        s.weight = (int) value;
                    }
                    case "disabled" -> s.disabled = true;
                    case "enabled" -> s.disabled = false;
                    case "backup" -> s.backup = true;
                    case "no-backup" -> s.backup = false;
                    default -> {}
                }
            }
        }

        /** IPv4 {@code a.b.c.d:port} or {@code [v6]:port} (an {@code ipv4@}/{@code ipv6@} prefix dropped). */
        private ServerAddress address(int line, String text) throws BackendsFileException {
            String a = text.startsWith("ipv4@") || text.startsWith("ipv6@") ? text.substring(5) : text;
            int colon = a.lastIndexOf(':');
            boolean ipv4 = a.matches("[0-9.]+:[0-9]+");
            boolean ipv6 = a.startsWith("[") && colon > 0 && a.charAt(colon - 1) == ']';
            if (!ipv4 && !ipv6) {
                throw error(
                        line,
                        "server address " + TextLines.quote(text)
                                + ": ringstore takes an IPv4 address or a bracketed IPv6 one with a port"
                                + " (a host name would make the ring depend on DNS; without a port HAProxy uses the"
                                + " client's)");
            }
            return BackendList.parseAddress(source, line, a);
        }

        /** HAProxy's ids: a server's own, else the counter's (see the class comment). */
        private void assignIds(List<Server> servers) throws BackendsFileException {
            Map<Long, Server> used = new HashMap<>();
            for (Server s : servers) {
                if (s.id > 0) {
                    Server other = used.putIfAbsent(s.id, s);
                    if (other != null) {
                        throw error(
                                s.line,
                                "id " + s.id + " of server " + TextLines.quote(s.name) + " is server "
                                        + TextLines.quote(other.name) + "'s already (line " + other.line
                                        + "): HAProxy refuses it");
                    }
                }
            }
            Set<Long> taken = new HashSet<>(used.keySet());
            long next = 1;
            for (Server s : servers) {
                if (s.id == 0) {
                    while (taken.contains(next)) {
                        next++;
                    }
                    s.id = next;
                    taken.add(next);
                }
                next++;
            }
            Map<Long, Server> nodes = new HashMap<>();
            for (Server s : servers) {
                if (s.backup || s.disabled || s.weight == 0) {
                    continue; // not in the active tree
                }
                Server other = nodes.putIfAbsent(s.id % SHARED_NODES_PERIOD, s);
                if (other != null) {
                    throw error(
                            s.line,
                            "ids " + other.id + " (server " + TextLines.quote(other.name) + ", line " + other.line
                                    + ") and " + s.id + " (server " + TextLines.quote(s.name) + ") are a multiple of "
                                    + SHARED_NODES_PERIOD + " apart, so the two servers share their nodes"
                                    + " (id * 4096 wraps at 2^32), which HAProxy gives to the first on one side and"
                                    + " to the second on the other: a ring file keeps one server a node; change one id");
                }
            }
        }
    }

    /** A {@code server} line as read. */
    private static final class Server {
        final int line;
        final String name;
        final ServerAddress address;
        long id;
        int weight = 1;
        boolean disabled;
        boolean backup;

        Server(int line, String name, ServerAddress address) {
            this.line = line;
            this.name = name;
            this.address = address;
        }
    }

    /** {@return the backend's active servers as backends, in file order, each named with its HAProxy id} */
    public BackendList backends() {
        return backends;
    }

    /** {@return the backend's (or listen section's) name} */
    public String backend() {
        return backend;
    }

    /** {@return the backend's hash: {@code sdbm}, {@code djb2-avalanche}, ... ({@link KeyHash#HAPROXY_HASHES})} */
    public String hash() {
        return hash;
    }

    /** {@return the backend's {@code balance} arguments, such as {@code uri} or {@code hdr(X-Key)}: what it hashes} */
    public String balance() {
        return balance;
    }

    /** {@return what the backend does that its ring file will not do by itself (backups left out)} */
    public List<String> notes() {
        return notes;
    }

    /** {@return the ring version that reproduces the backend's tree: {@code haproxy:HASH}} */
    public RingVersion version() {
        return RingVersion.parse("haproxy:" + hash);
    }
}
