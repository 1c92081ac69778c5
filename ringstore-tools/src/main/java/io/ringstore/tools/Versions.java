package io.ringstore.tools;

import io.ringstore.Algorithm;
import io.ringstore.Backend;
import io.ringstore.RingStore;
import io.ringstore.RingVersion;
import io.ringstore.internal.TextLines;

import java.util.ArrayList;
import java.util.List;

/** The {@code --algorithm} and {@code --point-multiple} options shared by several commands. */
final class Versions {
    static final String ALGORITHM = "--algorithm";
    static final String POINT_MULTIPLE = "--point-multiple";

    /** The largest point multiple a {@link RingVersion} holds; a ring's point count limits a build further. */
    static final long MAX_POINT_MULTIPLE = Integer.MAX_VALUE;

    private Versions() {
    }

    /**
     * One name of a version as written: {@code v1}, {@code v2} or {@code v2:K}.
     *
     * @param pointMultiple K of {@code v2:K}, or {@code null} for a bare name
     */
    private record Name(String text, Algorithm algorithm, Integer pointMultiple) {
        static Name parse(String text) throws Command.UsageException {
            int colon = text.indexOf(':');
            Algorithm a = parseAlgorithm(colon < 0 ? text : text.substring(0, colon));
            if (colon < 0) {
                return new Name(text, a, null);
            }
            long k = TextLines.decimal(text.substring(colon + 1), MAX_POINT_MULTIPLE);
            if (a != Algorithm.V2 || k < 1 || k > MAX_POINT_MULTIPLE) {
                throw new Command.UsageException("bad version " + TextLines.quote(text) + " (expected v1, v2 or v2:K with K from 1 to "
                        + MAX_POINT_MULTIPLE + ")");
            }
            return new Name(text, a, (int) k);
        }

        /** A bare {@code v2}. */
        boolean takesPointMultiple() {
            return algorithm == Algorithm.V2 && pointMultiple == null;
        }
    }

    /**
     * For build: {@code --algorithm} is a list of {@code v1}, {@code v2} and {@code v2:K} (default
     * {@code v1}); {@code --point-multiple K} is the K of a bare {@code v2} (default 160), so {@code
     * v1,v2 --point-multiple 16} is {@code v1,v2:16}. It is refused when the list has no bare v2, where it
     * would apply to nothing.
     */
    static List<RingVersion> forBuild(Args args) throws Command.UsageException {
        String list = args.has(ALGORITHM) ? args.get(ALGORITHM) : "v1";
        int k = (int) args.getLong(POINT_MULTIPLE, 1, MAX_POINT_MULTIPLE, Algorithm.NGINX_POINT_MULTIPLE);
        List<RingVersion> versions = new ArrayList<>();
        boolean bareV2 = false;
        for (String item : list.split(",", -1)) {
            Name name = Name.parse(item);
            bareV2 |= name.takesPointMultiple();
            RingVersion v = name.algorithm() == Algorithm.V1 ? RingVersion.V1
                    : RingVersion.v2(name.pointMultiple() != null ? name.pointMultiple() : k);
            if (versions.contains(v)) {
                throw new Command.UsageException("version " + v + " listed twice (" + ALGORITHM + " " + TextLines.quote(list) + ")");
            }
            versions.add(v);
        }
        if (args.has(POINT_MULTIPLE) && !bareV2) {
            throw new Command.UsageException(POINT_MULTIPLE + " is the K of a bare v2 in " + ALGORITHM + ", and "
                    + TextLines.quote(list) + " has none (v1 always has 160 points per weight unit, as nginx; write v2:K for others)");
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
        if (args.has(ALGORITHM) && !Name.parse(args.get(ALGORITHM)).takesPointMultiple()) {
            throw new Command.UsageException(POINT_MULTIPLE + " names a v2 ring; it cannot go with " + ALGORITHM + " "
                    + TextLines.quote(args.get(ALGORITHM)) + " (give one of the two)");
        }
        return select("v2:" + k, store);
    }

    /** The version named {@code name} ({@code v1}, {@code v2}, {@code v2:K}; null = the file's default) in {@code store}. */
    static RingVersion select(String name, RingStore store) throws Command.UsageException {
        if (name == null) {
            return store.versions().getFirst();
        }
        Name n = Name.parse(name);
        List<RingVersion> matching = new ArrayList<>();
        for (RingVersion v : store.versions()) {
            if (v.algorithm() == n.algorithm() && (n.pointMultiple() == null || v.pointMultiple() == n.pointMultiple())) {
                matching.add(v);
            }
        }
        if (matching.size() != 1) {
            throw new Command.UsageException((matching.isEmpty() ? "no " : "more than one ") + TextLines.quote(name)
                    + " ring in " + store.path() + " (it has " + store.versions() + (matching.isEmpty() ? "" : "; say which with v2:K") + ")");
        }
        return matching.getFirst();
    }

    private static Algorithm parseAlgorithm(String name) throws Command.UsageException {
        try {
            return Algorithm.parse(name);
        } catch (IllegalArgumentException e) {
            throw new Command.UsageException(e.getMessage());
        }
    }

    /** How an answer is printed: nginx's {@code $upstream_addr} for v1, pingora's (Rust) socket address for v2. */
    static String address(Backend b, RingVersion v) {
        return v.algorithm() == Algorithm.V1 ? b.upstreamAddress() : b.socketAddress();
    }
}
