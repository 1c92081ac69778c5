package io.ringstore;

import io.ringstore.internal.BackendAccess;
import io.ringstore.internal.Crc32;
import io.ringstore.internal.ServerAddress;
import io.ringstore.internal.TextLines;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;

/**
 * A ring family: one way of turning a backends list into ring points and of looking keys up in them,
 * exactly as some client or proxy does. Everything that differs between families is a method here,
 * so that the builder, the reader, verify, the analysis and the CLI ask the family instead of
 * testing which family it is:
 *
 * <ul>
 *   <li>{@link #name()} and {@link #code()}: how the command line names it, and the byte the ring
 *       index stores (FORMAT.md);</li>
 *   <li>its parameters: how many a {@link RingVersion} of it has, which of them are written in its
 *       name ({@code v2:K}), their defaults and limits ({@link #checkParameters});</li>
 *   <li>{@link #keyHash()}: what keys are looked up by;</li>
 *   <li>the point source ({@link #pointInput}): the bytes of a backend whose CRC-32 chain gives its
 *       points, and the weight rule ({@link #points}): how many points each backend gets;</li>
 *   <li>the tie rule ({@link #tieRanks}): who keeps a hash two backends produce;</li>
 *   <li>the address check ({@link #addressProblem}): a backend the family cannot place;</li>
 *   <li>{@link #answer}: how the chosen backend is printed, as the original prints it.</li>
 * </ul>
 *
 * <p>The families are {@link #all()}, found by {@link #forName} and {@link #forCode}. A family is
 * immutable and thread-safe. Families are defined in this package only (the constructor is not
 * public): each is one small class ({@code NginxFamily}, {@code PingoraV2Family}), passing the family
 * contract test ({@code RingFamilyContract} in the tests: reference vectors, a golden checksum,
 * monotonicity, owned points, ties). Adding a family is one class, a line in {@link #all()}'s list,
 * its digest tag in FORMAT.md, and one subclass of the contract with its vectors.
 */
public abstract class RingFamily {
    /** nginx {@code hash $key consistent} ({@code v1}): 160 points per weight unit, the first listed keeps a tie. */
    public static final RingFamily NGINX = new NginxFamily();
    /** pingora-ketama {@code Version::V2 { point_multiple }} ({@code v2:K}): K points per weight unit, the smallest address keeps a tie. */
    public static final RingFamily PINGORA_V2 = new PingoraV2Family();

    private static final List<RingFamily> ALL = List.of(NGINX, PINGORA_V2);

    private final String name;
    private final int code;
    private final KeyHash keyHash;

    RingFamily(String name, int code, KeyHash keyHash) {
        if (code < 1 || code > 255) {
            throw new IllegalArgumentException("a family code is one byte, 0 unused: code=" + code);
        }
        this.name = name;
        this.code = code;
        this.keyHash = keyHash;
    }

    /** {@return every family, in code order} */
    public static List<RingFamily> all() {
        return ALL;
    }

    /**
     * {@return the family named {@code name} on the command line}
     *
     * @param name the family's name: {@code v1}, {@code v2}
     * @throws IllegalArgumentException for a name no family has
     */
    public static RingFamily forName(String name) {
        for (RingFamily f : ALL) {
            if (f.name.equals(name)) {
                return f;
            }
        }
        throw new IllegalArgumentException("unknown algorithm " + TextLines.quote(name) + " (expected "
                + names(ALL.stream().map(RingFamily::name).toList()) + ")");
    }

    /**
     * {@return the family whose ring index byte is {@code code}, if any}
     *
     * @param code the ring index's algorithm byte
     */
    public static Optional<RingFamily> forCode(int code) {
        for (RingFamily f : ALL) {
            if (f.code == code) {
                return Optional.of(f);
            }
        }
        return Optional.empty();
    }

    /** {@code a}, {@code a or b}, {@code a, b or c}. */
    static String names(List<String> items) {
        if (items.size() == 1) {
            return items.getFirst();
        }
        return String.join(", ", items.subList(0, items.size() - 1)) + " or " + items.getLast();
    }

    /** {@return the name on the command line and in dumps: {@code v1}, {@code v2}} */
    public final String name() {
        return name;
    }

    /** {@return the byte the ring index stores for a ring of this family (FORMAT.md)} */
    public final int code() {
        return code;
    }

    /** {@return what keys are hashed with before the ring is searched} */
    public final KeyHash keyHash() {
        return keyHash;
    }

    // ---- parameters -------------------------------------------------------------------------

    /**
     * {@return how many parameters a version of this family has (the ring index stores the first in
     * its parameter word)}
     */
    public abstract int parameterCount();

    /**
     * {@return how many of the parameters, from the last, a version's name writes ({@code v2:K}: 1;
     * {@code v1}, whose point multiple is fixed: 0)}
     */
    public abstract int writtenParameters();

    /** {@return the parameters of a version named by the family's bare name ({@code v2} is {@code v2:160})} */
    public abstract int[] defaultParameters();

    /** {@return the largest value a written parameter may have} */
    abstract long maxWrittenParameter();

    /** {@return the forms a name of this family's versions takes, for error messages: {@code v2}, {@code v2:K with K from 1 to …}} */
    abstract List<String> syntax();

    /**
     * Checks a version's parameters.
     *
     * @param parameters the version's parameters, as many as {@link #parameterCount()}
     * @throws IllegalArgumentException naming the parameter and the rule it breaks
     */
    public abstract void checkParameters(int[] parameters);

    /** {@return the parameters of a version whose written parameters are {@code written} (as many as {@link #writtenParameters()})} */
    abstract int[] fromWritten(int[] written);

    /** {@return the written part of {@code parameters}: the name's {@code :K} values} */
    abstract int[] written(int[] parameters);

    /**
     * {@return the version's name: the family's name and each written parameter after a colon
     * ({@code v1}, {@code v2:16}); {@link RingVersion#parse} reads it back}
     */
    final String versionName(int[] parameters) {
        StringBuilder s = new StringBuilder(name);
        for (int p : written(parameters)) {
            s.append(':').append(Integer.toUnsignedString(p));
        }
        return s.toString();
    }

    /**
     * The bytes of a version in the file's input digest (FORMAT.md, "input digest"): the family's
     * digest tag ({@link #digestTag()}, fixed per code), then {@code ':'} and the decimal digits (no
     * leading zero) of each written parameter, then a zero byte. For v1 that is {@code "v1" 00}, for
     * v2:K {@code "v2:" K 00}: the bytes the digest has always hashed.
     *
     * @param parameters a version's parameters
     * @return the encoding
     */
    public final byte[] digestEncoding(int[] parameters) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(digestTag().getBytes(StandardCharsets.US_ASCII));
        for (int p : written(parameters)) {
            out.writeBytes((":" + Integer.toUnsignedString(p)).getBytes(StandardCharsets.US_ASCII));
        }
        out.write(0);
        return out.toByteArray();
    }

    /** {@return the ASCII tag of this family's code in the input digest (FORMAT.md lists one per code); never changes} */
    abstract String digestTag();

    // ---- points -----------------------------------------------------------------------------

    /**
     * {@return the bytes of {@code backend} its CRC-32 point chain starts from}
     *
     * @param backend a backend
     */
    public abstract byte[] pointInput(Backend backend);

    /**
     * {@return the CRC-32 state {@code backend}'s point chain starts from: {@link #pointInput} fed to CRC-32}
     *
     * @param backend a backend
     */
    public final int chainBase(Backend backend) {
        return Crc32.update(Crc32.INITIAL, pointInput(backend));
    }

    /**
     * The weight rule: each backend's number of points in a ring of {@code version} whose members
     * have {@code weights}.
     *
     * @param weights each member's weight
     * @param version a version of this family
     * @return each member's point count, in the same order
     * @throws ArithmeticException when a count does not fit a long
     */
    public abstract long[] points(long[] weights, RingVersion version);

    /**
     * The tie rule: who keeps a hash that several of {@code backends} produce, as a rank per backend
     * (index i for backend i, 0 to n-1 each once; lower keeps it).
     *
     * @param backends the ring's backends, in file order
     * @return each backend's rank
     */
    public abstract int[] tieRanks(List<Backend> backends);

    /**
     * {@return why {@code backend} cannot be in a ring of this family, or null when it can}
     *
     * @param backend a backend
     */
    public abstract String addressProblem(Backend backend);

    /**
     * {@return {@code backend} as the original client prints the backend it chose}
     *
     * @param backend the backend a lookup chose
     */
    public abstract String answer(Backend backend);

    /** The address of {@code backend} as parsed: for the family classes. */
    static ServerAddress address(Backend backend) {
        return BackendAccess.address(backend);
    }

    /** Every family's version syntax, for the parse error: {@code v1, v2 or v2:K with K from 1 to …}. */
    static String allSyntax() {
        return names(ALL.stream().flatMap(f -> f.syntax().stream()).toList());
    }

    @Override
    public String toString() {
        return name;
    }
}
