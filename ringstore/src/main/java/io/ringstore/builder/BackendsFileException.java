package io.ringstore.builder;

import io.ringstore.internal.TextLines;

/** A backends file that cannot be built into rings; names the file and line (0 when it concerns the whole file). */
public final class BackendsFileException extends Exception {
    private static final long serialVersionUID = 1L;

    /** The file name (or other source) the parser was given. */
    private final String source;
    /** The line, from 1; 0 when the problem concerns the whole file. */
    private final int line;
    /** What was wrong, without the source and line. */
    private final String reason;

    /**
     * A problem at {@code line} of {@code source}.
     *
     * @param source the file name (or other source) given to the parser
     * @param line   the line, from 1; 0 when it concerns the whole file
     * @param reason what was wrong
     */
    public BackendsFileException(String source, int line, String reason) {
        super(source + (line > 0 ? ":" + line : "") + ": " + TextLines.oneLine(reason));
        this.source = source;
        this.line = line;
        this.reason = TextLines.oneLine(reason);
    }

    /** {@return the file name (or other source) given to the parser} */
    public String source() {
        return source;
    }

    /** {@return the line, from 1; 0 when the problem concerns the whole file} */
    public int line() {
        return line;
    }

    /** {@return what was wrong, without the source and line} */
    public String reason() {
        return reason;
    }
}
