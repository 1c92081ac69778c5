package io.ringstore;

import io.ringstore.internal.IoErrors;
import io.ringstore.internal.Poller;
import io.ringstore.internal.format.RingFileDescriptor;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Instant;
import java.util.Arrays;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.ScheduledExecutorService;

/**
 * A ring file that follows its path: it keeps answering from the file it has, and switches to a new
 * generation when one is published at the path (the builder's atomic rename). Made by
 * {@link RingStore#watch(Path)}.
 *
 * <p><b>Never unmapped under a reader.</b> Each generation is mapped in a garbage-collector-managed
 * arena: a mapping is released only when no thread can reach it any more, so a lookup that started
 * on the old generation finishes on it, and the lookup path pays nothing for the guarantee (no
 * reference count, no lock). The price is that an old mapping lingers until the next collection;
 * the pages are the page cache's, so only address space waits.
 *
 * <p><b>Switching never fails a lookup.</b> The new file is opened and checked completely
 * ({@link RingStore#verify()}) on the watcher thread before it is published to readers; a file
 * that fails is refused, the reason is logged through {@link System.Logger}, and the current
 * generation keeps serving. A file that lacks a feature or version a {@link Live} handle uses is
 * refused as well. Handles are made and checked under one lock, so a handle is always one that the
 * generation serving can answer: asking for a handle while a check runs waits for the check.
 *
 * <p><b>One switch per file.</b> A file counts as new when its identity (file key, modification
 * time, size, first 64 header bytes) changed, and that identity is taken before and after opening,
 * so a file published in between is not opened under its predecessor's identity. A file with the
 * generation and input digest of the one serving (the same file published again) is no switch.
 *
 * <p><b>Never stops.</b> Only a regular file is opened (a FIFO at the path would block the watcher
 * until a writer comes). A file whose tables do not fit in the heap is refused like a corrupt one:
 * the points stay mapped, off the heap, but the backend table is read into it (its addresses as
 * strings, about the table's size in bytes), so a new file needs that much free heap beside the one
 * serving. Any other failure of a background check is logged by the poller, which keeps polling.
 *
 * <p>Thread-safe. {@link #current()} is one volatile read.
 */
public final class WatchedRingStore implements AutoCloseable {
    /** How often the path is checked by default. */
    public static final long DEFAULT_POLL_MILLIS = 200;
    /** A check gives up (until the next) when the file is replaced again each time it is being opened. */
    private static final int MAX_OPEN_ATTEMPTS = 3;

    private static final System.Logger LOG = System.getLogger(WatchedRingStore.class.getName());

    private final Path path;
    private final ScheduledExecutorService timer;
    /** Handles whose features and version every new file must have; weak: see {@link Live}. Guarded by this. */
    private final Map<Live, Boolean> handles = new WeakHashMap<>();
    private volatile RingStore current;
    private volatile Instant lastSwitch;
    private volatile String lastError;
    private volatile long switches;
    private Object stamp;
    /** Test hooks, to force the interleavings a check must survive: after the identity is taken, before a switch. */
    Runnable afterStamp = () -> { };
    Runnable beforeSwitch = () -> { };

    private WatchedRingStore(Path path, RingStore first, Object stamp, long pollMillis) {
        this.path = path;
        this.current = first;
        this.stamp = stamp;
        this.lastSwitch = Instant.now();
        this.timer = Poller.start("watch", path, pollMillis, this::checkNow);
    }

    /**
     * Opens {@code path} and checks it every {@code pollMillis} ms (0: only on {@link #checkNow()}).
     *
     * @throws RingFileException when the file there now cannot be opened or fails verification
     */
    public static WatchedRingStore watch(Path path, long pollMillis) throws RingFileException {
        Objects.requireNonNull(path, "path");
        if (pollMillis < 0) {
            throw new IllegalArgumentException("pollMillis must be 0 or more: pollMillis=" + pollMillis);
        }
        Object stamp = stampOf(path);
        RingStore first = RingStore.open(path, true);
        first.verify();
        return new WatchedRingStore(path, first, stamp, pollMillis);
    }

    /** The generation serving now. A caller may keep using it as long as it likes; it stays mapped. */
    public RingStore current() {
        return current;
    }

    public long generation() {
        return current.generation();
    }

    /** When the current generation started serving (for the first, when watching started). */
    public Instant lastSwitch() {
        return lastSwitch;
    }

    /** Number of switches to a new generation so far. */
    public long switches() {
        return switches;
    }

    /** Why the last file seen at the path was refused, or null if the newest file is serving. */
    public String lastError() {
        return lastError;
    }

    public Path path() {
        return path;
    }

    /**
     * Looks at the path now: if a different file is there, opens and verifies it and switches to it.
     * Returns true on a switch.
     */
    public synchronized boolean checkNow() {
        Object seen = null;
        try {
            RingStore next = null;
            for (int attempt = 0; next == null; attempt++) {
                if (attempt == MAX_OPEN_ATTEMPTS) {
                    return false; // replaced faster than it can be opened: the next check looks again
                }
                seen = stampOf(path);
                if (seen.equals(stamp)) {
                    return false;
                }
                afterStamp.run();
                next = RingStore.open(path, true);
                if (!seen.equals(stampOf(path))) {
                    next = null; // replaced while being opened: what was opened may not be what was stamped
                    seen = null;
                }
            }
            next.verify();
            if (next.generation() == current.generation() && Arrays.equals(next.inputDigest(), current.inputDigest())) {
                stamp = seen; // the serving file published again: nothing to switch to
                lastError = null;
                return false;
            }
            for (Live h : handles.keySet()) {
                next.ring(h.features, h.version); // throws IllegalArgumentException when the new file lacks what a handle uses
            }
            beforeSwitch.run();
            RingStore before = current;
            current = next;
            lastSwitch = Instant.now();
            lastError = null;
            stamp = seen;
            switches++;
            LOG.log(System.Logger.Level.INFO, "{0}: now serving generation {1} (was {2})", path, Long.toUnsignedString(next.generation()), Long.toUnsignedString(before.generation()));
            return true;
        } catch (RingFileException | IllegalArgumentException e) {
            return refuse(e.getMessage(), seen);
        } catch (OutOfMemoryError e) {
            // What did not fit is this file's tables (the points stay mapped, off the heap): refuse the
            // file rather than retry it on every poll, which would only churn the serving heap.
            return refuse("not enough heap to open and check it (" + e.getMessage() + "); raise -Xmx or publish a smaller file", seen);
        }
    }

    private boolean refuse(String reason, Object seen) {
        if (!reason.equals(lastError)) {
            LOG.log(System.Logger.Level.WARNING, "{0}: refused, still serving generation {1}: {2}", path, Long.toUnsignedString(current.generation()), reason);
        }
        lastError = reason;
        if (seen != null) {
            stamp = seen; // do not retry the same bad file on every poll
        }
        return false;
    }

    /**
     * Identity of the file at the path: inode, modification time, size, and the header's first 64
     * bytes (generation, length, input digest), so that a new publication is seen even when the
     * file system reuses an inode within one timestamp tick. Only a regular file is opened: opening
     * a FIFO would block the watcher until some process writes to it, a device could be read forever.
     */
    private static Object stampOf(Path path) throws RingFileException {
        BasicFileAttributes a = RingStore.requireRegularFile(path);
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
            ByteBuffer head = ByteBuffer.allocate(RingFileDescriptor.BACKEND_COUNT_OFFSET);
            while (head.hasRemaining() && ch.read(head, head.position()) > 0) {
                // read up to 64 bytes; a shorter file keeps what it has
            }
            return Arrays.asList(a.fileKey(), a.lastModifiedTime(), a.size(), ByteBuffer.wrap(head.array(), 0, head.position()));
        } catch (NoSuchFileException e) {
            throw new RingFileException(path, -1, "no such file");
        } catch (IOException e) {
            throw new RingFileException(path, -1, "cannot read: " + IoErrors.describe(e), e);
        }
    }

    /**
     * A handle on one feature ring of one version that always answers from the current generation.
     * Resolving the ring is done once per generation, not per lookup. From now on a file lacking
     * {@code features} or {@code version} is refused, until the handle is closed or nobody can reach it.
     *
     * @throws IllegalArgumentException when the generation serving lacks a feature or the version
     */
    public synchronized Live ring(Set<String> features, RingVersion version) {
        Live h = new Live(Set.copyOf(features), version);
        h.ring = current.ring(h.features, version);
        handles.put(h, Boolean.TRUE);
        return h;
    }

    /** {@link #ring(Set, RingVersion)} of the default version of the generation serving now; the handle keeps that version. */
    public synchronized Live ring(Set<String> features) {
        return ring(features, current.versions().getFirst());
    }

    /**
     * See {@link #ring(Set, RingVersion)}. Lookups allocate nothing. Close a handle no longer needed:
     * an open one holds back every new file that lacks its feature or version. A handle that is no
     * longer reachable is released as well (the watcher holds handles weakly), but only when the
     * garbage collector gets to it.
     */
    public final class Live implements AutoCloseable {
        private final Set<String> features;
        private final RingVersion version;
        /** The ring of the generation last used; null once closed. */
        private volatile Ring ring;
        private volatile boolean closed;

        private Live(Set<String> features, RingVersion version) {
            this.features = features;
            this.version = version;
        }

        /**
         * The ring of the generation serving now.
         *
         * @throws IllegalStateException when the handle was closed (a lookup racing with close may still answer)
         */
        public Ring ring() {
            Ring r = ring;
            RingStore c = current;
            if (r == null || r.store() != c) {
                if (closed) {
                    throw new IllegalStateException("handle on " + features + " " + version + " of " + path + " was closed");
                }
                r = c.ring(features, version); // first lookup after a switch
                ring = r;
            }
            return r;
        }

        /**
         * The backend index for {@code key} in the current generation. An index means something only
         * with its generation's store: to map it to an address, take {@link #ring()} once and use
         * {@code ring.lookup(key)} and {@code ring.store().backend(i)}, or call {@link #backend(byte[])}.
         */
        public int lookup(byte[] key) {
            return ring().lookup(key);
        }

        /** The backend for {@code key} in the current generation, or null when the ring has none. */
        public Backend backend(byte[] key) {
            Ring r = ring();
            int b = r.lookup(key);
            return b < 0 ? null : r.store().backend(b);
        }

        public int lookupHash(int hash) {
            return ring().lookupHash(hash);
        }

        /** Stops holding new files to this handle's feature and version; its lookups then throw. */
        @Override
        public void close() {
            closed = true;
            ring = null;
            synchronized (WatchedRingStore.this) {
                handles.remove(this);
            }
        }
    }

    /** Stops watching. The stores already handed out keep working. */
    @Override
    public void close() {
        if (timer != null) {
            timer.shutdownNow();
        }
    }
}
