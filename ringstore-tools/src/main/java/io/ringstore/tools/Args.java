package io.ringstore.tools;

import io.ringstore.internal.TextLines;
import io.ringstore.tools.Command.FailedException;
import io.ringstore.tools.Command.UsageException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A parsed command line: options (last value wins unless repeated is rejected) and positional
 * arguments, each also as the bytes it was passed as ({@link ArgumentBytes}).
 */
final class Args {
    final Map<String, String> options = new LinkedHashMap<>();
    final List<String> positional = new ArrayList<>();
    /** {@link #positional}'s bytes, same index: what keys are hashed as. */
    final List<byte[]> positionalBytes = new ArrayList<>();
    /** {@link #options}' values as the bytes they were passed as, same key: what file names are checked against. */
    private final Map<String, byte[]> optionBytes = new HashMap<>();

    private Args() {}

    /** Parses arguments given as strings only (their bytes: UTF-8). */
    static Args parse(String[] argv, List<Option> declared) throws UsageException {
        return parse(argv, ArgumentBytes.utf8(argv), declared);
    }

    /**
     * Values are stored under the option's last name; two spellings of one option are an error, as is a value option
     * given twice.
     */
    static Args parse(String[] argv, byte[][] rawArgv, List<Option> declared) throws UsageException {
        Map<String, Option> byName = new HashMap<>();
        for (Option o : declared) {
            o.names().forEach(n -> byName.put(n, o));
        }
        Map<String, String> spelledAs = new HashMap<>();
        Args a = new Args();
        boolean onlyPositional = false;
        for (int i = 0; i < argv.length; i++) {
            String s = argv[i];
            if (onlyPositional || !s.startsWith("-") || s.equals("-")) {
                a.positional.add(s);
                a.positionalBytes.add(rawArgv[i]);
                continue;
            }
            if (s.equals("--")) {
                onlyPositional = true;
                continue;
            }
            String name = s;
            String value = null;
            int eq = s.indexOf('=');
            if (s.startsWith("--") && eq > 0) {
                name = s.substring(0, eq);
                value = s.substring(eq + 1);
            }
            Option o = byName.get(name);
            if (name.equals("-h") || name.equals("--help")) {
                a.options.put("--help", "");
            } else if (o != null && o.takesValue()) {
                if (value == null) {
                    if (i + 1 >= argv.length) {
                        throw new UsageException("option " + name + " needs a value");
                    }
                    value = argv[++i];
                    a.optionBytes.put(o.name(), rawArgv[i]);
                } else { // --name=value: the name is ASCII, so the value's bytes start after the first '='
                    byte[] raw = rawArgv[i];
                    int at = 0;
                    while (at < raw.length && raw[at] != '=') {
                        at++;
                    }
                    a.optionBytes.put(o.name(), Arrays.copyOfRange(raw, Math.min(at + 1, raw.length), raw.length));
                }
                String earlier = spelledAs.put(o.name(), name);
                if (earlier != null) {
                    throw new UsageException(
                            earlier.equals(name)
                                    ? "option " + name + " given twice"
                                    : "give " + String.join(" or ", o.names()) + ", not both");
                }
                a.options.put(o.name(), value);
            } else if (o != null && value == null) {
                a.options.put(o.name(), "");
            } else {
                throw new UsageException("unknown option '" + s + "'");
            }
        }
        return a;
    }

    boolean has(String option) {
        return options.containsKey(option);
    }

    String get(String option) {
        return options.get(option);
    }

    /** The file the positional argument {@code index} names ({@link FileNames#path}). */
    Path file(int index) throws FailedException {
        return FileNames.path(positional.get(index), positionalBytes.get(index));
    }

    /** The file {@code option} names, or null when it is not given ({@link FileNames#path}). */
    Path file(String option) throws FailedException {
        String name = options.get(option);
        return name == null ? null : FileNames.path(name, optionBytes.get(option));
    }

    long getLong(String option, long min, long max, long dflt) throws UsageException {
        String v = options.get(option);
        if (v == null) {
            return dflt;
        }
        try {
            long n = Long.parseLong(v);
            if (n < min || n > max) {
                throw new UsageException(
                        option + " must be from " + min + " to " + max + ": " + option + "=" + TextLines.quote(v));
            }
            return n;
        } catch (NumberFormatException e) {
            throw new UsageException(option + " must be a whole number: " + option + "=" + TextLines.quote(v));
        }
    }
}
