package io.ringstore.tools;

import io.ringstore.Backend;
import io.ringstore.Ring;
import io.ringstore.RingFileException;
import io.ringstore.RingFileLayout;
import io.ringstore.RingFileLayout.Segment;
import io.ringstore.RingStore;
import io.ringstore.internal.ServerParameters;
import io.ringstore.tools.analysis.CollisionModel;
import io.ringstore.tools.analysis.FleetRing;
import io.ringstore.tools.analysis.ShareStats;
import java.io.InputStream;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Stream;

final class DumpCommand extends Command {
    @Override
    String name() {
        return "dump";
    }

    @Override
    String description() {
        return "Shows a ring file: header (generation included), backends, and every ring with its point count,\n"
                + "bytes, segment, each backend's measured share of the hash line against its weight share, and the\n"
                + "ring's measured CV of those shares beside the formula's (docs/math.md).";
    }

    private static final Option POINTS = Option.valued("--points", "N", "also list the first N points of every ring");
    private static final Option JSON = json("""
            one JSON object (top-level keys: file, format_version, generation,
            bytes, input_digest, segments, features, versions, backends (each with down, max_fails,
            fail_timeout in seconds, max_conns, and name when it has one),
            rings (each with storage: points, points with ties, view, or points with
            ties and feature bits))""");

    @Override
    List<Option> options() {
        return List.of(POINTS, JSON);
    }

    @Override
    List<String> forms() {
        return List.of("RINGFILE [{--points}] [{--json}]");
    }

    /** A backend's share of a ring. */
    private record Share(int backend, double weightShare, double lineShare) {}

    /**
     * A ring's backend shares and CV, measured and predicted (continuous formula, and with 32-bit
     * collisions): computed once per segment, shared rings reuse them.
     */
    private record Shares(
            List<Share> list, ShareStats measured, double predictedCv, CollisionModel.Result model, String problem) {
        static final Shares NONE = new Shares(List.of(), null, 0, null, null);

        /** Shares that could not be computed: the ring is shown without them, with this one line. */
        static Shares failed(RuntimeException e) {
            return new Shares(
                    List.of(),
                    null,
                    0,
                    null,
                    "shares not shown: " + (e.getMessage() != null ? e.getMessage() : e.toString()));
        }
    }

    /** The only place dump asks where a ring's points lie in the file, and their checksum. */
    private static Segment segment(Ring ring) {
        return ring.store().layout().segmentOf(ring);
    }

    /**
     * One ring as dump shows it. Its first points are not copied here: the renderers read them from the
     * mapped ring as they print, so {@code --points} of any size streams.
     *
     * @param sharedWith the earlier ring whose segment this one shares, or {@code null}
     */
    private record RingReport(
            Ring ring, Segment segment, RingFileLayout.Storage storage, long bytes, String sharedWith, Shares shares) {}

    /**
     * {@return a backend's health settings as nginx's server parameters ({@code max_fails=2 fail_timeout=1s
     * max_conns=0}), or null when they are nginx's defaults (1, 10 s, 0)}
     */
    static String health(Backend b) {
        boolean defaults = b.maxFails() == ServerParameters.DEFAULT_MAX_FAILS
                && b.failTimeoutSeconds() == ServerParameters.DEFAULT_FAIL_TIMEOUT_SECONDS
                && b.maxConns() == ServerParameters.DEFAULT_MAX_CONNS;
        return defaults
                ? null
                : "max_fails=" + b.maxFails() + " fail_timeout=" + b.failTimeoutSeconds() + "s max_conns="
                        + b.maxConns();
    }

    /**
     * What dump shows: the open file (header and backends) and its rings, with the first {@code points} points of each.
     */
    private record Report(RingStore store, List<RingReport> rings, int points) implements Result {
        @Override
        public void text(PrintStream out) {
            out.printf("file: %s%n", store.path());
            out.printf("format_version: %d%n", store.layout().formatVersion());
            out.printf("generation: %s%n", Long.toUnsignedString(store.generation()));
            out.printf("bytes: %d%n", store.fileSize());
            out.printf("input_digest: %s%n", HexFormat.of().formatHex(store.inputDigest()));
            out.printf("features: %s%n", store.features().isEmpty() ? "(none)" : String.join(", ", store.features()));
            out.printf(
                    "versions: %s%n",
                    String.join(
                            ", ",
                            store.versions().stream().map(Object::toString).toList()));
            out.printf("rings: %d (%s)%n", store.rings().size(), count(store.segmentCount(), "segment", "segments"));
            out.printf("%nbackends: %d%n", store.backendCount());
            out.printf("  %5s  %-42s %10s  %s%n", "index", "address", "weight", "features");
            for (Backend b : store.backends()) {
                String flags = String.join(
                        " ",
                        Stream.of(b.down() ? "down" : null, b.name() != null ? "name=" + b.name() : null, health(b))
                                .filter(Objects::nonNull)
                                .toList());
                out.printf(
                        "  %5d  %-42s %10d  %s%s%n",
                        b.index(),
                        b.address(),
                        b.weight(),
                        String.join(",", b.features()),
                        flags.isEmpty() ? "" : (b.features().isEmpty() ? flags : "  " + flags));
            }
            for (RingReport rr : rings) {
                Ring r = rr.ring();
                String where = "segment at " + rr.segment().offset()
                        + String.format(" crc32c 0x%08x", rr.segment().crc32c());
                out.printf(
                        Locale.ROOT,
                        "%nring %s: %s, %d bytes, %s%n",
                        r,
                        count(r.pointCount(), "point", "points"),
                        rr.bytes(),
                        r.isEmpty()
                                ? "no backend"
                                : rr.storage() == RingFileLayout.Storage.VIEW
                                        ? "view of ring " + rr.sharedWith() + " (" + where + ")"
                                        : where
                                                + (rr.storage() != RingFileLayout.Storage.POINTS
                                                        ? " (" + rr.storage().label() + ": "
                                                                + rr.segment().pointCount() + " stored)"
                                                        : "")
                                                + (rr.sharedWith() != null
                                                        ? ", shared with ring " + rr.sharedWith()
                                                        : ""));
                if (r.isEmpty()) {
                    continue;
                }
                Shares shares = rr.shares();
                if (shares.problem != null) {
                    out.printf("  %s%n", shares.problem);
                } else {
                    // Text shows a CV as a percentage with its sign, as analyze and recommend do; JSON keeps the
                    // fraction.
                    out.printf(
                            Locale.ROOT,
                            "  cv: measured %.4f %%, predicted %.4f %% (formula), %.4f %% (with 32-bit collisions)%n",
                            100 * shares.measured.cv(),
                            100 * shares.predictedCv,
                            100 * shares.model.cv());
                    out.printf(
                            "  %5s  %-42s %12s %12s %8s%n", "index", "address", "weight_share", "line_share", "ratio");
                    for (Share s : shares.list) {
                        out.printf(
                                Locale.ROOT,
                                "  %5d  %-42s %12.6f %12.6f %8.4f%n",
                                s.backend,
                                store.backend(s.backend).address(),
                                s.weightShare,
                                s.lineShare,
                                s.lineShare / s.weightShare);
                    }
                }
                if (points > 0) {
                    out.printf("  %10s  %10s  %s%n", "position", "hash", "backend");
                    for (int i = 0; i < Math.min(points, r.pointCount()); i++) {
                        int b = r.pointBackend(i);
                        out.printf(
                                "  %10d  %10s  %s%n",
                                i,
                                Long.toUnsignedString(r.pointHash(i)),
                                b < 0 ? "-" : store.backend(b).address());
                    }
                }
            }
        }

        @Override
        public void json(Json j) {
            j.field("file", store.path().toString())
                    .field("format_version", store.layout().formatVersion())
                    .fieldUnsigned("generation", store.generation())
                    .field("bytes", store.fileSize())
                    .field("input_digest", HexFormat.of().formatHex(store.inputDigest()))
                    .field("segments", store.segmentCount());
            j.beginArray("features");
            store.features().forEach(j::value);
            j.endArray().beginArray("versions");
            store.versions().forEach(v -> j.value(v.toString()));
            j.endArray().beginArray("backends");
            for (Backend b : store.backends()) {
                j.begin()
                        .field("index", b.index())
                        .field("address", b.address())
                        .field("upstream_address", b.upstreamAddress())
                        .field("socket_address", b.socketAddress())
                        .field("weight", b.weight())
                        .beginArray("features");
                b.features().forEach(j::value);
                j.endArray()
                        .field("down", b.down())
                        .field("max_fails", b.maxFails())
                        .field("fail_timeout", b.failTimeoutSeconds())
                        .field("max_conns", b.maxConns());
                if (b.name() != null) {
                    j.field("name", b.name());
                }
                j.end();
            }
            j.endArray().beginArray("rings");
            for (RingReport rr : rings) {
                Ring r = rr.ring();
                j.begin().field("version", r.version().toString()).beginArray("features");
                r.features().forEach(j::value);
                j.endArray()
                        .field("points", r.pointCount())
                        .field("bytes", rr.bytes())
                        .field("storage", rr.storage().label())
                        .field("segment_offset", rr.segment().offset())
                        .field(
                                "segment_crc32c",
                                String.format("0x%08x", rr.segment().crc32c()));
                if (rr.storage() == RingFileLayout.Storage.VIEW) {
                    j.field("view_of", rr.sharedWith());
                } else if (rr.sharedWith() != null) {
                    j.field("shares_segment_with", rr.sharedWith());
                }
                Shares shares = rr.shares();
                if (shares.problem != null) {
                    j.field("problem", shares.problem);
                } else if (!r.isEmpty()) {
                    j.field("measured_cv", shares.measured.cv())
                            .field("predicted_cv", shares.predictedCv)
                            .field("predicted_cv_32bit", shares.model.cv());
                }
                j.beginArray("backends");
                for (Share s : shares.list) {
                    j.begin()
                            .field("index", s.backend)
                            .field("weight_share", s.weightShare)
                            .field("line_share", s.lineShare)
                            .end();
                }
                j.endArray();
                if (points > 0) {
                    j.beginArray("first_points");
                    for (int i = 0; i < Math.min(points, r.pointCount()); i++) {
                        j.begin();
                        if (r.isWide()) { // a u64 above 2^53 is not a JSON number every reader keeps exactly: a
                            // decimal string
                            j.field("hash", Long.toUnsignedString(r.pointHash(i)));
                        } else {
                            j.field("hash", r.pointHash(i));
                        }
                        j.field("backend", r.pointBackend(i)).end();
                    }
                    j.endArray();
                }
                j.end();
            }
            j.endArray();
        }
    }

    @Override
    int run(Args args, InputStream in, PrintStream out, PrintStream err)
            throws UsageException, FailedException, RingFileException {
        if (args.positional.size() != 1) {
            throw new UsageException(args.positional.isEmpty() ? "missing RINGFILE" : "expected one RINGFILE");
        }
        int points = (int) args.getLong(POINTS.name(), 0, Integer.MAX_VALUE, 0);
        try (RingStore store = RingStore.open(args.file(0))) {
            print(report(store, points), args, out);
            return Main.OK;
        }
    }

    private static Report report(RingStore store, int points) {
        Map<Long, Shares> bySegment = new HashMap<>();
        Map<Long, Ring> firstBySegment = new HashMap<>();
        List<RingReport> rings = new ArrayList<>();
        RingFileLayout layout = store.layout();
        for (Ring r : store.rings()) {
            Segment segment = segment(r);
            RingFileLayout.Storage storage = layout.storage(r);
            String sharedWith = null;
            Shares shares = Shares.NONE;
            Ring first = firstBySegment.putIfAbsent(segment.offset(), r);
            if (!r.isEmpty()) {
                sharedWith = first == null ? null : first.toString();
                // A view's points are its own selection of the segment: its shares are its own too.
                shares = storage == RingFileLayout.Storage.VIEW
                        ? sharesOrProblem(r, store)
                        : bySegment.computeIfAbsent(segment.offset(), o -> sharesOrProblem(r, store));
            }
            rings.add(new RingReport(r, segment, storage, layout.ownBytes(r), sharedWith, shares));
        }
        return new Report(store, rings, points);
    }

    /**
     * The shares of a ring, or the one line saying why they cannot be shown: what open checks rules out
     * the failures known (no member backend, weights × point multiple past a long), and dump shows the
     * rest of the file whatever one ring's arithmetic does.
     */
    private static Shares sharesOrProblem(Ring ring, RingStore store) {
        try {
            return shares(ring, store);
        } catch (RuntimeException e) {
            return Shares.failed(e);
        }
    }

    private static Shares shares(Ring ring, RingStore store) {
        double[] line = ring.lineShares();
        // The family's weight rule gives the shares a ring aims at: weight × K for v1 and v2, 160 each
        // for Dubbo's and Couchbase's, none for a down backend in a family that leaves it out.
        FleetRing fr = FleetRing.of(FleetRing.members(store.backends(), ring.features()), ring.version());
        double[] expected = fr.pointShares();
        List<Share> list = new ArrayList<>();
        for (int i = 0; i < expected.length; i++) {
            int b = fr.members().get(i).index();
            list.add(new Share(b, expected[i], line[b]));
        }
        return new Shares(list, fr.measured(line), fr.predictedCv(), fr.model(), null);
    }
}
