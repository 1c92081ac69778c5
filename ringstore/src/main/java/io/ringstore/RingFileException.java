package io.ringstore;

import io.ringstore.internal.TextLines;

import java.nio.file.Path;

/**
 * A ring file that cannot be used: unreadable, truncated, corrupt or of an unsupported version.
 * Names the file, the byte offset where the problem was found (-1 when it concerns the whole file)
 * and what was expected.
 */
public final class RingFileException extends Exception {
    private static final long serialVersionUID = 1L;

    private final transient Path path;
    private final long offset;
    private final String reason;

    public RingFileException(Path path, long offset, String reason) {
        this(path, offset, reason, null);
    }

    public RingFileException(Path path, long offset, String reason, Throwable cause) {
        super(path + (offset >= 0 ? ": at byte " + offset : "") + ": " + TextLines.oneLine(reason), cause);
        this.path = path;
        this.offset = offset;
        this.reason = TextLines.oneLine(reason);
    }

    public Path path() {
        return path;
    }

    /** Byte offset in the file, or -1. */
    public long offset() {
        return offset;
    }

    public String reason() {
        return reason;
    }
}
