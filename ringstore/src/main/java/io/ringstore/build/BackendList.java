package io.ringstore.build;

import io.ringstore.Backend;
import io.ringstore.internal.BackendAccess;
import io.ringstore.internal.IoErrors;
import io.ringstore.internal.ServerAddress;
import io.ringstore.internal.ServerParameters;
import io.ringstore.internal.TextLines;
import io.ringstore.internal.format.RingFileDescriptor;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The backends of a backends file, in file order, and the feature names they declare (in order of
 * first appearance).
 *
 * <p>Syntax, one backend per line, as nginx's {@code server} directive:
 * <pre>
 *   # comment
 *   upstream NAME {                        (optional, around everything)
 *       hash $request_uri consistent;       (optional, ignored: it is what ringstore builds)
 *       server ADDRESS [weight=N] [features=a,b,c] [down] [max_fails=N] [fail_timeout=T] [max_conns=N];
 *   }
 * </pre>
 * ADDRESS is {@code IPv4[:port]} or {@code [IPv6][:port]}; the trailing {@code ;} is optional.
 * {@code down} is stored in the ring file; {@code max_fails}, {@code fail_timeout} (nginx's time
 * syntax, in seconds) and {@code max_conns} are kept in {@link Backend} only. {@code backup} is
 * refused as nginx refuses it in a {@code hash} upstream. {@link #builder()} makes a list in code.
 */
public final class BackendList {
    /** The most backends a file can hold: a point stores its backend index in 16 bits. */
    public static final int MAX_BACKENDS = RingFileDescriptor.MAX_BACKENDS;
    /** The most feature names: the builder writes 2^F rings. */
    public static final int MAX_FEATURES = RingFileDescriptor.MAX_FEATURES;
    /** The largest weight accepted (nginx itself has no smaller limit that we rely on). */
    public static final long MAX_WEIGHT = RingFileDescriptor.MAX_WEIGHT;

    /**
     * The largest backends file read: 64 MiB, hundreds of times a file of 65,535 backends; a bound
     * so that a wrong path ({@code /dev/zero}, a log file) is refused instead of read for ever.
     */
    public static final int MAX_FILE_BYTES = 64 << 20;
    /** The longest line: 64 KiB, far above any real {@code server} line, below what an address may hold. */
    public static final int MAX_LINE_CHARS = 64 << 10;
    private static final char BYTE_ORDER_MARK = '\uFEFF';

    private static final Pattern FEATURE_NAME = Pattern.compile(RingFileDescriptor.FEATURE_NAME_REGEX);

    private final String source;
    private final List<Backend> backends;
    private final List<String> features;

    private BackendList(String source, List<Backend> backends, List<String> features) {
        this.source = source;
        this.backends = List.copyOf(backends);
        this.features = List.copyOf(features);
    }

    /**
     * Reads and parses a backends file (UTF-8, a leading byte order mark skipped). Only a regular
     * file of at most {@value #MAX_FILE_BYTES} bytes is read: a FIFO or a device would block or
     * never end.
     *
     * @param file the backends file
     * @return the servers, in file order
     * @throws BackendsFileException on a syntax or value error, naming the line
     */
    public static BackendList parse(Path file) throws BackendsFileException {
        String name = file.toString();
        byte[] bytes;
        try {
            BasicFileAttributes attributes = Files.readAttributes(file, BasicFileAttributes.class);
            if (!attributes.isRegularFile()) {
                throw new BackendsFileException(name, 0, "cannot read: " + (attributes.isDirectory() ? "is a directory" : "not a regular file")
                        + " (a backends file must be a regular file)");
            }
            if (attributes.size() > MAX_FILE_BYTES) {
                throw tooLarge(name, attributes.size() + " bytes");
            }
            try (InputStream in = Files.newInputStream(file)) {
                bytes = in.readNBytes(MAX_FILE_BYTES + 1); // the file may have grown since
            }
        } catch (IOException e) {
            throw new BackendsFileException(name, 0, "cannot read: " + IoErrors.describe(e));
        }
        if (bytes.length > MAX_FILE_BYTES) {
            throw tooLarge(name, "more than " + MAX_FILE_BYTES + " bytes");
        }
        String text;
        try {
            text = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(java.nio.ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            throw new BackendsFileException(name, 0, "not UTF-8 text");
        }
        return parse(name, text);
    }

    private static BackendsFileException tooLarge(String source, String size) {
        return new BackendsFileException(source, 0, "too large for a backends file: " + size + " (at most " + MAX_FILE_BYTES
                + " bytes, " + (MAX_FILE_BYTES >> 20) + " MiB)");
    }

    /**
     * Parses backends-file text; {@code source} names it in errors. A leading byte order mark is
     * skipped; the text is at most {@value #MAX_FILE_BYTES} characters, each line at most
     * {@value #MAX_LINE_CHARS}.
     *
     * @param source what to call the input in error messages (a file name)
     * @param text the input text
     * @return the servers, in file order
     * @throws BackendsFileException on a syntax or value error, naming the line
     */
    public static BackendList parse(String source, String text) throws BackendsFileException {
        if (text.length() > MAX_FILE_BYTES) {
            throw tooLarge(source, text.length() + " characters");
        }
        if (!text.isEmpty() && text.charAt(0) == BYTE_ORDER_MARK) {
            text = text.substring(1);
        }
        List<Backend> backends = new ArrayList<>();
        List<String> features = new ArrayList<>();
        Map<String, Backend> endpoints = new HashMap<>();
        int upstreamLine = 0;   // line of 'upstream NAME {' while the block is open
        boolean upstreamClosed = false;
        String[] lines = text.split("\r?\n", -1);
        for (int i = 0; i < lines.length; i++) {
            int lineNo = i + 1;
            if (lines[i].length() > MAX_LINE_CHARS) {
                throw new BackendsFileException(source, lineNo, "line of " + lines[i].length() + " characters, longer than a backends-file line may be ("
                        + MAX_LINE_CHARS + ")");
            }
            String line = TextLines.content(lines[i]);
            if (line.isEmpty()) {
                continue;
            }
            if (upstreamClosed) {
                throw new BackendsFileException(source, lineNo, "text after the closing '}' of the upstream block");
            }
            if (line.endsWith(";")) {
                line = line.substring(0, line.length() - 1).strip();
                if (line.endsWith(";")) {
                    throw new BackendsFileException(source, lineNo, "more than one ';'");
                }
            }
            if (line.indexOf(';') >= 0) {
                throw new BackendsFileException(source, lineNo, "one directive per line: unexpected ';' before the end of the line");
            }
            String[] tokens = line.split("\\s+");
            switch (tokens[0]) {
                case "upstream" -> {
                    if (upstreamLine > 0 || !backends.isEmpty()) {
                        throw new BackendsFileException(source, lineNo, "'upstream' must come first and only once");
                    }
                    boolean ok = (tokens.length == 3 && tokens[2].equals("{"))
                            || (tokens.length == 2 && tokens[1].endsWith("{") && tokens[1].length() > 1);
                    if (!ok) {
                        throw new BackendsFileException(source, lineNo, "expected 'upstream NAME {'");
                    }
                    upstreamLine = lineNo;
                }
                case "}" -> {
                    if (upstreamLine == 0) {
                        throw new BackendsFileException(source, lineNo, "'}' without an open 'upstream NAME {'");
                    }
                    upstreamLine = 0;
                    upstreamClosed = true;
                }
                case "hash" -> {
                    if (tokens.length != 3 || !tokens[2].equals("consistent")) {
                        throw new BackendsFileException(source, lineNo, "only 'hash KEY consistent' is understood (ringstore builds consistent rings)");
                    }
                }
                case "server" -> {
                    if (backends.size() == MAX_BACKENDS) {
                        throw new BackendsFileException(source, lineNo, "more than " + MAX_BACKENDS + " backends (a point stores its backend in 16 bits)");
                    }
                    parseServer(source, lineNo, tokens, features, backends, endpoints);
                }
                default -> throw new BackendsFileException(source, lineNo, "unknown directive " + TextLines.quote(tokens[0]) + " (expected 'server ADDRESS [weight=N] [features=a,b]')");
            }
        }
        if (upstreamLine > 0) {
            throw new BackendsFileException(source, upstreamLine, "the upstream block opened here is never closed with '}'");
        }
        if (backends.isEmpty()) {
            throw new BackendsFileException(source, 0, "no 'server' lines: a ring needs at least one backend");
        }
        return new BackendList(source, backends, features);
    }

    private static Backend parseServer(String source, int lineNo, String[] tokens, List<String> features,
                                       List<Backend> previous, Map<String, Backend> endpoints) throws BackendsFileException {
        if (tokens.length < 2) {
            throw new BackendsFileException(source, lineNo, "'server' needs an address");
        }
        ServerAddress address = parseAddress(source, lineNo, tokens[1]);
        long weight = 1;
        List<String> own = new ArrayList<>();
        boolean down = false;
        int maxFails = ServerParameters.DEFAULT_MAX_FAILS;
        long failTimeout = ServerParameters.DEFAULT_FAIL_TIMEOUT_SECONDS;
        int maxConns = 0;
        Set<String> seen = new HashSet<>();
        for (int t = 2; t < tokens.length; t++) {
            String token = tokens[t];
            int eq = token.indexOf('=');
            String name = eq < 0 ? token : token.substring(0, eq + 1);
            String value = eq < 0 ? "" : token.substring(eq + 1);
            if (!seen.add(name)) {
                throw new BackendsFileException(source, lineNo, TextLines.quote(name) + " given twice");
            }
            switch (name) {
                case "weight=" -> weight = parseWeight(source, lineNo, value);
                case "features=" -> {
                    if (value.isEmpty()) {
                        throw new BackendsFileException(source, lineNo, "'features=' needs at least one name");
                    }
                    own = List.of(value.split(",", -1));
                }
                case "down" -> down = true;
                case "max_fails=" -> maxFails = (int) parseCount(source, lineNo, name, value);
                case "max_conns=" -> maxConns = (int) parseCount(source, lineNo, name, value);
                case "fail_timeout=" -> {
                    failTimeout = nginxSeconds(value);
                    if (failTimeout < 0) {
                        throw new BackendsFileException(source, lineNo, "fail_timeout " + TextLines.quote(value)
                                + " is not a time nginx reads (as 10, 10s, 1m30s: units y M w d h m s, largest first, at most "
                                + MAX_SECONDS + " seconds)");
                    }
                }
                // nginx's hash directive leaves NGX_HTTP_UPSTREAM_BACKUP out of the upstream's flags, and
                // ngx_http_upstream_server refuses the parameter with this text.
                case "backup" -> throw new BackendsFileException(source, lineNo,
                        "balancing method does not support parameter \"backup\" (nginx's answer for a hash upstream: backup servers are not in the ring)");
                default -> throw new BackendsFileException(source, lineNo, "unknown parameter " + TextLines.quote(name)
                        + " (expected weight=N, features=a,b, down, max_fails=N, fail_timeout=T or max_conns=N)");
            }
        }
        ServerParameters parameters = new ServerParameters(down, maxFails, failTimeout, maxConns);
        return addBackend(source, lineNo, lineNo, address, weight, own, parameters, features, previous, endpoints);
    }

    private static ServerAddress parseAddress(String source, int where, String text) throws BackendsFileException {
        try {
            return ServerAddress.parse(text);
        } catch (IllegalArgumentException e) {
            throw new BackendsFileException(source, where, e.getMessage());
        }
    }

    /**
     * The checks every server passes, from a file or from {@link Builder}: its feature names, the
     * feature limit, no second backend at the same address and port; then appends it to
     * {@code previous}, registering new feature names in {@code features}. {@code where} is the line
     * (or the builder's entry number) errors name, {@code line} the backend's {@link Backend#line()}.
     */
    private static Backend addBackend(String source, int where, int line, ServerAddress address, long weight, Collection<String> own,
                                      ServerParameters parameters, List<String> features, List<Backend> previous,
                                      Map<String, Backend> endpoints) throws BackendsFileException {
        Set<String> ownSet = new LinkedHashSet<>();
        for (String f : own) {
            if (!FEATURE_NAME.matcher(f).matches()) {
                throw new BackendsFileException(source, where, "bad feature name " + TextLines.quote(f) + " (" + RingFileDescriptor.FEATURE_NAME_RULE + ")");
            }
            if (!ownSet.add(f)) {
                throw new BackendsFileException(source, where, "feature " + TextLines.quote(f) + " listed twice");
            }
            if (!features.contains(f)) {
                if (features.size() == MAX_FEATURES) {
                    throw new BackendsFileException(source, where, "feature " + TextLines.quote(f) + " would be feature number "
                            + (MAX_FEATURES + 1) + "; at most " + MAX_FEATURES + " are supported (2^F rings are built)");
                }
                features.add(f);
            }
        }
        Backend same = endpoints.get(address.socketAddress());
        if (same != null) {
            throw new BackendsFileException(source, where, "duplicate backend " + TextLines.quote(address.text())
                    + ": same address and port as " + (same.line() > 0 ? "line " + same.line() : "server " + (same.index() + 1))
                    + " (" + TextLines.quote(same.address()) + ")");
        }
        int mask = 0;
        for (String f : ownSet) {
            mask |= 1 << features.indexOf(f);
        }
        Backend backend = BackendAccess.create(previous.size(), address, weight, ownSet, mask, parameters, line);
        endpoints.put(address.socketAddress(), backend);
        previous.add(backend);
        return backend;
    }

    /** A count as nginx's {@code ngx_atoi} reads {@code max_fails=} and {@code max_conns=}: 0 allowed. */
    private static long parseCount(String source, int lineNo, String name, String digits) throws BackendsFileException {
        long n = TextLines.decimal(digits, Integer.MAX_VALUE);
        if (n < 0 || n > Integer.MAX_VALUE) {
            throw new BackendsFileException(source, lineNo, name + " " + TextLines.quote(digits) + " is not a whole number from 0 to " + Integer.MAX_VALUE);
        }
        return n;
    }

    /** The longest {@code fail_timeout} accepted, in seconds (about 68 years). */
    static final long MAX_SECONDS = Integer.MAX_VALUE;
    private static final String TIME_UNITS = "yMwdhms";
    private static final long[] UNIT_SECONDS = {365L * 86400, 30L * 86400, 7L * 86400, 86400, 3600, 60, 1};

    /**
     * A time in seconds as nginx's {@code ngx_parse_time(value, 1)} reads it: numbers each followed by
     * a unit, units from largest to smallest, each once, a last number without unit meaning seconds
     * ({@code 10}, {@code 10s}, {@code 1m30s}, {@code 1h30}); {@code ms} is refused, as nginx does for
     * a time in seconds. -1 when it is not such a time or exceeds {@link #MAX_SECONDS}.
     */
    static long nginxSeconds(String text) {
        long total = 0;
        int lastUnit = -1;
        int i = 0;
        if (text.isEmpty()) {
            return -1;
        }
        while (i < text.length()) {
            int digitsStart = i;
            while (i < text.length() && text.charAt(i) >= '0' && text.charAt(i) <= '9') {
                i++;
            }
            long value = TextLines.decimal(text.substring(digitsStart, i), MAX_SECONDS);
            if (value < 0) {
                return -1;
            }
            long scale = 1; // a number without unit, which must be the last
            if (i < text.length()) {
                int unit = TIME_UNITS.indexOf(text.charAt(i));
                boolean millis = text.charAt(i) == 'm' && i + 1 < text.length() && text.charAt(i + 1) == 's';
                if (unit < 0 || millis || unit <= lastUnit) {
                    return -1;
                }
                lastUnit = unit;
                scale = UNIT_SECONDS[unit];
                i++;
            } else if (lastUnit == TIME_UNITS.length() - 1) {
                return -1; // "10s5": seconds given twice
            }
            total += Math.min(value, MAX_SECONDS + 1) * scale;
            if (total > MAX_SECONDS) {
                return -1;
            }
        }
        return total;
    }

    /** Decimal, leading zeros allowed (as nginx's {@code ngx_atoi}). */
    private static long parseWeight(String source, int lineNo, String digits) throws BackendsFileException {
        long w = TextLines.decimal(digits, MAX_WEIGHT);
        if (w < 0) {
            throw new BackendsFileException(source, lineNo, "weight " + TextLines.quote(digits) + " is not a positive whole number");
        }
        if (w > MAX_WEIGHT) {
            throw new BackendsFileException(source, lineNo, "weight " + TextLines.quote(digits) + " is too large (at most " + MAX_WEIGHT + ")");
        }
        if (w == 0) {
            throw new BackendsFileException(source, lineNo, "weight must be at least 1");
        }
        return w;
    }

    /**
     * A builder of a list in code, whose errors name the source {@value Builder#SOURCE}.
     *
     * @return this builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * A backend list built in code (from service discovery, say) instead of nginx text: the same
     * addresses, limits and checks as {@link #parse(String, String)}, each {@code add} refusing a bad
     * entry at once with an {@link IllegalArgumentException} naming it ("server 2 '10.0.0.2:80': …").
     * A list built here and the same servers written as a backends file build byte-identical ring
     * files. Not thread-safe.
     *
     * <pre>{@code
     * BackendList fleet = BackendList.builder()
     *         .add("10.0.0.1:8080", 5, List.of("eu"))
     *         .down("10.0.0.2:80")
     *         .build();
     * }</pre>
     * Feature names are numbered in order of first appearance, as in a file: give them in a
     * {@code List} (or another ordered collection) for a file identical to the text's; the order of
     * {@code Set.of} is unspecified, and so would the feature table's be.
     */
    public static final class Builder {
        /** The source name in the built list and its errors. */
        public static final String SOURCE = "code";

        private final List<Backend> backends = new ArrayList<>();
        private final List<String> features = new ArrayList<>();
        private final Map<String, Backend> endpoints = new HashMap<>();

        private Builder() {
        }

        /**
         * {@code server ADDRESS}: weight 1, no features.
         *
         * @param address the server's address as a backends file writes it ({@code 10.0.0.1:8080}, {@code [::1]:80}, {@code host:port})
         * @return this builder
         */
        public Builder add(String address) {
            return add(address, 1, List.of());
        }

        /**
         * {@code server ADDRESS weight=W}.
         *
         * @param address the server's address as a backends file writes it ({@code 10.0.0.1:8080}, {@code [::1]:80}, {@code host:port})
         * @param weight the server's weight (nginx's {@code weight=}, at least 1)
         * @return this builder
         */
        public Builder add(String address, long weight) {
            return add(address, weight, List.of());
        }

        /**
         * {@code server ADDRESS weight=W features=a,b}.
         *
         * @param address the server's address as a backends file writes it ({@code 10.0.0.1:8080}, {@code [::1]:80}, {@code host:port})
         * @param weight the server's weight (nginx's {@code weight=}, at least 1)
         * @param features the server's features (nginx's {@code features=}; numbered in order of first appearance)
         * @return this builder
         */
        public Builder add(String address, long weight, Collection<String> features) {
            return server(address, weight, features, ServerParameters.DEFAULTS);
        }

        /**
         * {@code server ADDRESS down}: weight 1, no features.
         *
         * @param address the server's address as a backends file writes it ({@code 10.0.0.1:8080}, {@code [::1]:80}, {@code host:port})
         * @return this builder
         */
        public Builder down(String address) {
            return down(address, 1, List.of());
        }

        /**
         * {@code server ADDRESS weight=W features=a,b down}.
         *
         * @param address the server's address as a backends file writes it ({@code 10.0.0.1:8080}, {@code [::1]:80}, {@code host:port})
         * @param weight the server's weight (nginx's {@code weight=}, at least 1)
         * @param features the server's features (nginx's {@code features=}; numbered in order of first appearance)
         * @return this builder
         */
        public Builder down(String address, long weight, Collection<String> features) {
            return server(address, weight, features, ServerParameters.DOWN);
        }

        private Builder server(String addressText, long weight, Collection<String> own, ServerParameters parameters) {
            int entry = backends.size() + 1;
            String what = "server " + entry + " " + TextLines.quote(String.valueOf(addressText));
            if (backends.size() == MAX_BACKENDS) {
                throw new IllegalArgumentException(what + ": more than " + MAX_BACKENDS + " backends (a point stores its backend in 16 bits)");
            }
            if (weight < 1 || weight > MAX_WEIGHT) {
                throw new IllegalArgumentException(what + ": weight " + weight + (weight < 1 ? " must be at least 1" : " is too large (at most " + MAX_WEIGHT + ")"));
            }
            try {
                ServerAddress address = parseAddress(SOURCE, entry, addressText);
                addBackend(SOURCE, entry, 0, address, weight, own, parameters, features, backends, endpoints);
            } catch (BackendsFileException e) {
                throw new IllegalArgumentException(what + ": " + e.reason(), e);
            }
            return this;
        }

        /** {@return the list; refused when no server was added (a ring needs at least one backend)} */
        public BackendList build() {
            if (backends.isEmpty()) {
                throw new IllegalStateException("no servers: a ring needs at least one backend");
            }
            return new BackendList(SOURCE, backends, features);
        }
    }

    /** Builds a list in code (for tests and programs that do not read a file). */
    static BackendList of(String source, List<Backend> backends, List<String> features) {
        return new BackendList(source, backends, features);
    }

    /** {@return the file name (or other source) given to the parser; used in error messages} */
    public String source() {
        return source;
    }

    /** {@return the servers, in file order (index order); unmodifiable} */
    public List<Backend> backends() {
        return backends;
    }

    /**
     * {@return the server at {@code index} in file order}
     *
     * @param index 0 to {@link #size()} - 1
     */
    public Backend backend(int index) {
        return backends.get(index);
    }

    /** {@return the number of servers} */
    public int size() {
        return backends.size();
    }

    /** {@return feature names in order of first appearance; feature i is bit i of a feature mask} */
    public List<String> features() {
        return features;
    }

    /** The feature set of a mask, in feature order. */
    Set<String> featureSet(int mask) {
        Set<String> set = new LinkedHashSet<>();
        for (int f = 0; f < features.size(); f++) {
            if ((mask & (1 << f)) != 0) {
                set.add(features.get(f));
            }
        }
        return Collections.unmodifiableSet(set);
    }
}
