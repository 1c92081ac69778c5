package io.ringstore.tools;

import io.ringstore.RingStore;
import io.ringstore.family.Families;
import io.ringstore.family.RingFamily;
import io.ringstore.family.RingVersion;
import io.ringstore.tools.Command.UsageException;
import java.util.List;

/**
 * The {@code --algorithm} option and its companion {@code --point-multiple}, declared once for every
 * command that takes them: which ring versions to build, or which of a file's versions to read. The
 * grammar of a version ({@code v1}, {@code v2}, {@code v2:K}) is {@link Versions}'. The three
 * declarations differ only in their help, which says what the command does with the value.
 */
final class AlgorithmOption {
    /** build: the versions to write. */
    static final AlgorithmOption BUILD = new AlgorithmOption(
            "LIST", "v1|v2[:K][,...]", """
            v1 (nginx hash ... consistent, the default), v2 (pingora-ketama V2,
            --point-multiple K points per weight unit, default 160), v2:K, or a list
            of them (v1,v2:16,v2:160), all in one file; the first is the file's default.
            --from twemproxy: the pool's twemproxy:HASH first (and the default);
            --from libketama: default libketama""", "points per weight unit of a bare v2 in --algorithm (default 160)");

    /** Readers of a ring file (lookup): which of the file's versions. */
    static final AlgorithmOption READ = new AlgorithmOption(
            "V",
            "v1|v2[:K]",
            "v1 or v2 (or v2:K) when the file holds several versions (default: the first)",
            "which v2 ring, when the file holds several: alone, the same as --algorithm v2:K");

    /** analyze: one algorithm for a {@code --backends} sweep, the versions to build for a backends file. */
    static final AlgorithmOption ANALYZE =
            new AlgorithmOption("V", "V", """
            v2 (pingora-ketama, default with --backends) or v1 (nginx: text as written,
            first listed wins a tie); for a BACKENDS_FILE a list as build takes it
            (v1, v2, v2:K, v1,v2:16, libketama, envoy:MIN; default v1)""", "points per weight unit of a bare v2 for a BACKENDS_FILE (default 160)");

    /** {@code --algorithm} as this command's synopsis and help show it. */
    final Option algorithm;
    /** {@code --point-multiple} as this command's synopsis and help show it. */
    final Option pointMultiple;

    private AlgorithmOption(String value, String shownAs, String help, String pointMultipleHelp) {
        this.algorithm = Option.valued(Versions.ALGORITHM, value, help).shownAs(shownAs);
        this.pointMultiple = Option.valued(Versions.POINT_MULTIPLE, "K", pointMultipleHelp);
    }

    /** The versions to build: a list ({@code v1,v2:16}; default {@code v1}), {@code --point-multiple} the K of a bare v2. */
    List<RingVersion> toBuild(Args args) throws UsageException {
        return Versions.forBuild(args);
    }

    /** The one of {@code store}'s versions named (default: its first). */
    RingVersion select(Args args, RingStore store) throws UsageException {
        return Versions.select(args, store);
    }

    /**
     * For a {@code --backends} sweep: one algorithm, without a point multiple ({@code v1}, or the default
     * {@code v2}), whose points are a CRC-32 chain: the sweep simulates k such points per backend. The
     * other families' points are their own (MD5 texts, share rules, Envoy's scaling): a backends file
     * of theirs is analyzed as built.
     */
    RingFamily forSweep(Args args) throws UsageException {
        RingFamily family;
        try {
            family = Families.forName(args.has(algorithm.name()) ? args.get(algorithm.name()) : "v2");
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage() + " (one algorithm with --backends)");
        }
        if (!family.crcChain()) {
            throw new UsageException("--backends N simulates k CRC-32 points a backend (v1, v2); " + family
                    + " makes its points its own way: analyze a BACKENDS_FILE of it (analyze FILE --algorithm " + family
                    + ")");
        }
        return family;
    }
}
