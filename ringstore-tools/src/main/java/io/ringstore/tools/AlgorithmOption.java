package io.ringstore.tools;

import io.ringstore.RingStore;
import io.ringstore.family.Families;
import io.ringstore.family.RingFamily;
import io.ringstore.family.RingVersion;
import io.ringstore.internal.TextLines;
import io.ringstore.tools.Command.UsageException;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@code --algorithm} option and its companion {@code --point-multiple}, owned here alone: their
 * declarations for every command that takes them (which ring versions to build, or which of a file's
 * versions to read), and what their values mean. A value is a version's name in the library's grammar
 * ({@link RingVersion.Name}: a family's name, {@code nginx} or {@code v1}, {@code pingora:K} or
 * {@code v2:K}, {@code envoy:MIN:MAX}…); the help lists every family of the table ({@link Families})
 * with the forms of its versions' names. The declarations differ only in their help, which says what
 * the command does with the value.
 */
final class AlgorithmOption {
    static final String ALGORITHM = "--algorithm";
    static final String POINT_MULTIPLE = "--point-multiple";

    /** The largest point multiple a {@link RingVersion} holds; a ring's point count limits a build further. */
    static final long MAX_POINT_MULTIPLE = Integer.MAX_VALUE;
    /** The longest line of the families' list in the help, beside the help column. */
    private static final int FAMILY_LINE = 92;
    /** What build makes without {@code --algorithm}. */
    static final String DEFAULT_BUILD = "v1";

    /** build: the versions to write. */
    static final AlgorithmOption BUILD = new AlgorithmOption(
            "LIST",
            "v1|v2[:K][,...]",
            """
            v1 (nginx hash ... consistent, the default), v2 (pingora-ketama V2,
            --point-multiple K points per weight unit, default 160), v2:K, or a list
            of them (v1,v2:16,v2:160), all in one file; the first is the file's default.
            --from twemproxy: the pool's twemproxy:HASH first (and the default);
            --from libketama: default libketama
            """ + families(),
            "points per weight unit of a bare v2 in --algorithm (default 160)");

    /** Readers of a ring file (lookup): which of the file's versions. */
    static final AlgorithmOption READ = new AlgorithmOption(
            "V", "v1|v2[:K]", """
            v1 or v2 (or v2:K) when the file holds several versions (default: the first);
            any version's name, or its family's: nginx is v1, pingora:K is v2:K""", "which v2 ring, when the file holds several: alone, the same as --algorithm v2:K");

    /** analyze: one algorithm for a {@code --backends} sweep, the versions to build for a backends file. */
    static final AlgorithmOption ANALYZE = new AlgorithmOption(
            "V", "V", """
            v2 (pingora-ketama, default with --backends) or v1 (nginx: text as written,
            first listed wins a tie); for a BACKENDS_FILE a list as build takes it
            (v1, v2, v2:K, v1,v2:16, libketama, envoy:MIN; default v1)
            """ + families(), "points per weight unit of a bare v2 for a BACKENDS_FILE (default 160)");

    /** {@code --algorithm} as this command's synopsis and help show it. */
    final Option algorithm;
    /** {@code --point-multiple} as this command's synopsis and help show it. */
    final Option pointMultiple;

    private AlgorithmOption(String value, String shownAs, String help, String pointMultipleHelp) {
        this.algorithm = Option.valued(ALGORITHM, value, help).shownAs(shownAs);
        this.pointMultiple = Option.valued(POINT_MULTIPLE, "K", pointMultipleHelp);
    }

    /**
     * Every family of the table, one line each: its name, the name its versions are written with when
     * another, the forms of its versions' names, and the version its bare name is.
     */
    private static String families() {
        StringBuilder s = new StringBuilder("the families, each by its name:");
        for (RingFamily f : Families.all()) {
            String written = f.toString();
            List<String> forms = f.parameters().syntax(written);
            StringBuilder line = new StringBuilder(f.name());
            if (!written.equals(f.name())) {
                line.append(" = ").append(written);
            }
            if (forms.size() > 1) {
                line.append(": ")
                        .append(TextLines.list(forms.subList(1, forms.size())))
                        .append("; ")
                        .append(written)
                        .append(" is ")
                        .append(new RingVersion(f, f.parameters().defaults()));
            }
            s.append(wrapped(line.toString()));
        }
        return s.toString();
    }

    /** A line of {@link #families()}, indented, broken at a space where it would pass {@link #FAMILY_LINE} characters. */
    private static String wrapped(String line) {
        StringBuilder s = new StringBuilder();
        String indent = "\n  ";
        String rest = line;
        while (rest.length() > FAMILY_LINE && rest.lastIndexOf(' ', FAMILY_LINE) > 0) {
            int cut = rest.lastIndexOf(' ', FAMILY_LINE);
            s.append(indent).append(rest, 0, cut);
            rest = rest.substring(cut + 1);
            indent = "\n      ";
        }
        return s.append(indent).append(rest).toString();
    }

    /**
     * The versions to build: a list ({@code v1,v2:16}; {@code defaultList} when {@code --algorithm} is not
     * given: {@link #DEFAULT_BUILD}, or an input format's own version), {@code --point-multiple} the K of a
     * bare v2 (default 160), so {@code v1,v2 --point-multiple 16} is {@code v1,v2:16}. It is refused when
     * the list has no bare v2, where it would apply to nothing.
     */
    static List<RingVersion> toBuild(Args args, String defaultList) throws UsageException {
        String list = args.has(ALGORITHM) ? args.get(ALGORITHM) : defaultList;
        int k = (int) args.getLong(POINT_MULTIPLE, 1, MAX_POINT_MULTIPLE, RingVersion.V1.pointMultiple());
        List<RingVersion> versions = new ArrayList<>();
        boolean bareV2 = false;
        for (String item : list.split(",", -1)) {
            RingVersion.Name name = parse(item);
            bareV2 |= takesPointMultiple(name);
            RingVersion v = version(name, k);
            if (versions.contains(v)) {
                throw new UsageException(
                        "version " + v + " listed twice (" + ALGORITHM + " " + TextLines.quote(list) + ")");
            }
            versions.add(v);
        }
        if (args.has(POINT_MULTIPLE) && !bareV2) {
            throw new UsageException(POINT_MULTIPLE + " is the K of a bare v2 in " + ALGORITHM + ", and "
                    + TextLines.quote(list)
                    + " has none (v1 always has 160 points per weight unit, as nginx; write v2:K for others)");
        }
        return versions;
    }

    /**
     * The one of {@code store}'s versions named, the file's first by default. {@code --point-multiple K}
     * alone is {@code --algorithm v2:K}; with {@code --algorithm v2} it is its K; with {@code v1} or
     * {@code v2:K} it is refused, as one of the two would be ignored.
     */
    RingVersion select(Args args, RingStore store) throws UsageException {
        if (!args.has(POINT_MULTIPLE)) {
            return select(args.get(ALGORITHM), store);
        }
        long k = args.getLong(POINT_MULTIPLE, 1, MAX_POINT_MULTIPLE, 0);
        if (args.has(ALGORITHM) && !takesPointMultiple(parse(args.get(ALGORITHM)))) {
            throw new UsageException(POINT_MULTIPLE + " names a v2 ring; it cannot go with " + ALGORITHM + " "
                    + TextLines.quote(args.get(ALGORITHM)) + " (give one of the two)");
        }
        return select((args.has(ALGORITHM) ? args.get(ALGORITHM) : "v2") + ":" + k, store);
    }

    /** The version named {@code name} ({@code v1}, {@code v2}, {@code v2:K}, {@code nginx}…; null = the file's default) in {@code store}. */
    static RingVersion select(String name, RingStore store) throws UsageException {
        if (name == null) {
            return store.versions().getFirst();
        }
        RingVersion.Name n = parse(name);
        List<RingVersion> matching = new ArrayList<>();
        for (RingVersion v : store.versions()) {
            if (n.matches(v)) {
                matching.add(v);
            }
        }
        if (matching.size() != 1) {
            throw new UsageException((matching.isEmpty() ? "no " : "more than one ") + TextLines.quote(name)
                    + " ring in " + store.path() + " (it has " + store.versions()
                    + (matching.isEmpty()
                            ? ""
                            : "; say which: "
                                    + String.join(
                                            " or ",
                                            matching.stream()
                                                    .map(RingVersion::name)
                                                    .toList()))
                    + ")");
        }
        return matching.getFirst();
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
            RingVersion.Name name =
                    RingVersion.Name.parse(args.has(algorithm.name()) ? args.get(algorithm.name()) : "v2");
            family = name.family();
            if (!name.leavesOutParameters() && family.parameters().written() > 0) {
                throw new UsageException("--backends N takes an algorithm without parameters (--points gives k): "
                        + TextLines.quote(name.text()) + " (write " + family + ")");
            }
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

    /** The library's grammar ({@link RingVersion.Name#parse}), its message as a usage error. */
    private static RingVersion.Name parse(String text) throws UsageException {
        try {
            return RingVersion.Name.parse(text);
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }
    }

    /** The version {@code name} names; a bare name's written parameter is {@code k} ({@code --point-multiple}). */
    private static RingVersion version(RingVersion.Name name, int k) throws UsageException {
        try {
            return takesPointMultiple(name)
                    ? name.version(k)
                    : name.version(name.family().parameters().defaults());
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }
    }

    /** Whether {@code --point-multiple} gives the name's parameter: a bare name of a family whose one written parameter is a point count ({@code v2}, {@code spymemcached}, {@code dubbo}). */
    private static boolean takesPointMultiple(RingVersion.Name name) {
        return name.leavesOutParameters() && name.family().parameters().takesPointMultiple();
    }
}
