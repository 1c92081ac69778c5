package io.ringstore.tools;

import io.ringstore.build.BackendList;
import io.ringstore.build.BackendsFileException;
import io.ringstore.build.BuildResult;
import io.ringstore.build.RingBuilder;

import io.ringstore.Ring;
import io.ringstore.RingFileException;
import io.ringstore.RingStore;
import io.ringstore.RingVersion;
import io.ringstore.internal.IoErrors;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
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
                + "published atomically (temporary file, fsync, rename). Prints a summary.";
    }

    @Override
    String synopsis() {
        return "BACKENDS -o RINGFILE [--algorithm v1|v2|v1,v2] [--point-multiple K] [--generation N] [--quiet]";
    }

    @Override
    String options() {
        return """
                  -o, --output FILE     the ring file to write (replaced atomically)
                  --algorithm LIST      v1 (nginx hash ... consistent, the default), v2 (pingora-ketama V2),
                                        or v1,v2 for both in one file; the first is the file's default
                  --point-multiple K    points per weight unit for v2 (default 160)
                  --generation N        the file's generation (default: the replaced file's + 1, or 1)
                  --quiet               no progress lines on stderr
                """;
    }

    @Override
    Set<String> valueOptions() {
        return Set.of("-o", "--output", Versions.ALGORITHM, Versions.POINT_MULTIPLE, "--generation");
    }

    @Override
    Set<String> flagOptions() {
        return Set.of("--quiet");
    }

    @Override
    int run(Args args, InputStream in, PrintStream out, PrintStream err) throws UsageException, FailedException {
        if (args.positional.size() != 1) {
            throw new UsageException(args.positional.isEmpty() ? "missing BACKENDS file" : "expected one BACKENDS file, got " + args.positional);
        }
        if (args.has("-o") && args.has("--output")) {
            throw new UsageException("give -o or --output, not both");
        }
        String output = args.has("-o") ? args.get("-o") : args.get("--output");
        if (output == null) {
            throw new UsageException("missing -o RINGFILE");
        }
        List<RingVersion> versions = Versions.forBuild(args);
        long generation = args.getLong("--generation", 0, Long.MAX_VALUE, -1);
        Path target = writableTarget(output);
        BackendList backends;
        try {
            backends = BackendList.parse(Path.of(args.positional.getFirst()));
        } catch (BackendsFileException e) {
            throw new FailedException(e.getMessage());
        }
        RingBuilder builder = RingBuilder.of(backends);
        versions.forEach(builder::version);
        if (generation >= 0) {
            builder.generation(generation);
        }
        if (!args.has("--quiet")) {
            builder.progress(new ThrottledProgress(err, "ringstore build: "));
        }
        BuildResult r;
        try {
            r = builder.build(target);
        } catch (BackendsFileException | RingFileException e) {
            throw new FailedException(e.getMessage());
        } catch (IOException e) {
            throw new FailedException(output + ": cannot write: " + IoErrors.describe(e));
        }
        printSummary(r, out);
        printSamples(target, out);
        return Main.OK;
    }

    static void printSummary(BuildResult r, PrintStream out) {
        int shared = r.rings() - r.emptyRings() - r.segments();
        out.printf(Locale.ROOT, "wrote: %s%n", r.path());
        out.printf(Locale.ROOT, "generation: %d%n", r.generation());
        out.printf(Locale.ROOT, "backends: %d%n", r.backends());
        out.printf(Locale.ROOT, "features: %d%s%n", r.features().size(), r.features().isEmpty() ? "" : " (" + String.join(", ", r.features()) + ")");
        out.printf(Locale.ROOT, "versions: %s%n", String.join(", ", r.versions().stream().map(RingVersion::toString).toList()));
        out.printf(Locale.ROOT, "rings: %d (%d segments; %d rings share another ring's segment; %d empty)%n",
                r.rings(), r.segments(), shared, r.emptyRings());
        out.printf(Locale.ROOT, "points: %d (%d dropped: equal hashes from two backends)%n", r.points(), r.collisions());
        out.printf(Locale.ROOT, "bytes: %d%n", r.fileBytes());
        out.printf(Locale.ROOT, "bytes_per_point: %.4f%n", r.bytesPerPoint());
        out.printf(Locale.ROOT, "time_ms: %.1f%n", r.nanos() / 1e6);
        out.printf(Locale.ROOT, "points_per_second: %.0f%n", r.points() / (r.nanos() / 1e9));
    }

    private static void printSamples(Path target, PrintStream out) throws FailedException {
        try (RingStore store = RingStore.open(target)) {
            Ring ring = store.ring(Set.of());
            for (String key : SAMPLE_KEYS) {
                int b = ring.lookup(key.getBytes(StandardCharsets.UTF_8));
                out.printf("sample: %s\t%s%n", key, b < 0 ? "-" : Versions.address(store.backend(b), ring.version()));
            }
        } catch (RingFileException e) {
            throw new FailedException("the file just written does not open: " + e.getMessage());
        }
    }
}
