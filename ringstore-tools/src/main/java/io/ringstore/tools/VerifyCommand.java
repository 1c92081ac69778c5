package io.ringstore.tools;

import io.ringstore.RingFileException;
import io.ringstore.RingStore;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;

final class VerifyCommand extends Command {
    @Override
    String name() {
        return "verify";
    }

    @Override
    String description() {
        return "Checks a ring file: structure, every checksum, point order and membership, and\n"
                + "every ring's points against those its version generates from the backend table.\n"
                + "Exit 0 when all hold; otherwise one line saying what and at which byte, and exit 1.";
    }

    private static final Option JSON = json("""
            one JSON object: ok (true), path, generation, backends, rings, segments,
            ring_points (each distinct segment's points once, as build counts them);
            a failed check is still one line on stderr and exit 1""");

    @Override
    List<Option> options() {
        return List.of(JSON);
    }

    @Override
    List<String> forms() {
        return List.of("RINGFILE [{--json}]");
    }

    /** A file that passed every check, in numbers. */
    private record Verified(Path path, long generation, int backends, int rings, int segments, long points)
            implements Result {
        @Override
        public void text(PrintStream out) {
            out.printf(
                    "ok: %s generation %s, %s, %s, %s, %s, all checksums match%n",
                    path,
                    Long.toUnsignedString(generation),
                    count(backends, "backend", "backends"),
                    count(rings, "ring", "rings"),
                    count(segments, "segment", "segments"),
                    count(points, "ring point", "ring points"));
        }

        @Override
        public void json(Json j) {
            j.field("ok", true)
                    .field("path", path.toString())
                    .fieldUnsigned("generation", generation)
                    .field("backends", backends)
                    .field("rings", rings)
                    .field("segments", segments)
                    .field("ring_points", points);
        }
    }

    @Override
    int run(Args args, InputStream in, PrintStream out, PrintStream err)
            throws UsageException, FailedException, RingFileException {
        if (args.positional.size() != 1) {
            throw new UsageException(args.positional.isEmpty() ? "missing RINGFILE" : "expected one RINGFILE");
        }
        try (RingStore store = RingStore.open(args.file(0))) {
            // Each distinct segment's points once, as build counts them; every ring's points generated again.
            long points = store.verifyDeep();
            print(
                    new Verified(
                            store.path(),
                            store.generation(),
                            store.backendCount(),
                            store.rings().size(),
                            store.segmentCount(),
                            points),
                    args,
                    out);
            return Main.OK;
        }
    }
}
