package io.ringstore.tools;

import java.io.PrintStream;

/**
 * A minimal streaming JSON writer (objects, arrays, strings, numbers), enough for dumps, no dependency:
 * every token goes to {@code out} as it is written, so a document is never held whole. Numbers are
 * written as {@link Long#toString} and {@link Double#toString} write them (the shortest text that reads
 * back exactly), non-finite doubles as {@code null}; no whitespace.
 */
final class Json {
    private final PrintStream out;
    private boolean needComma;

    Json(PrintStream out) {
        this.out = out;
    }

    Json begin() {
        comma();
        out.append('{');
        needComma = false;
        return this;
    }

    Json end() {
        out.append('}');
        needComma = true;
        return this;
    }

    Json beginArray(String key) {
        key(key);
        out.append('[');
        needComma = false;
        return this;
    }

    Json endArray() {
        out.append(']');
        needComma = true;
        return this;
    }

    Json beginObject(String key) {
        key(key);
        out.append('{');
        needComma = false;
        return this;
    }

    Json field(String key, String value) {
        key(key);
        string(value);
        needComma = true;
        return this;
    }

    Json field(String key, long value) {
        key(key);
        out.print(value);
        needComma = true;
        return this;
    }

    /** A u64 field (a ring file's generation): the long's bits read as unsigned, as the file means them. */
    Json fieldUnsigned(String key, long value) {
        key(key);
        out.print(Long.toUnsignedString(value));
        needComma = true;
        return this;
    }

    Json field(String key, double value) {
        key(key);
        out.print(Double.isFinite(value) ? Double.toString(value) : "null");
        needComma = true;
        return this;
    }

    Json field(String key, boolean value) {
        key(key);
        out.print(value);
        needComma = true;
        return this;
    }

    /** An array element that is a string. */
    Json value(String value) {
        comma();
        string(value);
        needComma = true;
        return this;
    }

    private void key(String key) {
        comma();
        string(key);
        out.append(':');
        needComma = false;
    }

    private void comma() {
        if (needComma) {
            out.append(',');
        }
    }

    /** Writes {@code s} quoted, escaped runs between unescaped runs written whole. */
    private void string(String s) {
        out.print('"');
        int run = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            String escaped = switch (c) {
                case '"' -> "\\\"";
                case '\\' -> "\\\\";
                case '\n' -> "\\n";
                case '\r' -> "\\r";
                case '\t' -> "\\t";
                default -> c < 0x20 ? String.format("\\u%04x", (int) c) : null;
            };
            if (escaped != null) {
                out.append(s, run, i).print(escaped);
                run = i + 1;
            }
        }
        out.append(s, run, s.length()).print('"');
    }
}
