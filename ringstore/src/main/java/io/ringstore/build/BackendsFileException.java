package io.ringstore.build;

import io.ringstore.internal.TextLines;

/** A backends file that cannot be built into rings; names the file and line (0 when it concerns the whole file). */
public final class BackendsFileException extends Exception {
    private static final long serialVersionUID = 1L;

    private final String source;
    private final int line;
    private final String reason;

    public BackendsFileException(String source, int line, String reason) {
        super(source + (line > 0 ? ":" + line : "") + ": " + TextLines.oneLine(reason));
        this.source = source;
        this.line = line;
        this.reason = TextLines.oneLine(reason);
    }

    public String source() {
        return source;
    }

    public int line() {
        return line;
    }

    public String reason() {
        return reason;
    }
}
