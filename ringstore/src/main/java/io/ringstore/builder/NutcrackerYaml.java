package io.ringstore.builder;

import io.ringstore.internal.TextLines;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The YAML that nutcracker's configuration files are written in, read line by line: what
 * {@code nc_conf.c} lets through ({@code conf_validate_tokens} refuses flow collections, anchors,
 * aliases, tags and document markers; {@code conf_validate_structure} allows two levels of mapping and
 * one sequence a pool), and what it means ({@code conf_parse_core}): pools of keys and their values,
 * and each pool's one list of servers. What the keys mean is {@link TwemproxyConfig}'s.
 * <pre>
 *   # comment                                 (a '#' that starts a line or follows a blank)
 *   POOL:                                     (in the first column; any number of pools)
 *     KEY: VALUE                              (every key of a pool at one indentation, more than 0)
 *     servers:
 *      - VALUE                                (the list's items at one indentation, not less than the keys')
 * </pre>
 * A VALUE (and a POOL or KEY) is a plain one-line scalar, {@code 'single'} ({@code ''} is a quote) or
 * {@code "double"} quoted (escapes <code>\\ \" \/ \t \n \r \0 \xNN &#92;uNNNN</code>). Refused, with the line:
 * tabs in indentation, a line indented otherwise than its neighbours (also a plain value continued on the
 * next line: each value is read on one line), a key without a value, a value that would be a nested
 * mapping ({@code a: b: c}), a value starting with a YAML indicator that nutcracker refuses or this
 * reader does not read ({@code [ { & * ! | > % @}), a key given twice in a pool, a pool given twice, a
 * pool without keys or without {@code servers:}, an empty {@code servers:} list, a list item anywhere
 * but under {@code servers:}, document markers ({@code ---}, {@code ...}) and directives.
 */
final class NutcrackerYaml {
    /** The key whose value is the pool's list of servers. */
    static final String SERVERS = "servers";

    /** A value and the line it is on. */
    record Value(String text, int line) {}

    /** One pool: its name, its keys' values in file order, and its servers' values in file order. */
    static final class Pool {
        final String name;
        final int line;
        final Map<String, Value> keys = new LinkedHashMap<>();
        final List<Value> servers = new ArrayList<>();
        int serversLine;

        private Pool(String name, int line) {
            this.name = name;
            this.line = line;
        }
    }

    private final String source;
    private final List<Pool> pools = new ArrayList<>();
    private Pool pool;
    private int keyIndent = -1;
    private int keyIndentLine;
    private boolean inServers;
    private int itemIndent = -1;
    private int itemIndentLine;

    private NutcrackerYaml(String source) {
        this.source = source;
    }

    /**
     * Reads {@code text} (its byte order mark already skipped).
     *
     * @param source what errors call the input (its file name)
     * @return the pools, in file order
     * @throws BackendsFileException naming the line of the first thing outside the subset
     */
    static List<Pool> read(String source, String text) throws BackendsFileException {
        NutcrackerYaml reader = new NutcrackerYaml(source);
        String[] lines = text.split("\r\n|\r|\n", -1);
        for (int i = 0; i < lines.length; i++) {
            if (lines[i].length() > BackendList.MAX_LINE_CHARS) {
                throw new BackendsFileException(
                        source,
                        i + 1,
                        "line of " + lines[i].length() + " characters, longer than ringstore reads ("
                                + BackendList.MAX_LINE_CHARS + ")");
            }
            reader.printable(i + 1, lines[i]);
            reader.line(i + 1, lines[i]);
        }
        reader.closePool();
        if (reader.pools.isEmpty()) {
            throw new BackendsFileException(
                    source,
                    0,
                    "no pools: a nutcracker configuration is 'NAME:' in the first column, "
                            + "followed by the pool's indented 'key: value' lines and its 'servers:' list");
        }
        return reader.pools;
    }

    /**
     * Refuses a control character other than a tab, and DEL, as libyaml (nutcracker's reader) refuses
     * them anywhere in the stream: a NUL in a pool's name made a pool nutcracker never has.
     */
    private void printable(int lineNo, String text) throws BackendsFileException {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < 0x20 && c != '\t' || c == 0x7f || c >= 0x80 && c <= 0x9f && c != 0x85) {
                throw error(
                        lineNo,
                        String.format(
                                "control character U+%04X at column %d (nutcracker's YAML reader refuses the file)",
                                (int) c, i + 1));
            }
        }
    }

    private BackendsFileException error(int line, String reason) {
        return new BackendsFileException(source, line, reason);
    }

    private void line(int lineNo, String text) throws BackendsFileException {
        int indent = 0;
        while (indent < text.length() && text.charAt(indent) == ' ') {
            indent++;
        }
        String content = text.substring(indent);
        String stripped = content.strip();
        if (stripped.isEmpty() || stripped.startsWith("#")) {
            return;
        }
        if (content.charAt(0) == '\t') {
            throw error(lineNo, "a tab in the indentation: YAML indents with spaces only");
        }
        if (indent == 0 && (marker(content, "---") || marker(content, "..."))) {
            throw error(
                    lineNo,
                    "document marker " + TextLines.quote(content.substring(0, 3))
                            + ": nutcracker reads one YAML document, without '---' or '...' (it refuses them)");
        }
        if (indent == 0 && content.startsWith("%")) {
            throw error(lineNo, "a YAML directive " + TextLines.quote(content) + ": nutcracker refuses directives");
        }
        if (indent == 0) {
            poolLine(lineNo, content);
        } else if (pool == null) {
            throw error(
                    lineNo,
                    "an indented line before the first pool: a nutcracker configuration starts with a pool's 'NAME:' in the first column");
        } else if (content.equals("-") || content.startsWith("- ") || content.startsWith("-\t")) {
            item(lineNo, indent, content.substring(1));
        } else {
            keyLine(lineNo, indent, content);
        }
    }

    /** {@code ---} or {@code ...} alone or followed by a blank. */
    private static boolean marker(String content, String marker) {
        return content.startsWith(marker)
                && (content.length() == 3 || content.charAt(3) == ' ' || content.charAt(3) == '\t');
    }

    private void poolLine(int lineNo, String content) throws BackendsFileException {
        closePool();
        Key key = key(lineNo, content);
        if (value(lineNo, key.rest()) != null) {
            throw error(
                    lineNo,
                    "a 'key: value' in the first column (" + TextLines.quote(key.name())
                            + "): nutcracker's top level holds pools, each 'NAME:' with its keys indented on the lines below");
        }
        for (Pool p : pools) {
            if (p.name.equals(key.name())) {
                throw error(
                        lineNo,
                        "pool " + TextLines.quote(key.name()) + " again: line " + p.line
                                + " names it already (nutcracker refuses pools with the same name)");
            }
        }
        pool = new Pool(key.name(), lineNo);
        keyIndent = -1;
        inServers = false;
    }

    /** The checks of a pool that need its last line: it has keys, a servers list, and servers in it. */
    private void closePool() throws BackendsFileException {
        if (pool == null) {
            return;
        }
        closeServers();
        if (keyIndent < 0) {
            throw error(
                    pool.line,
                    "pool " + TextLines.quote(pool.name)
                            + " has no keys: a pool's 'key: value' lines and its 'servers:' list follow it, indented");
        }
        if (pool.serversLine == 0) {
            throw error(
                    pool.line,
                    "pool " + TextLines.quote(pool.name)
                            + " has no 'servers:' list (nutcracker needs one in every pool)");
        }
        pools.add(pool);
        pool = null;
    }

    private void closeServers() throws BackendsFileException {
        if (inServers && pool.servers.isEmpty()) {
            throw error(
                    pool.serversLine,
                    "'servers:' of pool " + TextLines.quote(pool.name)
                            + " has no items: list them on the lines below it, each '- host:port:weight [name]'");
        }
        inServers = false;
    }

    private void item(int lineNo, int indent, String afterDash) throws BackendsFileException {
        if (!inServers) {
            throw error(lineNo, "a list item outside 'servers:': in a nutcracker pool only 'servers:' holds a list");
        }
        if (itemIndent < 0) {
            if (indent < keyIndent) {
                throw wrongIndentation(
                        lineNo, indent, "the keys of pool " + TextLines.quote(pool.name), keyIndent, keyIndentLine);
            }
            itemIndent = indent;
            itemIndentLine = lineNo;
        } else if (indent != itemIndent) {
            throw wrongIndentation(
                    lineNo, indent, "the servers of pool " + TextLines.quote(pool.name), itemIndent, itemIndentLine);
        }
        String value = value(lineNo, afterDash);
        if (value == null) {
            throw error(lineNo, "an empty list item: each server is '- host:port:weight [name]' on one line");
        }
        pool.servers.add(new Value(value, lineNo));
    }

    private void keyLine(int lineNo, int indent, String content) throws BackendsFileException {
        if (keyIndent < 0) {
            keyIndent = indent;
            keyIndentLine = lineNo;
        } else if (indent != keyIndent) {
            throw wrongIndentation(
                    lineNo, indent, "the keys of pool " + TextLines.quote(pool.name), keyIndent, keyIndentLine);
        }
        closeServers();
        Key key = key(lineNo, content);
        String value = value(lineNo, key.rest());
        int earlier = key.name().equals(SERVERS)
                ? pool.serversLine
                : pool.keys.containsKey(key.name()) ? pool.keys.get(key.name()).line() : 0;
        if (earlier > 0) {
            throw error(
                    lineNo,
                    TextLines.quote(key.name()) + " again in pool " + TextLines.quote(pool.name) + ": line " + earlier
                            + " gives it already (nutcracker refuses a key given twice)");
        }
        if (key.name().equals(SERVERS)) {
            if (value != null) {
                throw error(
                        lineNo,
                        "'servers:' holds a list on the lines below it, each '- host:port:weight [name]', not a value on its own line");
            }
            pool.serversLine = lineNo;
            inServers = true;
            itemIndent = -1;
            return;
        }
        if (value == null) {
            throw error(
                    lineNo,
                    TextLines.quote(key.name() + ":")
                            + " has no value (nutcracker refuses an empty one; a nested mapping is not nutcracker's YAML)");
        }
        pool.keys.put(key.name(), new Value(value, lineNo));
    }

    private BackendsFileException wrongIndentation(
            int lineNo, int indent, String what, int expected, int expectedLine) {
        return error(
                lineNo,
                "wrong indentation: " + what + " are indented by " + expected + " spaces (line " + expectedLine
                        + "), this line by " + indent
                        + " (a value continued here? ringstore reads each value on one line)");
    }

    /** A key and what follows its colon. */
    private record Key(String name, String rest) {}

    /** {@code KEY:} followed by a blank or the line's end; the key plain or quoted. */
    private Key key(int lineNo, String content) throws BackendsFileException {
        if (content.charAt(0) == '"' || content.charAt(0) == '\'') {
            Quoted q = quoted(lineNo, content, 0);
            int i = q.end();
            while (i < content.length() && (content.charAt(i) == ' ' || content.charAt(i) == '\t')) {
                i++;
            }
            if (i == content.length()
                    || content.charAt(i) != ':'
                    || !(i + 1 == content.length() || isBlank(content.charAt(i + 1)))) {
                throw error(lineNo, "expected ':' after the key " + TextLines.quote(q.text()));
            }
            return new Key(q.text(), content.substring(i + 1));
        }
        indicator(lineNo, content);
        for (int i = 0; i < content.length(); i++) {
            char c = content.charAt(i);
            if (c == '#' && i > 0 && isBlank(content.charAt(i - 1))) {
                break;
            }
            if (c == ':' && (i + 1 == content.length() || isBlank(content.charAt(i + 1)))) {
                String name = content.substring(0, i).strip();
                if (name.isEmpty()) {
                    break;
                }
                return new Key(name, content.substring(i + 1));
            }
        }
        throw error(
                lineNo,
                "expected 'key: value', 'key:' or a list item '- value', not " + TextLines.quote(content.strip()));
    }

    /** The value in {@code rest} (after a key's colon or an item's dash), or null when there is none (only blanks or a comment). */
    private String value(int lineNo, String rest) throws BackendsFileException {
        int start = 0;
        while (start < rest.length() && isBlank(rest.charAt(start))) {
            start++;
        }
        if (start == rest.length() || rest.charAt(start) == '#') {
            return null;
        }
        if (rest.charAt(start) == '"' || rest.charAt(start) == '\'') {
            Quoted q = quoted(lineNo, rest, start);
            String after = rest.substring(q.end());
            String afterStripped = after.strip();
            if (!afterStripped.isEmpty() && !(afterStripped.startsWith("#") && isBlank(after.charAt(0)))) {
                throw error(lineNo, "text after the closing quote: " + TextLines.quote(afterStripped));
            }
            return q.text();
        }
        String text = rest.substring(start);
        indicator(lineNo, text);
        int end = text.length();
        for (int i = 1; i < text.length(); i++) {
            if (text.charAt(i) == '#' && isBlank(text.charAt(i - 1))) {
                end = i;
                break;
            }
        }
        String value = text.substring(0, end).strip();
        for (int i = 0; i < value.length(); i++) {
            if (value.charAt(i) == ':' && (i + 1 == value.length() || isBlank(value.charAt(i + 1)))) {
                throw error(
                        lineNo,
                        "the value " + TextLines.quote(value)
                                + " holds ': ' or ends with ':', which makes it a nested mapping"
                                + " (nutcracker's pools hold 'key: value' only): quote it if it is one value");
            }
        }
        return value;
    }

    /** Refuses a plain scalar that starts with an indicator nutcracker refuses or this reader does not read. */
    private void indicator(int lineNo, String text) throws BackendsFileException {
        char c = text.charAt(0);
        String what = switch (c) {
            case '[', '{' -> "a flow collection, which nutcracker refuses";
            case ']', '}', ',' -> "a flow collection's punctuation, which nutcracker refuses";
            case '&' -> "an anchor, which nutcracker refuses";
            case '*' -> "an alias, which nutcracker refuses";
            case '!' -> "a tag, which nutcracker refuses";
            case '|', '>' -> "a block scalar, which ringstore does not read";
            case '%', '@', '`' -> "nothing a YAML value may start with";
            case '-', '?', ':' ->
                text.length() == 1 || isBlank(text.charAt(1))
                        ? (c == '-'
                                ? "a nested list, which nutcracker's pools do not have"
                                : "a complex key or value, which nutcracker's YAML does not have")
                        : null;
            default -> null;
        };
        if (what != null) {
            throw error(lineNo, "'" + c + "' starts " + what + ": write a plain or quoted value");
        }
    }

    private static boolean isBlank(char c) {
        return c == ' ' || c == '\t';
    }

    /** A quoted scalar's text and the index after its closing quote. */
    private record Quoted(String text, int end) {}

    private Quoted quoted(int lineNo, String s, int open) throws BackendsFileException {
        char quote = s.charAt(open);
        StringBuilder text = new StringBuilder();
        for (int i = open + 1; i < s.length(); i++) {
            char c = s.charAt(i);
            if (quote == '\'' && c == '\'') {
                if (i + 1 < s.length() && s.charAt(i + 1) == '\'') {
                    text.append('\'');
                    i++;
                    continue;
                }
                return new Quoted(text.toString(), i + 1);
            }
            if (quote == '"' && c == '"') {
                return new Quoted(text.toString(), i + 1);
            }
            if (quote == '"' && c == '\\') {
                i = escape(lineNo, s, i, text);
                continue;
            }
            text.append(c);
        }
        throw error(
                lineNo,
                "the quoted value " + TextLines.quote(s.substring(open)) + " has no closing " + quote
                        + " on its line (ringstore reads each value on one line)");
    }

    /** Appends the escape at {@code s[backslash]} to {@code text}; returns the index of its last character. */
    private int escape(int lineNo, String s, int backslash, StringBuilder text) throws BackendsFileException {
        if (backslash + 1 == s.length()) {
            throw error(
                    lineNo, "a '\\' at the end of the line in a quoted value (ringstore reads each value on one line)");
        }
        char e = s.charAt(backslash + 1);
        int hexDigits = switch (e) {
            case 'x' -> 2;
            case 'u' -> 4;
            default -> 0;
        };
        if (hexDigits > 0) {
            int end = backslash + 2 + hexDigits;
            long code = end <= s.length() ? hex(s.substring(backslash + 2, end)) : -1;
            if (code < 0) {
                throw error(lineNo, "escape '\\" + e + "' needs " + hexDigits + " hex digits");
            }
            text.append((char) code);
            return end - 1;
        }
        char c = switch (e) {
            case '\\' -> '\\';
            case '"' -> '"';
            case '/' -> '/';
            case 't' -> '\t';
            case 'n' -> '\n';
            case 'r' -> '\r';
            case '0' -> '\0';
            default ->
                throw error(
                        lineNo,
                        "escape '\\" + e + "' in a double-quoted value, which ringstore does not read"
                                + " (it reads \\\\ \\\" \\/ \\t \\n \\r \\0 \\xNN \\uNNNN)");
        };
        text.append(c);
        return backslash + 1;
    }

    private static long hex(String digits) {
        long value = 0;
        for (int i = 0; i < digits.length(); i++) {
            int d = Character.digit(digits.charAt(i), 16);
            if (d < 0 || digits.charAt(i) > 0x7f) {
                return -1;
            }
            value = value * 16 + d;
        }
        return value;
    }
}
