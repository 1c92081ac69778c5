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
        Parse parse = new Parse(source);
        String[] lines = text.split("\r?\n", -1);
        for (int i = 0; i < lines.length; i++) {
            int lineNo = i + 1;
            if (lines[i].length() > MAX_LINE_CHARS) {
                throw new BackendsFileException(source, lineNo, "line of " + lines[i].length() + " characters, longer than a backends-file line may be ("
                        + MAX_LINE_CHARS + ")");
            }
            parse.line(lineNo, lines[i]);
        }
        if (parse.upstreamLine > 0) {
            throw new BackendsFileException(source, parse.upstreamLine, "the upstream block opened here is never closed with '}'");
        }
        if (parse.backends.isEmpty()) {
            throw new BackendsFileException(source, 0, "no 'server' lines: a ring needs at least one backend");
        }
        return new BackendList(source, parse.backends, parse.features);
    }

    /** The comment that gives the features of the line's server: {@code # ringstore: features=a,b}. */
    static final String ANNOTATION = "ringstore:";
    private static final String TERMINATORS = ";{}";
    private static final String BLANKS = " \t\r";
    /** The smallest {@code zone} size nginx takes: 8 pages of 4 KiB (more where pages are larger). */
    static final long MIN_ZONE_BYTES = 8 * 4096;

    /** A line as nginx's tokenizer splits it: words and the terminators {@code ; { }}, then its comment (null if none). */
    private record Line(List<String> items, String comment) {
        /**
         * Splits at nginx's blanks (space, tab, CR); {@code ;}, <code>{</code> and <code>}</code> end a
         * word and are items of their own; {@code #} where a word would start begins the comment, and
         * inside a word is part of it, as in nginx ({@code weight=4#x} is one parameter, a bad one).
         */
        static Line split(String source, int lineNo, String text) throws BackendsFileException {
            List<String> items = new ArrayList<>();
            int i = 0;
            while (i < text.length()) {
                char c = text.charAt(i);
                if (BLANKS.indexOf(c) >= 0) {
                    i++;
                } else if (c == '#') {
                    return new Line(items, text.substring(i + 1));
                } else if (TERMINATORS.indexOf(c) >= 0) {
                    items.add(String.valueOf(c));
                    i++;
                } else if (c == '"' || c == '\'') {
                    // nginx would unquote it; nothing in a hash upstream needs quotes, so none are read
                    throw new BackendsFileException(source, lineNo, "quoted word " + TextLines.quote(text.substring(i))
                            + ": ringstore reads words without quotes (write it without them)");
                } else {
                    int start = i;
                    while (i < text.length() && BLANKS.indexOf(text.charAt(i)) < 0 && TERMINATORS.indexOf(text.charAt(i)) < 0) {
                        i++;
                    }
                    items.add(text.substring(start, i));
                }
            }
            return new Line(items, null);
        }

        /** The {@code server} directives on the line. */
        int servers() {
            int servers = 0;
            boolean directiveStart = true;
            for (String item : items) {
                boolean terminator = item.length() == 1 && TERMINATORS.contains(item);
                if (directiveStart && item.equals("server")) {
                    servers++;
                }
                directiveStart = terminator;
            }
            return servers;
        }
    }

    /** One parse: the backends so far and where the upstream block stands. */
    private static final class Parse {
        private final String source;
        private final List<Backend> backends = new ArrayList<>();
        private final List<String> features = new ArrayList<>();
        private final Map<String, Backend> endpoints = new HashMap<>();
        private final Set<String> onceOnly = new HashSet<>(); // the keepalive directives given so far
        private int upstreamLine;   // line of 'upstream NAME {' while the block is open
        private boolean upstreamClosed;

        Parse(String source) {
            this.source = source;
        }

        private BackendsFileException error(int lineNo, String reason) {
            return new BackendsFileException(source, lineNo, reason);
        }

        /**
         * The directives of one line, each ended by {@code ;}: the last one's {@code ;} may be left
         * out, but a directive does not continue on the next line (nginx would join the lines; here
         * the second one is refused, so nothing is read differently).
         */
        void line(int lineNo, String text) throws BackendsFileException {
            Line line = Line.split(source, lineNo, text);
            List<String> annotated = annotation(lineNo, line);
            List<String> words = new ArrayList<>();
            for (String item : line.items()) {
                if (upstreamClosed) {
                    throw error(lineNo, "text after the closing '}' of the upstream block");
                }
                switch (item) {
                    case ";" -> {
                        if (words.isEmpty()) {
                            throw error(lineNo, "unexpected ';' (no directive before it)");
                        }
                        directive(lineNo, words, annotated);
                        words.clear();
                    }
                    case "{" -> {
                        upstream(lineNo, words, true);
                        words.clear();
                    }
                    case "}" -> {
                        if (!words.isEmpty()) {
                            throw error(lineNo, "unexpected '}': the directive " + TextLines.quote(words.getFirst()) + " before it needs its ';'");
                        }
                        if (upstreamLine == 0) {
                            throw error(lineNo, "'}' without an open 'upstream NAME {'");
                        }
                        upstreamLine = 0;
                        upstreamClosed = true;
                    }
                    default -> words.add(item);
                }
            }
            if (!words.isEmpty()) {
                directive(lineNo, words, annotated);
            }
        }

        /**
         * The features of the line's {@code # ringstore: features=a,b} comment, null without one. The
         * comment belongs to the one server directive on its line: on a line without a server, or
         * with several, it is refused rather than guessed at.
         */
        private List<String> annotation(int lineNo, Line line) throws BackendsFileException {
            String comment = line.comment() == null ? "" : line.comment().strip();
            if (!comment.startsWith(ANNOTATION)) {
                return null;
            }
            int servers = line.servers();
            if (servers != 1) {
                throw error(lineNo, "a '# " + ANNOTATION + "' comment gives the features of the server on its line, and this line has "
                        + (servers == 0 ? "none" : servers + " servers: give each its own line"));
            }
            String[] words = comment.substring(ANNOTATION.length()).strip().split("[ \t\r]+");
            if (words.length != 1 || !words[0].startsWith("features=")) {
                throw error(lineNo, "a '# " + ANNOTATION + "' comment holds 'features=a,b' and nothing else, not "
                        + TextLines.quote(comment.substring(ANNOTATION.length()).strip()));
            }
            return features(lineNo, words[0].substring("features=".length()));
        }

        private List<String> features(int lineNo, String list) throws BackendsFileException {
            if (list.isEmpty()) {
                throw error(lineNo, "'features=' needs at least one name");
            }
            return List.of(list.split(",", -1));
        }

        /** {@code upstream NAME}, followed by <code>{</code> when {@code brace}. */
        private void upstream(int lineNo, List<String> words, boolean brace) throws BackendsFileException {
            if (words.isEmpty() || !words.getFirst().equals("upstream")) {
                throw error(lineNo, "unexpected '{': only 'upstream NAME {' opens a block");
            }
            if (upstreamLine > 0 || !backends.isEmpty()) {
                throw error(lineNo, "'upstream' must come first and only once");
            }
            if (!brace || words.size() != 2) {
                throw error(lineNo, "expected 'upstream NAME {'");
            }
            upstreamLine = lineNo;
        }

        private void directive(int lineNo, List<String> words, List<String> annotated) throws BackendsFileException {
            String name = words.getFirst();
            switch (name) {
                case "upstream" -> upstream(lineNo, words, false);
                case "server" -> {
                    if (backends.size() == MAX_BACKENDS) {
                        throw error(lineNo, "more than " + MAX_BACKENDS + " backends (a point stores its backend in 16 bits)");
                    }
                    server(lineNo, words, annotated);
                }
                case "hash" -> {
                    if (words.size() != 3 || !words.get(2).equals("consistent")) {
                        throw error(lineNo, "only 'hash KEY consistent' is understood (ringstore builds consistent rings)");
                    }
                }
                // Ignored: they say how nginx keeps state and connections, not which server a key maps to.
                // Their values are checked as nginx checks them, so that a file ringstore takes nginx takes too.
                case "zone" -> {
                    arguments(lineNo, words, 1, 2);
                    if (words.size() == 3) {
                        long size = nginxSize(words.get(2));
                        if (size < 0) {
                            throw error(lineNo, "invalid zone size " + TextLines.quote(words.get(2)) + " (nginx's sizes: N, Nk, Nm)");
                        }
                        if (size < MIN_ZONE_BYTES) {
                            throw error(lineNo, "zone " + TextLines.quote(words.get(1)) + " is too small (nginx needs at least 8 pages, "
                                    + MIN_ZONE_BYTES / 1024 + "k with 4 KiB pages)");
                        }
                    }
                }
                case "keepalive", "keepalive_requests" -> {
                    onlyOnce(lineNo, words);
                    long n = nginxNumber(words.get(1));
                    if (n < 0 || (n == 0 && name.equals("keepalive"))) {
                        throw error(lineNo, "invalid value " + TextLines.quote(words.get(1)) + " in " + TextLines.quote(name)
                                + " directive (a whole number" + (name.equals("keepalive") ? ", at least 1)" : ")"));
                    }
                }
                case "keepalive_time", "keepalive_timeout" -> {
                    onlyOnce(lineNo, words);
                    if (nginxTime(words.get(1), false) < 0) {
                        throw error(lineNo, "invalid value " + TextLines.quote(words.get(1)) + " in " + TextLines.quote(name)
                                + " directive (nginx's time syntax in milliseconds: 60, 60s, 1m30s, 500ms; units w d h m s ms)");
                    }
                }
                case "ip_hash", "least_conn", "random" -> throw error(lineNo, "load balancing method " + TextLines.quote(name)
                        + ": nginx would balance with it instead of 'hash KEY consistent' (warning \"load balancing method redefined\"),"
                        + " and ringstore builds only consistent-hash rings");
                default -> throw error(lineNo, "unknown directive " + TextLines.quote(name) + (name.contains("=") || name.equals("down") || name.equals("backup")
                        ? " (a server's parameters on the next line? ringstore reads each directive on one line)"
                        : " (expected server, hash, zone, keepalive, keepalive_requests, keepalive_time or keepalive_timeout)"));
            }
        }

        private void arguments(int lineNo, List<String> words, int min, int max) throws BackendsFileException {
            int n = words.size() - 1;
            if (n < min || n > max) {
                throw error(lineNo, "invalid number of arguments in " + TextLines.quote(words.getFirst()) + " directive ("
                        + (min == max ? min : min + " or " + max) + " expected, " + n + " given)");
            }
        }

        private void onlyOnce(int lineNo, List<String> words) throws BackendsFileException {
            arguments(lineNo, words, 1, 1);
            if (!onceOnly.add(words.getFirst())) {
                throw error(lineNo, TextLines.quote(words.getFirst()) + " directive is duplicate (nginx takes it once per upstream)");
            }
        }

        private void server(int lineNo, List<String> words, List<String> annotated) throws BackendsFileException {
            if (words.size() < 2) {
                throw error(lineNo, "'server' needs an address");
            }
            ServerAddress address = parseAddress(source, lineNo, words.get(1));
            long weight = 1;
            List<String> own = annotated == null ? List.of() : annotated;
            boolean down = false;
            int maxFails = ServerParameters.DEFAULT_MAX_FAILS;
            long failTimeout = ServerParameters.DEFAULT_FAIL_TIMEOUT_SECONDS;
            int maxConns = 0;
            Set<String> seen = new HashSet<>();
            for (String word : words.subList(2, words.size())) {
                int eq = word.indexOf('=');
                String name = eq < 0 ? word : word.substring(0, eq + 1);
                String value = eq < 0 ? "" : word.substring(eq + 1);
                if (!seen.add(name)) {
                    throw error(lineNo, TextLines.quote(name) + " given twice");
                }
                switch (name) {
                    case "weight=" -> weight = parseWeight(source, lineNo, value);
                    case "features=" -> { // ringstore's own parameter, which nginx refuses: the comment is the portable form
                        if (annotated != null) {
                            throw error(lineNo, "features given twice: as 'features=' and in the '# " + ANNOTATION + "' comment");
                        }
                        own = features(lineNo, value);
                    }
                    case "down" -> down = true;
                    case "max_fails=" -> maxFails = (int) parseCount(source, lineNo, name, value);
                    case "max_conns=" -> maxConns = (int) parseCount(source, lineNo, name, value);
                    case "fail_timeout=" -> {
                        failTimeout = nginxSeconds(value);
                        if (failTimeout < 0) {
                            throw error(lineNo, "fail_timeout " + TextLines.quote(value)
                                    + " is not a time nginx reads (as 10, 10s, 1m30s: units y M w d h m s, largest first, at most "
                                    + MAX_SECONDS + " seconds)");
                        }
                    }
                    // nginx's hash directive leaves NGX_HTTP_UPSTREAM_BACKUP out of the upstream's flags, and
                    // ngx_http_upstream_server refuses the parameter with this text.
                    case "backup" -> throw error(lineNo,
                            "balancing method does not support parameter \"backup\" (nginx's answer for a hash upstream: backup servers are not in the ring)");
                    default -> throw error(lineNo, "unknown parameter " + TextLines.quote(name)
                            + " (expected weight=N, down, max_fails=N, fail_timeout=T, max_conns=N or features=a,b)");
                }
            }
            ServerParameters parameters = new ServerParameters(down, maxFails, failTimeout, maxConns);
            addBackend(source, lineNo, lineNo, address, weight, own, parameters, features, backends, endpoints);
        }
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
    private static final String TIME_UNITS = "yMwdhms"; // then "ms", step 8; step 0 is before any unit
    private static final long[] UNIT_SECONDS = {365L * 86400, 30L * 86400, 7L * 86400, 86400, 3600, 60, 1};
    private static final int MONTH_STEP = 2;
    private static final int MILLISECOND_STEP = 8;

    /**
     * A time in seconds as nginx reads {@code fail_timeout=}: {@link #nginxTime nginxTime(text, true)},
     * -1 also when it exceeds {@link #MAX_SECONDS}.
     */
    static long nginxSeconds(String text) {
        long seconds = nginxTime(text, true);
        return seconds > MAX_SECONDS ? -1 : seconds;
    }

    /**
     * A time as nginx's {@code ngx_parse_time(text, seconds)} reads it, in seconds or (when not
     * {@code seconds}) milliseconds: numbers each followed by a unit, units from largest to smallest,
     * each once, a last number without unit meaning seconds ({@code 10}, {@code 10s}, {@code 1m30s},
     * {@code 1h30}, {@code 10s5} = 15). In seconds {@code ms} is refused; in milliseconds {@code y} and
     * {@code M} are, as nginx does. -1 when it is not such a time or the total exceeds a signed 64-bit
     * value.
     */
    static long nginxTime(String text, boolean seconds) {
        long total = 0;
        long value = 0;
        boolean digits = false;
        int step = seconds ? 0 : MONTH_STEP;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c >= '0' && c <= '9') {
                if (value > (Long.MAX_VALUE - (c - '0')) / 10) {
                    return -1;
                }
                value = value * 10 + (c - '0');
                digits = true;
                continue;
            }
            long scale;
            if (c == 'm' && i + 1 < text.length() && text.charAt(i + 1) == 's') {
                if (seconds || step >= MILLISECOND_STEP) {
                    return -1;
                }
                i++;
                step = MILLISECOND_STEP;
                scale = 1;
            } else {
                int unit = TIME_UNITS.indexOf(c);
                if (unit < 0 || step >= unit + 1) {
                    return -1;
                }
                step = unit + 1;
                scale = UNIT_SECONDS[unit] * (seconds ? 1 : 1000);
            }
            if (value > Long.MAX_VALUE / scale || total > Long.MAX_VALUE - value * scale) {
                return -1;
            }
            total += value * scale;
            value = 0;
        }
        if (!digits) {
            return -1;
        }
        long last = seconds ? 1 : 1000; // a number without unit is seconds
        if (value > Long.MAX_VALUE / last || total > Long.MAX_VALUE - value * last) {
            return -1;
        }
        return total + value * last;
    }

    /** A number as nginx's {@code ngx_atoi} reads it: ASCII digits, leading zeros allowed, at most 2^63-1; -1 if not. */
    static long nginxNumber(String digits) {
        if (digits.isEmpty() || !digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
            return -1;
        }
        try {
            return Long.parseLong(digits);
        } catch (NumberFormatException tooLarge) {
            return -1;
        }
    }

    /** A size as nginx's {@code ngx_parse_size} reads it: a number, optionally followed by k/K or m/M; -1 if not. */
    static long nginxSize(String text) {
        char unit = text.isEmpty() ? ' ' : Character.toLowerCase(text.charAt(text.length() - 1));
        long scale = unit == 'k' ? 1 << 10 : unit == 'm' ? 1 << 20 : 1;
        long n = nginxNumber(scale == 1 ? text : text.substring(0, text.length() - 1));
        return n < 0 || n > Long.MAX_VALUE / scale ? -1 : n * scale;
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
