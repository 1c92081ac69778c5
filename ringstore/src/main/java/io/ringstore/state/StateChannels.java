package io.ringstore.state;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One open channel per state file (per inode) for the whole process, shared by every mapping of it.
 *
 * <p>Why one: a lease is held by a POSIX record lock on the file (FORMAT.md, "Leases"), which Java
 * takes with {@code fcntl(F_SETLK)} on Linux. Such locks belong to the process, and closing
 * <em>any</em> descriptor of the file in the process releases all of them. So while a lease is held,
 * no code of the process may open and close another channel on the state file: every open in this
 * package goes through here, and the channel is closed only when the last mapping of the file in the
 * process is closed. (Code outside the package that reads the state file with
 * {@code Files.readAllBytes} or the like, in a process holding a lease, drops the lock: other processes
 * then see the lease as dead. Tests that corrupt the file do so in the same JVM, whose own lock table
 * still sees the lease as held.)
 */
final class StateChannels {
    private StateChannels() {
    }

    /** A counted reference to the shared channel of one file. */
    static final class Ref implements AutoCloseable {
        final FileChannel channel;
        final Object key;
        private int refs = 1;
        /** The directory lock among this process's instances (Java refuses a second record lock of one range in a process). */
        final ReentrantLock directory = new ReentrantLock();
        /** The leases this process holds the lock of, through any instance: never tried for their lock here. */
        private final BitSet held = new BitSet();

        private Ref(FileChannel channel, Object key) {
            this.channel = channel;
            this.key = key;
        }

        /** {@return whether an instance of this process holds lease {@code lease}} */
        boolean holds(int lease) {
            synchronized (held) {
                return held.get(lease);
            }
        }

        void holds(int lease, boolean holds) {
            synchronized (held) {
                held.set(lease, holds);
            }
        }

        /** Drops this reference; the channel is closed (its locks released) with the last one. */
        @Override
        public void close() {
            synchronized (OPEN) {
                if (refs == 0) {
                    return;
                }
                if (--refs == 0) {
                    OPEN.remove(key, this);
                    try {
                        channel.close();
                    } catch (IOException e) {
                        // closing a channel of a regular file does not fail in a way we could act on
                    }
                }
            }
        }
    }

    private static final Map<Object, Ref> OPEN = new HashMap<>();
    /** Descriptors that may not be closed (see {@link #open}). */
    private static final List<FileChannel> KEPT = new ArrayList<>();

    /**
     * {@return a reference to the read-write channel of the file at {@code path}, shared with the
     * process's other users of the same inode; {@code null} when there is no file}
     *
     * @throws IOException when the file cannot be opened
     */
    static Ref open(Path path) throws IOException {
        synchronized (OPEN) {
            Object key;
            try {
                key = Files.readAttributes(path, BasicFileAttributes.class).fileKey();
            } catch (NoSuchFileException e) {
                return null;
            }
            Ref ref = key == null ? null : OPEN.get(key);
            if (ref != null) { // this inode is open here already: never a second descriptor
                ref.refs++;
                return ref;
            }
            FileChannel ch;
            try {
                ch = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE);
            } catch (NoSuchFileException e) {
                return null;
            }
            // The inode the descriptor has, as near as a path tells: the file may have been replaced
            // between the two looks.
            Object opened;
            try {
                opened = Files.readAttributes(path, BasicFileAttributes.class).fileKey();
            } catch (IOException e) {
                opened = key;
            }
            ref = opened == null ? null : OPEN.get(opened);
            if (ref != null) {
                // Replaced by a file this process holds already: closing this descriptor would release
                // the locks held through the other, so it stays open (a rare race, one descriptor).
                KEPT.add(ch);
                ref.refs++;
                return ref;
            }
            ref = new Ref(ch, opened);
            if (opened != null) {
                OPEN.put(opened, ref);
            }
            return ref;
        }
    }
}
