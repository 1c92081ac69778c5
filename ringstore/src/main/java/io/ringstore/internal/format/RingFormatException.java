package io.ringstore.internal.format;

import java.nio.file.Path;

/**
 * A ring file breaks the format: where ({@code path}, byte {@code offset}, -1 when no one byte is
 * to blame) and why. The reader and the verifier throw it; {@code RingStore} turns it into the public
 * {@code RingFileException} with the same path, offset and reason, so that this floor names no public type.
 */
public final class RingFormatException extends Exception {
    private static final long serialVersionUID = 1L;

    private final transient Path path;
    private final long offset;
    private final String reason;

    public RingFormatException(Path path, long offset, String reason) {
        super(reason);
        this.path = path;
        this.offset = offset;
        this.reason = reason;
    }

    public Path path() {
        return path;
    }

    public long offset() {
        return offset;
    }

    public String reason() {
        return reason;
    }
}
