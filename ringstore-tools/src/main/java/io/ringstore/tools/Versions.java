package io.ringstore.tools;

import io.ringstore.Backend;
import io.ringstore.RingStore;
import io.ringstore.family.RingVersion;
import io.ringstore.internal.TextLines;
import java.util.ArrayList;
import java.util.List;

/** The {@code --algorithm} and {@code --point-multiple} options shared by several commands. */
final class Versions {
    static final String ALGORITHM = "--algorithm";
    static final String POINT_MULTIPLE = "--point-multiple";

    /** The largest point multiple a {@link RingVersion} holds; a ring's point count limits a build further. */
    static final long MAX_POINT_MULTIPLE = Integer.MAX_VALUE;

    private Versions() {}

    /**
     * For build: {@code --algorithm} is a list of {@code v1}, {@code v2} and {@code v2:K} (default
     * {@code v1}); {@code --point-multiple K} is the K of a bare {@code v2} (default 160), so {@code
     * v1,v2 --point-multiple 16} is {@code v1,v2:16}. It is refused when the list has no bare v2, where it
     * would apply to nothing.
     */
    static List<RingVersion> forBuild(Args args) throws Command.UsageException {
        return forBuild(args, "v1");
    }

    /** {@link #forBuild(Args)} with another list than {@code v1} when {@code --algorithm} is not given (an input format's own version). */
    static List<RingVersion> forBuild(Args args, String defaultList) throws Command.UsageException {
        String list = args.has(ALGORITHM) ? args.get(ALGORITHM) : defaultList;
        int k = (int) args.getLong(POINT_MULTIPLE, 1, MAX_POINT_MULTIPLE, RingVersion.V1.pointMultiple());
        List<RingVersion> versions = new ArrayList<>();
        boolean bareV2 = false;
        for (String item : list.split(",", -1)) {
            RingVersion.Name name = parse(item);
            bareV2 |= takesPointMultiple(name);
            RingVersion v = version(name, k);
            if (versions.contains(v)) {
                throw new Command.UsageException(
                        "version " + v + " listed twice (" + ALGORITHM + " " + TextLines.quote(list) + ")");
            }
            versions.add(v);
        }
        if (args.has(POINT_MULTIPLE) && !bareV2) {
            throw new Command.UsageException(
                    POINT_MULTIPLE + " is the K of a bare v2 in " + ALGORITHM + ", and " + TextLines.quote(list)
                            + " has none (v1 always has 160 points per weight unit, as nginx; write v2:K for others)");
        }
        return versions;
    }

    /**
     * For readers: the version to use from {@code store}, the file's first by default. {@code
     * --point-multiple K} alone is {@code --algorithm v2:K}; with {@code --algorithm v2} it is its K; with
     * {@code v1} or {@code v2:K} it is refused, as one of the two would be ignored.
     */
    static RingVersion select(Args args, RingStore store) throws Command.UsageException {
        if (!args.has(POINT_MULTIPLE)) {
            return select(args.get(ALGORITHM), store);
        }
        long k = args.getLong(POINT_MULTIPLE, 1, MAX_POINT_MULTIPLE, 0);
        if (args.has(ALGORITHM) && !takesPointMultiple(parse(args.get(ALGORITHM)))) {
            throw new Command.UsageException(POINT_MULTIPLE + " names a v2 ring; it cannot go with " + ALGORITHM + " "
                    + TextLines.quote(args.get(ALGORITHM)) + " (give one of the two)");
        }
        return select((args.has(ALGORITHM) ? args.get(ALGORITHM) : "v2") + ":" + k, store);
    }

    /** The version named {@code name} ({@code v1}, {@code v2}, {@code v2:K}; null = the file's default) in {@code store}. */
    static RingVersion select(String name, RingStore store) throws Command.UsageException {
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
            throw new Command.UsageException((matching.isEmpty() ? "no " : "more than one ") + TextLines.quote(name)
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

    /** The library's grammar ({@link RingVersion.Name#parse}), its message as a usage error. */
    private static RingVersion.Name parse(String text) throws Command.UsageException {
        try {
            return RingVersion.Name.parse(text);
        } catch (IllegalArgumentException e) {
            throw new Command.UsageException(e.getMessage());
        }
    }

    /** The version {@code name} names; a bare name's written parameter is {@code k} ({@code --point-multiple}). */
    private static RingVersion version(RingVersion.Name name, int k) throws Command.UsageException {
        try {
            return takesPointMultiple(name)
                    ? name.version(k)
                    : name.version(name.family().parameters().defaults());
        } catch (IllegalArgumentException e) {
            throw new Command.UsageException(e.getMessage());
        }
    }

    /** Whether {@code --point-multiple} gives the name's parameter: a bare name of a family whose one written parameter is a point count ({@code v2}, {@code spymemcached}, {@code dubbo}). */
    private static boolean takesPointMultiple(RingVersion.Name name) {
        return name.leavesOutParameters() && name.family().parameters().takesPointMultiple();
    }

    /** How an answer is printed: as the family's original prints it (nginx's {@code $upstream_addr} for v1, Rust's socket address for v2). */
    static String address(Backend b, RingVersion v) {
        return b.answer(v.family());
    }
}
