package io.ringstore;

import io.ringstore.internal.FileProblem;
import java.nio.file.Path;

/**
 * A ring file that cannot be used: unreadable, truncated, corrupt or of an unsupported version.
 * Names the file, the byte offset where the problem was found (-1 when it concerns the whole file)
 * and what was expected.
 */
public final class RingFileException extends UnusableFileException {
    private static final long serialVersionUID = 1L;

    /**
     * A problem at {@code offset} of {@code path}.
     *
     * @param path   the ring file
     * @param offset the byte offset, or -1 when it concerns the whole file
     * @param reason what was expected and what was found
     */
    public RingFileException(Path path, long offset, String reason) {
        this(path, offset, reason, null);
    }

    /**
     * A problem at {@code offset} of {@code path}, found through {@code cause}.
     *
     * @param path   the ring file
     * @param offset the byte offset, or -1 when it concerns the whole file
     * @param reason what was expected and what was found
     * @param cause  the I/O error or other exception behind it
     */
    public RingFileException(Path path, long offset, String reason, Throwable cause) {
        super(path, offset, reason, cause);
    }

    /** The problem the format's floor found ({@code RingFormatException}): the same path, offset and reason. */
    RingFileException(FileProblem problem, Throwable cause) {
        super(problem.path(), problem.offset(), problem.reason(), cause);
    }
}
