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
        return "Checks a ring file: structure, every checksum, point order and membership.\n"
                + "Exit 0 when all hold; otherwise one line saying what and at which byte, and exit 1.";
    }

    @Override
    List<Option> options() {
        return List.of();
    }

    @Override
    List<String> forms() {
        return List.of("RINGFILE");
    }

    /** A file that passed every check, in numbers. */
    private record Verified(Path path, long generation, int backends, int rings, int segments, long points) {
        void print(PrintStream out) {
            out.printf("ok: %s generation %s, %d backends, %d rings, %d segments, %d ring points, all checksums match%n",
                    path, Long.toUnsignedString(generation), backends, rings, segments, points);
        }
    }

    @Override
    int run(Args args, InputStream in, PrintStream out, PrintStream err) throws UsageException, FailedException {
        if (args.positional.size() != 1) {
            throw new UsageException(args.positional.isEmpty() ? "missing RINGFILE" : "expected one RINGFILE");
        }
        try (RingStore store = RingStore.open(Path.of(args.positional.getFirst()))) {
            long points = store.verify(); // each distinct segment's points once, as build counts them
            new Verified(store.path(), store.generation(), store.backendCount(), store.rings().size(), store.segmentCount(),
                    points).print(out);
            return Main.OK;
        } catch (RingFileException e) {
            throw new FailedException(e.getMessage());
        }
    }
}
