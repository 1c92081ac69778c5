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

    /** For build: the versions to write. */
    static final Option BUILD_ALGORITHM = Option.valued(ALGORITHM, "LIST", """
            v1 (nginx hash ... consistent, the default), v2 (pingora-ketama V2),
            or v1,v2 for both in one file; the first is the file's default""").shownAs("v1|v2|v1,v2");
    static final Option BUILD_POINT_MULTIPLE = Option.valued(POINT_MULTIPLE, "K", "points per weight unit for v2 (default 160)");

    /** For readers: which of the file's versions. */
    static final Option READ_ALGORITHM = Option.valued(ALGORITHM, "V",
            "v1 or v2 (or v2:K) when the file holds several versions (default: the first)").shownAs("v1|v2[:K]");
    static final Option READ_POINT_MULTIPLE = Option.valued(POINT_MULTIPLE, "K", "which v2 ring, when the file holds several");

    /** The largest point multiple a {@link RingVersion} holds; a ring's point count limits a build further. */
    static final long MAX_POINT_MULTIPLE = Integer.MAX_VALUE;

    private Versions() {
    }

    /** For build: {@code v1}, {@code v2} or a list {@code v1,v2}; the point multiple applies to v2 (default 160). */
    static List<RingVersion> forBuild(Command.Args args) throws Command.UsageException {
        String list = args.has(ALGORITHM) ? args.get(ALGORITHM) : "v1";
        int k = (int) args.getLong(POINT_MULTIPLE, 1, MAX_POINT_MULTIPLE, Algorithm.NGINX_POINT_MULTIPLE);
        List<RingVersion> versions = new ArrayList<>();
        for (String name : list.split(",", -1)) {
            Algorithm a = parseAlgorithm(name);
            RingVersion v = a == Algorithm.V1 ? RingVersion.V1 : RingVersion.v2(k);
            if (versions.contains(v)) {
                throw new Command.UsageException("algorithm " + TextLines.quote(name) + " listed twice");
            }
            versions.add(v);
        }
        if (args.has(POINT_MULTIPLE) && versions.stream().noneMatch(v -> v.algorithm() == Algorithm.V2)) {
            throw new Command.UsageException("--point-multiple applies to v2 only (v1 always has 160 points per weight unit, as nginx)");
        }
        return versions;
    }

    /** For readers: the version to use from {@code store}, by {@code --algorithm v1|v2[:K]} and {@code --point-multiple}; the file's first by default. */
    static RingVersion select(Command.Args args, RingStore store) throws Command.UsageException {
        if (!args.has(ALGORITHM) && args.has(POINT_MULTIPLE)) {
            throw new Command.UsageException("--point-multiple needs --algorithm v2");
        }
        Integer k = args.has(POINT_MULTIPLE) ? (int) args.getLong(POINT_MULTIPLE, 1, MAX_POINT_MULTIPLE, 0) : null;
        return select(args.get(ALGORITHM), k, store);
    }

    /** The version named {@code name} ({@code v1}, {@code v2}, {@code v2:K}; null = the file's default) in {@code store}. */
    static RingVersion select(String name, Integer pointMultiple, RingStore store) throws Command.UsageException {
        if (name == null) {
            return store.versions().getFirst();
        }
        int colon = name.indexOf(':');
        Algorithm a = parseAlgorithm(colon < 0 ? name : name.substring(0, colon));
        Integer k = pointMultiple;
        if (colon >= 0) {
            long parsed = TextLines.decimal(name.substring(colon + 1), MAX_POINT_MULTIPLE);
            if (parsed < 1 || parsed > MAX_POINT_MULTIPLE) {
                throw new Command.UsageException("bad point multiple in " + TextLines.quote(name) + " (expected v2:K with K from 1 to "
                        + MAX_POINT_MULTIPLE + ")");
            }
            k = (int) parsed;
        }
        List<RingVersion> matching = new ArrayList<>();
        for (RingVersion v : store.versions()) {
            if (v.algorithm() == a && (k == null || v.pointMultiple() == k)) {
                matching.add(v);
            }
        }
        if (matching.size() != 1) {
            throw new Command.UsageException((matching.isEmpty() ? "no " : "more than one ") + TextLines.quote(name)
                    + (k != null && colon < 0 ? " with point multiple " + k : "") + " ring in " + store.path()
                    + " (it has " + store.versions() + (matching.isEmpty() ? "" : "; say which with v2:K") + ")");
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
