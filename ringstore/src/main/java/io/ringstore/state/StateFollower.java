package io.ringstore.state;

import io.ringstore.internal.FollowedFile;
import java.lang.System.Logger.Level;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * How a {@link HostState} keeps to the state file at its path: the {@link FollowedFile} of its
 * mappings, the kind it follows them by, a router's heartbeat thread, and what a call does when the
 * mapping faults under it.
 *
 * <p>A state file's identity is its inode, and the file in use is no longer intact once it shrank
 * under its mapping. Moving to the file now at the path maps it (a router creates it, or replaces a
 * truncated or corrupt one, and takes a lease there), gives each of the caller's slots its endpoint's
 * slot there, tracking what was tracked, and counts there this process's requests in flight in the
 * file it leaves; that one is let go of (its lease given back, its mapping closed) a second later. A
 * file removed with nothing in its place is kept until a process makes a new one.
 *
 * <p>A call that faults on the mapping (the file shrank) marks it lost: calls on it are answered
 * without state, and a router's heartbeat is woken to move to a good file (an inspector says so at
 * once, and moves when refreshed). A call on a mapping let go of under it is made again on the one in
 * use.
 */
final class StateFollower implements FollowedFile.Kind<AttachedFile> {
    /** How long a file moved away from stays mapped: requests on it finish, or fault and are retried. */
    private static final long GRACE_NANOS = 1_000_000_000L;

    private static final System.Logger LOG = System.getLogger(HostState.class.getName());

    private final Path path;
    private final HostState.Options options;
    private final boolean router;
    /** The caller's slots, guarded by the HostState's lock. */
    private final CallerSlots slots = new CallerSlots();
    /** The file in use, and the ones moved away from in their grace period; checks hold the HostState's lock. */
    private final FollowedFile<AttachedFile> file;
    /** Where the file moved to is published: the HostState's field its calls read. */
    private final Consumer<AttachedFile> moved;
    /** This process's requests in flight, stored into each file moved to. */
    private final OwnCounts own;
    /** What the move {@link #open} made says, for {@link #switched}: both run in one check. */
    private String move;
    /** A router's heartbeat; null for an inspector. */
    private final Thread heartbeat;
    /** Test hook: runs at the start of every beat. */
    volatile Runnable beforeBeat = () -> {};
    /** The heartbeat's last failure, logged once until a beat succeeds (heartbeat thread only). */
    private String lastFailure;

    /**
     * Follows the path of {@code first}, under {@code lock} (the HostState), telling {@code moved} of each
     * file moved to; a router's heartbeat starts beating.
     */
    StateFollower(
            AttachedFile first,
            HostState.Options options,
            boolean router,
            Object lock,
            OwnCounts own,
            Consumer<AttachedFile> moved) {
        this.path = first.file.path;
        this.own = own;
        this.options = options;
        this.router = router;
        this.moved = moved;
        this.file = new FollowedFile<>(path, this, lock, GRACE_NANOS, first, first.file.key());
        if (router) {
            this.heartbeat = Thread.ofPlatform()
                    .daemon()
                    .name("ringstore-state " + path.getFileName())
                    .unstarted(this::beat);
            heartbeat.start();
        } else {
            this.heartbeat = null;
        }
    }

    @Override
    public Object look(Path path) {
        return FollowedFile.fileKey(path);
    }

    @Override
    public boolean intact(AttachedFile a) {
        return a.intact();
    }

    @Override
    public AttachedFile open(Path path, Object key, AttachedFile a) throws FollowedFile.Refused {
        if (key == null && !a.lost) {
            // Removed, and nothing at the path yet: the file this instance has is still shared by every
            // process that has it, until one makes a new one (a router starting, ringstore state drain).
            // Not made here: a directory being removed (a test's, a container's) would get it back.
            return null;
        }
        String why = key == null ? "removed" : !key.equals(a.file.key()) ? "replaced" : "truncated";
        AttachedFile n;
        try {
            StateMapping m = router
                    ? StateMapping.mapOrRebuild(path, options.leases(), options.slots())
                    : StateMapping.map(path, a.file.writable());
            if (m == null) {
                return null; // an inspector, and nothing at the path: what it has is all there is
            }
            if (Objects.equals(m.key(), a.file.key())) {
                m.close(); // the same file after all (it shrank, and was extended again?)
                return null;
            }
            n = new AttachedFile(m, options.staleAfter(), router, new int[0], own);
        } catch (StateFileException | RuntimeException | InternalError e) { // InternalError: truncated meanwhile
            throw new FollowedFile.Refused(
                    "the state file was " + why + ", and the file now at the path cannot be used: " + e.getMessage(),
                    null,
                    e);
        }
        slots.moveTo(n, router, path, why);
        move = "the state file was " + why + "; this process moved to the file now at the path";
        return n;
    }

    /** The mapping's own inode: the file opened, whatever is at the path by now (the next check looks). */
    @Override
    public Object identity(Path path, Object key, AttachedFile n) {
        return n.file.key();
    }

    /**
     * Makes {@code n} the file calls use, then stores there this process's requests in flight (counted
     * on the heap: {@link OwnCounts}), those it made in the file left too, whole even when that one was
     * truncated. After the switch: a request counted before it is in what is stored here; one counted
     * after it stores itself here.
     */
    @Override
    public void switched(AttachedFile a, AttachedFile n) {
        moved.accept(n);
        String counted = "";
        if (router) {
            if (!n.leases.counts()) {
                counted = ", without a lease (its requests uncounted)";
            } else {
                long stored = 0;
                own.lock();
                try {
                    int[] toFile = n.toFile;
                    for (int slot = 0; slot < toFile.length; slot++) {
                        int count = own.get(slot);
                        if (count > 0 && toFile[slot] >= 0) {
                            n.leases.store(toFile[slot], slot);
                            stored += count;
                        }
                    }
                    n.leases.storeTotal();
                    MappedFaults.surface();
                    counted = ", " + stored + " of its requests in flight counted there";
                } catch (RuntimeException | InternalError e) {
                    lost(n);
                    counted = ", but that one too failed at once (" + e + ")";
                } finally {
                    own.unlock();
                }
            }
        }
        LOG.log(Level.WARNING, "{0}: {1}{2}", n.file.path, move, counted);
    }

    @Override
    public void refused(AttachedFile a, String reason) {
        LOG.log(Level.WARNING, "{0}: {1}", a.file.path, reason);
    }

    @Override
    public boolean release(AttachedFile a) {
        a.unmap();
        return true;
    }

    /** {@link HostState#refresh}. */
    boolean refresh() {
        if (file.closed()) {
            throw new IllegalStateException(path + ": closed");
        }
        return file.check();
    }

    // ---- the caller's slots (under the HostState's lock: no move in between) ------------------------

    /** {@link HostState#track}. */
    int[] track(List<String> endpoints) {
        AttachedFile a = file.current();
        int[] found;
        if (a.lost) {
            found = new int[endpoints.size()];
            Arrays.fill(found, -1);
        } else {
            try {
                found = a.directory.track(endpoints);
                MappedFaults.surface();
            } catch (InternalError e) {
                lost(a);
                return track(endpoints);
            }
        }
        return slots.track(a, endpoints, found);
    }

    /** {@link HostState#slots}. */
    int[] slots(List<String> endpoints) {
        AttachedFile a = file.current();
        int[] found = new int[endpoints.size()];
        Arrays.fill(found, -1);
        if (!a.lost) {
            try {
                found = a.directory.slots(endpoints, false);
                MappedFaults.surface();
            } catch (InternalError e) {
                lost(a);
                Arrays.fill(found, -1);
            }
        }
        return slots.of(a, endpoints, found, false);
    }

    /** {@link HostState#directoryVersion}: the moves in the high bits, the directory's generation in the low. */
    long directoryVersion() {
        AttachedFile a = file.current();
        long moved = file.switches() << 48;
        if (a.lost) {
            return moved;
        }
        try {
            long generation = a.directory.generation();
            MappedFaults.surface();
            return moved ^ generation;
        } catch (RuntimeException | InternalError e) {
            return retry(a, e) ? directoryVersion() : moved;
        }
    }

    // ---- a mapping that faults ---------------------------------------------------------------------

    /**
     * What a call answers without state (the file shrank under this instance): every backend
     * available, nothing in flight, nothing counted.
     */
    boolean noState(AttachedFile a, int slot) {
        if (file.closed()) {
            throw new IllegalStateException(path + ": closed");
        }
        if (!a.lost && a.toFile == null) {
            // the first file's slots are the caller's: a negative one is a mistake
            Objects.checkIndex(slot, a.file.slots);
        }
        return true;
    }

    /** {@link #noState} of a count: nothing in flight. */
    long nothingInFlight(AttachedFile a, int slot) {
        noState(a, slot);
        return 0;
    }

    /**
     * A call on {@code a} threw {@code e}. A fault of the mapping (InternalError: the file shrank)
     * makes {@code a} lost; a closed mapping of a file replaced meanwhile is retried on the new one.
     *
     * @return whether to retry the call on the file in use
     */
    boolean retry(AttachedFile a, Throwable e) {
        if (!(e instanceof InternalError)) {
            try {
                MappedFaults.surface(); // a fault of the mapping before e, pending: it, not e, is the cause
            } catch (InternalError pending) {
                e = pending;
            }
        }
        if (e instanceof InternalError) {
            if (file.closed()) {
                throw new IllegalStateException(path + ": closed", e);
            }
            lost(a);
            return false;
        }
        if (e instanceof IllegalStateException && !file.closed() && file.replaced(a)) {
            return true; // retired under the call: the new file answers
        }
        throw (RuntimeException) e;
    }

    /**
     * Marks {@code a} lost and wakes the heartbeat to find a new file; the one log line comes from the
     * move, or, if there is no good file to move to, from {@link AttachedFile#sayLost} (an inspector: at once).
     */
    void lost(AttachedFile a) {
        if (!a.markLost()) {
            return;
        }
        if (heartbeat != null) {
            LockSupport.unpark(heartbeat);
        } else {
            a.sayLost(path, router);
        }
    }

    /**
     * {@return {@code call} on the mapping in use: an operator's call, which throws where a request's is answered without state}
     *
     * @throws IllegalStateException when the state file shrank under this instance
     */
    <R> R operate(Function<AttachedFile, R> call) {
        AttachedFile a = file.current();
        if (a.lost) {
            throw shrank(a);
        }
        try {
            R r = call.apply(a);
            MappedFaults.surface();
            return r;
        } catch (InternalError e) {
            throw shrank(a);
        } catch (RuntimeException e) {
            try {
                MappedFaults.surface(); // a fault of the mapping before e, pending: it, not e, is the cause
            } catch (InternalError pending) {
                throw shrank(a);
            }
            throw e;
        }
    }

    private IllegalStateException shrank(AttachedFile a) {
        lost(a);
        return new IllegalStateException(
                path + ": the state file shrank while in use (truncated?); remove it when no router runs, "
                        + "and the next one makes a new one");
    }

    // ---- the heartbeat ---------------------------------------------------------------------------

    /** The heartbeat thread: never dies of an exception or of a truncated file, ends when closed. */
    private void beat() {
        long lastReclaim = System.nanoTime();
        long period = options.heartbeat().toNanos();
        while (!file.closed()) {
            try {
                beforeBeat.run();
                long now = System.nanoTime();
                AttachedFile before = file.current();
                if (!file.check() && before.lost) {
                    before.sayLost(path, router); // truncated, and no good file to move to yet
                }
                AttachedFile a = file.current();
                if (!a.lost) {
                    try {
                        a.leases.beat(now);
                        a.directory.nameTracked(now);
                        a.leases.reapDead();
                        if (now - lastReclaim > 10 * period) {
                            a.directory.reclaim(
                                    now,
                                    options.reclaimAfter().toNanos(),
                                    slot -> !a.health.drained(slot) && a.leases.inFlight(slot) == 0);
                            lastReclaim = now;
                        }
                        MappedFaults.surface();
                    } catch (InternalError e) { // a mapped page gone: the file truncated under the mapping
                        lost(a);
                    }
                }
                lastFailure = null;
            } catch (RuntimeException
                    | Error e) { // an OutOfMemoryError too: the next beat tries again, the thread never dies
                try {
                    MappedFaults.surface(); // a fault pending from before e: taken here, not at the park
                } catch (InternalError pending) {
                    lost(file.current());
                }
                if (file.closed()) {
                    return;
                }
                String why = String.valueOf(e);
                if (!why.equals(lastFailure)) { // once per kind of failure, not ten times a second
                    LOG.log(Level.WARNING, "{0}: heartbeat failed, retrying: {1}", path, why);
                    LOG.log(Level.DEBUG, "heartbeat failure", e);
                    lastFailure = why;
                }
            }
            // Parked, not slept: close() must not interrupt this thread, since an interrupt during a lock
            // call closes the file's channel, and with it every lock of the process (StateChannels).
            LockSupport.parkNanos(this, period);
        }
    }

    /**
     * Stops following and the heartbeat, then gives back this process's lease (its in-flight counts with
     * it) of every file still mapped, and unmaps them.
     */
    void close() {
        List<AttachedFile> open = file.close();
        if (open.isEmpty()) {
            return;
        }
        open.forEach(a -> a.leases.stopCounting());
        if (heartbeat != null) {
            LockSupport.unpark(heartbeat);
            try {
                heartbeat.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        AttachedFile inUse = open.getLast();
        for (AttachedFile a : open) { // after the heartbeat
            if (a == inUse && !a.lost) {
                try {
                    a.leases.giveBack();
                    MappedFaults.surface();
                } catch (InternalError e) { // a mapped page gone: the file was truncated under the mapping
                    LOG.log(
                            Level.WARNING,
                            "{0}: the state file shrank while in use (truncated?); this process''s lease is given back "
                                    + "by its lock alone",
                            path);
                }
                a.file.close();
            } else {
                a.unmap();
            }
        }
    }
}
