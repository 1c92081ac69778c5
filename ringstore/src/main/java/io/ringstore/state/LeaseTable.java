package io.ringstore.state;

import static io.ringstore.state.StateFileLayout.*;

import io.ringstore.internal.IoErrors;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The leases of a state file and the requests in flight they hold. A lease is one router process; its
 * in-flight counts are one u32 cell in every record, written only by its process, and its total in
 * the header. The process holds a POSIX record lock on the lease's byte range of the file for as long
 * as it holds the lease, and the kernel releases that lock when the process dies, whatever its pid
 * namespace and however long it was stopped: a lease is dead exactly when another process can take
 * its lock ({@link #reapDead}). The heartbeat, pid and start time are for people to read (and the
 * heartbeat to skip a lock attempt on a lease beating now), never a reason to reap. On a read-only
 * mapping nothing is reaped; liveness is still told, by a shared lock test.
 *
 * <p><b>No read-modify-write on the mapping.</b> The file may be truncated under the mapping, and
 * HotSpot guards an interpreted get or put of a page gone (an {@link InternalError}) but not an
 * interpreted compare-and-set or add, which kills the JVM (SIGBUS). So every word is written by a
 * plain store: this process's cells by their one writer, this process, which counts on the heap
 * ({@link OwnCounts}) and stores what it counted ({@link #count}); the words of other leases under
 * their lease lock; the high-water mark under the directory lock.
 */
final class LeaseTable {
    private static final System.Logger LOG = System.getLogger(HostState.class.getName());
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();
    private static final int NO_LEASE = -1;
    /** Distinguishes this process's owner words from those of processes of the same pid in other namespaces. */
    private static final long NONCE = new SecureRandom().nextInt() & 0x7FFF_FFFFL;

    private final StateMapping file;
    private final MemorySegment s;
    private final Duration staleAfter;
    /** This instance's owner word: pid in the high half, a random 31-bit number above bit 0. */
    private final long token;
    /** This process's lease, or {@link #NO_LEASE}. */
    private final int lease;
    /** A router that found every lease held: acquire and release count nothing. */
    private final boolean uncounted;

    private final long leaseTotalOffset;
    private final long ownerOffset;
    /** The record lock on this lease's range, held until {@link #giveBack}; {@code null} without a lease. */
    private final FileLock held;
    /** Set by {@link #stopCounting}: calls on a slot throw from then on. */
    private volatile boolean closed;
    /** Set when this lease's owner word was changed under its lock: acquire and release then count nothing. */
    private volatile boolean lostLease;
    /** Per lease, when the heartbeat's reaping may next try its lock (heartbeat thread, and the constructor). */
    private final long[] nextTry;
    /** A lock attempt that failed for a reason other than a holder, logged once. */
    private volatile boolean lockFailureLogged;
    /** This process's requests in flight by the caller's slot, which {@link #count} stores into this lease. */
    private final OwnCounts counts;

    /**
     * Reaps the dead leases, then, when {@code claim}, takes a free one (or a dead one) for this process.
     *
     * @param staleAfter a lease whose heartbeat is younger than this is not tried for its lock by the heartbeat's reaping
     * @throws StateFileException when {@code claim} and every lease is held by a live process, or the file cannot be locked
     */
    LeaseTable(StateMapping file, Duration staleAfter, boolean claim, OwnCounts counts) throws StateFileException {
        this.file = file;
        this.counts = counts;
        this.s = file.segment;
        this.staleAfter = staleAfter;
        this.token = (ProcessHandle.current().pid() << 32) | (NONCE << 1);
        this.nextTry = new long[file.leases];
        reap(true, NO_LEASE); // before this process has a lease: every dead one, lease 0 too
        Claimed c = claim ? claim() : null;
        if (c != null) {
            this.lease = c.lease;
            this.held = c.lock;
        } else {
            this.lease = NO_LEASE;
            this.held = null;
        }
        this.uncounted = claim && c == null;
        this.leaseTotalOffset = c != null ? LEASE_TOTALS_OFFSET + 4L * lease : -1;
        this.ownerOffset = c != null ? file.lease(lease) + LEASE_OWNER_OFFSET : -1;
        if (uncounted) {
            LOG.log(
                    Level.WARNING,
                    "{0}: all {1} leases are held by live processes; this router goes on with the host''s drain and "
                            + "health, without counting its requests in flight{2}",
                    file.path,
                    String.valueOf(file.leases),
                    file.leases <= MAX_SMALL_LEASES
                            ? " (a version 1 file, of at most 32 leases: remove it while no router runs, and the next makes one of "
                                    + DEFAULT_LEASES + ")"
                            : "");
        }
    }

    private record Claimed(int lease, FileLock lock) {}

    /**
     * Takes the first lease whose lock no process holds: a free one, or a dead one (its counts zeroed
     * first); {@code null} when every lease is held.
     */
    private Claimed claim() throws StateFileException {
        IOException failure = null;
        for (int l = 0; l < file.leases; l++) {
            if (file.heldHere(l)) {
                continue;
            }
            FileLock lock;
            try {
                lock = tryLock(l);
            } catch (OverlappingFileLockException e) {
                continue; // another instance in this process holds it
            } catch (IOException e) {
                failure = e;
                continue;
            }
            if (lock == null) {
                continue; // a live process holds it
            }
            long o = file.lease(l);
            long owner = (long) LONG.getVolatile(s, o + LEASE_OWNER_OFFSET);
            // A free lease's counts should be zero, and a dead one's are not this process's requests.
            cover(l);
            long returned = zeroCounts(l);
            if (owner != 0) {
                logReclaimed(l, o, returned);
            }
            long now = System.nanoTime();
            LONG.setVolatile(s, o + LEASE_HEARTBEAT_OFFSET, now);
            LONG.setVolatile(s, o + LEASE_PID_OFFSET, ProcessHandle.current().pid());
            LONG.setVolatile(
                    s,
                    o + LEASE_START_OFFSET,
                    ProcessHandle.current()
                            .info()
                            .startInstant()
                            .map(Instant::toEpochMilli)
                            .orElse(0L));
            LONG.setVolatile(s, o + LEASE_OWNER_OFFSET, token);
            file.heldHere(l, true);
            return new Claimed(l, lock);
        }
        if (failure != null) {
            throw new StateFileException(
                    file.path,
                    -1,
                    "cannot lock a lease (the file system must support POSIX record locks): "
                            + IoErrors.describe(failure),
                    false,
                    failure);
        }
        return null;
    }

    /**
     * Version 2: raises the high-water mark to cover lease {@code l} before it counts anything, under
     * the directory lock (the mark's writers are claimers of different leases).
     */
    private void cover(int l) {
        if (!file.highWater) {
            return;
        }
        int hw = (int) INT.getVolatile(s, (long) LEASE_HIGH_WATER_OFFSET);
        if (hw > l && hw <= file.leases) {
            return; // covered already: no lock
        }
        FileLock lock = file.lockDirectory();
        try {
            hw = (int) INT.getVolatile(s, (long) LEASE_HIGH_WATER_OFFSET);
            if (!(hw > l && hw <= file.leases)) {
                INT.setVolatile(s, (long) LEASE_HIGH_WATER_OFFSET, l + 1);
            }
        } finally {
            file.unlockDirectory(lock);
        }
    }

    /** {@return the leases whose cells are summed: all, or (version 2) those up to the high-water mark} */
    private int summed() {
        if (!file.highWater) {
            return file.leases;
        }
        int hw = (int) INT.getAcquire(s, (long) LEASE_HIGH_WATER_OFFSET);
        return hw < 0 || hw > file.leases ? file.leases : hw; // forged: sum them all
    }

    private void logReclaimed(int l, long o, long returned) {
        LOG.log(
                Level.INFO,
                "{0}: lease {1} of dead process {2} reclaimed, {3} requests in flight returned",
                file.path,
                l,
                String.valueOf(s.get(ValueLayout.JAVA_LONG, o + LEASE_PID_OFFSET)),
                String.valueOf(returned));
    }

    /**
     * Sets the in-flight cells of {@code lease}, and its total, to zero; {@return what the cells held}
     * The caller holds the lease's lock, so no other process writes them: a load and a store each.
     */
    private long zeroCounts(int lease) {
        long returned = 0;
        for (int slot = 0; slot < file.slots; slot++) {
            long cell = file.record(slot) + IN_FLIGHT_OFFSET + 4L * lease;
            int held = (int) INT.getVolatile(s, cell);
            if (held != 0) {
                INT.setVolatile(s, cell, 0);
                returned += Integer.toUnsignedLong(held);
            }
        }
        INT.setVolatile(s, LEASE_TOTALS_OFFSET + 4L * lease, 0);
        return returned;
    }

    /**
     * {@return the lock of lease {@code l} if no process holds it (its holder is gone), else {@code null}}
     * A lease held by this process (another instance) or that cannot be locked counts as held: a lease
     * is never reaped on a doubt.
     */
    private FileLock lockIfUnheld(int l) {
        if (file.heldHere(l)) {
            return null;
        }
        try {
            return tryLock(l);
        } catch (OverlappingFileLockException e) {
            return null;
        } catch (IOException e) {
            if (!lockFailureLogged) {
                lockFailureLogged = true;
                LOG.log(
                        Level.WARNING,
                        "{0}: cannot test lease {1}''s lock, dead leases are not reaped: {2}",
                        file.path,
                        l,
                        IoErrors.describe(e));
            }
            return null;
        }
    }

    /**
     * {@link StateMapping#tryLockLease} with the calling thread's interrupt status cleared for the call
     * and set again after: a lock call on an interrupted thread closes the channel (it is an
     * interruptible channel), which would drop every lock this process holds on the file.
     */
    private FileLock tryLock(int l) throws IOException {
        boolean interrupted = Thread.interrupted();
        try {
            return file.tryLockLease(l);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static void release(FileLock lock) {
        try {
            lock.release();
        } catch (IOException e) {
            // the channel stays open: the lock goes with it, or with the process
        }
    }

    /** Zeroes the leases of dead processes; returns how many. Leases beating now are not tried. */
    int reapDead() {
        return reap(false, lease);
    }

    /**
     * Zeroes the leases whose lock no process holds. With {@code all} false, a lease whose heartbeat is
     * younger than staleAfter is skipped, to spare a system call per lease per heartbeat; a heartbeat in
     * the future (a file from before a reboot, or forged) is stale. {@code mine}, this process's own
     * lease (or {@link #NO_LEASE}), is never tried.
     */
    private int reap(boolean all, int mine) {
        if (!file.writable) {
            return 0; // a read-only view: reaping writes
        }
        int reaped = 0;
        long now = System.nanoTime();
        for (int l = 0; l < file.leases; l++) {
            if (l == mine) {
                continue;
            }
            long o = file.lease(l);
            if ((long) LONG.getVolatile(s, o + LEASE_OWNER_OFFSET) == 0) {
                continue;
            }
            long age = now - (long) LONG.getVolatile(s, o + LEASE_HEARTBEAT_OFFSET);
            if (!all && (age >= 0 && age < staleAfter.toNanos() || now - nextTry[l] < 0)) {
                continue;
            }
            FileLock lock = lockIfUnheld(l);
            if (lock == null) {
                // Alive (held by a process), however old its heartbeat. A stopped holder is tried again
                // after staleAfter, not at every beat: each process tries each stale lease at most once per
                // staleAfter, so a host of stopped routers costs no storm of lock calls.
                nextTry[l] = now + staleAfter.toNanos();
                continue;
            }
            try {
                if ((long) LONG.getVolatile(s, o + LEASE_OWNER_OFFSET) != 0) { // not freed meanwhile
                    long returned = zeroCounts(l);
                    LONG.setVolatile(s, o + LEASE_HEARTBEAT_OFFSET, now);
                    LONG.setVolatile(s, o + LEASE_OWNER_OFFSET, 0L);
                    reaped++;
                    logReclaimed(l, o, returned);
                }
            } finally {
                release(lock);
            }
        }
        return reaped;
    }

    /**
     * Refreshes this process's heartbeat (the heartbeat thread of a router), and notices when its lease
     * was overwritten while it held its lock.
     */
    void beat(long now) {
        if (lease == NO_LEASE) {
            return;
        }
        LONG.setRelease(s, file.lease(lease) + LEASE_HEARTBEAT_OFFSET, now);
        counting();
    }

    /**
     * {@return whether this process still counts in its lease} Its owner word is its own unless a
     * process that does not follow the lock protocol (or a corruption) changed it: then this process
     * stops counting, with one log line, rather than count into another's cells.
     */
    private boolean counting() {
        if (lostLease) {
            return false;
        }
        long owner = (long) LONG.getOpaque(s, ownerOffset);
        if (owner == token) {
            return true;
        }
        MappedFaults.surface(); // not a word read from a page gone: that faults here, before any conclusion
        synchronized (this) {
            if (!lostLease) {
                lostLease = true;
                LOG.log(
                        Level.ERROR,
                        "{0}: lease {1} of this process was overwritten (owner word now 0x{2}) although this process "
                                + "holds its lock; this process no longer counts its requests in flight (reopen the state to count again)",
                        file.path,
                        lease,
                        Long.toHexString(owner));
            }
        }
        return false;
    }

    /** {@return whether this instance counts its requests in flight: it holds a lease, and its lease is its own} */
    boolean counts() {
        return held != null && !lostLease;
    }

    /** Whether a process holds lease {@code l}'s lock now. */
    private boolean held(int l) {
        FileLock lock = lockIfUnheld(l);
        if (lock == null) {
            return true;
        }
        release(lock);
        return false;
    }

    /** {@return every lease in use, alive meaning that a process holds its lock} */
    List<HostState.LeaseState> states() {
        List<HostState.LeaseState> list = new ArrayList<>();
        for (int l = 0; l < file.leases; l++) {
            long o = file.lease(l);
            long owner = (long) LONG.getVolatile(s, o + LEASE_OWNER_OFFSET);
            if (owner != 0) {
                list.add(new HostState.LeaseState(
                        l,
                        s.get(ValueLayout.JAVA_LONG, o + LEASE_PID_OFFSET),
                        l == lease || held(l),
                        Integer.toUnsignedLong((int) INT.getOpaque(s, LEASE_TOTALS_OFFSET + 4L * l))));
            }
        }
        return list;
    }

    // ---- requests in flight ----------------------------------------------------------------------

    /** {@link HostState#inFlight}: the slot's cells summed over every lease. */
    long inFlight(int slot) {
        long cells = file.record(slot) + IN_FLIGHT_OFFSET;
        long sum = 0;
        for (int l = 0, n = summed(); l < n; l++) {
            sum += Integer.toUnsignedLong(s.get(ValueLayout.JAVA_INT, cells + 4L * l));
        }
        return sum;
    }

    /** {@link HostState#totalInFlight}: every lease's total summed. */
    long totalInFlight() {
        long sum = 0;
        for (int l = 0, n = summed(); l < n; l++) {
            sum += Integer.toUnsignedLong(s.get(ValueLayout.JAVA_INT, LEASE_TOTALS_OFFSET + 4L * l));
        }
        return sum;
    }

    /**
     * Adds {@code delta} to what this process has in flight to the caller's {@code slot} ({@link
     * OwnCounts}) and stores the count into its cell for file slot {@code fileSlot}, and its total into
     * its lease total; under {@link OwnCounts#lock}, held by the caller. Counted on the heap even when
     * this lease does not count (lost, or none left), so that a file moved to gets it; stored by plain
     * stores (a compare-and-set or add on a page of a truncated file is not guarded in interpreted
     * code: it kills the JVM).
     *
     * @throws IllegalStateException when closed, or opened to inspect (no lease): nothing counted
     */
    void count(int fileSlot, int slot, int delta) {
        long cell = cell(fileSlot);
        int v = counts.add(slot, delta);
        if (uncounted || !counting()) {
            return;
        }
        store(cell, v);
    }

    /**
     * Stores this process's count of the caller's {@code slot} into its cell for file slot {@code
     * fileSlot}, and its total: at a move to this file, and when a slot is newly mapped into it. Under
     * {@link OwnCounts#lock}, held by the caller.
     */
    void store(int fileSlot, int slot) {
        long cell = cell(fileSlot);
        if (uncounted || !counting()) {
            return;
        }
        store(cell, counts.get(slot));
    }

    /** Stores this process's total in flight into its lease total, under {@link OwnCounts#lock}. */
    void storeTotal() {
        if (lease == NO_LEASE || uncounted || !counting()) {
            return;
        }
        INT.setRelease(s, leaseTotalOffset, counts.total());
    }

    private void store(long cell, int v) {
        try {
            INT.setRelease(s, cell, v);
            INT.setRelease(s, leaseTotalOffset, counts.total());
            // Before any load that follows: a strict bound reserves (this store) and then checks (the
            // other processes' cells); two routers that both reserved must each see the other's
            // reservation, or both pass a bound of 1 (StrictBoundTest). The atomic adds this replaced
            // were full fences; a release store alone lets the next loads go first.
            VarHandle.fullFence();
        } catch (IllegalStateException unmapped) {
            // Let go of under the call (a thread stopped for the grace period): counted on the heap, and
            // the move to the file in use, waiting for the lock this caller holds, stores it there next.
        }
    }

    private long cell(int slot) {
        if (uncounted) {
            Objects.checkIndex(slot, file.slots);
            if (closed) {
                throw new IllegalStateException(file.path + ": closed");
            }
            return -1;
        }
        if (lease == NO_LEASE) {
            throw new IllegalStateException("opened to inspect, with no lease: open it as a router to count requests");
        }
        if (closed) {
            throw new IllegalStateException(file.path + ": closed");
        }
        return file.record(slot) + IN_FLIGHT_OFFSET + 4L * lease;
    }

    // ---- closing ---------------------------------------------------------------------------------

    /** The first step of closing: {@link #acquire} and {@link #release} throw from now on. */
    void stopCounting() {
        closed = true;
    }

    /**
     * Gives this process's lease back, its in-flight counts with it; after the heartbeat has stopped,
     * since a beat could take the lease back. Nothing without a lease.
     */
    void giveBack() {
        if (held == null) {
            return;
        }
        if (!lostLease) {
            zeroCounts(lease);
            // This process holds the lease's record lock: the owner word's only writer, so no
            // compare-and-set (unguarded against a truncated mapping in interpreted code).
            if ((long) LONG.getVolatile(s, ownerOffset) == token) {
                LONG.setVolatile(s, ownerOffset, 0L);
            }
        }
        file.heldHere(lease, false);
        release(held); // after the lease is free: a claimer that takes the lock finds it so
    }
}
