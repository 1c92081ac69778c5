package io.ringstore.internal;

import java.nio.file.Path;

/**
 * What is wrong with a file and where: the file, the byte offset where the problem was found (-1 when
 * it concerns the whole file) and the reason, on one line. The format floor's exception carries one;
 * the public file exception is made from it and prints it as {@link #message()}.
 *
 * @param path   the file
 * @param offset the byte offset, or -1 when no one byte is to blame
 * @param reason what was expected and what was found
 */
public record FileProblem(Path path, long offset, String reason) {
    /** Puts the reason on one line: a message is one line of a log. */
    public FileProblem {
        reason = TextLines.oneLine(reason);
    }

    /** {@return the file, the byte offset unless it is -1, and the reason: {@code path: at byte 12: reason}} */
    public String message() {
        return path + (offset >= 0 ? ": at byte " + offset : "") + ": " + reason;
    }
}
