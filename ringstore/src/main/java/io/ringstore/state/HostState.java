package io.ringstore.state;

import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntPredicate;

import static io.ringstore.state.StateFileLayout.*;

/**
 * The live state every router process on a host shares through one mapped file beside the ring file
 * ({@code fleet.ring.state} for {@code fleet.ring}; FORMAT.md, "The state file"): per backend, a drain
 * flag set by the operator, passive health (nginx's {@code max_fails}/{@code fail_timeout}, counted for
 * the whole host) and the requests in flight.
 *
 * <p>Backends are named by endpoint (a {@code Backend.socketAddress()}), so their state outlives ring
 * republishes. {@link #track} gives each endpoint a slot, an int that every other call takes; the
 * calls on a slot ({@link #available}, {@link #inFlight}, {@link #acquire}, {@link #release},
 * {@link #reportFailure}, {@link #reportSuccess}) are lock-free atomic operations on the mapped memory,
 * allocate nothing, and are safe from any thread of any process.
 *
 * <p><b>In flight, and {@code kill -9}.</b> A router holds a lease: one of the file's lease slots,
 * named by its pid and start time, with a heartbeat it refreshes every {@link Options#heartbeat()}.
 * Each backend's in-flight count is kept per lease, one u32 cell each, written only by that lease's
 * process; the host-wide count is their sum (two cache lines for 32 leases). When a process dies
 * without releasing, another process (any router's heartbeat thread, or the next one to open the
 * file, or {@code ringstore state}) finds its lease dead — heartbeat older than {@link
 * Options#staleAfter()} and no process with that pid and start time — claims it with a CAS and sets its
 * cells to zero. Setting to zero is idempotent, so a reaper that dies half-way is simply followed by
 * another; and a count is never negative, because a cell only goes down by its owner's release of
 * what it acquired.
 *
 * <p><b>Slots come and go.</b> While a router tracks an endpoint, its heartbeat keeps the slot
 * "named"; a slot named by no router for {@link Options#reclaimAfter()}, with nothing in flight and not
 * drained, is freed for another endpoint. Slot allocation is the one step under a lock (a CAS-held
 * word whose dead holder is broken), off the lookup path.
 *
 * <p>Time is {@link System#nanoTime()}, which on Linux is the host-wide monotonic clock, so processes
 * compare each other's stamps.
 */
public final class HostState implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(HostState.class.getName());
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();
    /** Distinguishes the instances of one process in the directory lock word. */
    private static final AtomicInteger INSTANCES = new AtomicInteger();
    private static final long NO_LEASE = -1;

    /**
     * How a state file is created and used.
     *
     * @param slots        backend slots of a new file (1 to 65,536): endpoints it can hold at once
     * @param leases       lease slots of a new file (1 to 32): router processes it can serve at once
     * @param maxFails     failures that make a backend unavailable (nginx {@code max_fails}; 0: never)
     * @param failTimeout  how long such a backend stays unavailable (nginx {@code fail_timeout})
     * @param heartbeat    how often a router refreshes its lease and looks for dead ones
     * @param staleAfter   a lease whose heartbeat is older than this, and whose process is gone, is dead
     * @param reclaimAfter a slot no router has named for this long, idle and not drained, is freed
     */
    public record Options(int slots, int leases, int maxFails, Duration failTimeout, Duration heartbeat, Duration staleAfter,
                          Duration reclaimAfter) {
        /** 4,096 backends, 32 processes, nginx's defaults (1 failure, 10 s), 100 ms heartbeat, 500 ms stale, 60 s reclaim. */
        public static final Options DEFAULTS = new Options(4096, MAX_LEASES, 1, Duration.ofSeconds(10), Duration.ofMillis(100),
                Duration.ofMillis(500), Duration.ofSeconds(60));

        /**
         * Checks every bound.
         *
         * @throws IllegalArgumentException for a count out of range, a negative {@code maxFails} or a duration that is not positive
         */
        public Options {
            if (slots < 1 || slots > MAX_SLOTS) {
                throw new IllegalArgumentException("slots must be from 1 to " + MAX_SLOTS + ": slots=" + slots);
            }
            if (leases < 1 || leases > MAX_LEASES) {
                throw new IllegalArgumentException("leases must be from 1 to " + MAX_LEASES + ": leases=" + leases);
            }
            if (maxFails < 0) {
                throw new IllegalArgumentException("maxFails must be 0 or more: maxFails=" + maxFails);
            }
            for (Duration d : List.of(failTimeout, heartbeat, staleAfter, reclaimAfter)) {
                if (d.isNegative() || d.isZero()) {
                    throw new IllegalArgumentException("durations must be positive: " + d);
                }
            }
        }

        /**
         * {@return these options with another health rule}
         *
         * @param maxFails    failures that make a backend unavailable (0: never)
         * @param failTimeout how long such a backend stays unavailable
         */
        public Options withHealth(int maxFails, Duration failTimeout) {
            return new Options(slots, leases, maxFails, failTimeout, heartbeat, staleAfter, reclaimAfter);
        }

        /**
         * {@return these options with another size for a new file}
         *
         * @param slots  backend slots, 1 to 65,536
         * @param leases lease slots (router processes), 1 to 32
         */
        public Options withCapacity(int slots, int leases) {
            return new Options(slots, leases, maxFails, failTimeout, heartbeat, staleAfter, reclaimAfter);
        }

        /**
         * {@return these options with other timings}
         *
         * @param heartbeat    how often a router refreshes its lease
         * @param staleAfter   when a lease whose process is gone is dead
         * @param reclaimAfter when an unnamed, idle, undrained slot is freed
         */
        public Options withTimings(Duration heartbeat, Duration staleAfter, Duration reclaimAfter) {
            return new Options(slots, leases, maxFails, failTimeout, heartbeat, staleAfter, reclaimAfter);
        }
    }

    /**
     * One backend as the whole host sees it.
     *
     * @param failed        unavailable now by the health rule ({@code fails >= maxFails} within {@code failTimeout})
     * @param sinceFailure  time since the last reported failure, or {@code null} for none
     * @param slot the backend's slot in the state file
     * @param endpoint the backend's address, as its ring file's backend table writes it
     * @param drained whether an operator drained it
     * @param fails failures counted since the last success (nginx's {@code fails})
     * @param inFlight requests in flight
     */
    public record BackendState(int slot, String endpoint, boolean drained, long fails, boolean failed, Duration sinceFailure,
                               long inFlight) {
    }

    /**
     * One lease: the process holding it, whether it is alive, and what it holds in flight.
     *
     * @param lease the lease's number
     * @param pid the process holding it
     * @param alive whether that process still heartbeats
     * @param inFlight requests in flight
     */
    public record LeaseState(int lease, long pid, boolean alive, long inFlight) {
    }

    private final StateMapping file;
    private final MemorySegment s;
    private final Options options;
    private final long failTimeoutNanos;
    /** This process: pid in the high half, start time's low 31 bits of milliseconds above bit 0. */
    private final long token;
    private final long lockWord;
    private final long lease;
    private final long leaseTotalOffset;
    private final Thread heartbeat;
    private volatile int[] tracked = new int[0];
    private volatile boolean closed;
    /** Set when another process took this process's lease: acquire and release then count nothing. */
    private volatile boolean lostLease;
    /** The heartbeat's last failure, logged once until a beat succeeds (heartbeat thread only). */
    private String lastFailure;

    private HostState(StateMapping file, Options options, boolean router) throws StateFileException {
        this.file = file;
        this.s = file.segment;
        this.options = options;
        this.failTimeoutNanos = options.failTimeout().toNanos();
        ProcessHandle self = ProcessHandle.current();
        this.token = token(self.pid(), self.info().startInstant());
        this.lockWord = (self.pid() << 32) | (INSTANCES.incrementAndGet() & 0x7FFF_FFFFL); // the counter starts at 1: never 0
        reapDeadLeases();
        if (router) {
            this.lease = claimLease();
            this.leaseTotalOffset = LEASE_TOTALS_OFFSET + 4 * lease;
            this.heartbeat = Thread.ofPlatform().daemon().name("ringstore-state " + file.path.getFileName()).unstarted(this::beat);
            heartbeat.start();
        } else {
            this.lease = NO_LEASE;
            this.leaseTotalOffset = -1;
            this.heartbeat = null;
        }
    }

    /** A new instance on {@code m}, or {@code m} unmapped again if it cannot be made (no lease left). */
    private static HostState of(StateMapping m, Options options, boolean router) throws StateFileException {
        try {
            return new HostState(m, options, router);
        } catch (StateFileException | RuntimeException | Error e) {
            m.arena.close();
            throw e;
        }
    }

    /**
     * {@return the state file of {@code ringFile}: {@code NAME.state} beside it}
     *
     * @param ringFile the ring file whose state this is (the state file lies {@linkplain #statePath(Path) beside it})
     */
    public static Path statePath(Path ringFile) {
        return ringFile.resolveSibling(ringFile.getFileName() + ".state");
    }

    /**
     * {@link #open(Path, Options)} with {@link Options#DEFAULTS}.
     *
     * @param ringFile the ring file whose state this is (the state file lies {@linkplain #statePath(Path) beside it})
     * @return the open state; close it to give the lease back
     * @throws StateFileException when the state file is corrupt or cannot be mapped
     */
    public static HostState open(Path ringFile) throws StateFileException {
        return open(ringFile, Options.DEFAULTS);
    }

    /**
     * Opens, as a router, the state file of {@code ringFile}: creates it if there is none, replaces a
     * corrupt one (moved aside to {@code NAME.state.bad}, with one log line), takes a lease and starts
     * the heartbeat thread. A file of another version is refused, since routers of that version may
     * be using it.
     *
     * @param ringFile the ring file whose state this is (the state file lies {@linkplain #statePath(Path) beside it})
     * @param options the capacity, health rule and timings (use the same in every process of the host)
     * @return the open state; close it to give the lease back
     * @throws StateFileException the file is of another version, cannot be read or written, or all its
     *                            leases are held by live processes
     */
    public static HostState open(Path ringFile, Options options) throws StateFileException {
        return of(mapOrCreate(statePath(ringFile), options), options, true);
    }

    /**
     * {@link #open} if the state file of {@code ringFile} exists, and without replacing a bad one (that
     * is a {@link StateFileException}): what {@code ringstore lookup} consults.
     *
     * @param ringFile the ring file whose state this is (the state file lies {@linkplain #statePath(Path) beside it})
     * @param options the capacity, health rule and timings (use the same in every process of the host)
     * @return the open state, or empty when there is no state file
     * @throws StateFileException when the state file is corrupt or cannot be mapped
     */
    public static Optional<HostState> openIfExists(Path ringFile, Options options) throws StateFileException {
        StateMapping m = StateMapping.map(statePath(ringFile));
        return m == null ? Optional.empty() : Optional.of(of(m, options, true));
    }

    /**
     * Opens a state file for an operator: no lease and no heartbeat thread, but dead leases are reaped
     * once, so what it shows is true. A corrupt file is refused, not replaced.
     *
     * @param create whether to create the file if there is none (to drain a backend before routers start)
     * @param stateFile the state file itself
     * @param options the capacity, health rule and timings (use the same in every process of the host)
     * @return empty if there is no file and {@code create} is false
     * @throws StateFileException when the state file is corrupt or cannot be mapped
     */
    public static Optional<HostState> inspect(Path stateFile, Options options, boolean create) throws StateFileException {
        StateMapping m = StateMapping.map(stateFile);
        if (m == null && create) {
            StateMapping.create(stateFile, options.leases(), options.slots());
            m = StateMapping.map(stateFile);
        }
        return m == null ? Optional.empty() : Optional.of(of(m, options, false));
    }

    private static StateMapping mapOrCreate(Path path, Options options) throws StateFileException {
        for (int attempt = 0; ; attempt++) {
            Object key = StateMapping.fileKey(path);
            try {
                StateMapping m = StateMapping.map(path);
                if (m != null) {
                    return m;
                }
                StateMapping.create(path, options.leases(), options.slots());
            } catch (StateFileException e) {
                if (!e.rebuildable() || attempt >= 3) {
                    throw e;
                }
                Path bad = StateMapping.moveAside(path, key);
                LOG.log(Level.WARNING, "{0}; {1}", e.getMessage(), bad != null
                        ? "moved aside to " + bad.getFileName() + ", a new state file replaces it" : "another process replaced it");
                StateMapping.create(path, options.leases(), options.slots());
            }
        }
    }

    /** {@return the state file's path} */
    public Path path() {
        return file.path;
    }

    /** {@return backend slots in the file} */
    public int slotCount() {
        return file.slots;
    }

    // ---- the lookup path -------------------------------------------------------------------------

    /**
     * {@return whether the backend in {@code slot} may be chosen now, with this state's {@code maxFails} and
     * {@code failTimeout}: see {@link #available(int, long, int, long)}}
     *
     * @param slot the backend's slot in the state file ({@link #slot(String)})
     * @param nowNanos now, by {@link System#nanoTime()}
     */
    public boolean available(int slot, long nowNanos) {
        return available(slot, nowNanos, options.maxFails(), failTimeoutNanos);
    }

    /**
     * {@return whether the backend in {@code slot} may be chosen now: not drained, and not failed} As in nginx's
     * round-robin peer selection, a backend with {@code fails >= maxFails} is skipped while less than
     * {@code failTimeoutNanos} have passed since it was last checked; once that time has passed, one
     * caller on the host (the one whose CAS moves {@code checked} to now) gets {@code true} and probes
     * it; the others skip it for another {@code failTimeout}, unless {@link #reportSuccess} clears it.
     *
     * @param slot the backend's slot in the state file ({@link #slot(String)})
     * @param nowNanos now, by {@link System#nanoTime()}
     * @param maxFails failures within {@code failTimeoutNanos} that make a backend unavailable (0: never)
     * @param failTimeoutNanos nginx's {@code fail_timeout}, in nanoseconds
     */
    public boolean available(int slot, long nowNanos, int maxFails, long failTimeoutNanos) {
        return available(slot, nowNanos, maxFails, failTimeoutNanos, true);
    }

    /**
     * {@return {@link #available(int, long, int, long)} without taking the probe: a failed backend whose
     * {@code failTimeoutNanos} have passed is available to every caller, and nothing is written} For
     * a look that routes no request: {@code ringstore lookup}, and counting the available backends.
     *
     * @param slot the backend's slot in the state file ({@link #slot(String)})
     * @param nowNanos now, by {@link System#nanoTime()}
     * @param maxFails failures within {@code failTimeoutNanos} that make a backend unavailable (0: never)
     * @param failTimeoutNanos nginx's {@code fail_timeout}, in nanoseconds
     */
    public boolean peekAvailable(int slot, long nowNanos, int maxFails, long failTimeoutNanos) {
        return available(slot, nowNanos, maxFails, failTimeoutNanos, false);
    }

    private boolean available(int slot, long nowNanos, int maxFails, long failTimeoutNanos, boolean probe) {
        long r = record(slot);
        if (s.get(ValueLayout.JAVA_LONG, r + DRAINED_OFFSET) != 0) {
            return false;
        }
        if (maxFails == 0 || (long) LONG.getOpaque(s, r + FAILS_OFFSET) < maxFails) {
            return true;
        }
        long checked = (long) LONG.getAcquire(s, r + CHECKED_OFFSET);
        if (nowNanos - checked <= failTimeoutNanos) {
            return false;
        }
        return !probe || LONG.compareAndSet(s, r + CHECKED_OFFSET, checked, nowNanos);
    }

    /**
     * {@return requests in flight to the backend in {@code slot}, summed over every live process: plain loads
     * of its lease cells (two cache lines for 32 leases), each cell read whole, the sum not a snapshot
     * taken at one instant (nor need it be: requests come and go while it is read)}
     *
     * @param slot the backend's slot in the state file ({@link #slot(String)})
     */
    public long inFlight(int slot) {
        long cells = record(slot) + IN_FLIGHT_OFFSET;
        long sum = 0;
        for (int l = 0; l < file.leases; l++) {
            sum += Integer.toUnsignedLong(s.get(ValueLayout.JAVA_INT, cells + 4L * l));
        }
        return sum;
    }

    /**
     * {@return requests in flight on the whole host divided by the number of backends this instance tracks (0 if none)}
     */
    public double meanInFlight() {
        int n = tracked.length;
        return n == 0 ? 0 : (double) totalInFlight() / n;
    }

    /**
     * {@return requests in flight on the whole host, to every backend of the file: the sum of each lease's
     * total (plain loads of one cache line), not of the backends' counts}
     */
    public long totalInFlight() {
        long sum = 0;
        for (int l = 0; l < file.leases; l++) {
            sum += Integer.toUnsignedLong(s.get(ValueLayout.JAVA_INT, LEASE_TOTALS_OFFSET + 4L * l));
        }
        return sum;
    }

    /**
     * One more request in flight to the backend in {@code slot}, counted in this process's lease.
     *
     * @param slot the backend's slot in the state file ({@link #slot(String)})
     */
    public void acquire(int slot) {
        long cell = cell(slot);
        if (lostLease) {
            return;
        }
        INT.getAndAdd(s, cell, 1);
        INT.getAndAdd(s, leaseTotalOffset, 1);
    }

    /**
     * One request fewer in flight to the backend in {@code slot}. A release with nothing acquired in
     * this process (a mistake, or counts zeroed because this lease was reaped while the process was
     * stopped) leaves the count at zero rather than below it.
     *
     * @param slot the backend's slot in the state file ({@link #slot(String)})
     */
    public void release(int slot) {
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

    /**
     * A failed request to the backend in {@code slot} (nginx: {@code fails++}, {@code accessed = checked = now}).
     *
     * @param slot the backend's slot in the state file ({@link #slot(String)})
     * @param nowNanos now, by {@link System#nanoTime()}
     */
    public void reportFailure(int slot, long nowNanos) {
        long r = record(slot);
        LONG.getAndAdd(s, r + FAILS_OFFSET, 1L);
        LONG.setRelease(s, r + ACCESSED_OFFSET, nowNanos);
        LONG.setRelease(s, r + CHECKED_OFFSET, nowNanos);
    }

    /**
     * A successful request to the backend in {@code slot}: clears its failures if it was checked after
     * its last failure (nginx: {@code if (accessed < checked) fails = 0}), so a success right after a
     * failure does not undo it, but the probe after {@code failTimeout} does.
     *
     * @param slot the backend's slot in the state file ({@link #slot(String)})
     */
    public void reportSuccess(int slot) {
        long r = record(slot);
        if ((long) LONG.getOpaque(s, r + FAILS_OFFSET) == 0) {
            return; // the common case writes nothing, so a healthy backend's line stays shared
        }
        if ((long) LONG.getAcquire(s, r + CHECKED_OFFSET) - (long) LONG.getAcquire(s, r + ACCESSED_OFFSET) > 0) {
            LONG.setRelease(s, r + FAILS_OFFSET, 0L);
        }
    }

    /**
     * {@return availability of backends by their index in a ring file, for a failover lookup: {@code slots[i]}
     * is backend i's slot (from {@link #track}), and the check uses {@link System#nanoTime()}}
     *
     * @param slots the slot of each backend of a ring file, by backend index (from {@link #track})
     */
    public IntPredicate availableBackends(int[] slots) {
        int[] copy = slots.clone();
        return i -> available(copy[i], System.nanoTime());
    }

    // ---- the directory ---------------------------------------------------------------------------

    /**
     * Slots for {@code endpoints} ({@code result[i]} for {@code endpoints.get(i)}), given to endpoints
     * seen for the first time; and from now on the endpoints this instance keeps named (replacing the
     * ones of the previous call). Call it with every backend of the rings in use, at open and after
     * each republish. The slot of an endpoint left out stays its own while a request to it is in
     * flight and for {@link Options#reclaimAfter()} after any router last named it.
     *
     * @param endpoints backend addresses, as a ring file's backend table writes them
     * @return the slots, by the index of {@code endpoints}
     * @throws IllegalArgumentException an endpoint longer than 62 bytes in UTF-8
     * @throws IllegalStateException    the file has no free slot left ({@link Options#slots()})
     */
    public int[] track(List<String> endpoints) {
        int[] slots = slots(endpoints, true);
        tracked = Arrays.stream(slots).distinct().toArray();
        return slots;
    }

    /**
     * {@return the slot of {@code endpoint}, or -1 if it has none}
     *
     * @param endpoint the backend's address, as its ring file's backend table writes it
     */
    public int slot(String endpoint) {
        return slots(List.of(endpoint), false)[0];
    }

    /**
     * {@return the slots of {@code endpoints} (-1 for one that has none), in one pass: unlike {@link #track}, nothing is given or named}
     *
     * @param endpoints backend addresses, as a ring file's backend table writes them
     */
    public int[] slots(List<String> endpoints) {
        return slots(endpoints, false);
    }

    /**
     * Drains {@code endpoint}: every process skips it from its next availability check. An endpoint
     * no ring names yet gets a slot, so it is drained when it appears.
     *
     * @param endpoint the backend's address, as its ring file's backend table writes it
     * @return whether it was drained before
     */
    public boolean drain(String endpoint) {
        int slot = slots(List.of(endpoint), true)[0];
        return (long) LONG.getAndSet(s, record(slot) + DRAINED_OFFSET, 1L) != 0;
    }

    /**
     * Ends the drain of {@code endpoint}.
     *
     * @param endpoint the backend's address, as its ring file's backend table writes it
     * @return whether it was drained
     */
    public boolean undrain(String endpoint) {
        int slot = slot(endpoint);
        return slot >= 0 && (long) LONG.getAndSet(s, record(slot) + DRAINED_OFFSET, 0L) != 0;
    }

    /**
     * The slots of {@code endpoints} (-1 for one that has none, unless {@code create}), marked named
     * now: one pass over the records under the directory lock, then a hash lookup per endpoint.
     */
    private int[] slots(List<String> endpoints, boolean create) {
        byte[][] names = new byte[endpoints.size()][];
        for (int i = 0; i < names.length; i++) {
            names[i] = endpoints.get(i).getBytes(StandardCharsets.UTF_8);
            if (names[i].length == 0 || names[i].length > ENDPOINT_MAX_LENGTH) {
                throw new IllegalArgumentException("an endpoint is 1 to " + ENDPOINT_MAX_LENGTH + " bytes in UTF-8: " + endpoints.get(i));
            }
        }
        int[] slots = new int[names.length];
        long now = System.nanoTime();
        lockDirectory();
        try {
            Map<ByteBuffer, Integer> used = new HashMap<>();
            ArrayDeque<Integer> free = new ArrayDeque<>();
            for (int slot = 0; slot < file.slots; slot++) {
                long r = record(slot);
                if ((long) LONG.getAcquire(s, r + STATE_OFFSET) != SLOT_USED) {
                    free.add(slot);
                } else {
                    byte[] name = endpointBytes(r);
                    if (name != null) { // a corrupt record names nothing
                        used.putIfAbsent(ByteBuffer.wrap(name), slot);
                    }
                }
            }
            for (int i = 0; i < names.length; i++) {
                Integer slot = used.get(ByteBuffer.wrap(names[i]));
                if (slot == null && create) {
                    if (free.isEmpty()) {
                        throw new IllegalStateException(file.path + ": all " + file.slots + " backend slots are in use; "
                                + "recreate the state file with more (Options.slots) when no router runs");
                    }
                    slot = free.poll();
                    give(slot, names[i], now);
                    used.put(ByteBuffer.wrap(names[i]), slot);
                }
                if (slot != null && create) {
                    LONG.setOpaque(s, record(slot) + NAMED_OFFSET, now);
                }
                slots[i] = slot == null ? -1 : slot;
            }
        } finally {
            unlockDirectory();
        }
        return slots;
    }

    /** Gives the free record {@code slot} to the endpoint {@code name}: fields zeroed, endpoint written, then in use. */
    private void give(int slot, byte[] name, long now) {
        long r = record(slot);
        for (long o = DRAINED_OFFSET; o < file.recordLength - ENDPOINT_LINE_LENGTH; o += 8) {
            s.set(ValueLayout.JAVA_LONG, r + o, 0L);
        }
        LONG.setVolatile(s, r + NAMED_OFFSET, now);
        long e = r + file.recordLength - ENDPOINT_LINE_LENGTH;
        s.set(ValueLayout.JAVA_SHORT, e, (short) name.length);
        MemorySegment.copy(name, 0, s, ValueLayout.JAVA_BYTE, e + 2, name.length);
        LONG.setRelease(s, r + STATE_OFFSET, SLOT_USED);
        LONG.getAndAdd(s, (long) DIRECTORY_GENERATION_OFFSET, 1L);
    }

    /** The endpoint's bytes, or {@code null} if its length field is out of range (a corrupt record). */
    private byte[] endpointBytes(long record) {
        long e = record + file.recordLength - ENDPOINT_LINE_LENGTH;
        int length = Short.toUnsignedInt(s.get(ValueLayout.JAVA_SHORT, e));
        if (length == 0 || length > ENDPOINT_MAX_LENGTH) {
            return null;
        }
        return s.asSlice(e + 2, length).toArray(ValueLayout.JAVA_BYTE);
    }

    /** Frees the slots no router named for reclaimAfter that hold nothing in flight and are not drained. */
    private void reclaimSlots(long now) {
        long after = options.reclaimAfter().toNanos();
        lockDirectory();
        try {
            for (int slot = 0; slot < file.slots; slot++) {
                long r = record(slot);
                if ((long) LONG.getAcquire(s, r + STATE_OFFSET) == SLOT_USED
                        && now - (long) LONG.getOpaque(s, r + NAMED_OFFSET) > after
                        && (long) LONG.getOpaque(s, r + DRAINED_OFFSET) == 0 && inFlight(slot) == 0) {
                    LONG.setRelease(s, r + STATE_OFFSET, SLOT_FREE);
                    LONG.getAndAdd(s, (long) DIRECTORY_GENERATION_OFFSET, 1L);
                }
            }
        } finally {
            unlockDirectory();
        }
    }

    /**
     * Takes the directory lock: a CAS of this instance's word into the lock field. A holder whose
     * process is gone, or that held it for over a second (it is held for microseconds), is broken.
     */
    private void lockDirectory() {
        long waitedSince = 0;
        long waitedFor = 0; // the holder waited for: the second counts from when this holder was first seen
        while (true) {
            long holder = (long) LONG.getVolatile(s, (long) DIRECTORY_LOCK_OFFSET);
            if (holder == 0) {
                if (LONG.compareAndSet(s, (long) DIRECTORY_LOCK_OFFSET, 0L, lockWord)) {
                    return;
                }
                continue;
            }
            long now = System.nanoTime();
            if (holder != waitedFor) {
                waitedFor = holder;
                waitedSince = now;
            }
            // Routers share one pid namespace (README): a pid that does not exist is a holder that is gone.
            boolean holderGone = ProcessHandle.of(holder >>> 32).map(p -> !p.isAlive()).orElse(true);
            if (holderGone || now - waitedSince > 1_000_000_000L) {
                if (LONG.compareAndSet(s, (long) DIRECTORY_LOCK_OFFSET, holder, lockWord)) {
                    LOG.log(Level.WARNING, "{0}: broke the directory lock held by pid {1} ({2})", file.path, String.valueOf(holder >>> 32),
                            holderGone ? "process gone" : "held over a second");
                    return;
                }
            }
            Thread.onSpinWait();
            Thread.yield();
        }
    }

    private void unlockDirectory() {
        LONG.compareAndSet(s, (long) DIRECTORY_LOCK_OFFSET, lockWord, 0L);
    }

    // ---- leases ----------------------------------------------------------------------------------

    private static long token(long pid, Optional<Instant> start) {
        long startBits = start.map(i -> i.toEpochMilli() & 0x7FFF_FFFFL).orElse(0L);
        return (pid << 32) | (startBits << 1);
    }

    private long claimLease() throws StateFileException {
        long now = System.nanoTime();
        for (int l = 0; l < file.leases; l++) {
            long o = leaseOffset(l);
            if (LONG.compareAndSet(s, o + LEASE_OWNER_OFFSET, 0L, token)) {
                // A free lease's counts should be zero, but a process that counted into it while it was
                // being closed or reaped may have left some: they are not this process's requests.
                for (int slot = 0; slot < file.slots; slot++) {
                    INT.setVolatile(s, record(slot) + IN_FLIGHT_OFFSET + 4L * l, 0);
                }
                INT.setVolatile(s, LEASE_TOTALS_OFFSET + 4L * l, 0);
                LONG.setVolatile(s, o + LEASE_HEARTBEAT_OFFSET, now);
                LONG.setVolatile(s, o + LEASE_PID_OFFSET, ProcessHandle.current().pid());
                LONG.setVolatile(s, o + LEASE_START_OFFSET, ProcessHandle.current().info().startInstant().map(Instant::toEpochMilli).orElse(0L));
                return l;
            }
        }
        throw new StateFileException(file.path, -1, "all " + file.leases + " leases are held by live processes (pids "
                + leases().stream().map(x -> String.valueOf(x.pid())).toList() + ")", false);
    }

    /** Whether the holder {@code owner} of a lease (or a reaper of it) lives: a fresh heartbeat, or its process. */
    private boolean alive(long owner, long heartbeat, long now) {
        if (now - heartbeat < options.staleAfter().toNanos()) {
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
    private int reapDeadLeases() {
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
            long returned = 0;
            for (int slot = 0; slot < file.slots; slot++) {
                returned += Integer.toUnsignedLong((int) INT.getAndSet(s, record(slot) + IN_FLIGHT_OFFSET + 4L * l, 0));
            }
            INT.setVolatile(s, LEASE_TOTALS_OFFSET + 4L * l, 0);
            LONG.compareAndSet(s, o + LEASE_OWNER_OFFSET, reaping, 0L);
            reaped++;
            LOG.log(Level.INFO, "{0}: lease {1} of dead process {2} reclaimed, {3} requests in flight returned",
                    file.path, l, String.valueOf(owner >>> 32), String.valueOf(returned));
        }
        return reaped;
    }

    /** The heartbeat thread: never dies of an exception, ends when closed. */
    private void beat() {
        long o = leaseOffset((int) lease);
        long lastReclaim = System.nanoTime();
        long period = options.heartbeat().toNanos();
        while (!closed) {
            try {
                long now = System.nanoTime();
                LONG.setRelease(s, o + LEASE_HEARTBEAT_OFFSET, now);
                for (int slot : tracked) {
                    LONG.setOpaque(s, record(slot) + NAMED_OFFSET, now);
                }
                // Reaped while alive: only when this process looked gone to another, as from another pid
                // namespace while its heartbeat stalled. Take the lease back if it is still free.
                long owner = (long) LONG.getVolatile(s, o + LEASE_OWNER_OFFSET);
                if (owner != token && LONG.compareAndSet(s, o + LEASE_OWNER_OFFSET, 0L, token)) {
                    LOG.log(Level.ERROR, "{0}: lease {1} of this process was reaped while it ran (heartbeat stalled over {2} "
                            + "and pid not visible to the reaper?); its in-flight counts restart from zero", file.path, lease, options.staleAfter());
                } else if (owner != token && !lostLease) {
                    lostLease = true; // another process holds it now: counting on would write into its counts
                    LOG.log(Level.ERROR, "{0}: lease {1} of this process was reaped and taken by pid {2}; this process no longer "
                            + "counts its requests in flight (reopen the state to count again)", file.path, lease, String.valueOf(owner >>> 32));
                }
                reapDeadLeases();
                if (now - lastReclaim > 10 * period) {
                    reclaimSlots(now);
                    lastReclaim = now;
                }
                lastFailure = null;
            } catch (RuntimeException e) {
                if (closed) {
                    return;
                }
                String why = String.valueOf(e);
                if (!why.equals(lastFailure)) { // once per kind of failure, not ten times a second
                    LOG.log(Level.WARNING, "{0}: heartbeat failed, retrying: {1}", file.path, why);
                    LOG.log(Level.DEBUG, "heartbeat failure", e);
                    lastFailure = why;
                }
            }
            try {
                Thread.sleep(Duration.ofNanos(period));
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    // ---- what operators see ----------------------------------------------------------------------

    /** {@return every backend slot in use, in slot order, with this state's health options} */
    public List<BackendState> backends() {
        long now = System.nanoTime();
        List<BackendState> list = new ArrayList<>();
        for (int slot = 0; slot < file.slots; slot++) {
            long r = record(slot);
            if ((long) LONG.getAcquire(s, r + STATE_OFFSET) != SLOT_USED) {
                continue;
            }
            byte[] name = endpointBytes(r);
            long fails = (long) LONG.getOpaque(s, r + FAILS_OFFSET);
            long accessed = (long) LONG.getOpaque(s, r + ACCESSED_OFFSET);
            boolean failed = options.maxFails() > 0 && fails >= options.maxFails()
                    && now - (long) LONG.getOpaque(s, r + CHECKED_OFFSET) <= failTimeoutNanos;
            list.add(new BackendState(slot, name == null ? "(corrupt endpoint)" : new String(name, StandardCharsets.UTF_8),
                    (long) LONG.getOpaque(s, r + DRAINED_OFFSET) != 0, fails, failed,
                    accessed == 0 ? null : Duration.ofNanos(now - accessed), inFlight(slot)));
        }
        return list;
    }

    /** {@return every lease in use} */
    public List<LeaseState> leases() {
        long now = System.nanoTime();
        List<LeaseState> list = new ArrayList<>();
        for (int l = 0; l < file.leases; l++) {
            long o = leaseOffset(l);
            long owner = (long) LONG.getVolatile(s, o + LEASE_OWNER_OFFSET);
            if (owner != 0) {
                list.add(new LeaseState(l, owner >>> 32, alive(owner, (long) LONG.getVolatile(s, o + LEASE_HEARTBEAT_OFFSET), now),
                        Integer.toUnsignedLong((int) INT.getOpaque(s, LEASE_TOTALS_OFFSET + 4L * l))));
            }
        }
        return list;
    }

    // ---- offsets ---------------------------------------------------------------------------------

    private long record(int slot) {
        Objects.checkIndex(slot, file.slots);
        return recordsOffset(file.leases) + (long) slot * file.recordLength;
    }

    private long cell(int slot) {
        if (lease == NO_LEASE) {
            throw new IllegalStateException("opened to inspect, with no lease: open it as a router to count requests");
        }
        if (closed) {
            throw new IllegalStateException(file.path + ": closed");
        }
        return record(slot) + IN_FLIGHT_OFFSET + 4 * lease;
    }

    /**
     * Gives back this process's lease (its in-flight counts with it) and unmaps the file. Calls on this
     * instance after close throw {@link IllegalStateException}.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (heartbeat != null) {
            heartbeat.interrupt();
            try {
                heartbeat.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            for (int slot = 0; slot < file.slots; slot++) {
                INT.setVolatile(s, record(slot) + IN_FLIGHT_OFFSET + 4 * lease, 0);
            }
            INT.setVolatile(s, leaseTotalOffset, 0);
            LONG.compareAndSet(s, leaseOffset((int) lease) + LEASE_OWNER_OFFSET, token, 0L);
        }
        file.arena.close();
    }
}
