package io.ringstore;

import io.ringstore.internal.FileProblem;
import java.nio.file.Path;

/**
 * A file ringstore cannot use ({@link RingFileException}, {@link io.ringstore.state.StateFileException}):
 * names the file, the byte offset where the problem was found (-1 when it concerns the whole file) and
 * what was expected. The message is one line: {@code path: at byte 12: reason}.
 */
public abstract class UnusableFileException extends Exception {
    private static final long serialVersionUID = 1L;

    private final transient Path path;
    /** The byte offset where the problem lies, or -1 when it concerns the whole file. */
    private final long offset;
    /** What was wrong, without the path and offset. */
    private final String reason;

    /**
     * A problem at {@code offset} of {@code path}, found through {@code cause}.
     *
     * @param path   the file
     * @param offset the byte offset, or -1 when it concerns the whole file
     * @param reason what was expected and what was found (put on one line)
     * @param cause  the I/O error or other exception behind it, or null
     */
    protected UnusableFileException(Path path, long offset, String reason, Throwable cause) {
        this(new FileProblem(path, offset, reason), cause);
    }

    private UnusableFileException(FileProblem problem, Throwable cause) {
        super(problem.message(), cause);
        this.path = problem.path();
        this.offset = problem.offset();
        this.reason = problem.reason();
    }

    /** {@return the file's path; null after deserialization (a path is not serializable)} */
    public Path path() {
        return path;
    }

    /** {@return byte offset in the file, or -1} */
    public long offset() {
        return offset;
    }

    /** {@return what was wrong, without the path and offset} */
    public String reason() {
        return reason;
    }
}
