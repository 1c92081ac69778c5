package io.ringstore.internal;

import java.util.List;
import java.util.regex.Pattern;

/** The one comment rule of ringstore's text files (backends files, policy files), and how messages quote them. */
public final class TextLines {
    /**
     * The most characters of input a message quotes; the rest is cut (a 10 MB token must not make a 10 MB error line).
     */
    public static final int MAX_QUOTED = 200;

    private TextLines() {}

    /** A line without its {@code #} comment and surrounding blanks. */
    public static String content(String line) {
        int hash = line.indexOf('#');
        return (hash >= 0 ? line.substring(0, hash) : line).strip();
    }

    /** {@return the items as a sentence lists them: {@code a}, {@code a or b}, {@code a, b or c}} */
    public static String list(List<String> items) {
        if (items.size() == 1) {
            return items.getFirst();
        }
        return String.join(", ", items.subList(0, items.size() - 1)) + " or " + items.getLast();
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

    /**
     * A decimal as {@link #percent} reads it: what people write, not what {@code Double.parseDouble} takes
     * ({@code NaN}, {@code 1e3}, {@code 0x1p3}, {@code 5d}).
     */
    private static final Pattern DECIMAL = Pattern.compile("-?[0-9]{1,9}(\\.[0-9]{1,9})?");

    /**
     * A percentage as every ringstore input reads it (the policy file's {@code percent}, the CLI's
     * {@code --target-cv}): {@code 12.5%} or {@code 12.5 %} is 12.5 percent; a bare number is
     * {@code bareScale} percent a unit (1 where the key says percent, 100 where a fraction is the
     * natural reading, {@code 0.02} = 2 %). Returns the value in percent, or {@code NaN} when {@code
     * text} is not a decimal (digits, an optional fraction, an optional leading minus), with or
     * without the sign.
     */
    public static double percent(String text, double bareScale) {
        String s = text.strip();
        boolean marked = s.endsWith("%");
        String number = marked ? s.substring(0, s.length() - 1).strip() : s;
        if (!DECIMAL.matcher(number).matches()) {
            return Double.NaN;
        }
        return Double.parseDouble(number) * (marked ? 1 : bareScale);
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

    /** Bytes read from a file, shown as text: printable ASCII as is, anything else as {@code \xNN}. */
    public static String printable(byte[] bytes) {
        StringBuilder sb = new StringBuilder();
        for (byte b : bytes) {
            sb.append(b >= 0x20 && b < 0x7f ? String.valueOf((char) b) : String.format("\\x%02x", b & 0xff));
        }
        return sb.toString();
    }
}
