package io.ringstore.family;

import io.ringstore.internal.TextLines;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The grammar of a family's parameters, one type for every family: how many a version has, how many
 * of them (from the first) its name writes ({@code v2:K} writes one, {@code envoy:MIN:MAX} two,
 * {@code v1} none), their defaults and ranges, how a written value reads and prints (decimal, or
 * one of twemproxy's hash names), and the syntax an error message shows. A version's name is the
 * family's name then each written parameter after a colon; a name that writes fewer takes the rest
 * from the defaults ({@code envoy:2048} is {@code envoy:2048:8388608}); when the parameters are
 * ordered (Envoy's MIN ≤ MAX) a written one above the next one's default is refused.
 *
 * <p>Immutable and thread-safe. The families' grammars are made by this class's factories.
 */
public final class Parameters {
    /** What a family's parameters must satisfy: the reason they do not, as the message says it, or null. */
    @FunctionalInterface
    private interface Rule {
        String problem(String family, int[] parameters);
    }

    private final int[] defaults;
    private final int written;
    /** The largest written value (the least is 1). */
    private final long maxWritten;
    /** A written value's names, the first for value 1 (twemproxy's hashes); null: decimal. */
    private final List<String> names;

    private final boolean ordered;
    private final boolean pointMultiple;
    /** The forms of a name after the family's own, for messages: {@code ":K with K from 1 to …"}. */
    private final List<String> forms;

    private final Rule rule;

    private Parameters(
            int[] defaults,
            int written,
            long maxWritten,
            List<String> names,
            boolean ordered,
            boolean pointMultiple,
            List<String> forms,
            Rule rule) {
        this.defaults = defaults;
        this.written = written;
        this.maxWritten = maxWritten;
        this.names = names;
        this.ordered = ordered;
        this.pointMultiple = pointMultiple;
        this.forms = forms;
        this.rule = rule;
    }

    /**
     * One parameter, the point multiple, always {@code value}, which a name does not write (nginx's
     * 160 points per weight unit).
     */
    static Parameters fixedPointMultiple(int value, String why) {
        return new Parameters(new int[] {value}, 0, 0, null, false, false, List.of(), (family, p) -> {
            String problem = pointMultipleProblem(p);
            return problem != null || p[0] == value
                    ? problem
                    : family + " always has " + value + " " + why + ": pointMultiple=" + p[0];
        });
    }

    /** One parameter, the point multiple, K from 1, written in the name ({@code v2:K}); a bare name gives {@code dflt}. */
    static Parameters pointMultiple(int dflt) {
        return new Parameters(
                new int[] {dflt},
                1,
                Integer.MAX_VALUE,
                null,
                false,
                true,
                List.of(":K with K from 1 to " + Integer.MAX_VALUE),
                (family, p) -> pointMultipleProblem(p));
    }

    /** One parameter, always {@code value}, not written: the memcached clients' points per server at equal weights. */
    static Parameters fixed(int value) {
        return new Parameters(
                new int[] {value},
                0,
                0,
                null,
                false,
                false,
                List.of(),
                (family, p) -> p.length == 1 && p[0] == value
                        ? null
                        : family + " has " + value + " points per server at equal weights: parameters="
                                + Arrays.toString(p));
    }

    /**
     * One parameter, a point count from {@code min} to {@code max} written in the name or {@code dflt}
     * for a bare one, which {@code --point-multiple} may give ({@code spymemcached:K}, {@code dubbo:K}).
     *
     * @param what the parameter as its client names it, for the message
     */
    static Parameters pointCount(String what, int dflt, int min, int max) {
        return new Parameters(
                new int[] {dflt},
                1,
                max,
                null,
                false,
                true,
                List.of(":K with K from " + min + " to " + max),
                (family, p) -> p.length == 1 && p[0] >= min && p[0] <= max
                        ? null
                        : family + " has one parameter, " + what + ", " + min + " to " + max + ": parameters="
                                + Arrays.toString(p));
    }

    /** One parameter written by name: one of {@code names} (its position from 1 is the value), {@code dflt} for a bare name. */
    static Parameters named(String what, String placeholder, List<String> names, String dflt) {
        return new Parameters(
                new int[] {names.indexOf(dflt) + 1},
                1,
                names.size(),
                List.copyOf(names),
                false,
                false,
                List.of(":" + placeholder + " with " + placeholder + " one of " + String.join(", ", names)),
                (family, p) -> p.length == 1 && p[0] >= 1 && p[0] <= names.size()
                        ? null
                        : family + " has one parameter, " + what + ", 1 to " + names.size() + " ("
                                + TextLines.quote(String.join(",", names)) + "): parameters=" + Arrays.toString(p));
    }

    /**
     * Two ordered parameters, {@code MIN} and {@code MAX}, both written and both optional: 1 ≤ MIN ≤ MAX ≤
     * {@code max} (Envoy's and gRPC's ring sizes); a left-out MAX is the default, and a name whose MIN
     * is above it is refused rather than read as {@code MIN:MIN} ({@code grpc:4097}: above gRPC's cap).
     */
    static Parameters minMax(String what, int dfltMin, int dfltMax, int max) {
        String range = "1 ≤ MIN ≤ MAX ≤ " + max;
        return new Parameters(
                new int[] {dfltMin, dfltMax},
                2,
                max,
                null,
                true,
                false,
                List.of(":MIN", ":MIN:MAX with " + range),
                (family, p) -> p.length == 2 && p[0] >= 1 && p[1] >= p[0] && p[1] <= max
                        ? null
                        : family + " has two parameters, " + what + ", " + range + ": parameters="
                                + Arrays.toString(p));
    }

    /** nginx's and pingora's point multiple: one parameter, at least 1. */
    private static String pointMultipleProblem(int[] p) {
        if (p.length != 1) {
            return "one parameter, the point multiple: parameters=" + Arrays.toString(p);
        }
        return p[0] < 1 ? "point multiple must be at least 1: pointMultiple=" + p[0] : null;
    }

    /** {@return how many parameters a version has (the ring index stores the first in its parameter word, a second in its ringPoints word)} */
    public int count() {
        return defaults.length;
    }

    /** {@return how many of them, from the first, a version's name writes ({@code v2:K}: 1; {@code v1}: 0)} */
    public int written() {
        return written;
    }

    /** {@return the parameters of the version a bare name (the family's alone) names: {@code v2} is {@code v2:160}} */
    public int[] defaults() {
        return defaults.clone();
    }

    /**
     * {@return whether the one written parameter is a point count that {@code --point-multiple} may give
     * a bare name ({@code v2}, {@code spymemcached}, {@code dubbo})}
     */
    public boolean takesPointMultiple() {
        return pointMultiple;
    }

    /**
     * {@return the forms a name of {@code family}'s versions takes: {@code v2}, {@code v2:K with K from 1 to …}}
     *
     * @param family the family's name as written
     */
    public List<String> syntax(String family) {
        List<String> all = new ArrayList<>(List.of(family));
        forms.forEach(f -> all.add(family + f));
        return List.copyOf(all);
    }

    /** The reason {@code parameters} are no version of {@code family}, in the family's words; null when they are one. */
    String problem(String family, int[] parameters) {
        return rule.problem(family, parameters);
    }

    /** Written value {@code text} as a number: decimal within the range, or a name's position from 1; -1 when it is none. */
    int parse(String text) {
        if (names != null) {
            int at = names.indexOf(text);
            return at < 0 ? -1 : at + 1;
        }
        long value = TextLines.decimal(text, maxWritten);
        return value >= 1 && value <= maxWritten ? (int) value : -1;
    }

    /** {@code value} as a name writes it: decimal, or the name at its position. */
    String format(int value) {
        return names != null && value >= 1 && value <= names.size()
                ? names.get(value - 1)
                : Integer.toUnsignedString(value);
    }

    /** {@return the written part of {@code parameters}: the name's {@code :K} values} */
    int[] writtenPart(int[] parameters) {
        return Arrays.copyOf(parameters, written);
    }

    /**
     * The parameters of name {@code text} writing {@code values} (1 to {@link #written()} of them): the
     * rest from the defaults.
     *
     * @throws IllegalArgumentException when the parameters are ordered and a written one is above the
     *                                  default of the next, left out ({@code grpc:4097}: MIN above MAX's 4,096)
     */
    int[] complete(String text, int[] values) {
        int[] p = defaults.clone();
        System.arraycopy(values, 0, p, 0, values.length);
        if (ordered && values.length < p.length && p[values.length - 1] > p[values.length]) {
            throw new IllegalArgumentException("bad version " + TextLines.quote(text) + ": MIN "
                    + p[values.length - 1] + " is above MAX's default, " + p[values.length] + ": write MAX too ("
                    + text + ":MAX with MAX from " + p[values.length - 1] + " to " + maxWritten + ")");
        }
        return p;
    }

    /** {@code family}, then each written parameter of {@code parameters} after a colon: {@code v2:16}. */
    String name(String family, int[] parameters) {
        StringBuilder s = new StringBuilder(family);
        for (int i = 0; i < written; i++) {
            s.append(':').append(format(parameters[i]));
        }
        return s.toString();
    }
}
