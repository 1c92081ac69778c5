package io.ringstore.internal;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;

/**
 * Publishing a file at its path as one transaction: readers see the old file or the new one, never a
 * mix; publishers of one path take turns; on any failure the path is left as it was and nothing is
 * left beside it.
 *
 * <pre>{@code
 * try (Publisher.Transaction publish = Publisher.begin(target)) { // the lock: publishers of target wait
 *     ... read what target holds now (its generation) ...
 *     R written = publish.write(channel -> ...);                  // a temporary file, forced to disk
 *     publish.commit(tmp -> ... check the file at tmp ...);       // renamed over target
 * }                                                               // not committed: the temporary file is deleted
 * }</pre>
 */
public final class Publisher {
    /**
     * Lock files this process holds or waits for, one thread each: {@link FileChannel#lock()} is per process. Guarded
     * by itself.
     */
    private static final Set<Path> HELD = new HashSet<>();

    private static final AtomicLong TOKENS = new AtomicLong();

    private Publisher() {}

    /** Writes the whole file into the temporary file's channel; the publisher forces it to disk after. */
    @FunctionalInterface
    public interface Writer<R> {
        /**
         * {@return what the caller wants to know of what it wrote}
         *
         * @param channel the temporary file, empty, open for writing
         */
        R write(FileChannel channel) throws IOException;
    }

    /** Checks the written file before it replaces the target; throwing keeps the target as it was. */
    @FunctionalInterface
    public interface Check<E extends Exception> {
        /** @param written the temporary file, complete and on disk */
        void check(Path written) throws IOException, E;
    }

    /**
     * Starts publishing {@code target}: takes its lock ({@link #lock(Path)}), which is held until the
     * transaction is closed, so that what the caller reads of the file it replaces (its generation)
     * is still true when its own file takes the place: two builds to one path make generations N + 1
     * and N + 2, never N + 1 twice.
     *
     * @param target the file to publish
     * @return the transaction; close it (try-with-resources) to release the lock
     * @throws IOException when the lock cannot be taken
     */
    public static Transaction begin(Path target) throws IOException {
        return new Transaction(target, lock(target));
    }

    /**
     * One publish of a file: {@link #write} it, then {@link #commit} it, then close; closed without a
     * commit (a failure), it deletes the temporary file. Not thread-safe: one thread's transaction.
     */
    public static final class Transaction implements AutoCloseable {
        private final Path target;
        private final Lock lock;
        private List<String> leftoversRemoved = List.of();
        private Path tmp;
        private boolean written;
        private boolean committed;

        private Transaction(Path target, Lock lock) {
            this.target = target;
            this.lock = lock;
        }

        /**
         * Writes the new file: deletes the temporary files that dead publishers of the target left
         * ({@link #leftoversRemoved}), creates a temporary file beside the target with the target's
         * permissions (rw-r--r-- for a new one), lets {@code writer} write it and forces it to disk.
         *
         * @param writer writes the whole file
         * @return what {@code writer} returned
         * @throws IOException when writing fails
         */
        public <R> R write(Writer<R> writer) throws IOException {
            if (tmp != null) {
                throw new IllegalStateException("written already: one file per transaction");
            }
            leftoversRemoved = removeLeftovers(target);
            tmp = temporaryFile(target);
            try (FileChannel ch =
                    FileChannel.open(tmp, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
                shareable(tmp, target);
                R result = writer.write(ch);
                ch.force(true);
                written = true;
                return result;
            }
        }

        /**
         * Checks the written file with {@code check}, then renames it over the target and makes the
         * rename durable.
         *
         * @param check refuses a file that must not be published
         * @throws IOException when the check's reading or the rename fails
         * @throws E           when {@code check} refuses the file
         */
        public <E extends Exception> void commit(Check<E> check) throws IOException, E {
            if (!written || committed) {
                throw new IllegalStateException(committed ? "committed already" : "nothing written to commit");
            }
            check.check(tmp);
            publish(tmp, target);
            committed = true;
        }

        /**
         * {@return the names of the temporary files of the target, left by publishers that died, that {@link #write}
         * deleted}
         */
        public List<String> leftoversRemoved() {
            return leftoversRemoved;
        }

        /** Deletes the temporary file unless committed, then releases the lock. */
        @Override
        public void close() throws IOException {
            try (lock) {
                if (tmp != null && !committed) {
                    Files.deleteIfExists(tmp);
                }
            }
        }
    }

    /**
     * Waits until no other thread or process publishes {@code target}, and keeps them waiting until
     * the lock is closed: a {@link Transaction}'s, from {@link #begin} to its close.
     *
     * <p>The lock is {@link FileChannel#lock()} on {@code .<name>.lock} beside the target, which
     * is deleted again on close: nothing is left in the directory. Because a waiting process may
     * have opened the file just before its holder deleted it, a publisher that got the lock writes
     * a token of its own into the file and reads it back through the path; if the path holds
     * something else (or nothing), it locked a deleted file and tries again. The channel that read
     * the token back stays open as long as the lock is held: on POSIX systems closing any channel
     * on a file releases every lock the process holds on it. A lock file left behind
     * (a crash, a file system that refuses the delete) is harmless: the next publisher takes it over.
     */
    private static Lock lock(Path target) throws IOException {
        Path file = target.toAbsolutePath().getParent().toRealPath().resolve("." + target.getFileName() + ".lock");
        synchronized (HELD) {
            while (!HELD.add(file)) {
                try {
                    HELD.wait();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new InterruptedIOException("interrupted while waiting for " + file);
                }
            }
        }
        try {
            return lockFile(file);
        } catch (IOException | RuntimeException e) {
            release(file);
            throw e;
        }
    }

    private static Lock lockFile(Path file) throws IOException {
        byte[] token = (ProcessHandle.current().pid() + " " + TOKENS.incrementAndGet() + "\n")
                .getBytes(StandardCharsets.US_ASCII);
        while (true) {
            refuseIfNotRegular(file);
            FileChannel locked = FileChannel.open(
                    file, StandardOpenOption.CREATE, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
            FileChannel atPath = null;
            boolean holding = false;
            try {
                locked.lock();
                holding = true;
                locked.truncate(0);
                locked.write(ByteBuffer.wrap(token), 0);
                atPath = openOrNull(file);
                if (atPath != null && Arrays.equals(token, readUpTo(atPath, token.length + 1))) {
                    return new Lock(file, locked, atPath);
                }
            } catch (IOException | RuntimeException e) {
                try {
                    if (holding) {
                        deleteIfLockedHere(
                                file); // the token write failed (a full disk): the file it created must not stay
                    }
                } catch (IOException | RuntimeException suppressed) {
                    e.addSuppressed(suppressed);
                } finally {
                    closeAll(atPath, locked);
                }
                throw e;
            }
            closeAll(
                    atPath,
                    locked); // the file locked was deleted by the publisher before: lock the one at the path now
        }
    }

    /**
     * Deletes the lock file at {@code file} if it is the file this thread has locked, whose token
     * could not be written. Without the token, identity is asked of the JVM's own lock table, which
     * is keyed by the file (device and inode): locking the file at the path again fails with {@link
     * OverlappingFileLockException} exactly when it is the one this process holds ({@link #HELD}:
     * this thread alone, for this path). Another file at the path (ours deleted by the publisher
     * before and a new one created, maybe locked by another process) is left alone.
     */
    private static void deleteIfLockedHere(Path file) throws IOException {
        refuseIfNotRegular(file);
        FileChannel probe;
        try {
            probe = FileChannel.open(file, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return;
        }
        try (probe) {
            FileLock other = probe.tryLock();
            if (other != null) {
                other.release(); // unlocked: not ours
            }
        } catch (OverlappingFileLockException ours) {
            // Deleted before the channels close: closing any channel of the file releases this process's lock on it.
            Files.deleteIfExists(file);
        }
    }

    /** A FIFO planted at the lock file's path would block the open forever; a link could point anywhere. */
    private static void refuseIfNotRegular(Path file) throws IOException {
        BasicFileAttributes a;
        try {
            a = Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return;
        }
        if (!a.isRegularFile()) {
            throw new IOException(file
                    + ": the publish lock file is not a regular file (a FIFO, device, link or directory?); remove it");
        }
    }

    private static FileChannel openOrNull(Path file) throws IOException {
        try {
            return FileChannel.open(file, StandardOpenOption.READ);
        } catch (NoSuchFileException e) {
            return null;
        }
    }

    private static byte[] readUpTo(FileChannel ch, int max) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(max);
        while (b.hasRemaining() && ch.read(b, b.position()) > 0) {
            // a short read: go on until the end of the file
        }
        return Arrays.copyOf(b.array(), b.position());
    }

    private static void closeAll(FileChannel... channels) throws IOException {
        try (FileChannel first = channels[0]) {
            if (channels.length > 1) {
                closeAll(Arrays.copyOfRange(channels, 1, channels.length));
            }
        }
    }

    private static void release(Path file) {
        synchronized (HELD) {
            HELD.remove(file);
            HELD.notifyAll();
        }
    }

    /**
     * Creates the temporary file a publisher of {@code target} writes before {@link #publish}:
     * {@code .<name>.<digits>.tmp} beside the target, so that the rename stays in one directory
     * and {@link #removeLeftovers} can recognise it.
     */
    private static Path temporaryFile(Path target) throws IOException {
        // Files.createTempFile's names, without its SecureRandom: a fresh JVM (ringstore build) would
        // look up a security provider and construct its generator reflectively to make one name.
        Path directory = directory(target);
        String prefix = "." + target.getFileName() + ".";
        FileAttribute<?>[] ownerOnly =
                directory.getFileSystem().supportedFileAttributeViews().contains("posix")
                        ? new FileAttribute<?>[] {
                            PosixFilePermissions.asFileAttribute(
                                    EnumSet.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE))
                        }
                        : new FileAttribute<?>[0];
        while (true) {
            Path tmp = directory.resolve(
                    prefix + Long.toUnsignedString(ThreadLocalRandom.current().nextLong()) + TEMPORARY_SUFFIX);
            try {
                return Files.createFile(tmp, ownerOnly);
            } catch (FileAlreadyExistsException taken) {
                // another name
            }
        }
    }

    private static final String TEMPORARY_SUFFIX = ".tmp";

    /**
     * Deletes the temporary files of {@code target} ({@link #temporaryFile}) left by publishers that
     * died ({@code kill -9}, a power cut): they can be up to the size of a whole ring file. Call it
     * only while holding {@link #lock(Path)}: a live publisher of the target would hold it too, so
     * every such file is a leftover. Returns the names of the files deleted.
     */
    private static List<String> removeLeftovers(Path target) throws IOException {
        // temporaryFile puts an unsigned decimal number between prefix and suffix: matching exactly
        // that keeps the temporary files of "f.ring" apart from those of "f".
        Pattern leftover = Pattern.compile(
                Pattern.quote("." + target.getFileName() + ".") + "[0-9]+" + Pattern.quote(TEMPORARY_SUFFIX));
        List<String> removed = new ArrayList<>();
        try (DirectoryStream<Path> entries =
                Files.newDirectoryStream(directory(target), "." + "*" + TEMPORARY_SUFFIX)) {
            for (Path p : entries) {
                String name = p.getFileName().toString();
                if (leftover.matcher(name).matches()
                        && Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)
                        && Files.deleteIfExists(p)) {
                    removed.add(name);
                }
            }
        }
        return removed;
    }

    private static Path directory(Path target) {
        return target.toAbsolutePath().getParent();
    }

    /**
     * Gives the temporary file the replaced file's permissions, or rw-r--r-- for a new one: a
     * temporary file starts as rw------- and router processes of other users must read the ring.
     */
    private static void shareable(Path tmp, Path target) throws IOException {
        if (!tmp.getFileSystem().supportedFileAttributeViews().contains("posix")) {
            return;
        }
        Set<PosixFilePermission> permissions = Files.exists(target)
                ? Files.getPosixFilePermissions(target)
                : PosixFilePermissions.fromString("rw-r--r--");
        Files.setPosixFilePermissions(tmp, permissions);
    }

    /** Renames the finished temporary file over the target and makes the rename durable. */
    private static void publish(Path tmp, Path target) throws IOException {
        try {
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            throw new IOException(
                    "cannot replace " + target + " atomically on this file system; readers could see a partial file",
                    e);
        }
        Path dir = directory(target);
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        } catch (IOException | UncheckedIOException ignored) {
            // Some file systems cannot sync a directory; the rename itself is already atomic.
        }
    }

    /** A held {@link #lock(Path)}; close to let the next publisher go. */
    private record Lock(Path file, FileChannel locked, FileChannel atPath) implements AutoCloseable {
        /** Deletes the lock file (still holding it, so nobody else can have taken it over) and releases it. */
        @Override
        public void close() throws IOException {
            try {
                Files.deleteIfExists(file);
            } catch (IOException ignored) {
                // Left behind it is harmless: the next publisher takes it over.
            } finally {
                try {
                    closeAll(atPath, locked);
                } finally {
                    release(file);
                }
            }
        }
    }
}
