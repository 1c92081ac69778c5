package io.ringstore.tools;

import io.ringstore.Ring;
import io.ringstore.RingFileException;
import io.ringstore.RingStore;
import io.ringstore.builder.BackendsFileException;
import io.ringstore.builder.BuildResult;
import io.ringstore.builder.RingBuilder;
import io.ringstore.builder.Views;
import io.ringstore.family.RingVersion;
import io.ringstore.internal.IoErrors;
import io.ringstore.internal.TextLines;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

final class BuildCommand extends Command {
    /** Keys shown after the summary, so a first run shows what a lookup answers. */
    static final List<String> SAMPLE_KEYS = List.of("/index.html", "/images/logo.png", "/api/v1/users?id=42");

    @Override
    String name() {
        return "build";
    }

    @Override
    String description() {
        return "Builds every feature ring of a backends file (nginx 'server' syntax) into one ring file,\n"
                + "published atomically (temporary file, fsync, rename). Prints a summary. With --from, BACKENDS\n"
                + "is the configuration a twemproxy, libketama or HAProxy fleet already has (docs/from-config.md).";
    }

    private static final AlgorithmOption ALGORITHM = AlgorithmOption.BUILD;
    private static final Option OUTPUT = Option.valued(
                    "--output", "FILE", "the ring file to write (replaced atomically)")
            .alias("-o")
            .shownAs("RINGFILE");
    private static final Option GENERATION =
            Option.valued("--generation", "N", "the file's generation (default: the replaced file's + 1, or 1)");
    static final Option VIEWS = Option.valued("--views", "HOW", """
            none (the default): every ring as its own points, a file every reader
            opens; auto: a feature ring whose members hold at least 1/64 of the points
            is a view of the ring of all backends (no points of its own; a lookup
            searches that ring and finds the first member point by the feature bits
            stored with it, BENCHMARKS.md), the others stored; all: every feature
            ring a view. Views need readers of format 3 with feature bits by feature
            (storage 4, issue 32)""").shownAs("auto|all|none");
    private static final Option QUIET =
            Option.flag("--quiet", "print nothing but errors and warnings (no summary, no progress)");
    private static final Option JSON = json("""
            the summary as one JSON object: wrote, generation, backends, features,
            versions, rings, segments, shared_rings, views, empty_rings, points, dropped,
            bytes, bytes_per_point, time_ms, points_per_second, samples (each key,
            ring, address)""");

    @Override
    List<Option> options() {
        return List.of(
                OUTPUT,
                InputFormat.FROM,
                InputFormat.POOL,
                InputFormat.BACKEND,
                ALGORITHM.algorithm,
                ALGORITHM.pointMultiple,
                VIEWS,
                GENERATION,
                QUIET,
                JSON);
    }

    @Override
    List<String> forms() {
        return List.of(
                "BACKENDS {-o} [{--from} [{--pool} | {--backend}]] [{--algorithm}] [{--point-multiple}] [{--views}] [{--generation}] [{--quiet} | {--json}]");
    }

    /** What a build did, and what three sample keys look up to in the file it wrote. */
    private record Report(BuildResult built, List<Sample> samples) implements Result {
        @Override
        public void text(PrintStream out) {
            BuildResult r = built;
            int shared = sharedRings(r);
            out.printf(Locale.ROOT, "wrote: %s%n", r.path());
            out.printf(Locale.ROOT, "generation: %s%n", Long.toUnsignedString(r.generation()));
            out.printf(Locale.ROOT, "backends: %d%n", r.backends());
            out.printf(
                    Locale.ROOT,
                    "features: %d%s%n",
                    r.features().size(),
                    r.features().isEmpty() ? "" : " (" + String.join(", ", r.features()) + ")");
            out.printf(
                    Locale.ROOT,
                    "versions: %s%n",
                    String.join(
                            ", ",
                            r.versions().stream().map(RingVersion::toString).toList()));
            out.printf(
                    Locale.ROOT,
                    "rings: %d (%s; %s another ring's segment; %s%d empty)%n",
                    r.rings(),
                    count(r.segments(), "segment", "segments"),
                    count(shared, "ring shares", "rings share"),
                    r.views() == 0 ? "" : count(r.views(), "view", "views") + "; ",
                    r.emptyRings());
            out.printf(
                    Locale.ROOT,
                    "points: %d (%d dropped: equal hashes from two backends)%n",
                    r.points(),
                    r.collisions());
            out.printf(Locale.ROOT, "bytes: %d%n", r.fileBytes());
            out.printf(Locale.ROOT, "bytes_per_point: %.4f%n", r.bytesPerPoint());
            out.printf(Locale.ROOT, "time_ms: %.1f%n", r.nanos() / 1e6);
            out.printf(Locale.ROOT, "points_per_second: %.0f%n", pointsPerSecond(r));
            for (Sample s : samples) {
                out.printf("sample: %s\t%s\tring %s%n", s.key(), s.address(), s.ring());
            }
        }

        @Override
        public void json(Json j) {
            BuildResult r = built;
            j.field("wrote", r.path().toString())
                    .fieldUnsigned("generation", r.generation())
                    .field("backends", r.backends());
            j.beginArray("features");
            r.features().forEach(j::value);
            j.endArray().beginArray("versions");
            r.versions().forEach(v -> j.value(v.toString()));
            j.endArray()
                    .field("rings", r.rings())
                    .field("segments", r.segments())
                    .field("shared_rings", sharedRings(r))
                    .field("views", r.views())
                    .field("empty_rings", r.emptyRings())
                    .field("points", r.points())
                    .field("dropped", r.collisions())
                    .field("bytes", r.fileBytes())
                    .field("bytes_per_point", r.bytesPerPoint())
                    .field("time_ms", r.nanos() / 1e6)
                    .field("points_per_second", pointsPerSecond(r))
                    .beginArray("samples");
            for (Sample s : samples) {
                j.begin()
                        .field("key", s.key())
                        .field("ring", s.ring())
                        .field("address", s.address())
                        .end();
            }
            j.endArray();
        }
    }

    /**
     * A key, the ring that answered it (the file's default: all backends, first version), and the address ({@code -}
     * for none).
     */
    private record Sample(String key, String ring, String address) {}

    @Override
    int run(Args args, InputStream in, PrintStream out, PrintStream err)
            throws UsageException, FailedException, BackendsFileException, RingFileException {
        if (args.positional.size() != 1) {
            throw new UsageException(
                    args.positional.isEmpty()
                            ? "missing BACKENDS file"
                            : "expected one BACKENDS file, got " + args.positional);
        }
        String output = args.get(OUTPUT.name());
        if (output == null) {
            throw new UsageException("missing -o RINGFILE");
        }
        if (output.isEmpty()) {
            throw new UsageException("the output path is empty (-o \"\")");
        }
        if (args.has(QUIET.name()) && args.has(JSON.name())) {
            throw new UsageException("--quiet prints no summary and --json prints it as JSON: give one of the two");
        }
        InputFormat format = InputFormat.of(args);
        Views views = views(args.get(VIEWS.name()));
        long generation = args.getLong(GENERATION.name(), 0, Long.MAX_VALUE, -1);
        Path target = OutputFiles.writableTarget(args.file(OUTPUT.name()));
        InputFormat.Input input = format.read(args, args.file(0));
        input.warnings().forEach(w -> err.println(prefix() + w));
        RingBuilder builder = RingBuilder.of(input.backends()).views(views);
        input.versions().forEach(builder::version);
        if (generation >= 0) {
            builder.generation(generation);
        }
        if (!args.has(QUIET.name())) {
            builder.progress(new ThrottledProgress(err, "ringstore build: "));
        }
        BuildResult r;
        try {
            r = builder.build(target);
        } catch (IOException e) {
            throw new FailedException(output + ": cannot write: " + IoErrors.describe(e));
        } catch (OutOfMemoryError e) {
            long mib = (builder.heapBytesNeeded() + (1 << 20) - 1) >> 20;
            throw new FailedException("out of heap memory (" + e.getMessage() + "); the largest ring needs about " + mib
                    + " MiB (8 bytes a point, and headroom): give the JVM more with RINGSTORE_JAVA_OPTS=-Xmx" + mib
                    + "m; "
                    + output + " was left as it was");
        }
        if (!r.leftoversRemoved().isEmpty()) {
            err.println("ringstore build: removed " + r.leftoversRemoved().size() + " temporary file(s) of " + output
                    + " left by builds that died: " + TextLines.quote(String.join(", ", r.leftoversRemoved())));
        }
        Report report = new Report(r, samples(target));
        if (!args.has(QUIET.name())) {
            print(report, args, out);
        }
        // The ring is published whatever happens to stdout: say so, rather than a bare write error.
        if (Stdout.cannotWrite(out)) {
            throw new FailedException("published " + r.path() + " (generation " + Long.toUnsignedString(r.generation())
                    + ") but cannot write the summary: stdout closed or disk full");
        }
        return Main.OK;
    }

    static Views views(String value) throws UsageException {
        if (value == null) {
            return Views.NONE;
        }
        return switch (value) {
            case "auto" -> Views.AUTO;
            case "all" -> Views.ALL;
            case "none" -> Views.NONE;
            default -> throw new UsageException("--views " + TextLines.quote(value) + ": expected auto, all or none");
        };
    }

    /** Rings that are neither empty, nor views, nor the first with their segment. */
    private static int sharedRings(BuildResult r) {
        return r.rings() - r.emptyRings() - r.views() - r.segments();
    }

    private static double pointsPerSecond(BuildResult r) {
        return r.points() / (r.nanos() / 1e9);
    }

    private static List<Sample> samples(Path target) throws FailedException {
        try (RingStore store = RingStore.open(target)) {
            Ring ring = store.ring(Set.of());
            List<Sample> samples = new ArrayList<>();
            for (String key : SAMPLE_KEYS) {
                int b = ring.lookup(key.getBytes(StandardCharsets.UTF_8));
                samples.add(new Sample(
                        key,
                        ring.toString(),
                        b < 0 ? "-" : store.backend(b).answer(ring.version().family())));
            }
            return samples;
        } catch (RingFileException e) {
            // The builder checked the file before publishing it: only another publisher can have replaced it since.
            throw new FailedException(
                    "published " + target + " but cannot read it back (replaced since?): " + e.getMessage());
        }
    }
}
