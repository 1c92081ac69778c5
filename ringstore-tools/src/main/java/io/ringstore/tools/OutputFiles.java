package io.ringstore.tools;

import io.ringstore.internal.IoErrors;
import io.ringstore.tools.Command.FailedException;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Files a command writes besides stdout (a ring file, {@code --csv}, {@code --svg}): checked before the work, written
 * whole or row by row.
 */
final class OutputFiles {
    private OutputFiles() {}

    /**
     * An output file that can be created ({@link Args#file} made the path): not a directory, in a directory that
     * exists.
     */
    static Path writableTarget(Path p) throws FailedException {
        String name = p.toString();
        if (name.isEmpty()) {
            throw new FailedException("the output path is empty");
        }
        if (Files.isDirectory(p)) {
            throw new FailedException(name + ": is a directory, not a file");
        }
        Path dir = p.toAbsolutePath().getParent();
        if (dir == null || !Files.isDirectory(dir)) {
            throw new FailedException(name + ": directory " + dir + " does not exist");
        }
        return p;
    }

    static void write(Path p, String text) throws FailedException {
        try {
            Files.writeString(p, text, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new FailedException(p + ": cannot write: " + IoErrors.describe(e));
        }
    }

    /**
     * A CSV file written row by row (flushed, so a long sweep can be watched), or nothing when no file was asked for.
     */
    static final class Csv implements AutoCloseable {
        private final BufferedWriter writer;
        private final String name;

        private Csv(BufferedWriter writer, String name) {
            this.writer = writer;
            this.name = name;
        }

        /** The file {@code path} with its {@code header} row, or (path {@code null}) a CSV that writes nothing. */
        static Csv open(Path path, String header) throws FailedException {
            if (path == null) {
                return new Csv(null, null);
            }
            Path p = writableTarget(path);
            String name = p.toString();
            try {
                Csv c = new Csv(Files.newBufferedWriter(p, StandardCharsets.UTF_8), name);
                c.row(header);
                return c;
            } catch (IOException e) {
                throw new FailedException(name + ": cannot write: " + IoErrors.describe(e));
            }
        }

        void row(String line) {
            if (writer == null) {
                return;
            }
            try {
                writer.write(line);
                writer.newLine();
                writer.flush();
            } catch (IOException e) {
                throw new UncheckedIOException(new IOException(name + ": " + e.getMessage(), e));
            }
        }

        @Override
        public void close() throws FailedException {
            if (writer != null) {
                try {
                    writer.close();
                } catch (IOException e) {
                    throw new FailedException(name + ": cannot write: " + IoErrors.describe(e));
                }
            }
        }
    }
}
