package io.ringstore.state;

import io.ringstore.internal.TextLines;
import java.nio.file.Path;

/**
 * A state file that cannot be used: unreadable, truncated, corrupt, of another version, or with no
 * lease left for this process. Names the file, the byte offset where the problem was found (-1 when
 * it concerns the whole file) and what was expected.
 */
public final class StateFileException extends Exception {
    private static final long serialVersionUID = 1L;

    private final transient Path path;
    /** The byte offset where the problem lies, or -1 when it concerns the whole file. */
    private final long offset;
    /** What was wrong, without the path and offset. */
    private final String reason;
    /** Whether a router may replace the file with a new one: false for another version's file. */
    private final boolean rebuildable;

    StateFileException(Path path, long offset, String reason, boolean rebuildable, Throwable cause) {
        super(path + (offset >= 0 ? ": at byte " + offset : "") + ": " + TextLines.oneLine(reason), cause);
        this.path = path;
        this.offset = offset;
        this.reason = TextLines.oneLine(reason);
        this.rebuildable = rebuildable;
    }

    StateFileException(Path path, long offset, String reason, boolean rebuildable) {
        this(path, offset, reason, rebuildable, null);
    }

    /** {@return the state file's path; null after deserialization (a path is not serializable)} */
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

    boolean rebuildable() {
        return rebuildable;
    }
}
