package io.ringstore.internal;

/** The one comment rule of ringstore's text files (backends files, policy files), and how messages quote them. */
public final class TextLines {
    /** The most characters of input a message quotes; the rest is cut (a 10 MB token must not make a 10 MB error line). */
    public static final int MAX_QUOTED = 200;

    private TextLines() {
    }

    /** A line without its {@code #} comment and surrounding blanks. */
    public static String content(String line) {
        int hash = line.indexOf('#');
        return (hash >= 0 ? line.substring(0, hash) : line).strip();
    }

    /**
     * Input as a message quotes it: in single quotes, at most {@value #MAX_QUOTED} characters, and
     * when longer, the first of them followed by how long the whole was. Every message that echoes
     * input goes through here.
     */
    public static String quote(String input) {
        if (input.length() <= MAX_QUOTED) {
            return "'" + input + "'";
        }
        int end = Character.isHighSurrogate(input.charAt(MAX_QUOTED - 1)) ? MAX_QUOTED - 1 : MAX_QUOTED;
        return "'" + input.substring(0, end) + "...' (cut: " + input.length() + " characters in all)";
    }

    /**
     * A decimal number as nginx's {@code ngx_atoi} reads it: ASCII digits only, leading zeros
     * allowed. Returns -1 when {@code digits} is empty or not all digits, and {@code max + 1} when
     * the value is above {@code max} (however many digits it has); {@code max} is below
     * {@link Long#MAX_VALUE}.
     */
    public static long decimal(String digits, long max) {
        if (digits.isEmpty()) {
            return -1;
        }
        long value = 0;
        for (int i = 0; i < digits.length(); i++) {
            char c = digits.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            int d = c - '0';
            if (value <= max) { // once above max, only the digits are checked: value stays max + 1
                value = value > (max - d) / 10 ? max + 1 : value * 10 + d;
            }
        }
        return value;
    }

    /** The reason with control characters escaped, so that a message is always one line. */
    public static String oneLine(String s) {
        StringBuilder sb = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isISOControl(c) || c == '\u2028' || c == '\u2029') {
                sb.append(String.format("\\x%02x", (int) c));
            } else {
                sb.append(c);
            }
        }
        return sb.toString();
    }
}
