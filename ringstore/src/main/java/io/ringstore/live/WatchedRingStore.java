package io.ringstore.live;

import io.ringstore.Ring;
import io.ringstore.RingFileException;
import io.ringstore.RingStore;
import io.ringstore.family.KeyHash;
import io.ringstore.family.RingVersion;
import io.ringstore.internal.BackendAccess;
import io.ringstore.internal.BoundedOpen;
import io.ringstore.internal.IoErrors;
import io.ringstore.internal.Poller;
import io.ringstore.internal.format.RingFileDescriptor;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * The engine of a {@link RingRouter}: a ring file that follows its path: it keeps answering from the
 * file it has, and switches to a new generation when one is published at the path (the builder's
 * atomic rename). It looks no key up itself: the router's {@link RingRouter.Route}s do, through its
 * {@link Handle}s. A router over a fixed store ({@link RingRouter#builder(RingStore)}) has an engine
 * that never looks at a path and never switches.
 *
 * <p><b>Old generations are unmapped promptly, never under a reader.</b> Each generation is mapped
 * in its own shared arena. A generation replaced stays mapped for a grace period
 * ({@value #DEFAULT_GRACE_MILLIS} ms by default) and is unmapped at the first check after it: with
 * the poller, within grace + poll interval (0.7 s by default) plus one check's duration, without
 * waiting for a garbage collection; a deleted file's disk space comes back then. With no poller
 * ({@code pollMillis} 0) at the first {@link #checkNow()} after the grace period. Unmapping is safe
 * against a reader still on that generation (see {@code RingStore.release()}): its access throws
 * {@link IllegalStateException} and never reads freed memory. The router's lookups catch that
 * ({@link Handle#retryAfter}) and look up again on the current generation, so they never fail; the
 * cost on the lookup path is an exception handler, which costs nothing until it runs (see
 * bench/RouterBenchmark). A {@link Ring} or {@link RingStore} taken from {@link #current()} and used
 * longer than the grace period after its generation was replaced throws that exception.
 *
 * <p><b>Generations only go up.</b> A file whose generation is lower than the one serving (an old
 * file copied into place) is refused with a log line naming both, unless the watcher was made to
 * allow it ({@link RingRouter.Builder#allowOlderGeneration(boolean)}).
 *
 * <p><b>Switching never fails a lookup.</b> The new file is opened and checked completely
 * ({@link RingStore#verify()}) on the watcher thread before it is published to readers; a file
 * that fails is refused, the reason is logged through {@link System.Logger}, and the current
 * generation keeps serving. A file that lacks a feature or version a {@link Handle} uses is
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
 * <p>Switches and refusals go to {@link System.Logger}, to JFR ({@code io.ringstore.Switch},
 * {@code io.ringstore.Refusal}) and to a {@link RingListener} when one was given.
 *
 * <p>Thread-safe. {@link #current()} is one volatile read.
 */
final class WatchedRingStore implements AutoCloseable {
    /** How often the path is checked by default. */
    static final long DEFAULT_POLL_MILLIS = 200;
    /** How long a replaced generation stays mapped, by default: far longer than any lookup takes. */
    static final long DEFAULT_GRACE_MILLIS = 500;
    /** A check gives up (until the next) when the file is replaced again each time it is being opened. */
    private static final int MAX_OPEN_ATTEMPTS = 3;

    private static final System.Logger LOG = System.getLogger(WatchedRingStore.class.getName());
    /** What only a watcher may do with a {@link RingStore}: map it for watching, unmap it, ask whether it is mapped. */
    private static final BackendAccess.StoreOperations STORES = BackendAccess.stores();

    private final Path path;
    private final ScheduledExecutorService timer;
    /** Handles whose features and version every new file must have; weak: see {@link Handle}. Guarded by this. */
    private final Map<Handle, Boolean> handles = new WeakHashMap<>();

    private volatile RingStore current;
    private volatile Instant lastSwitch;
    private volatile String lastError;
    private volatile long switches;
    private Object stamp;
    private final long graceNanos;
    private final boolean allowOlderGeneration;
    private final RingListener listener;
    /** Replaced generations still mapped, oldest first. Guarded by this. */
    private final ArrayDeque<Retired> retired = new ArrayDeque<>();
    /** Lookups through {@link Handle}s that met an unmapped generation and were done again on the current one. */
    private final LongAdder retries = new LongAdder();
    /** Set once by {@link #close()}; then every generation is unmapped. Guarded by this. */
    private boolean closed;
    /** A fixed store's engine: no path is looked at, and the store is its owner's to close. */
    private final boolean fixed;
    /** Test hooks, to force the interleavings a check must survive: after the identity is taken, before a switch. */
    Runnable afterStamp = () -> {};
    /** Test hook: runs in a poll's stamp between the regular-file check and the open. */
    Runnable afterRegularCheck = () -> {};

    Runnable beforeSwitch = () -> {};

    /** A generation replaced at {@code since} (System.nanoTime), unmapped once the grace period passed. */
    private record Retired(RingStore store, long since) {}

    private WatchedRingStore(
            Path path,
            RingStore first,
            Object stamp,
            long pollMillis,
            long graceMillis,
            boolean allowOlderGeneration,
            RingListener listener,
            boolean fixed) {
        this.path = path;
        this.fixed = fixed;
        this.current = first;
        this.stamp = stamp;
        this.lastSwitch = Instant.now();
        this.graceNanos = TimeUnit.MILLISECONDS.toNanos(graceMillis);
        this.allowOlderGeneration = allowOlderGeneration;
        this.listener = listener;
        this.timer = fixed ? null : Poller.start("watch", path, pollMillis, this::checkNow);
    }

    /**
     * {@return the engine of a router over {@code store}, already open: it never switches, and closing
     * it leaves the store open (its owner closes it)}
     *
     * @param store the open store
     * @param listener told of policy changes
     */
    static WatchedRingStore fixed(RingStore store, RingListener listener) {
        Objects.requireNonNull(store, "store");
        Objects.requireNonNull(listener, "listener");
        return new WatchedRingStore(store.path(), store, null, 0, 0, false, listener, true);
    }

    /**
     * Opens {@code path}, verifies it and checks it every {@code pollMillis} ms (0: only on
     * {@link #checkNow()}); see {@link RingRouter.Builder} for the settings.
     */
    static WatchedRingStore watch(
            Path path, long pollMillis, long graceMillis, boolean allowOlderGeneration, RingListener listener)
            throws RingFileException {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(listener, "listener");
        if (pollMillis < 0) {
            throw new IllegalArgumentException("pollMillis must be 0 or more: pollMillis=" + pollMillis);
        }
        if (graceMillis < 0) {
            throw new IllegalArgumentException("graceMillis must be 0 or more: graceMillis=" + graceMillis);
        }
        Object stamp = stampOf(path, () -> {});
        RingStore first = STORES.openWatched(path);
        try {
            first.verify();
        } catch (RingFileException
                | RuntimeException
                | Error e) { // unmapped now: a shared arena is never unmapped by the GC
            STORES.release(first);
            throw e;
        }
        return new WatchedRingStore(path, first, stamp, pollMillis, graceMillis, allowOlderGeneration, listener, false);
    }

    /**
     * {@return the generation serving now} It stays mapped until the grace period after it is replaced has
     * passed; a caller that keeps it longer gets {@link IllegalStateException} from its lookups.
     */
    RingStore current() {
        return current;
    }

    /** {@return the generation serving now, unsigned} */
    long generation() {
        return current.generation();
    }

    /** {@return when the current generation started serving (for the first, when watching started)} */
    Instant lastSwitch() {
        return lastSwitch;
    }

    /** {@return number of switches to a new generation so far} */
    long switches() {
        return switches;
    }

    /** {@return why the last file seen at the path was refused, or null if the newest file is serving} */
    String lastError() {
        return lastError;
    }

    /** {@return the watched path} */
    Path path() {
        return path;
    }

    /** {@return replaced generations still mapped (in their grace period)} */
    synchronized int retiredGenerations() {
        return retired.size();
    }

    /** {@return lookups that met a generation unmapped under them and were answered by the current one instead} */
    long lookupRetries() {
        return retries.sum();
    }

    /**
     * Looks at the path now: if a different file is there, opens and verifies it and switches to it.
     * Returns true on a switch.
     *
     * @return true when it switched to a new file
     */
    synchronized boolean checkNow() {
        if (closed || fixed) {
            return false;
        }
        releaseRetired(System.nanoTime());
        Object seen = null;
        RingStore next = null;
        try {
            for (int attempt = 0; next == null; attempt++) {
                if (attempt == MAX_OPEN_ATTEMPTS) {
                    return false; // replaced faster than it can be opened: the next check looks again
                }
                seen = stampOf(path, afterRegularCheck);
                if (seen.equals(stamp)) {
                    return false;
                }
                afterStamp.run();
                next = STORES.openWatched(path);
                if (!seen.equals(stampOf(path, afterRegularCheck))) {
                    STORES.release(next); // replaced while being opened: what was opened may not be what was stamped
                    next = null;
                    seen = null;
                }
            }
            next.verify();
            if (next.generation() == current.generation() && Arrays.equals(next.inputDigest(), current.inputDigest())) {
                stamp = seen; // the serving file published again: nothing to switch to
                lastError = null;
                STORES.release(next);
                return false;
            }
            if (Long.compareUnsigned(next.generation(), current.generation()) < 0 && !allowOlderGeneration) {
                throw new IllegalArgumentException(
                        "generation " + Long.toUnsignedString(next.generation())
                                + " is lower than generation " + Long.toUnsignedString(current.generation())
                                + " serving (an old file copied into place? publish with a higher generation, or allow older generations)");
            }
            for (Handle h : handles.keySet()) {
                next.ring(
                        h.features,
                        h.version); // throws IllegalArgumentException when the new file lacks what a handle uses
            }
            beforeSwitch.run();
            switchTo(next, seen);
            next = null;
            return true;
        } catch (RingFileException | IllegalArgumentException e) {
            return refuse(e.getMessage(), seen, next);
        } catch (OutOfMemoryError e) {
            // What did not fit is this file's tables (the points stay mapped, off the heap): refuse the
            // file rather than retry it on every poll, which would only churn the serving heap.
            return refuse(
                    "not enough heap to open and check it (" + e.getMessage()
                            + "); raise -Xmx or publish a smaller file",
                    seen,
                    next);
        }
    }

    private void switchTo(RingStore next, Object seen) {
        RingStore before = current;
        current = next;
        long now = System.nanoTime();
        retired.addLast(new Retired(before, now));
        lastSwitch = Instant.now();
        lastError = null;
        stamp = seen;
        switches++;
        LOG.log(
                System.Logger.Level.INFO,
                "{0}: now serving generation {1} (was {2})",
                path,
                Long.toUnsignedString(next.generation()),
                Long.toUnsignedString(before.generation()));
        RingEvents.Switch event = new RingEvents.Switch();
        if (event.shouldCommit()) {
            event.path = path.toString();
            event.fromGeneration = before.generation();
            event.toGeneration = next.generation();
            event.switches = switches;
            event.commit();
        }
        tell(l -> l.switched(path, before.generation(), next.generation()));
        releaseRetired(now); // a grace period of 0 unmaps the replaced generation at once
    }

    /** Unmaps the replaced generations whose grace period has passed at {@code now}. */
    private void releaseRetired(long now) {
        while (!retired.isEmpty() && now - retired.peekFirst().since() >= graceNanos) {
            if (!STORES.release(retired.peekFirst().store())) {
                return; // still in use (a JDK that refuses to close an arena being read): the next check tries again
            }
            retired.removeFirst();
        }
    }

    /**
     * Keeps the current generation. {@code opened}, when not null, is the refused file's mapping:
     * unmapped now, nobody else has it. The same reason again for an unstamped path (a missing file
     * polled again) is reported once; each refused file is reported.
     */
    private boolean refuse(String reason, Object seen, RingStore opened) {
        if (opened != null) {
            STORES.release(opened);
        }
        if (!reason.equals(lastError) || seen != null && !seen.equals(stamp)) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "{0}: refused, still serving generation {1}: {2}",
                    path,
                    Long.toUnsignedString(current.generation()),
                    reason);
            RingEvents.Refusal event = new RingEvents.Refusal();
            if (event.shouldCommit()) {
                event.path = path.toString();
                event.servingGeneration = current.generation();
                event.reason = reason;
                event.commit();
            }
            long serving = current.generation();
            tell(l -> l.refused(path, serving, reason));
        }
        lastError = reason;
        if (seen != null) {
            stamp = seen; // do not retry the same bad file on every poll
        }
        return false;
    }

    /** Calls the listener; what it throws is logged, and changes nothing. */
    void tell(java.util.function.Consumer<RingListener> call) {
        try {
            call.accept(listener);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, path + ": listener failed: " + e, e);
        }
    }

    /**
     * Identity of the file at the path: inode, modification time, size, and the header's first 64
     * bytes (generation, length, input digest), so that a new publication is seen even when the
     * file system reuses an inode within one timestamp tick. Only a regular file is opened: opening
     * a FIFO would block the watcher until some process writes to it, a device could be read forever.
     */
    private static Object stampOf(Path path, Runnable afterRegularCheck) throws RingFileException {
        for (int attempt = 0; ; attempt++) {
            BasicFileAttributes a = STORES.requireRegularFile(path);
            afterRegularCheck.run();
            List<Object> stamp;
            try (FileChannel ch =
                    BoundedOpen.read(path)) { // a FIFO renamed in since the check would block a plain open for good
                ByteBuffer head = ByteBuffer.allocate(RingFileDescriptor.BACKEND_COUNT_OFFSET);
                while (head.hasRemaining() && ch.read(head, head.position()) > 0) {
                    // read up to 64 bytes; a shorter file keeps what it has
                }
                stamp = Arrays.asList(
                        a.fileKey(), a.lastModifiedTime(), a.size(), ByteBuffer.wrap(head.array(), 0, head.position()));
            } catch (NoSuchFileException e) {
                throw new RingFileException(path, -1, "no such file");
            } catch (IOException e) {
                throw new RingFileException(path, -1, "cannot read: " + IoErrors.describe(e), e);
            }
            // The attributes and the bytes must be of one file: a file renamed over the path between the two
            // gives a stamp of neither, and the next poll's stamp of the same file would look like a new
            // file (its refusal logged twice). Looked at again until the path holds still.
            BasicFileAttributes after = STORES.requireRegularFile(path);
            if (attempt >= 3
                    || Objects.equals(after.fileKey(), a.fileKey())
                            && after.lastModifiedTime().equals(a.lastModifiedTime())
                            && after.size() == a.size()) {
                return stamp;
            }
        }
    }

    /**
     * {@return a handle on one feature ring of one version that always resolves to the current generation}
     * Resolving the ring is done once per generation, not per lookup. From now on a file lacking
     * {@code features} or {@code version} is refused, until the handle is closed or nobody can reach it.
     *
     * @param features the features every backend of the ring must have (the empty set: all backends)
     * @param version one of the file's versions
     * @throws IllegalArgumentException when the generation serving lacks a feature or the version
     */
    synchronized Handle ring(Set<String> features, RingVersion version) {
        Handle h = new Handle(Set.copyOf(features), version);
        h.ring = current.ring(h.features, version);
        handles.put(h, Boolean.TRUE);
        return h;
    }

    /**
     * One feature ring of one version, resolved to the generation serving; the router's routes look
     * keys up on {@link #ring()} and, when that throws, ask {@link #retryAfter} whether to look up
     * again. Close a handle no longer needed: an open one holds back every new file that lacks its
     * feature or version. A handle that is no longer reachable is released as well (the watcher holds
     * handles weakly), but only when the garbage collector gets to it.
     */
    final class Handle implements AutoCloseable {
        private final Set<String> features;
        private final RingVersion version;
        /** The version's key hash: what a route hashes a key with before it looks it up here. */
        final KeyHash keyHash;
        /** Whether the version's family fails over by rehashing the key (spymemcached, xmemcached): select needs the key's bytes. */
        final boolean rehashes;
        /** The ring of the generation last used; null once closed. */
        private volatile Ring ring;

        private volatile boolean closed;

        private Handle(Set<String> features, RingVersion version) {
            this.features = features;
            this.version = version;
            this.keyHash = version.keyHash();
            this.rehashes = version.family().failover().rehashesKey();
        }

        /**
         * {@return the ring of the generation serving now}
         *
         * @throws IllegalStateException when the handle was closed (a lookup racing with close may still answer)
         */
        Ring ring() {
            Ring r = ring;
            RingStore c = current;
            if (r == null || r.store() != c) {
                if (closed) {
                    throw new IllegalStateException(
                            "handle on " + features + " " + version + " of " + path + " was closed");
                }
                r = c.ring(features, version); // first lookup after a switch
                ring = r;
                if (closed) { // closed while resolving: do not leave a ring cached for lookups after close
                    ring = null;
                    throw new IllegalStateException(
                            "handle on " + features + " " + version + " of " + path + " was closed");
                }
            }
            return r;
        }

        /**
         * A lookup on {@code r} threw: when {@code r}'s generation was unmapped after a switch, returns
         * so that the caller looks up again on the current generation (newer each time: this ends);
         * anything else is rethrown.
         */
        void retryAfter(Ring r, IllegalStateException e) {
            if (STORES.mapped(r.store()) || r.store() == current) {
                throw e; // not a replaced generation's release: the watcher was closed, or a bug
            }
            retries.increment();
        }

        /** Stops holding new files to this handle's feature and version; lookups through it then throw. */
        @Override
        public void close() {
            closed = true;
            ring = null;
            synchronized (WatchedRingStore.this) {
                handles.remove(this);
            }
        }
    }

    /**
     * Stops watching and unmaps every generation, the current one included (a fixed store's engine
     * leaves its store to its owner): lookups afterwards throw {@link IllegalStateException}.
     */
    @Override
    public void close() {
        if (timer != null) {
            timer.shutdownNow();
        }
        synchronized (this) {
            closed = true;
            for (Handle h : handles.keySet()) {
                h.closed = true; // lookups through it throw from now on, also over a fixed store left open
                h.ring = null;
            }
            handles.clear();
            for (Retired r : retired) {
                STORES.release(r.store());
            }
            retired.clear();
            if (!fixed) {
                STORES.release(current);
            }
        }
    }
}
