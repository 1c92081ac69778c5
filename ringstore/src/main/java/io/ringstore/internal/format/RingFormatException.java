package io.ringstore.internal.format;

import io.ringstore.internal.FileProblem;
import java.nio.file.Path;

/**
 * A ring file breaks the format: where ({@code path}, byte {@code offset}, -1 when no one byte is
 * to blame) and why. The reader and the verifier throw it; {@code RingStore} turns its
 * {@link FileProblem} into the public {@code RingFileException}, so that this floor names no public type.
 */
public final class RingFormatException extends Exception {
    private static final long serialVersionUID = 1L;

    private final transient FileProblem problem;

    public RingFormatException(Path path, long offset, String reason) {
        super(reason);
        this.problem = new FileProblem(path, offset, reason);
    }

    /** {@return where and why; null after deserialization (a path is not serializable)} */
    public FileProblem problem() {
        return problem;
    }
}
