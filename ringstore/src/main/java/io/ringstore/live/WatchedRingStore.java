package io.ringstore.live;

import io.ringstore.Backend;
import io.ringstore.Ring;
import io.ringstore.RingFileException;
import io.ringstore.RingStore;
import io.ringstore.family.KeyHash;
import io.ringstore.family.RingVersion;
import io.ringstore.internal.BackendAccess;
import io.ringstore.internal.BoundedOpen;
import io.ringstore.internal.FollowedFile;
import io.ringstore.internal.IoErrors;
import io.ringstore.internal.Poller;
import io.ringstore.internal.format.RingFileDescriptor;
import io.ringstore.state.SharedLoad;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * The engine of a {@link RingRouter}: a ring file that follows its path: it keeps answering from the
 * file it has, and switches to a new generation when one is published at the path (the builder's
 * atomic rename). It hashes no key itself: the router's {@link RingRouter.Route}s do, and look the
 * hash up through its {@link Handle}s. A router over a fixed store ({@link RingRouter#builder(RingStore)}) has an engine
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
 * <p>The path is followed by a {@link FollowedFile}, of which this class is the ring file's kind:
 * the stamp below is its identity, opening is the check above, and a generation is let go by
 * unmapping it. Thread-safe. {@link #current()} is one volatile read.
 */
final class WatchedRingStore implements AutoCloseable, FollowedFile.Kind<RingStore> {
    /** How often the path is checked by default. */
    static final long DEFAULT_POLL_MILLIS = 200;
    /** How long a replaced generation stays mapped, by default: far longer than any lookup takes. */
    static final long DEFAULT_GRACE_MILLIS = 500;

    private static final System.Logger LOG = System.getLogger(WatchedRingStore.class.getName());
    /** What only a watcher may do with a {@link RingStore}: map it for watching, unmap it, ask whether it is mapped. */
    private static final BackendAccess.StoreOperations STORES = BackendAccess.stores();

    private final Path path;
    private final ScheduledExecutorService timer;
    /** Handles whose features and version every new file must have; weak: see {@link Handle}. Guarded by this. */
    private final Map<Handle, Boolean> handles = new WeakHashMap<>();

    /** The generation serving, and the replaced ones in their grace period; checks hold this object's lock. */
    private final FollowedFile<RingStore> file;
    /**
     * The generation serving, as lookups read it: the follower's, set at each switch. Its own field, since
     * reading it through the follower would cost every lookup a load more.
     */
    private volatile RingStore current;

    private final boolean allowOlderGeneration;
    private final RingListener listener;
    /** Lookups through {@link Handle}s that met an unmapped generation and were done again on the current one. */
    private final LongAdder retries = new LongAdder();
    /** Test hooks, to force the interleavings a check must survive: after the identity is taken, before a switch. */
    Runnable afterStamp = () -> {};
    /** Test hook: runs in a poll's stamp between the regular-file check and the open. */
    Runnable afterRegularCheck = () -> {};

    Runnable beforeSwitch = () -> {};

    /** {@code stamp} null: the engine of a router over a store already open, its owner's, never switched. */
    private WatchedRingStore(RingRouter.Builder settings, RingStore first, Object stamp) {
        this.path = settings.path;
        this.allowOlderGeneration = settings.allowOlderGeneration;
        this.listener = settings.listener;
        this.current = first;
        this.file = stamp == null
                ? FollowedFile.fixed(first, this)
                : new FollowedFile<>(
                        path, this, this, TimeUnit.MILLISECONDS.toNanos(settings.graceMillis), first, stamp);
        this.timer = stamp == null ? null : Poller.start("watch", path, settings.pollMillis, this::checkNow);
    }

    /**
     * {@return the engine {@code settings} describe} Over the builder's store, already open: it never
     * switches, and closing it leaves the store open (its owner closes it). Otherwise it opens the
     * builder's path, verifies it and checks it every {@code pollMillis} ms (0: only on {@link #checkNow()}).
     */
    static WatchedRingStore open(RingRouter.Builder settings) throws RingFileException {
        if (settings.store != null) {
            return new WatchedRingStore(settings, settings.store, null);
        }
        if (settings.pollMillis < 0) {
            throw new IllegalArgumentException("pollMillis must be 0 or more: pollMillis=" + settings.pollMillis);
        }
        if (settings.graceMillis < 0) {
            throw new IllegalArgumentException("graceMillis must be 0 or more: graceMillis=" + settings.graceMillis);
        }
        Object stamp = stampOf(settings.path, () -> {});
        RingStore first = STORES.openWatched(settings.path);
        try {
            first.verify();
        } catch (RingFileException
                | RuntimeException
                | Error e) { // unmapped now: a shared arena is never unmapped by the GC
            STORES.release(first);
            throw e;
        }
        return new WatchedRingStore(settings, first, stamp);
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

    /**
     * {@return the follower of the path: its switches, last switch, last refusal and retired generations,
     * and {@link FollowedFile#check()}, which the router shows as they are}
     */
    FollowedFile<RingStore> file() {
        return file;
    }

    /** {@return the watched path} */
    Path path() {
        return path;
    }

    /** {@return lookups that met a generation unmapped under them and were answered by the current one instead} */
    long lookupRetries() {
        return retries.sum();
    }

    /** Looks at the path now (see {@link FollowedFile#check()}); true when it switched to a new file. */
    boolean checkNow() {
        return file.check();
    }

    /** The file's stamp ({@link #stampOf}); one that is not a regular file, or none, is refused unopened. */
    @Override
    public Object look(Path path) throws FollowedFile.Refused {
        try {
            return stampOf(path, afterRegularCheck);
        } catch (RingFileException e) {
            throw new FollowedFile.Refused(e.getMessage(), null, e);
        } catch (OutOfMemoryError e) {
            throw new FollowedFile.Refused(outOfHeap(e), null, e);
        }
    }

    /**
     * Opens and verifies the file; refuses one older than the generation serving (unless allowed), and
     * one lacking what a handle uses. The serving file published again (same generation and input
     * digest) is nothing to switch to.
     */
    @Override
    public RingStore open(Path path, Object seen, RingStore serving) throws FollowedFile.Refused {
        RingStore next = null;
        try {
            afterStamp.run();
            next = STORES.openWatched(path);
            next.verify();
            if (next.generation() == serving.generation() && Arrays.equals(next.inputDigest(), serving.inputDigest())) {
                STORES.release(next);
                return null;
            }
            if (Long.compareUnsigned(next.generation(), serving.generation()) < 0 && !allowOlderGeneration) {
                throw new IllegalArgumentException(
                        "generation " + Long.toUnsignedString(next.generation())
                                + " is lower than generation " + Long.toUnsignedString(serving.generation())
                                + " serving (an old file copied into place? publish with a higher generation, or allow older generations)");
            }
            for (Handle h : handles.keySet()) {
                next.ring(
                        h.features,
                        h.version); // throws IllegalArgumentException when the new file lacks what a handle uses
            }
            beforeSwitch.run();
            return next;
        } catch (RingFileException | IllegalArgumentException e) {
            throw refusal(e.getMessage(), seen, next, e);
        } catch (OutOfMemoryError e) {
            // What did not fit is this file's tables (the points stay mapped, off the heap): refuse the
            // file rather than retry it on every poll, which would only churn the serving heap.
            throw refusal(outOfHeap(e), seen, next, e);
        } catch (RuntimeException | Error e) {
            if (next != null) {
                STORES.release(next);
            }
            throw e;
        }
    }

    /** The refusal of the file stamped {@code seen}; {@code opened}, when not null, is unmapped now: nobody else has it. */
    private static FollowedFile.Refused refusal(String reason, Object seen, RingStore opened, Throwable cause) {
        if (opened != null) {
            STORES.release(opened);
        }
        return new FollowedFile.Refused(reason, seen, cause);
    }

    private static String outOfHeap(OutOfMemoryError e) {
        return "not enough heap to open and check it (" + e.getMessage() + "); raise -Xmx or publish a smaller file";
    }

    @Override
    public void switched(RingStore before, RingStore next) {
        current = next;
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
            event.switches = file.switches();
            event.commit();
        }
        tell(l -> l.switched(path, before.generation(), next.generation()));
    }

    @Override
    public void refused(RingStore serving, String reason) {
        LOG.log(
                System.Logger.Level.WARNING,
                "{0}: refused, still serving generation {1}: {2}",
                path,
                Long.toUnsignedString(serving.generation()),
                reason);
        RingEvents.Refusal event = new RingEvents.Refusal();
        if (event.shouldCommit()) {
            event.path = path.toString();
            event.servingGeneration = serving.generation();
            event.reason = reason;
            event.commit();
        }
        tell(l -> l.refused(path, serving.generation(), reason));
    }

    /** Unmaps a replaced generation; false while a JDK refuses to close an arena being read (the next check tries again). */
    @Override
    public boolean release(RingStore old) {
        return STORES.release(old);
    }

    /** Calls the listener; what it throws is logged, and changes nothing. */
    void tell(Consumer<RingListener> call) {
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
     * One feature ring of one version, resolved to the generation serving; the router's routes ask it
     * their operations, which look up on {@link #ring()} and, when that throws, ask {@link #retryAfter}
     * whether to look up again. Close a handle no longer needed: an open one holds back every new file that lacks its
     * feature or version. A handle that is no longer reachable is released as well (the watcher holds
     * handles weakly), but only when the garbage collector gets to it.
     */
    final class Handle implements AutoCloseable {
        // The four operations, by number: the one retry loop (answer) runs one of them on the ring of the
        // generation serving; inlined into each entry point, the number is a constant and the switch folds.
        static final int LOOKUP = 0;
        static final int SELECT = 1;
        static final int CHOOSE = 2;
        static final int CHOOSE_AND_ACQUIRE = 3;

        private final Set<String> features;
        private final RingVersion version;
        /** The version's key hash: what a route hashes a key with before it looks it up here. */
        final KeyHash keyHash;
        /** Whether the version's family fails over by rehashing the key (spymemcached, xmemcached): select needs the key's bytes. */
        private final boolean rehashes;
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

        // The four operations of a route (LOOKUP, SELECT, CHOOSE, CHOOSE_AND_ACQUIRE), for the key's hash
        // (and, for a rehashing family's failover, its bytes), through the one retry loop.

        Backend lookup(long hash) {
            return answer(LOOKUP, hash, null, 0, 0, 0, null, null);
        }

        /**
         * The one retry loop: operation {@code op} on the ring of the generation serving; when that
         * generation is unmapped under it (the ring throws {@link IllegalStateException}), the operation
         * runs again on the current one.
         */
        Backend answer(
                int op,
                long hash,
                byte[] key,
                int offset,
                int length,
                int maxPoints,
                Predicate<Backend> accept,
                SharedLoad load) {
            for (; ; ) {
                Ring r = ring();
                try {
                    return switch (op) {
                        case LOOKUP -> {
                            int b = r.lookupHash(hash);
                            yield b < 0 ? null : r.store().backend(b);
                        }
                        case SELECT -> r.selectBackend(hash, key, offset, length, maxPoints, accept);
                        case CHOOSE -> load.choose(r, hash, key, offset, length);
                        default -> load.chooseAndAcquire(r, hash, key, offset, length);
                    };
                } catch (IllegalStateException e) {
                    retryAfter(r, e);
                }
            }
        }

        /** Operation {@code op} for the key in {@code key[offset, offset+length)}, hashed in place. */
        Backend answer(
                int op, byte[] key, int offset, int length, int maxPoints, Predicate<Backend> accept, SharedLoad load) {
            return answer(op, keyHash.hash64(key, offset, length), key, offset, length, maxPoints, accept, load);
        }

        /**
         * Operation {@code op} for the buffer's bytes from its position to its limit, hashed in place. They
         * are copied only for a failover that reads them: a rehashing family's (spymemcached's,
         * xmemcached's: each try hashes the key again), but for {@code choose} with a bound, which walks
         * by hash alone; every other family's failover needs only the hash.
         */
        Backend answer(int op, ByteBuffer key, int maxPoints, Predicate<Backend> accept, SharedLoad load) {
            byte[] b = null;
            if (failoverReadsKey(load)) {
                b = new byte[key.remaining()];
                key.get(key.position(), b);
            }
            return answer(op, keyHash.hash64(key), b, 0, b == null ? 0 : b.length, maxPoints, accept, load);
        }

        /** {@link #answer(int, ByteBuffer, int, Predicate, SharedLoad)} for the segment's bytes. */
        Backend answer(int op, MemorySegment key, int maxPoints, Predicate<Backend> accept, SharedLoad load) {
            byte[] b = failoverReadsKey(load) ? key.toArray(ValueLayout.JAVA_BYTE) : null;
            return answer(op, keyHash.hash64(key), b, 0, b == null ? 0 : b.length, maxPoints, accept, load);
        }

        private boolean failoverReadsKey(SharedLoad load) {
            return rehashes && (load == null || load.policy() == null);
        }

        /**
         * A lookup on {@code r} threw: when {@code r}'s generation was unmapped after a switch, returns
         * so that the caller looks up again on the current generation (newer each time: this ends);
         * anything else is rethrown.
         */
        private void retryAfter(Ring r, IllegalStateException e) {
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
            for (Handle h : handles.keySet()) {
                h.closed = true; // lookups through it throw from now on, also over a fixed store left open
                h.ring = null;
            }
            handles.clear();
            file.close().forEach(STORES::release);
        }
    }
}
