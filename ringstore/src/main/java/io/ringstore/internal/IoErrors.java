package io.ringstore.internal;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;

/** Short, user-facing words for I/O failures: "no such file", "permission denied", the OS's reason. */
public final class IoErrors {
    private IoErrors() {}

    public static String describe(IOException e) {
        return switch (e) {
            case NoSuchFileException x -> "no such file or directory";
            case AccessDeniedException x -> "permission denied";
            case FileSystemException x
            when x.getReason() != null -> x.getReason().toLowerCase(java.util.Locale.ROOT);
            default -> e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
        };
    }
}
