package io.ringstore.state;

import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static io.ringstore.state.StateFileLayout.*;

/**
 * The leases of a state file and the requests in flight they hold. A lease is one router process,
 * named by its pid and start time, with a heartbeat; its in-flight counts are one u32 cell in every
 * record, written only by its process, and its total in the header. This table decides which leases
 * are alive ({@link #alive}), reaps the dead (claim by CAS, cells set to zero: idempotent, so a
 * reaper that dies half-way is followed by another), and counts this process's requests in its own
 * lease, if it holds one (a router; an operator's inspecting instance holds none).
 */
final class LeaseTable {
    private static final System.Logger LOG = System.getLogger(HostState.class.getName());
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();
    private static final int NO_LEASE = -1;

    private final StateMapping file;
    private final MemorySegment s;
    private final Duration staleAfter;
    /** This process: pid in the high half, start time's low 31 bits of milliseconds above bit 0. */
    private final long token;
    /** This process's lease, or {@link #NO_LEASE}. */
    private final int lease;
    private final long leaseTotalOffset;
    /** Set by {@link #stopCounting}: calls on a slot throw from then on. */
    private volatile boolean closed;
    /** Set when another process took this process's lease: acquire and release then count nothing. */
    private volatile boolean lostLease;

    /**
     * Reaps the dead leases, then, when {@code claim}, takes a free one for this process.
     *
     * @param staleAfter a lease whose heartbeat is older than this, and whose process is gone, is dead
     * @throws StateFileException when {@code claim} and every lease is held by a live process
     */
    LeaseTable(StateMapping file, Duration staleAfter, boolean claim) throws StateFileException {
        this.file = file;
        this.s = file.segment;
        this.staleAfter = staleAfter;
        ProcessHandle self = ProcessHandle.current();
        this.token = token(self.pid(), self.info().startInstant());
        reapDead();
        this.lease = claim ? claim() : NO_LEASE;
        this.leaseTotalOffset = claim ? LEASE_TOTALS_OFFSET + 4L * lease : -1;
    }

    private static long token(long pid, Optional<Instant> start) {
        long startBits = start.map(i -> i.toEpochMilli() & 0x7FFF_FFFFL).orElse(0L);
        return (pid << 32) | (startBits << 1);
    }

    private int claim() throws StateFileException {
        long now = System.nanoTime();
        for (int l = 0; l < file.leases; l++) {
            long o = leaseOffset(l);
            if (LONG.compareAndSet(s, o + LEASE_OWNER_OFFSET, 0L, token)) {
                // A free lease's counts should be zero, but a process that counted into it while it was
                // being closed or reaped may have left some: they are not this process's requests.
                zeroCounts(l);
                LONG.setVolatile(s, o + LEASE_HEARTBEAT_OFFSET, now);
                LONG.setVolatile(s, o + LEASE_PID_OFFSET, ProcessHandle.current().pid());
                LONG.setVolatile(s, o + LEASE_START_OFFSET, ProcessHandle.current().info().startInstant().map(Instant::toEpochMilli).orElse(0L));
                return l;
            }
        }
        throw new StateFileException(file.path, -1, "all " + file.leases + " leases are held by live processes (pids "
                + states().stream().map(x -> String.valueOf(x.pid())).toList() + ")", false);
    }

    /** Sets the in-flight cells of {@code lease}, and its total, to zero; {@return what the cells held} */
    private long zeroCounts(int lease) {
        long returned = 0;
        for (int slot = 0; slot < file.slots; slot++) {
            returned += Integer.toUnsignedLong((int) INT.getAndSet(s, file.record(slot) + IN_FLIGHT_OFFSET + 4L * lease, 0));
        }
        INT.setVolatile(s, LEASE_TOTALS_OFFSET + 4L * lease, 0);
        return returned;
    }

    /** Whether the holder {@code owner} of a lease (or a reaper of it) lives: a fresh heartbeat, or its process. */
    private boolean alive(long owner, long heartbeat, long now) {
        if (now - heartbeat < staleAfter.toNanos()) {
            return true;
        }
        Optional<ProcessHandle> p = ProcessHandle.of(owner >>> 32);
        if (p.isEmpty() || !p.get().isAlive()) {
            return false;
        }
        Optional<Instant> start = p.get().info().startInstant();
        return start.isEmpty() || token(owner >>> 32, start) == (owner & ~1L);
    }

    /** Zeroes the leases of dead processes; returns how many. */
    int reapDead() {
        int reaped = 0;
        long now = System.nanoTime();
        for (int l = 0; l < file.leases; l++) {
            long o = leaseOffset(l);
            long owner = (long) LONG.getVolatile(s, o + LEASE_OWNER_OFFSET);
            if (owner == 0 || alive(owner, (long) LONG.getVolatile(s, o + LEASE_HEARTBEAT_OFFSET), now)) {
                continue;
            }
            long reaping = token | 1;
            if (!LONG.compareAndSet(s, o + LEASE_OWNER_OFFSET, owner, reaping)) {
                continue; // another process reaps it, or it was freed
            }
            LONG.setVolatile(s, o + LEASE_HEARTBEAT_OFFSET, now);
            long returned = zeroCounts(l);
            LONG.compareAndSet(s, o + LEASE_OWNER_OFFSET, reaping, 0L);
            reaped++;
            LOG.log(Level.INFO, "{0}: lease {1} of dead process {2} reclaimed, {3} requests in flight returned",
                    file.path, l, String.valueOf(owner >>> 32), String.valueOf(returned));
        }
        return reaped;
    }

    /**
     * Refreshes this process's heartbeat (the heartbeat thread of a router), and notices when its lease
     * was reaped while it ran: takes it back if it is still free, or stops counting if another
     * process holds it now.
     */
    void beat(long now) {
        long o = leaseOffset(lease);
        LONG.setRelease(s, o + LEASE_HEARTBEAT_OFFSET, now);
        // Reaped while alive: only when this process looked gone to another, as from another pid
        // namespace while its heartbeat stalled. Take the lease back if it is still free.
        long owner = (long) LONG.getVolatile(s, o + LEASE_OWNER_OFFSET);
        if (owner != token && LONG.compareAndSet(s, o + LEASE_OWNER_OFFSET, 0L, token)) {
            LOG.log(Level.ERROR, "{0}: lease {1} of this process was reaped while it ran (heartbeat stalled over {2} "
                    + "and pid not visible to the reaper?); its in-flight counts restart from zero", file.path, lease, staleAfter);
        } else if (owner != token && !lostLease) {
            lostLease = true; // another process holds it now: counting on would write into its counts
            LOG.log(Level.ERROR, "{0}: lease {1} of this process was reaped and taken by pid {2}; this process no longer "
                    + "counts its requests in flight (reopen the state to count again)", file.path, lease, String.valueOf(owner >>> 32));
        }
    }

    /** {@return every lease in use} */
    List<HostState.LeaseState> states() {
        long now = System.nanoTime();
        List<HostState.LeaseState> list = new ArrayList<>();
        for (int l = 0; l < file.leases; l++) {
            long o = leaseOffset(l);
            long owner = (long) LONG.getVolatile(s, o + LEASE_OWNER_OFFSET);
            if (owner != 0) {
                list.add(new HostState.LeaseState(l, owner >>> 32, alive(owner, (long) LONG.getVolatile(s, o + LEASE_HEARTBEAT_OFFSET), now),
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
        for (int l = 0; l < file.leases; l++) {
            sum += Integer.toUnsignedLong(s.get(ValueLayout.JAVA_INT, cells + 4L * l));
        }
        return sum;
    }

    /** {@link HostState#totalInFlight}: every lease's total summed. */
    long totalInFlight() {
        long sum = 0;
        for (int l = 0; l < file.leases; l++) {
            sum += Integer.toUnsignedLong(s.get(ValueLayout.JAVA_INT, LEASE_TOTALS_OFFSET + 4L * l));
        }
        return sum;
    }

    /** One more request in flight to {@code slot}, in this process's lease. */
    void acquire(int slot) {
        long cell = cell(slot);
        if (lostLease) {
            return;
        }
        INT.getAndAdd(s, cell, 1);
        INT.getAndAdd(s, leaseTotalOffset, 1);
    }

    /** One request fewer in flight to {@code slot}, in this process's lease; never below zero. */
    void release(int slot) {
        long cell = cell(slot);
        if (lostLease) {
            return;
        }
        decrement(cell);
        decrement(leaseTotalOffset);
    }

    private void decrement(long offset) {
        int v;
        do {
            v = (int) INT.getVolatile(s, offset);
            if (v == 0) {
                return;
            }
        } while (!INT.compareAndSet(s, offset, v, v - 1));
    }

    private long cell(int slot) {
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
        if (lease == NO_LEASE) {
            return;
        }
        zeroCounts(lease);
        LONG.compareAndSet(s, leaseOffset(lease) + LEASE_OWNER_OFFSET, token, 0L);
    }
}
