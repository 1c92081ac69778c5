package io.ringstore.tools;

import io.ringstore.RingFileException;
import io.ringstore.builder.BackendsFileException;
import io.ringstore.state.StateFileException;
import io.ringstore.tools.Command.FailedException;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * The one place a command's failure becomes its error line (exit {@value Main#FAILED}): what a
 * command throws is mapped here, so no command turns a bad file into a message itself. The library's
 * exceptions about input files already say which file, where and why: their message is the line.
 */
final class Failures {
    /** The longest error line printed whole; input quoted in a message is cut before this, this is the net. */
    private static final int MAX_ERROR_LENGTH = 1000;

    private Failures() {}

    /** The error line, without the {@code ringstore NAME: } prefix, for what a command threw. */
    static String message(Throwable failure) {
        String message = switch (failure) {
            case FailedException e -> e.getMessage();
            case RingFileException e -> e.getMessage();
            case BackendsFileException e -> e.getMessage();
            case StateFileException e -> e.getMessage();
            case IOException e -> "I/O error: " + e.getMessage();
            case UncheckedIOException e -> "I/O error: " + e.getCause().getMessage();
            // SIGBUS, as the JVM reports it: a page of a mapped file is gone
            case InternalError e ->
                "a mapped ring file shrank while in use (rewritten in place? publish new files by rename only)";
            case OutOfMemoryError e ->
                "out of heap memory (" + e.getMessage() + ") with -Xmx"
                        + heapGiB(Runtime.getRuntime().maxMemory())
                        + "g; give the JVM more, for example RINGSTORE_JAVA_OPTS=-Xmx"
                        + 2 * heapGiB(Runtime.getRuntime().maxMemory()) + "g";
            default -> "internal error, please report: " + failure; // a defect of ours: still one line, never a trace
        };
        return message.length() > MAX_ERROR_LENGTH // a path or value quoted whole, 100 KB long
                ? message.substring(0, MAX_ERROR_LENGTH) + "... (cut: " + message.length() + " characters in all)"
                : message;
    }

    /** A heap size in whole GiB, rounded up. */
    private static long heapGiB(long bytes) {
        return Math.max(1, (bytes + (1L << 30) - 1) >> 30);
    }
}
