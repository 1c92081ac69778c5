package io.ringstore.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/** Publishing a finished file at its path: readers see the old file or the new one, never a mix. */
public final class Publisher {
    private Publisher() {
    }

    /**
     * Gives the temporary file the replaced file's permissions, or rw-r--r-- for a new one: a
     * temporary file starts as rw------- and router processes of other users must read the ring.
     */
    public static void shareable(Path tmp, Path target) throws IOException {
        if (!tmp.getFileSystem().supportedFileAttributeViews().contains("posix")) {
            return;
        }
        Set<PosixFilePermission> permissions = Files.exists(target)
                ? Files.getPosixFilePermissions(target)
                : PosixFilePermissions.fromString("rw-r--r--");
        Files.setPosixFilePermissions(tmp, permissions);
    }

    /** Renames the finished temporary file over the target and makes the rename durable. */
    public static void publish(Path tmp, Path target) throws IOException {
        try {
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            throw new IOException("cannot replace " + target + " atomically on this file system; readers could see a partial file", e);
        }
        Path dir = target.toAbsolutePath().getParent();
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        } catch (IOException | UncheckedIOException ignored) {
            // Some file systems cannot sync a directory; the rename itself is already atomic.
        }
    }
}
