package io.ringstore.internal;

/** The one comment rule of ringstore's text files (backends files, policy files). */
public final class TextLines {
    private TextLines() {
    }

    /** A line without its {@code #} comment and surrounding blanks. */
    public static String content(String line) {
        int hash = line.indexOf('#');
        return (hash >= 0 ? line.substring(0, hash) : line).strip();
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
