package io.ringstore.state;

import io.ringstore.internal.BoundedOpen;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.OpenOption;
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
 *
 * <p><b>Read-only users.</b> A user that only reads (an operator's view of a file it may not write,
 * {@code ringstore lookup} on a read-only mount) gets a channel opened for reading only, since a
 * read-write open fails there. It is registered here like a read-write one, so the same rule holds:
 * a later read-write user of the same inode in the process (a router) opens its read-write channel
 * into the same {@link Ref}, which from then on locks through it, and the read-only descriptor stays
 * open beside it; every descriptor of a {@link Ref} is closed together, with its last user. So a
 * read-only inspector never closes a descriptor while a router of its process holds a lease, and a
 * read-only user that comes second simply shares the read-write channel.
 *
 * <p>Opens are bounded ({@link BoundedOpen}): a FIFO renamed over the path after its regular-file
 * check would block a read-only open for good. After the open, the path is looked at again, and a
 * file that is no longer a regular one is refused.
 */
final class StateChannels {
    private StateChannels() {}

    /** Run between the regular-file check and the open (tests: rename a FIFO over the path there). */
    static volatile Runnable afterRegularCheck = () -> {};
    /** How long an open may take ({@link BoundedOpen#TIMEOUT_MILLIS}; tests shorten it). */
    static volatile long openTimeoutMillis = BoundedOpen.TIMEOUT_MILLIS;

    /** A counted reference to the shared channel of one file. */
    static final class Ref implements AutoCloseable {
        /** The channel locks are taken through: the read-write one once any user of the process opened one. */
        volatile FileChannel channel;
        /** Whether {@link #channel} is open for writing. */
        volatile boolean writable;
        /** Other descriptors of the inode (a read-only one a read-write user came after): closed with the last user. */
        private final List<FileChannel> others = new ArrayList<>();

        final Object key;
        private int refs = 1;
        /** The directory lock among this process's instances (Java refuses a second record lock of one range in a process). */
        final ReentrantLock directory = new ReentrantLock();
        /** The leases this process holds the lock of, through any instance: never tried for their lock here. */
        private final BitSet held = new BitSet();

        private Ref(FileChannel channel, boolean writable, Object key) {
            this.channel = channel;
            this.writable = writable;
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

        /** Drops this reference; the channels are closed (their locks released) with the last one. */
        @Override
        public void close() {
            synchronized (OPEN) {
                if (refs == 0) {
                    return;
                }
                if (--refs == 0) {
                    OPEN.remove(key, this);
                    others.add(channel);
                    for (FileChannel ch : others) {
                        try {
                            ch.close();
                        } catch (IOException e) {
                            // closing a channel of a regular file does not fail in a way we could act on
                        }
                    }
                    others.clear();
                }
            }
        }
    }

    private static final Map<Object, Ref> OPEN = new HashMap<>();
    /** Descriptors that may not be closed (see {@link #open}). */
    private static final List<FileChannel> KEPT = new ArrayList<>();

    /**
     * {@return a reference to the channel of the file at {@code path}, shared with the process's other
     * users of the same inode: read-write when {@code writable} (opened now if the process had only a
     * read-only one), else whatever the process has, or read-only; {@code null} when there is no file}
     *
     * @throws IOException when the file cannot be opened, or is no longer a regular file once opened
     */
    static Ref open(Path path, boolean writable) throws IOException {
        synchronized (OPEN) {
            BasicFileAttributes before;
            try {
                before = Files.readAttributes(path, BasicFileAttributes.class);
            } catch (NoSuchFileException e) {
                return null;
            }
            if (!before.isRegularFile()) {
                throw new IOException("not a regular file (a FIFO, socket, device or directory?)");
            }
            Object key = before.fileKey();
            Ref ref = key == null ? null : OPEN.get(key);
            if (ref != null
                    && (ref.writable || !writable)) { // this inode is open here already: never a second descriptor
                ref.refs++;
                return ref;
            }
            afterRegularCheck.run();
            FileChannel ch;
            try {
                OpenOption[] options = writable
                        ? new OpenOption[] {StandardOpenOption.READ, StandardOpenOption.WRITE}
                        : new OpenOption[] {StandardOpenOption.READ};
                // Bounded: a FIFO renamed in since the check would block a read-only open for good. One that
                // returns late is kept, never closed: it may be a descriptor of a file this process locks.
                ch = BoundedOpen.open(path, openTimeoutMillis, StateChannels::keep, options);
            } catch (NoSuchFileException e) {
                return null;
            }
            // The inode the descriptor has, as near as a path tells: the file may have been replaced
            // between the two looks.
            BasicFileAttributes after;
            try {
                after = Files.readAttributes(path, BasicFileAttributes.class);
            } catch (IOException e) {
                after = before;
            }
            if (!after.isRegularFile()) {
                keep(ch); // not the state file, but the path is no longer a file to close a descriptor of safely
                throw new IOException(
                        "replaced while being opened by something that is not a regular file (a FIFO, socket or device?)");
            }
            Object opened = after.fileKey();
            ref = opened == null ? null : OPEN.get(opened);
            if (ref != null && !ref.writable && writable) {
                // A read-only user of this inode came first: its Ref locks through the read-write channel
                // from now on, and the read-only descriptor stays open until the last user goes.
                ref.others.add(ref.channel);
                ref.channel = ch;
                ref.writable = true;
                ref.refs++;
                return ref;
            }
            if (ref != null) {
                // Replaced by a file this process holds already: closing this descriptor would release
                // the locks held through the other, so it stays open (a rare race, one descriptor).
                keep(ch);
                ref.refs++;
                return ref;
            }
            ref = new Ref(ch, writable, opened);
            if (opened != null) {
                OPEN.put(opened, ref);
            }
            return ref;
        }
    }

    private static void keep(FileChannel ch) {
        synchronized (KEPT) {
            KEPT.add(ch);
        }
    }
}
