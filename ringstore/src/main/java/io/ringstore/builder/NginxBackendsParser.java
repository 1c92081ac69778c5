package io.ringstore.builder;

import io.ringstore.Backend;
import io.ringstore.internal.ServerAddress;
import io.ringstore.internal.ServerParameters;
import io.ringstore.internal.TextLines;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The reader of nginx's syntax for {@link BackendList#parse(String, String)}, one instance per parse:
 * it splits lines as nginx's tokenizer does, follows the {@code upstream} block, checks the directives
 * nginx would check, reads each {@code server} line's parameters and hands the server to
 * {@link BackendList#addBackend}, the checks every server passes. The syntax is described on
 * {@link BackendList}.
 */
final class NginxBackendsParser {
    /** The comment that gives the features of the line's server: {@code # ringstore: features=a,b}. */
    static final String ANNOTATION = "ringstore:";

    private static final String TERMINATORS = ";{}";
    private static final String BLANKS = " \t\r";
    /** The smallest {@code zone} size nginx takes: 8 pages of 4 KiB (more where pages are larger). */
    static final long MIN_ZONE_BYTES = 8 * 4096;

    /** The longest {@code fail_timeout} accepted, in seconds (about 68 years). */
    static final long MAX_SECONDS = Integer.MAX_VALUE;

    private static final String TIME_UNITS = "yMwdhms"; // then "ms", step 8; step 0 is before any unit
    private static final long[] UNIT_SECONDS = {365L * 86400, 30L * 86400, 7L * 86400, 86400, 3600, 60, 1};
    private static final int MONTH_STEP = 2;
    private static final int MILLISECOND_STEP = 8;

    private final String source;
    private final List<Backend> backends = new ArrayList<>();
    private final List<String> features = new ArrayList<>();
    private final Map<Object, Backend> endpoints = new HashMap<>();
    private final Set<String> onceOnly = new HashSet<>(); // the keepalive directives given so far
    private final Map<String, Integer> idLines = new HashMap<>(); // each 'id=N' given so far, and its line
    private int upstreamLine; // line of 'upstream NAME {' while the block is open
    private boolean upstreamClosed;

    private NginxBackendsParser(String source) {
        this.source = source;
    }

    /**
     * Parses backends-file text, the byte order mark already skipped and the text's size checked.
     *
     * @param source what to call the input in error messages (a file name)
     * @param text the input text
     * @return the servers, in file order
     * @throws BackendsFileException on a syntax or value error, naming the line
     */
    static BackendList parse(String source, String text) throws BackendsFileException {
        NginxBackendsParser parse = new NginxBackendsParser(source);
        List<String> lines = lines(text);
        for (int i = 0; i < lines.size(); i++) {
            int lineNo = i + 1;
            String line = lines.get(i);
            if (line.length() > BackendList.MAX_LINE_CHARS) {
                throw new BackendsFileException(
                        source,
                        lineNo,
                        "line of " + line.length() + " characters, longer than a backends-file line may be ("
                                + BackendList.MAX_LINE_CHARS + ")");
            }
            parse.line(lineNo, line);
        }
        if (parse.upstreamLine > 0) {
            throw new BackendsFileException(
                    source, parse.upstreamLine, "the upstream block opened here is never closed with '}'");
        }
        if (parse.backends.isEmpty()) {
            throw new BackendsFileException(source, 0, "no 'server' lines: a ring needs at least one backend");
        }
        return BackendList.of(source, parse.backends, parse.features);
    }

    /**
     * {@return the lines of {@code text}, each without its \n or \r\n, and the text after the last \n
     * as the last (empty when the text ends with one): what {@code text.split("\r?\n", -1)} gives,
     * without a regular expression, which a fresh JVM runs interpreted over the whole file}
     */
    static List<String> lines(String text) {
        List<String> lines = new ArrayList<>();
        int start = 0;
        for (int nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
            int end = nl > start && text.charAt(nl - 1) == '\r' ? nl - 1 : nl;
            lines.add(text.substring(start, end));
            start = nl + 1;
        }
        lines.add(text.substring(start));
        return lines;
    }

    private BackendsFileException error(int lineNo, String reason) {
        return new BackendsFileException(source, lineNo, reason);
    }

    /**
     * The directives of one line, each ended by {@code ;}: the last one's {@code ;} may be left
     * out, but a directive does not continue on the next line (nginx would join the lines; here
     * the second one is refused, so nothing is read differently).
     */
    private void line(int lineNo, String text) throws BackendsFileException {
        Line line = Line.split(source, lineNo, text);
        Annotation annotated = annotation(lineNo, line);
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
                        throw error(
                                lineNo,
                                "unexpected '}': the directive " + TextLines.quote(words.getFirst())
                                        + " before it needs its ';'");
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

    /** What a line's {@code # ringstore: ...} comment gives its server: features (null: none given) and a name (null: none). */
    private record Annotation(List<String> features, String name) {}

    /**
     * The line's {@code # ringstore: features=a,b name=NAME} comment (either word or both, in any
     * order), null without one. The comment belongs to the one server directive on its line: on a line
     * without a server, or with several, it is refused rather than guessed at.
     */
    private Annotation annotation(int lineNo, Line line) throws BackendsFileException {
        String comment = line.comment() == null ? "" : line.comment().strip();
        if (!comment.startsWith(ANNOTATION)) {
            return null;
        }
        int servers = line.servers();
        if (servers != 1) {
            throw error(
                    lineNo,
                    "a '# " + ANNOTATION + "' comment gives the features of the server on its line, and this line has "
                            + (servers == 0 ? "none" : servers + " servers: give each its own line"));
        }
        String body = comment.substring(ANNOTATION.length()).strip();
        List<String> features = null;
        String name = null;
        for (String word : body.isEmpty() ? new String[0] : body.split("[ \t\r]+")) {
            if (word.startsWith("features=") && features == null) {
                features = features(lineNo, word.substring("features=".length()));
            } else if (word.startsWith("name=") && name == null) {
                name = BackendList.checkName(source, lineNo, word.substring("name=".length()));
            } else if (word.startsWith("id=") && name == null) {
                name = haproxyId(lineNo, word.substring("id=".length()));
            } else {
                throw error(
                        lineNo,
                        "a '# " + ANNOTATION
                                + "' comment holds 'features=a,b' and 'name=NAME', each at most once ('id=N', a HAProxy id, in place of the name), not "
                                + TextLines.quote(body));
            }
        }
        if (features == null && name == null) {
            throw error(
                    lineNo,
                    "a '# " + ANNOTATION
                            + "' comment holds 'features=a,b' and 'name=NAME', each at most once ('id=N', a HAProxy id, in place of the name), not "
                            + TextLines.quote(body));
        }
        return new Annotation(features, name);
    }

    /**
     * A HAProxy server id ({@code # ringstore: id=N}): 1 to 2,147,483,647 in decimal, as HAProxy's
     * {@code id} takes it; kept as the backend's name, which the {@code haproxy} family reads as the id
     * (the other families hash a name: give a fleet of other families no ids).
     */
    private String haproxyId(int lineNo, String id) throws BackendsFileException {
        if (!id.matches("[1-9][0-9]{0,9}") || Long.parseLong(id) > Integer.MAX_VALUE) {
            throw error(
                    lineNo,
                    "'id=' takes a HAProxy server id, 1 to " + Integer.MAX_VALUE + ", not " + TextLines.quote(id));
        }
        Integer earlier = idLines.putIfAbsent(id, lineNo);
        if (earlier != null) {
            throw error(
                    lineNo,
                    "id=" + id + " again: the server on line " + earlier
                            + " has it (HAProxy refuses an id used twice)");
        }
        return BackendList.checkName(source, lineNo, id);
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

    private void directive(int lineNo, List<String> words, Annotation annotated) throws BackendsFileException {
        String name = words.getFirst();
        switch (name) {
            case "upstream" -> upstream(lineNo, words, false);
            case "server" -> {
                if (backends.size() == BackendList.MAX_BACKENDS) {
                    throw error(
                            lineNo,
                            "more than " + BackendList.MAX_BACKENDS
                                    + " backends (a point stores its backend in 16 bits)");
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
                        throw error(
                                lineNo,
                                "invalid zone size " + TextLines.quote(words.get(2)) + " (nginx's sizes: N, Nk, Nm)");
                    }
                    if (size < MIN_ZONE_BYTES) {
                        throw error(
                                lineNo,
                                "zone " + TextLines.quote(words.get(1))
                                        + " is too small (nginx needs at least 8 pages, " + MIN_ZONE_BYTES / 1024
                                        + "k with 4 KiB pages)");
                    }
                }
            }
            case "keepalive", "keepalive_requests" -> {
                onlyOnce(lineNo, words);
                long n = nginxNumber(words.get(1));
                if (n < 0 || (n == 0 && name.equals("keepalive"))) {
                    throw error(
                            lineNo,
                            "invalid value " + TextLines.quote(words.get(1)) + " in " + TextLines.quote(name)
                                    + " directive (a whole number"
                                    + (name.equals("keepalive") ? ", at least 1)" : ")"));
                }
            }
            case "keepalive_time", "keepalive_timeout" -> {
                onlyOnce(lineNo, words);
                if (nginxTime(words.get(1), false) < 0) {
                    throw error(
                            lineNo,
                            "invalid value " + TextLines.quote(words.get(1)) + " in " + TextLines.quote(name)
                                    + " directive (nginx's time syntax in milliseconds: 60, 60s, 1m30s, 500ms; units w d h m s ms)");
                }
            }
            case "ip_hash", "least_conn", "random" ->
                throw error(
                        lineNo,
                        "load balancing method " + TextLines.quote(name)
                                + ": nginx would balance with it instead of 'hash KEY consistent' (warning \"load balancing method redefined\"),"
                                + " and ringstore builds only consistent-hash rings");
            default ->
                throw error(
                        lineNo,
                        "unknown directive " + TextLines.quote(name)
                                + (name.contains("=") || name.equals("down") || name.equals("backup")
                                        ? " (a server's parameters on the next line? ringstore reads each directive on one line)"
                                        : " (expected server, hash, zone, keepalive, keepalive_requests, keepalive_time or keepalive_timeout)"));
        }
    }

    private void arguments(int lineNo, List<String> words, int min, int max) throws BackendsFileException {
        int n = words.size() - 1;
        if (n < min || n > max) {
            throw error(
                    lineNo,
                    "invalid number of arguments in " + TextLines.quote(words.getFirst()) + " directive ("
                            + (min == max ? min : min + " or " + max) + " expected, " + n + " given)");
        }
    }

    private void onlyOnce(int lineNo, List<String> words) throws BackendsFileException {
        arguments(lineNo, words, 1, 1);
        if (!onceOnly.add(words.getFirst())) {
            throw error(
                    lineNo,
                    TextLines.quote(words.getFirst()) + " directive is duplicate (nginx takes it once per upstream)");
        }
    }

    private void server(int lineNo, List<String> words, Annotation annotated) throws BackendsFileException {
        if (words.size() < 2) {
            throw error(lineNo, "'server' needs an address");
        }
        ServerAddress address = BackendList.parseAddress(source, lineNo, words.get(1));
        long weight = 1;
        List<String> own = annotated == null || annotated.features() == null ? List.of() : annotated.features();
        boolean down = false;
        int maxFails = ServerParameters.DEFAULT_MAX_FAILS;
        long failTimeout = ServerParameters.DEFAULT_FAIL_TIMEOUT_SECONDS;
        int maxConns = ServerParameters.DEFAULT_MAX_CONNS;
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
                case "features=" -> { // ringstore's own parameter, which nginx refuses: the comment is the portable
                    // form
                    if (annotated != null && annotated.features() != null) {
                        throw error(
                                lineNo,
                                "features given twice: as 'features=' and in the '# " + ANNOTATION + "' comment");
                    }
                    own = features(lineNo, value);
                }
                case "down" -> down = true;
                case "max_fails=" -> maxFails = (int) parseCount(source, lineNo, name, value);
                case "max_conns=" -> maxConns = (int) parseCount(source, lineNo, name, value);
                case "fail_timeout=" -> {
                    failTimeout = nginxSeconds(value);
                    if (failTimeout < 0) {
                        throw error(
                                lineNo,
                                "fail_timeout " + TextLines.quote(value)
                                        + " is not a time nginx reads (as 10, 10s, 1m30s: units y M w d h m s, largest first, at most "
                                        + MAX_SECONDS + " seconds)");
                    }
                }
                // nginx's hash directive leaves NGX_HTTP_UPSTREAM_BACKUP out of the upstream's flags, and
                // ngx_http_upstream_server refuses the parameter with this text.
                case "backup" ->
                    throw error(
                            lineNo,
                            "balancing method does not support parameter \"backup\" (nginx's answer for a hash upstream: backup servers are not in the ring)");
                default ->
                    throw error(
                            lineNo,
                            "unknown parameter " + TextLines.quote(name)
                                    + " (expected weight=N, down, max_fails=N, fail_timeout=T, max_conns=N or features=a,b)");
            }
        }
        ServerParameters parameters = new ServerParameters(
                down, maxFails, failTimeout, maxConns, annotated == null ? null : annotated.name());
        BackendList.addBackend(source, lineNo, lineNo, address, weight, own, parameters, features, backends, endpoints);
    }
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
                    throw new BackendsFileException(
                            source,
                            lineNo,
                            "quoted word " + TextLines.quote(text.substring(i))
                                    + ": ringstore reads words without quotes (write it without them)");
                } else {
                    int start = i;
                    while (i < text.length()
                            && BLANKS.indexOf(text.charAt(i)) < 0
                            && TERMINATORS.indexOf(text.charAt(i)) < 0) {
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

    /** A count as nginx's {@code ngx_atoi} reads {@code max_fails=} and {@code max_conns=}: 0 allowed. */
    private static long parseCount(String source, int lineNo, String name, String digits) throws BackendsFileException {
        long n = TextLines.decimal(digits, Integer.MAX_VALUE);
        if (n < 0 || n > Integer.MAX_VALUE) {
            throw new BackendsFileException(
                    source,
                    lineNo,
                    name + " " + TextLines.quote(digits) + " is not a whole number from 0 to " + Integer.MAX_VALUE);
        }
        return n;
    }

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
        long w = TextLines.decimal(digits, BackendList.MAX_WEIGHT);
        if (w < 0) {
            throw new BackendsFileException(
                    source, lineNo, "weight " + TextLines.quote(digits) + " is not a positive whole number");
        }
        if (w > BackendList.MAX_WEIGHT) {
            throw new BackendsFileException(
                    source,
                    lineNo,
                    "weight " + TextLines.quote(digits) + " is too large (at most " + BackendList.MAX_WEIGHT + ")");
        }
        if (w == 0) {
            throw new BackendsFileException(source, lineNo, "weight must be at least 1");
        }
        return w;
    }
}
