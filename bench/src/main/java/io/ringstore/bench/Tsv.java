package io.ringstore.bench;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.StringJoiner;

/**
 * Tab-separated results of a measuring program, for {@link ReportWriter}: a header line, then one row
 * per result. Without a path every row is dropped (the program's own printout is the result).
 */
final class Tsv implements AutoCloseable {
    private final PrintWriter out;

    private Tsv(PrintWriter out) {
        this.out = out;
    }

    /** Creates (replaces) {@code path}, or returns a Tsv that writes nothing when {@code path} is null. */
    static Tsv create(String path, String... header) {
        if (path == null) {
            return new Tsv(null);
        }
        try {
            Path p = Path.of(path);
            if (p.toAbsolutePath().getParent() != null) {
                Files.createDirectories(p.toAbsolutePath().getParent());
            }
            Tsv tsv = new Tsv(new PrintWriter(Files.newBufferedWriter(
                    p,
                    StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE,
                    StandardOpenOption.TRUNCATE_EXISTING,
                    StandardOpenOption.WRITE)));
            tsv.row((Object[]) header);
            return tsv;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write results: " + path, e);
        }
    }

    void row(Object... fields) {
        if (out == null) {
            return;
        }
        StringJoiner line = new StringJoiner("\t");
        for (Object f : fields) {
            line.add(String.valueOf(f));
        }
        out.println(line);
        out.flush();
    }

    @Override
    public void close() {
        if (out != null) {
            out.close();
        }
    }
}
