package io.ringstore.tools;

import io.ringstore.RingFileException;
import io.ringstore.RingStore;

import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Set;

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
    String synopsis() {
        return "RINGFILE";
    }

    @Override
    String options() {
        return "";
    }

    @Override
    Set<String> valueOptions() {
        return Set.of();
    }

    @Override
    Set<String> flagOptions() {
        return Set.of();
    }

    @Override
    int run(Args args, InputStream in, PrintStream out, PrintStream err) throws UsageException, FailedException {
        if (args.positional.size() != 1) {
            throw new UsageException(args.positional.isEmpty() ? "missing RINGFILE" : "expected one RINGFILE");
        }
        try (RingStore store = RingStore.open(Path.of(args.positional.getFirst()))) {
            store.verify();
            long points = store.layout().distinctPointCount();
            out.printf("ok: %s generation %d, %d backends, %d rings, %d segments, %d ring points, all checksums match%n",
                    store.path(), store.generation(), store.backendCount(), store.rings().size(), store.segmentCount(), points);
            return Main.OK;
        } catch (RingFileException e) {
            throw new FailedException(e.getMessage());
        }
    }
}
