package io.ringstore;

import io.ringstore.internal.IoErrors;
import io.ringstore.internal.Poller;
import io.ringstore.internal.format.RingFileDescriptor;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Predicate;

/**
 * A ring file that follows its path: it keeps answering from the file it has, and switches to a new
 * generation when one is published at the path (the builder's atomic rename). Made by
 * {@link RingStore#watch(Path)}.
 *
 * <p><b>Old generations are unmapped promptly, never under a reader.</b> Each generation is mapped
 * in its own shared arena. A generation replaced stays mapped for a grace period
 * ({@value #DEFAULT_GRACE_MILLIS} ms by default) and is unmapped at the first check after it: with
 * the poller, within grace + poll interval (0.7 s by default) plus one check's duration, without
 * waiting for a garbage collection; a deleted file's disk space comes back then. With no poller
 * ({@code pollMillis} 0) at the first {@link #checkNow()} after the grace period. Unmapping is safe
 * against a reader still on that generation (see {@link RingStore#release()}): its access throws
 * {@link IllegalStateException} and never reads freed memory. The lookups of a {@link Live} handle
 * catch that and look up again on the current generation, so they never fail; the cost on the lookup
 * path is an exception handler, which costs nothing until it runs (see bench/RouterBenchmark). A
 * {@link Ring} or {@link RingStore} taken from {@link Live#ring()} or {@link #current()} and used
 * longer than the grace period after its generation was replaced throws that exception.
 *
 * <p><b>Generations only go up.</b> A file whose generation is lower than the one serving (an old
 * file copied into place) is refused with a log line naming both, unless the watcher was made to
 * allow it ({@link RingRouter.Builder#allowOlderGeneration(boolean)}).
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
 * <p>Switches and refusals go to {@link System.Logger}, to JFR ({@code io.ringstore.Switch},
 * {@code io.ringstore.Refusal}) and to a {@link RingListener} when one was given.
 *
 * <p>Thread-safe. {@link #current()} is one volatile read.
 */
public final class WatchedRingStore implements AutoCloseable {
    /** How often the path is checked by default. */
    public static final long DEFAULT_POLL_MILLIS = 200;
    /** How long a replaced generation stays mapped, by default: far longer than any lookup takes. */
    public static final long DEFAULT_GRACE_MILLIS = 500;
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
    private final long graceNanos;
    private final boolean allowOlderGeneration;
    private final RingListener listener;
    /** Replaced generations still mapped, oldest first. Guarded by this. */
    private final ArrayDeque<Retired> retired = new ArrayDeque<>();
    /** Lookups of {@link Live} handles that met an unmapped generation and were done again on the current one. */
    private final LongAdder retries = new LongAdder();
    /** Set once by {@link #close()}; then every generation is unmapped. Guarded by this. */
    private boolean closed;
    /** Test hooks, to force the interleavings a check must survive: after the identity is taken, before a switch. */
    Runnable afterStamp = () -> { };
    Runnable beforeSwitch = () -> { };

    /** A generation replaced at {@code since} (System.nanoTime), unmapped once the grace period passed. */
    private record Retired(RingStore store, long since) {
    }

    private WatchedRingStore(Path path, RingStore first, Object stamp, long pollMillis, long graceMillis,
                             boolean allowOlderGeneration, RingListener listener) {
        this.path = path;
        this.current = first;
        this.stamp = stamp;
        this.lastSwitch = Instant.now();
        this.graceNanos = TimeUnit.MILLISECONDS.toNanos(graceMillis);
        this.allowOlderGeneration = allowOlderGeneration;
        this.listener = listener;
        this.timer = Poller.start("watch", path, pollMillis, this::checkNow);
    }

    /**
     * Opens {@code path} and checks it every {@code pollMillis} ms (0: only on {@link #checkNow()}).
     *
     * @param path the ring file's path; a new file published there is switched to
     * @param pollMillis how often to look at the file, in milliseconds (0: only on {@code checkNow()})
     * @return the store following the path; close it to stop
     * @throws RingFileException when the file there now cannot be opened or fails verification
     */
    public static WatchedRingStore watch(Path path, long pollMillis) throws RingFileException {
        return watch(path, pollMillis, DEFAULT_GRACE_MILLIS, false, new RingListener() {
        });
    }

    /** {@link #watch(Path, long)} with every setting; see {@link RingRouter.Builder}. */
    static WatchedRingStore watch(Path path, long pollMillis, long graceMillis, boolean allowOlderGeneration,
                                  RingListener listener) throws RingFileException {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(listener, "listener");
        if (pollMillis < 0) {
            throw new IllegalArgumentException("pollMillis must be 0 or more: pollMillis=" + pollMillis);
        }
        if (graceMillis < 0) {
            throw new IllegalArgumentException("graceMillis must be 0 or more: graceMillis=" + graceMillis);
        }
        Object stamp = stampOf(path);
        RingStore first = RingStore.open(path, true);
        try {
            first.verify();
        } catch (RingFileException | RuntimeException | Error e) { // unmapped now: a shared arena is never unmapped by the GC
            first.release();
            throw e;
        }
        return new WatchedRingStore(path, first, stamp, pollMillis, graceMillis, allowOlderGeneration, listener);
    }

    /**
     * {@return the generation serving now} It stays mapped until the grace period after it is replaced has
     * passed; a caller that keeps it longer gets {@link IllegalStateException} from its lookups.
     */
    public RingStore current() {
        return current;
    }

    /** {@return the generation serving now, unsigned} */
    public long generation() {
        return current.generation();
    }

    /** {@return when the current generation started serving (for the first, when watching started)} */
    public Instant lastSwitch() {
        return lastSwitch;
    }

    /** {@return number of switches to a new generation so far} */
    public long switches() {
        return switches;
    }

    /** {@return why the last file seen at the path was refused, or null if the newest file is serving} */
    public String lastError() {
        return lastError;
    }

    /** {@return the watched path} */
    public Path path() {
        return path;
    }

    /** {@return replaced generations still mapped (in their grace period)} */
    public synchronized int retiredGenerations() {
        return retired.size();
    }

    /** {@return lookups that met a generation unmapped under them and were answered by the current one instead} */
    public long lookupRetries() {
        return retries.sum();
    }

    /**
     * Looks at the path now: if a different file is there, opens and verifies it and switches to it.
     * Returns true on a switch.
     *
     * @return true when it switched to a new file
     */
    public synchronized boolean checkNow() {
        if (closed) {
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
                seen = stampOf(path);
                if (seen.equals(stamp)) {
                    return false;
                }
                afterStamp.run();
                next = RingStore.open(path, true);
                if (!seen.equals(stampOf(path))) {
                    next.release(); // replaced while being opened: what was opened may not be what was stamped
                    next = null;
                    seen = null;
                }
            }
            next.verify();
            if (next.generation() == current.generation() && Arrays.equals(next.inputDigest(), current.inputDigest())) {
                stamp = seen; // the serving file published again: nothing to switch to
                lastError = null;
                next.release();
                return false;
            }
            if (Long.compareUnsigned(next.generation(), current.generation()) < 0 && !allowOlderGeneration) {
                throw new IllegalArgumentException("generation " + Long.toUnsignedString(next.generation())
                        + " is lower than generation " + Long.toUnsignedString(current.generation())
                        + " serving (an old file copied into place? publish with a higher generation, or allow older generations)");
            }
            for (Live h : handles.keySet()) {
                next.ring(h.features, h.version); // throws IllegalArgumentException when the new file lacks what a handle uses
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
            return refuse("not enough heap to open and check it (" + e.getMessage() + "); raise -Xmx or publish a smaller file", seen, next);
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
        LOG.log(System.Logger.Level.INFO, "{0}: now serving generation {1} (was {2})", path, Long.toUnsignedString(next.generation()), Long.toUnsignedString(before.generation()));
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
            if (!retired.peekFirst().store().release()) {
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
            opened.release();
        }
        if (!reason.equals(lastError) || seen != null && !seen.equals(stamp)) {
            LOG.log(System.Logger.Level.WARNING, "{0}: refused, still serving generation {1}: {2}", path, Long.toUnsignedString(current.generation()), reason);
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
     * {@return a handle on one feature ring of one version that always answers from the current generation}
     * Resolving the ring is done once per generation, not per lookup. From now on a file lacking
     * {@code features} or {@code version} is refused, until the handle is closed or nobody can reach it.
     *
     * @param features the features every backend of the ring must have (the empty set: all backends)
     * @param version one of the file's versions
     * @throws IllegalArgumentException when the generation serving lacks a feature or the version
     */
    public synchronized Live ring(Set<String> features, RingVersion version) {
        Live h = new Live(Set.copyOf(features), version);
        h.ring = current.ring(h.features, version);
        handles.put(h, Boolean.TRUE);
        return h;
    }

    /**
     * {@return {@link #ring(Set, RingVersion)} of the default version of the generation serving now; the handle keeps that version}
     *
     * @param features the features every backend of the ring must have (the empty set: all backends)
     */
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
         * {@return the ring of the generation serving now}
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
                if (closed) { // closed while resolving: do not leave a ring cached for lookups after close
                    ring = null;
                    throw new IllegalStateException("handle on " + features + " " + version + " of " + path + " was closed");
                }
            }
            return r;
        }

        /**
         * {@return the backend index for {@code key} in the generation serving at the time of the call} An index
         * means something only with its generation's store: for an answer that stays valid across a
         * switch, call {@link #backend(byte[])}, whose {@link Backend} is a heap object that outlives
         * its generation's mapping.
         *
         * @param key the key
         */
        public int lookup(byte[] key) {
            return lookupHash(Ring.hash(key, 0, key.length));
        }

        /**
         * {@link #lookup(byte[])} for the key in {@code key[offset, offset+length)}.
         *
         * @param key    the key's array
         * @param offset where the key starts
         * @param length the key's length in bytes
         * @return the backend index in the generation serving, or -1
         */
        public int lookup(byte[] key, int offset, int length) {
            return lookupHash(Ring.hash(key, offset, length));
        }

        /**
         * {@return the backend for {@code key} in the current generation, or null when the ring has none}
         *
         * @param key the key
         */
        public Backend backend(byte[] key) {
            return backendForHash(Ring.hash(key, 0, key.length));
        }

        /**
         * {@link #backend(byte[])} for the key in {@code key[offset, offset+length)}.
         *
         * @param key    the key's array
         * @param offset where the key starts
         * @param length the key's length in bytes
         * @return the backend, or null
         */
        public Backend backend(byte[] key, int offset, int length) {
            return backendForHash(Ring.hash(key, offset, length));
        }

        /**
         * {@return {@link #lookup(byte[])} for the key's bytes from the buffer's position to its limit (heap or direct; the buffer is not moved)}
         *
         * @param key the key
         */
        public int lookup(ByteBuffer key) {
            return lookupHash(Ring.hash(key));
        }

        /**
         * {@return {@link #lookup(byte[])} for the segment's bytes as the key}
         *
         * @param key the key
         */
        public int lookup(MemorySegment key) {
            return lookupHash(Ring.hash(key));
        }

        /**
         * {@link #backend(byte[])} for the key's bytes from the buffer's position to its limit (the buffer is not moved).
         *
         * @param key the key
         * @return the backend, or null
         */
        public Backend backend(ByteBuffer key) {
            return backendForHash(Ring.hash(key));
        }

        /**
         * {@link #backend(byte[])} for the segment's bytes as the key.
         *
         * @param key the key
         * @return the backend, or null
         */
        public Backend backend(MemorySegment key) {
            return backendForHash(Ring.hash(key));
        }

        /**
         * {@return failover ({@link Ring#select}) on the current generation: the backend of the first of at most
         * {@code maxPoints} points from the key's that {@code accept} approves ({@link Ring#NGINX_MAX_POINTS}
         * for nginx's walk), or null when none was approved (nginx then falls back to round robin) or
         * the ring has no backend} {@code accept} is given {@link Backend}s, which mean the same server
         * in every generation; when the generation is unmapped during the walk the walk starts again
         * on the current one, so {@code accept} may see a backend twice.
         *
         * @param hash the key's CRC-32 ({@link io.ringstore.Ring#hash(byte[])})
         * @param maxPoints the most points to walk ({@link io.ringstore.Ring#NGINX_MAX_POINTS} as nginx)
         * @param accept whether a backend may be chosen; asked once per point walked
         */
        public Backend select(int hash, int maxPoints, Predicate<Backend> accept) {
            for (;;) {
                Ring r = ring();
                try {
                    return r.selectBackend(hash, maxPoints, accept);
                } catch (IllegalStateException e) {
                    retryAfter(r, e);
                }
            }
        }

        /**
         * {@return {@link #lookup(byte[])} for a precomputed CRC-32 of the key}
         *
         * @param hash the key's CRC-32 ({@link io.ringstore.Ring#hash(byte[])})
         */
        public int lookupHash(int hash) {
            for (;;) {
                Ring r = ring();
                try {
                    return r.lookupHash(hash);
                } catch (IllegalStateException e) {
                    retryAfter(r, e);
                }
            }
        }

        /**
         * {@return {@link #backend(byte[])} for a precomputed CRC-32 of the key}
         *
         * @param hash the key's CRC-32 ({@link io.ringstore.Ring#hash(byte[])})
         */
        public Backend backendForHash(int hash) {
            for (;;) {
                Ring r = ring();
                try {
                    int b = r.lookupHash(hash);
                    return b < 0 ? null : r.store().backend(b);
                } catch (IllegalStateException e) {
                    retryAfter(r, e);
                }
            }
        }

        /**
         * A lookup on {@code r} threw: when {@code r}'s generation was unmapped after a switch, returns
         * so that the caller looks up again on the current generation (newer each time: this ends);
         * anything else is rethrown.
         */
        void retryAfter(Ring r, IllegalStateException e) {
            if (r.store().mapped() || r.store() == current) {
                throw e; // not a replaced generation's release: the watcher was closed, or a bug
            }
            retries.increment();
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

    /**
     * Stops watching and unmaps every generation, the current one included: lookups afterwards throw
     * {@link IllegalStateException}.
     */
    @Override
    public void close() {
        if (timer != null) {
            timer.shutdownNow();
        }
        synchronized (this) {
            closed = true;
            for (Retired r : retired) {
                r.store().release();
            }
            retired.clear();
            current.release();
        }
    }
}
