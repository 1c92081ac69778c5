package io.ringstore.family;

import io.ringstore.internal.TextLines;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * One way of building a ring: a {@link RingFamily} and its parameters (for nginx and pingora, the
 * points per weight unit). A file holds one or more versions of every feature ring (see FORMAT.md).
 * Immutable; equal when family and parameters are.
 *
 * <p>Named as on the command line ({@link #name()}, {@link #parse}): the name the family's versions
 * are written with ({@link RingFamily#toString()}), then each of its written parameters after a colon
 * ({@link Parameters}): {@code v1}, {@code v2:16}, {@code twemproxy:md5}. {@link #parse} also takes the
 * family's own name: {@code nginx} is {@code v1}, {@code pingora:16} is {@code v2:16}.
 */
public final class RingVersion {
    /** nginx-compatible: v1, 160 points per weight unit. */
    public static final RingVersion V1 = new RingVersion(Families.NGINX, Families.NGINX_POINT_MULTIPLE);

    private final RingFamily family;
    private final int[] parameters;

    /**
     * A version of {@code family} with {@code parameters}.
     *
     * @param family     the family
     * @param parameters its parameters ({@link Parameters#count()} of them)
     * @throws IllegalArgumentException for a missing family or parameters the family cannot have
     */
    public RingVersion(RingFamily family, int... parameters) {
        if (family == null) {
            throw new IllegalArgumentException("algorithm must not be null");
        }
        int[] p = parameters.clone();
        String problem = family.parameters().problem(family.toString(), p);
        if (problem != null) {
            throw new IllegalArgumentException(problem);
        }
        this.family = family;
        this.parameters = p;
    }

    /**
     * {@return pingora-ketama's V2 with {@code pointMultiple} points per weight unit}
     *
     * @param pointMultiple points per weight unit, at least 1
     */
    public static RingVersion v2(int pointMultiple) {
        return new RingVersion(Families.PINGORA, pointMultiple);
    }

    /**
     * Reads a version's name: {@code v1}, {@code v2} (the family's default parameters: {@code v2:160})
     * or {@code v2:K}; {@code nginx}, {@code pingora} and {@code pingora:K} likewise.
     *
     * @param text the name
     * @return the version
     * @throws IllegalArgumentException for a name of no family, or parameters it cannot have
     */
    public static RingVersion parse(String text) {
        Name name = Name.parse(text);
        return name.version(name.family().parameters().defaults());
    }

    /** {@return the family} */
    public RingFamily family() {
        return family;
    }

    /** {@return the parameters (a copy)} */
    public int[] parameters() {
        return parameters.clone();
    }

    /**
     * {@return the first parameter: points per weight unit for v1 (always 160) and v2; what the ring
     * index stores in its parameter word}
     */
    public int pointMultiple() {
        return parameters[0];
    }

    /** {@return what keys are hashed with in a ring of this version: its family's, or the one a parameter names ({@code twemproxy:HASH})} */
    public KeyHash keyHash() {
        return family.keyHash(parameters);
    }

    /** {@return how its points are made: its family's point source for its parameters} */
    public PointSource points() {
        return family.points(parameters);
    }

    /** {@return the name: {@code v1}, {@code v2:K}} */
    public String name() {
        return family.parameters().name(family.toString(), parameters);
    }

    /**
     * {@return the bytes of this version in the file's input digest (FORMAT.md, "input digest"): its
     * name in ASCII, then a zero byte} For v1 that is {@code "v1" 00}, for v2:K {@code "v2:" K 00}: the
     * bytes the digest has always hashed (a family's written name is fixed with its code).
     */
    public byte[] digestEncoding() {
        byte[] name = name().getBytes(StandardCharsets.US_ASCII);
        return Arrays.copyOf(name, name.length + 1);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RingVersion v && v.family == family && Arrays.equals(v.parameters, parameters);
    }

    @Override
    public int hashCode() {
        return 31 * family.code() + Arrays.hashCode(parameters);
    }

    /** {@return {@link #name()}} */
    @Override
    public String toString() {
        return name();
    }

    /**
     * A version's name as written, which may leave the parameters out ({@code v2}): a family, and the
     * written parameters or none. Selects a version among a file's ({@link #matches}) or makes one
     * with defaults for what is left out ({@link #version}).
     */
    public static final class Name {
        private final String text;
        private final RingFamily family;
        private final int[] written;

        private Name(String text, RingFamily family, int[] written) {
            this.text = text;
            this.family = family;
            this.written = written;
        }

        /**
         * Parses {@code family} or {@code family:P[:P...]} with the family's written parameters.
         *
         * @param text the name as written
         * @return the name
         * @throws IllegalArgumentException {@code unknown algorithm 'x' (expected v1, v2, …)} for an unknown
         *                                  family, {@code bad version 'x' (expected ...)} for bad parameters
         */
        public static Name parse(String text) {
            int colon = text.indexOf(':');
            String familyName = colon < 0 ? text : text.substring(0, colon);
            RingFamily family = Families.forName(familyName);
            if (colon < 0) {
                return new Name(text, family, null);
            }
            Parameters grammar = family.parameters();
            String[] parts = text.substring(colon + 1).split(":", -1);
            int[] written = new int[parts.length];
            boolean ok = parts.length <= grammar.written();
            for (int i = 0; ok && i < parts.length; i++) {
                written[i] = grammar.parse(parts[i]);
                ok = written[i] >= 0;
            }
            if (!ok) {
                throw new IllegalArgumentException("bad version " + TextLines.quote(text) + " (expected "
                        + TextLines.list(grammar.syntax(familyName)) + ")");
            }
            return new Name(text, family, written);
        }

        /** {@return the text parsed} */
        public String text() {
            return text;
        }

        /** {@return the family named} */
        public RingFamily family() {
            return family;
        }

        /** {@return whether the name leaves out parameters the family's names write (a bare {@code v2})} */
        public boolean leavesOutParameters() {
            return written == null && family.parameters().written() > 0;
        }

        /**
         * {@return the version named, taking what the name leaves out from {@code defaults} (the family's
         * full parameters)}
         *
         * @param defaults the parameters of a name that leaves them out
         */
        public RingVersion version(int... defaults) {
            return new RingVersion(
                    family, written == null ? defaults : family.parameters().complete(text, written));
        }

        /**
         * {@return whether {@code v} is of this family and has every parameter this name writes}
         *
         * @param v a version
         */
        public boolean matches(RingVersion v) {
            if (v.family() != family) {
                return false;
            }
            if (written == null) {
                return true;
            }
            int[] all = family.parameters().writtenPart(v.parameters);
            return all.length >= written.length && Arrays.equals(Arrays.copyOf(all, written.length), written);
        }

        @Override
        public String toString() {
            return text;
        }
    }
}
