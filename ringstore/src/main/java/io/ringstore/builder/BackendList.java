package io.ringstore.builder;

import io.ringstore.Backend;
import io.ringstore.internal.BackendAccess;
import io.ringstore.internal.BackendRecord;
import io.ringstore.internal.IoErrors;
import io.ringstore.internal.ServerAddress;
import io.ringstore.internal.ServerParameters;
import io.ringstore.internal.TextLines;
import io.ringstore.internal.format.RingFileDescriptor;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The backends of a backends file, in file order, and the feature names they declare (in order of
 * first appearance).
 *
 * <p>Syntax: nginx's, so that one file is both an nginx {@code upstream} block (or the server lines
 * {@code include}d in one) and ringstore's input:
 * <pre>
 *   # comment
 *   upstream NAME {                         (optional, around everything)
 *       hash $request_uri consistent;       (optional, ignored: it is what ringstore builds)
 *       zone NAME [SIZE]; keepalive N;      (ignored, values checked as nginx does; also keepalive_requests,
 *                                            keepalive_time, keepalive_timeout)
 *       server ADDRESS [weight=N] [down] [max_fails=N] [fail_timeout=T] [max_conns=N];  # ringstore: features=a,b
 *   }
 * </pre>
 * Directives end with {@code ;}, several to a line; the last one's {@code ;} may be left out, and a
 * directive does not continue on the next line. ADDRESS is {@code IPv4[:port]} or
 * {@code [IPv6][:port]}. A comment starting {@code ringstore:} gives the features of the one server
 * directive on its line (refused on a line with none or several); the older {@code features=a,b}
 * parameter is read too, but nginx refuses it. {@code down} is stored in the ring file;
 * {@code max_fails}, {@code fail_timeout} (nginx's time syntax, in seconds) and {@code max_conns} are
 * kept in {@link Backend} only. {@code backup}, {@code ip_hash}, {@code least_conn} and {@code random}
 * are refused: none is a ring of {@code hash … consistent}. {@link #builder()} makes a list in code.
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
        return parse(file.toString(), utf8(file.toString(), read(file)));
    }

    /**
     * The bytes of an input file (a backends file, a twemproxy config, a libketama servers file): only
     * a regular file of at most {@value #MAX_FILE_BYTES} bytes is read, so that a FIFO or a device
     * does not block or never end. Errors name the file with line 0.
     */
    static byte[] read(Path file) throws BackendsFileException {
        String name = file.toString();
        byte[] bytes;
        try {
            BasicFileAttributes attributes = Files.readAttributes(file, BasicFileAttributes.class);
            if (!attributes.isRegularFile()) {
                throw new BackendsFileException(
                        name,
                        0,
                        "cannot read: " + (attributes.isDirectory() ? "is a directory" : "not a regular file")
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
        return bytes;
    }

    /**
     * {@code bytes} decoded as UTF-8, refused when they are not, naming the line and the byte offset of
     * the first byte that is not (for example {@code f:3: not UTF-8 text: byte 0xff at byte 17}); a byte
     * order mark is kept.
     */
    static String utf8(String source, byte[] bytes) throws BackendsFileException {
        ByteBuffer in = ByteBuffer.wrap(bytes);
        CharBuffer out = CharBuffer.allocate(bytes.length);
        CoderResult r = StandardCharsets.UTF_8
                .newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT)
                .decode(in, out, true);
        if (r.isError()) {
            int at = in.position();
            int line = 1;
            for (int i = 0; i < at; i++) {
                line += bytes[i] == '\n' ? 1 : 0;
            }
            throw new BackendsFileException(
                    source, line, String.format("not UTF-8 text: byte 0x%02x at byte %d", bytes[at] & 0xff, at));
        }
        return out.flip().toString();
    }

    /** {@code text} without a leading byte order mark, refused when longer than {@value #MAX_FILE_BYTES} characters. */
    static String checkedText(String source, String text) throws BackendsFileException {
        if (text.length() > MAX_FILE_BYTES) {
            throw tooLarge(source, text.length() + " characters");
        }
        return !text.isEmpty() && text.charAt(0) == BYTE_ORDER_MARK ? text.substring(1) : text;
    }

    private static BackendsFileException tooLarge(String source, String size) {
        return new BackendsFileException(
                source,
                0,
                "too large for a backends file: " + size + " (at most " + MAX_FILE_BYTES + " bytes, "
                        + (MAX_FILE_BYTES >> 20) + " MiB)");
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
        return NginxBackendsParser.parse(source, checkedText(source, text));
    }

    /** The address of a server, from a file or from {@link Builder}; {@code where} is the line (or entry number) errors name. */
    static ServerAddress parseAddress(String source, int where, String text) throws BackendsFileException {
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
    /** The longest name a backend may have ({@code name=NAME}): the ring file stores it in the address field. */
    public static final int MAX_NAME_LENGTH = 255;

    /**
     * Checks a backend's name ({@code # ringstore: name=NAME}): 1 to {@value #MAX_NAME_LENGTH} bytes of
     * printable ASCII without blanks, {@code ,}, {@code ;}, {@code #} or quotes (twemproxy's server names,
     * Envoy's {@code hash_key}s and host names all fit).
     */
    static String checkName(String source, int line, String name) throws BackendsFileException {
        if (name.isEmpty()
                || name.length() > MAX_NAME_LENGTH
                || !name.chars().allMatch(c -> c > 0x20 && c < 0x7f && ",;#'\"\\".indexOf(c) < 0)) {
            throw new BackendsFileException(
                    source,
                    line,
                    "bad name " + TextLines.quote(name) + " (1 to " + MAX_NAME_LENGTH
                            + " printable ASCII characters without blanks, ',', ';', '#', quotes or '\\')");
        }
        return name;
    }

    static Backend addBackend(
            String source,
            int where,
            int line,
            ServerAddress address,
            long weight,
            Collection<String> own,
            ServerParameters parameters,
            List<String> features,
            List<Backend> previous,
            Map<Object, Backend> endpoints)
            throws BackendsFileException {
        Set<String> ownSet = new LinkedHashSet<>();
        for (String f : own) {
            if (!FEATURE_NAME.matcher(f).matches()) {
                throw new BackendsFileException(
                        source,
                        where,
                        "bad feature name " + TextLines.quote(f) + " (" + RingFileDescriptor.FEATURE_NAME_RULE + ")");
            }
            if (!ownSet.add(f)) {
                throw new BackendsFileException(source, where, "feature " + TextLines.quote(f) + " listed twice");
            }
            if (!features.contains(f)) {
                if (features.size() == MAX_FEATURES) {
                    throw new BackendsFileException(
                            source,
                            where,
                            "feature " + TextLines.quote(f) + " would be feature number " + (MAX_FEATURES + 1)
                                    + "; at most " + MAX_FEATURES + " are supported (2^F rings are built)");
                }
                features.add(f);
            }
        }
        Object endpoint =
                address.endpointKey(); // for IPv4 a number: no text made a backend (a fresh JVM builds it interpreted)
        Backend same = endpoints.get(endpoint);
        if (same != null) {
            throw new BackendsFileException(
                    source,
                    where,
                    "duplicate backend " + TextLines.quote(address.text())
                            + ": same address and port as "
                            + (same.line() > 0 ? "line " + same.line() : "server " + (same.index() + 1))
                            + " (" + TextLines.quote(same.address()) + ")");
        }
        int mask = 0;
        for (String f : ownSet) {
            mask |= 1 << features.indexOf(f);
        }
        Backend backend = BackendAccess.create(
                previous.size(), new BackendRecord(address, weight, mask, parameters), ownSet, line);
        endpoints.put(endpoint, backend);
        previous.add(backend);
        return backend;
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
        private final Map<Object, Backend> endpoints = new HashMap<>();

        private Builder() {}

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
                throw new IllegalArgumentException(
                        what + ": more than " + MAX_BACKENDS + " backends (a point stores its backend in 16 bits)");
            }
            if (weight < 1 || weight > MAX_WEIGHT) {
                throw new IllegalArgumentException(what + ": weight " + weight
                        + (weight < 1 ? " must be at least 1" : " is too large (at most " + MAX_WEIGHT + ")"));
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

    /** Makes a list of checked backends: the parser's result, and lists made in tests. */
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
