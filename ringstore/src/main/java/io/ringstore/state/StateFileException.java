package io.ringstore.state;

import io.ringstore.UnusableFileException;
import java.nio.file.Path;

/**
 * A state file that cannot be used: unreadable, truncated, corrupt, of another version, or with no
 * lease left for this process. Names the file, the byte offset where the problem was found (-1 when
 * it concerns the whole file) and what was expected.
 */
public final class StateFileException extends UnusableFileException {
    private static final long serialVersionUID = 1L;

    /** Whether a router may replace the file with a new one: false for another version's file. */
    private final boolean rebuildable;

    StateFileException(Path path, long offset, String reason, boolean rebuildable, Throwable cause) {
        super(path, offset, reason, cause);
        this.rebuildable = rebuildable;
    }

    StateFileException(Path path, long offset, String reason, boolean rebuildable) {
        this(path, offset, reason, rebuildable, null);
    }

    boolean rebuildable() {
        return rebuildable;
    }
}
