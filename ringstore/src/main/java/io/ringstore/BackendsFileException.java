package io.ringstore;

/** A backends file that cannot be built into rings; names the file and line (0 when it concerns the whole file). */
public final class BackendsFileException extends Exception {
    private static final long serialVersionUID = 1L;

    private final String source;
    private final int line;
    private final String reason;

    public BackendsFileException(String source, int line, String reason) {
        super(source + (line > 0 ? ":" + line : "") + ": " + RingFileException.oneLine(reason));
        this.source = source;
        this.line = line;
        this.reason = RingFileException.oneLine(reason);
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
