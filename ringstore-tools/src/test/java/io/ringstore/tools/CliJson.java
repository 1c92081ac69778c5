package io.ringstore.tools;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A strict RFC 8259 JSON parser for tests, written independently of the CLI's {@link Json} writer:
 * objects become {@code Map<String, Object>} (duplicate names rejected), arrays {@code List<Object>},
 * numbers {@link BigDecimal}, and {@code true}/{@code false}/{@code null} their Java values.
 */
final class CliJson {
    private final String s;
    private int i;

    private CliJson(String s) {
        this.s = s;
    }

    /** Parses one JSON value filling all of {@code text} (surrounding whitespace allowed). */
    static Object parse(String text) {
        CliJson p = new CliJson(text);
        p.whitespace();
        Object v = p.value();
        p.whitespace();
        if (p.i != text.length()) {
            throw p.error("text after the value");
        }
        return v;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> object(Object o) {
        if (!(o instanceof Map)) {
            throw new AssertionError("expected a JSON object, got " + o);
        }
        return (Map<String, Object>) o;
    }

    @SuppressWarnings("unchecked")
    static List<Object> array(Object o) {
        if (!(o instanceof List)) {
            throw new AssertionError("expected a JSON array, got " + o);
        }
        return (List<Object>) o;
    }

    static BigDecimal number(Object o) {
        if (!(o instanceof BigDecimal n)) {
            throw new AssertionError("expected a JSON number, got " + o);
        }
        return n;
    }

    static String string(Object o) {
        if (!(o instanceof String str)) {
            throw new AssertionError("expected a JSON string, got " + o);
        }
        return str;
    }

    private Object value() {
        if (i >= s.length()) {
            throw error("unexpected end");
        }
        char c = s.charAt(i);
        return switch (c) {
            case '{' -> parseObject();
            case '[' -> parseArray();
            case '"' -> parseString();
            case 't' -> literal("true", Boolean.TRUE);
            case 'f' -> literal("false", Boolean.FALSE);
            case 'n' -> literal("null", null);
            default -> parseNumber();
        };
    }

    private Map<String, Object> parseObject() {
        Map<String, Object> map = new LinkedHashMap<>();
        i++;
        whitespace();
        if (peek('}')) {
            i++;
            return map;
        }
        while (true) {
            whitespace();
            if (!peek('"')) {
                throw error("expected a string name");
            }
            int at = i;
            String name = parseString();
            whitespace();
            expect(':');
            whitespace();
            Object v = value();
            if (map.containsKey(name)) {
                i = at;
                throw error("duplicate name \"" + name + "\"");
            }
            map.put(name, v);
            whitespace();
            if (peek(',')) {
                i++;
            } else {
                expect('}');
                return map;
            }
        }
    }

    private List<Object> parseArray() {
        List<Object> list = new ArrayList<>();
        i++;
        whitespace();
        if (peek(']')) {
            i++;
            return list;
        }
        while (true) {
            whitespace();
            list.add(value());
            whitespace();
            if (peek(',')) {
                i++;
            } else {
                expect(']');
                return list;
            }
        }
    }

    private String parseString() {
        expect('"');
        StringBuilder sb = new StringBuilder();
        while (true) {
            if (i >= s.length()) {
                throw error("unterminated string");
            }
            char c = s.charAt(i++);
            if (c == '"') {
                return sb.toString();
            }
            if (c < 0x20) {
                throw error("unescaped control character in a string");
            }
            if (c != '\\') {
                sb.append(c);
                continue;
            }
            if (i >= s.length()) {
                throw error("unterminated escape");
            }
            char e = s.charAt(i++);
            switch (e) {
                case '"', '\\', '/' -> sb.append(e);
                case 'b' -> sb.append('\b');
                case 'f' -> sb.append('\f');
                case 'n' -> sb.append('\n');
                case 'r' -> sb.append('\r');
                case 't' -> sb.append('\t');
                case 'u' -> {
                    if (i + 4 > s.length()) {
                        throw error("short \\u escape");
                    }
                    sb.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                    i += 4;
                }
                default -> throw error("bad escape \\" + e);
            }
        }
    }

    private BigDecimal parseNumber() {
        int start = i;
        if (peek('-')) {
            i++;
        }
        if (peek('0')) {
            i++;
        } else if (!digits()) {
            throw error("expected a value");
        }
        if (peek('.')) {
            i++;
            if (!digits()) {
                throw error("expected digits after '.'");
            }
        }
        if (peek('e') || peek('E')) {
            i++;
            if (peek('+') || peek('-')) {
                i++;
            }
            if (!digits()) {
                throw error("expected exponent digits");
            }
        }
        return new BigDecimal(s.substring(start, i));
    }

    private boolean digits() {
        int start = i;
        while (i < s.length() && s.charAt(i) >= '0' && s.charAt(i) <= '9') {
            i++;
        }
        return i > start;
    }

    private Object literal(String word, Object v) {
        if (!s.startsWith(word, i)) {
            throw error("expected " + word);
        }
        i += word.length();
        return v;
    }

    private void whitespace() {
        while (i < s.length()
                && (s.charAt(i) == ' ' || s.charAt(i) == '\t' || s.charAt(i) == '\n' || s.charAt(i) == '\r')) {
            i++;
        }
    }

    private boolean peek(char c) {
        return i < s.length() && s.charAt(i) == c;
    }

    private void expect(char c) {
        if (!peek(c)) {
            throw error("expected '" + c + "'");
        }
        i++;
    }

    private IllegalArgumentException error(String what) {
        int from = Math.max(0, i - 40);
        int to = Math.min(s.length(), i + 40);
        return new IllegalArgumentException(
                "JSON: " + what + " at character " + i + ": ..." + s.substring(from, to) + "...");
    }
}
