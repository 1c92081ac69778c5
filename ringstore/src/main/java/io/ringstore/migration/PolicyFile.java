package io.ringstore.migration;

import io.ringstore.internal.TextLines;
import java.math.BigDecimal;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * A rollout policy kept in a small properties file that operators edit, re-read when it changes:
 * <pre>
 *   # ringstore rollout policy
 *   percent = 12.5        # 0 to 100 (12.5% also), steps of 0.01; 0 is the rollback
 *   scope   = all         # (any case) or a list of data centres: ams,fra
 *   local   = ams         # optional: this data centre (otherwise the name given in code)
 * </pre>
 * {@code percent} and {@code scope} are both required, so that a file cut short is refused rather
 * than read as a different policy. A file that cannot be read or is invalid is refused with a message
 * (through {@link System.Logger}) and the previous policy stays in force; so is a file over
 * {@value #MAX_BYTES} bytes or one that is not a regular file (neither is opened). The poller keeps
 * polling whatever happens, and applies the next valid file.
 *
 * <p>This class is the format: {@link #parse}. Watching a file and applying it to a router is
 * {@code io.ringstore.live.PolicyFileWatcher}. Replace the file by rename (write a
 * temporary file, then {@code mv} it over the policy), so that a poll never reads a half-written file.
 */
public final class PolicyFile {
    /** A policy file is a few lines; anything larger is something else, and is not read. */
    public static final int MAX_BYTES = 64 * 1024;
    /** The scope of every data centre, in any case. */
    private static final String ALL = "all";

    private PolicyFile() {}

    /**
     * Parses policy text. Errors say {@code file:line: what}.
     *
     * @param source the policy file's path, for error messages
     * @param text the policy file's text
     * @param localDataCentre this process's data centre, matched against the policy's scope
     * @return the policy the text sets
     * @throws IllegalArgumentException for an invalid policy
     */
    public static RolloutPolicy parse(Path source, String text, String localDataCentre) {
        Double percent = null;
        Set<String> scope = null;
        String local = localDataCentre;
        Set<String> seen = new LinkedHashSet<>();
        // A byte order mark (some editors write one) is not part of the first key.
        String[] lines = (text.startsWith("\uFEFF") ? text.substring(1) : text).split("\r?\n", -1);
        for (int i = 0; i < lines.length; i++) {
            String where = source + ":" + (i + 1) + ": ";
            String line = TextLines.content(lines[i]);
            if (line.isEmpty()) {
                continue;
            }
            int eq = line.indexOf('=');
            if (eq < 0) {
                throw new IllegalArgumentException(where + "expected 'key = value', found " + quote(line));
            }
            String key = line.substring(0, eq).strip();
            String value = line.substring(eq + 1).strip();
            if (!seen.add(key)) {
                throw new IllegalArgumentException(where + quote(key) + " given twice");
            }
            switch (key) {
                case "percent" -> {
                    percent = TextLines.percent(value, 1);
                    if (Double.isNaN(percent)) {
                        throw new IllegalArgumentException(
                                where + "percent " + quote(value) + " is not a number (write it as 12.5 or 12.5%)");
                    }
                    if (!(percent >= 0 && percent <= 100)) {
                        throw new IllegalArgumentException(where + "percent " + quote(value) + " is outside 0-100");
                    }
                    // On the decimal as written, not the double: 99.999999999 is within 1e-6 of 100 as a double.
                    String digits = value.endsWith("%")
                            ? value.substring(0, value.length() - 1).strip()
                            : value;
                    if (new BigDecimal(digits).stripTrailingZeros().scale() > 2) {
                        throw new IllegalArgumentException(
                                where + "percent " + quote(value) + " is finer than the 0.01 % step");
                    }
                }
                case "scope" -> {
                    scope = new LinkedHashSet<>();
                    // "all" in any case: ALL read as a data centre's name would roll out nowhere, silently.
                    if (!value.equalsIgnoreCase(ALL)) {
                        for (String dc : value.split(",", -1)) {
                            if (dc.isBlank()) {
                                throw new IllegalArgumentException(where + "empty name in scope " + quote(value));
                            }
                            if (dc.strip().equalsIgnoreCase(ALL)) {
                                throw new IllegalArgumentException(where + "'all' in a list of data centres "
                                        + quote(value) + " (write scope = all alone, or only names)");
                            }
                            scope.add(dc.strip());
                        }
                    }
                }
                case "local" -> local = value;
                default ->
                    throw new IllegalArgumentException(
                            where + "unknown key " + quote(key) + " (expected percent, scope, local)");
            }
        }
        if (percent == null) {
            throw new IllegalArgumentException(source + ": no 'percent = N' line");
        }
        if (scope == null) {
            // Required so that a file cut short after its percent line is not taken as that percent everywhere.
            throw new IllegalArgumentException(source
                    + ": no 'scope = all' or 'scope = DC,...' line (both percent and scope are required; cut short?)");
        }
        try {
            return new RolloutPolicy((int) Math.round(percent * 100), scope, local);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(source + ": " + e.getMessage());
        }
    }

    /**
     * Input as a message quotes it: one line (control characters as {@code \\xNN}), cut at
     * {@value TextLines#MAX_QUOTED} characters.
     */
    private static String quote(String input) {
        return TextLines.quote(TextLines.oneLine(input));
    }
}
