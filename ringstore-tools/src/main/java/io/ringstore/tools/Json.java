package io.ringstore.tools;

/** A minimal streaming JSON writer (objects, arrays, strings, numbers); enough for dumps, no dependency. */
final class Json {
    private final StringBuilder sb = new StringBuilder();
    private boolean needComma;

    Json begin() {
        comma();
        sb.append('{');
        needComma = false;
        return this;
    }

    Json end() {
        sb.append('}');
        needComma = true;
        return this;
    }

    Json beginArray(String key) {
        key(key);
        sb.append('[');
        needComma = false;
        return this;
    }

    Json endArray() {
        sb.append(']');
        needComma = true;
        return this;
    }

    Json beginObject(String key) {
        key(key);
        sb.append('{');
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
        sb.append(value);
        needComma = true;
        return this;
    }

    Json field(String key, double value) {
        key(key);
        sb.append(Double.isFinite(value) ? Double.toString(value) : "null"); // shortest text that reads back exactly
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
        sb.append(':');
        needComma = false;
    }

    private void comma() {
        if (needComma) {
            sb.append(',');
        }
    }

    private void string(String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        sb.append('"');
    }

    @Override
    public String toString() {
        return sb.toString();
    }
}
