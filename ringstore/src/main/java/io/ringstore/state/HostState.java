package io.ringstore.state;

import static io.ringstore.state.StateFileLayout.*;

import io.ringstore.Backend;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.IntPredicate;
import java.util.function.ToIntFunction;
import java.util.function.ToLongFunction;

/**
 * The live state every router process on a host shares through one mapped file beside the ring file
 * ({@code fleet.ring.state} for {@code fleet.ring}; FORMAT.md, "The state file"): per backend, a drain
 * flag set by the operator, passive health (nginx's {@code max_fails}/{@code fail_timeout}, counted for
 * the whole host) and the requests in flight.
 *
 * <p>Backends are named by endpoint (a {@code Backend.socketAddress()}), so their state outlives ring
 * republishes. {@link #track} gives each endpoint a slot, an int that every other call takes; the
 * calls on a slot ({@link #available}, {@link #inFlight}, {@link #acquire}, {@link #release},
 * {@link #reportFailure}, {@link #reportSuccess}) are plain loads and stores of the mapped memory (no
 * compare-and-set on it: on a truncated file one would kill the JVM), lock-free but for the rare probe,
 * allocate nothing, and are safe from any thread of any process. This process's requests in flight are
 * counted on its heap and stored into its lease's cells.
 *
 * <p><b>In flight, and {@code kill -9}.</b> A router holds a lease: one of the file's lease slots,
 * held by a POSIX record lock on its byte range of the file, which the kernel releases when the
 * process dies, whatever its pid namespace and however long it was stopped. Each backend's in-flight
 * count is kept per lease, one u32 cell each, written only by that lease's process; the host-wide
 * count is their sum. When a process dies without releasing, another process (any router's heartbeat
 * thread, or the next one to open the file, or {@code ringstore state}) takes its lease's lock, which
 * only succeeds once the holder is gone, and sets its cells to zero. Setting to zero is idempotent, so
 * a reaper that dies half-way is simply followed by another; and a count is never negative, because a
 * cell only goes down by its owner's release of what it acquired. The heartbeat (every {@link
 * Options#heartbeat()}) is shown to operators and spares lock tests on leases beating now; it never
 * decides that a lease is dead. A router that finds every lease held still opens: it shares drain
 * and health, and counts none of its own requests ({@link #counted()}), as logged once.
 *
 * <p><b>One descriptor per process.</b> Record locks belong to the process, and closing any
 * descriptor of the file releases all of them: every instance of a process on one file shares one
 * channel, closed with the last instance, and a router process must not open and close the state file
 * by other means while it holds a lease.
 *
 * <p><b>Slots come and go.</b> While a router tracks an endpoint, its heartbeat keeps the slot
 * "named"; a slot named by no router for {@link Options#reclaimAfter()}, with nothing in flight and not
 * drained, is freed for another endpoint. Slot allocation is the one step under a lock (a POSIX record
 * lock, waited for, never broken: the kernel releases a dead holder's), off the lookup path.
 *
 * <p>Time is {@link System#nanoTime()}, which on Linux is the host-wide monotonic clock, so processes
 * compare each other's stamps.
 *
 * <p>A facade over package-private parts: {@code StateFollower} (the file at the path followed, the
 * caller's slots across files, the heartbeat, a mapping that faults) and, per file, {@code
 * AttachedFile}: {@code StateMapping} (mapped, checked, created, a corrupt one replaced), {@code
 * SlotDirectory} (which endpoint has which slot), {@code BackendHealth} (drain and passive health) and
 * {@code LeaseTable} (leases, their liveness and reaping, the requests in flight).
 */
public final class HostState implements AutoCloseable {
    /**
     * How a state file is created and used.
     *
     * @param slots        backend slots of a new file (1 to 65,536): endpoints it can hold at once
     * @param leases       lease slots of a new file (1 to 1,024): router processes it can serve at once (a file of
     *                     at most 32 is written in version 1, which earlier releases read too)
     * @param maxFails     failures that make a backend unavailable (nginx {@code max_fails}; 0: never)
     * @param failTimeout  how long such a backend stays unavailable (nginx {@code fail_timeout})
     * @param heartbeat    how often a router refreshes its lease and looks for dead ones
     * @param staleAfter   a lease whose heartbeat is older than this, and whose process is gone, is dead
     * @param reclaimAfter a slot no router has named for this long, idle and not drained, is freed
     */
    public record Options(
            int slots,
            int leases,
            int maxFails,
            Duration failTimeout,
            Duration heartbeat,
            Duration staleAfter,
            Duration reclaimAfter) {
        /** 4,096 backends, 256 processes, nginx's defaults (1 failure, 10 s), 100 ms heartbeat, 500 ms stale, 60 s reclaim. */
        public static final Options DEFAULTS = new Options(
                4096,
                DEFAULT_LEASES,
                1,
                Duration.ofSeconds(10),
                Duration.ofMillis(100),
                Duration.ofMillis(500),
                Duration.ofSeconds(60));

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
         * @param leases lease slots (router processes), 1 to 1,024
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
    public record BackendState(
            int slot,
            String endpoint,
            boolean drained,
            long fails,
            boolean failed,
            Duration sinceFailure,
            long inFlight) {}

    /**
     * One lease: the process holding it, whether it is alive, and what it holds in flight.
     *
     * @param lease the lease's number
     * @param pid the process holding it
     * @param alive whether that process still heartbeats
     * @param inFlight requests in flight
     */
    public record LeaseState(int lease, long pid, boolean alive, long inFlight) {}

    private final Path path;
    private final Options options;
    private final long failTimeoutNanos;
    /** The file followed, the caller's slots, a router's heartbeat, and what a call does when the mapping faults. */
    final StateFollower follower;
    /**
     * The file in use, as calls read it: the follower's, set by it at each move to another file. Its own
     * field, since reading it through the follower would cost every call a load more.
     */
    private volatile AttachedFile at;
    /** This process's requests in flight by slot, which every file it is on gets stored into its lease. */
    private final OwnCounts own = new OwnCounts();

    private HostState(StateMapping m, Options options, boolean router) throws StateFileException {
        this.path = m.path;
        this.options = options;
        this.failTimeoutNanos = options.failTimeout().toNanos();
        this.at = new AttachedFile(m, options.staleAfter(), router, null, own);
        this.follower = new StateFollower(at, options, router, this, own, n -> at = n);
    }

    /** A new instance on {@code m} ({@code m} is unmapped again if it cannot be made: no lease left). */
    private static HostState of(StateMapping m, Options options, boolean router) throws StateFileException {
        try {
            return new HostState(m, options, router);
        } catch (InternalError e) {
            // SIGBUS on a page of the file (mapping touched each, but a file can shrink since); m is unmapped
            throw StateMapping.unreadable(m.path, e);
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
     * @throws StateFileException the file is of another version, cannot be read, written or locked (every
     *                            lease held is no failure: the state then counts nothing of this process)
     */
    public static HostState open(Path ringFile, Options options) throws StateFileException {
        return of(StateMapping.mapOrRebuild(statePath(ringFile), options.leases(), options.slots()), options, true);
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
        StateMapping m = StateMapping.map(statePath(ringFile), true);
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
    public static Optional<HostState> inspect(Path stateFile, Options options, boolean create)
            throws StateFileException {
        StateMapping m = StateMapping.map(stateFile, true);
        if (m == null && create) {
            StateMapping.create(stateFile, options.leases(), options.slots());
            m = StateMapping.map(stateFile, true);
        }
        return m == null ? Optional.empty() : Optional.of(of(m, options, false));
    }

    /**
     * Opens a state file to look at only, mapped read-only (for a file this process may not write: a
     * read-only mount, a user who may only read it). Nothing is written: dead leases are not reaped, so
     * their requests in flight are still in the counts, but each lease is told alive or dead all the
     * same (a shared lock test, which a read-only descriptor can take, fails while its holder lives).
     * Calls that write ({@link #drain}, {@link #undrain}, {@link #track}, {@link #acquire}, {@link #reportFailure}, ...)
     * throw (the mapping is read-only). Its descriptor is shared with, and never closes under,
     * a router of the same file in this process.
     *
     * @param stateFile the state file itself
     * @param options the capacity, health rule and timings (use the same in every process of the host)
     * @return empty if there is no file
     * @throws StateFileException when the state file is corrupt or cannot be read or mapped
     */
    public static Optional<HostState> inspectReadOnly(Path stateFile, Options options) throws StateFileException {
        StateMapping m = StateMapping.map(stateFile, false);
        return m == null ? Optional.empty() : Optional.of(of(m, options, false));
    }

    /** {@return the state file's path} */
    public Path path() {
        return path;
    }

    /** {@return backend slots in the file} */
    public int slotCount() {
        return at.file.slots;
    }

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
     * caller on the host (the one that takes the record lock of its {@code checked} word and moves it to now)
     * gets {@code true} and probes
     * it; the others skip it for another {@code failTimeout}, unless {@link #reportSuccess} clears it.
     * A ring file's backend is judged by all it says of itself as well: {@link #availableBackends(List, int[])}.
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

    /** {@link #available(int, long, int, long)}, taking the probe when {@code probe}, else {@link #peekAvailable}. */
    private boolean available(int slot, long nowNanos, int maxFails, long failTimeoutNanos, boolean probe) {
        AttachedFile a = at;
        int f = a.route(slot);
        try {
            boolean yes = f >= 0
                    ? a.health.available(f, nowNanos, maxFails, failTimeoutNanos, probe)
                    : follower.noState(a, slot);
            MappedFaults.surface();
            return yes;
        } catch (RuntimeException | InternalError e) {
            // retried on the file in use, or answered without state
            return !follower.retry(a, e) || available(slot, nowNanos, maxFails, failTimeoutNanos, probe);
        }
    }

    /**
     * {@return requests in flight to the backend in {@code slot}, summed over every live process: plain loads
     * of its lease cells (two cache lines for 32 leases), each cell read whole, the sum not a snapshot
     * taken at one instant (nor need it be: requests come and go while it is read)}
     *
     * @param slot the backend's slot in the state file ({@link #slot(String)})
     */
    public long inFlight(int slot) {
        AttachedFile a = at;
        int f = a.route(slot);
        try {
            long n = f >= 0 ? a.leases.inFlight(f) : follower.nothingInFlight(a, slot);
            MappedFaults.surface();
            return n;
        } catch (RuntimeException | InternalError e) {
            return follower.retry(a, e) ? inFlight(slot) : 0;
        }
    }

    /**
     * {@return requests in flight on the whole host divided by the number of backends this instance tracks (0 if none)}
     */
    public double meanInFlight() {
        int n = at.directory.trackedCount();
        return n == 0 ? 0 : (double) totalInFlight() / n;
    }

    /**
     * {@return requests in flight on the whole host, to every backend of the file: the sum of each lease's
     * total (plain loads of one cache line), not of the backends' counts}
     */
    public long totalInFlight() {
        AttachedFile a = at;
        if (a.lost) {
            return follower.nothingInFlight(a, 0);
        }
        try {
            long n = a.leases.totalInFlight();
            MappedFaults.surface();
            return n;
        } catch (RuntimeException | InternalError e) {
            return follower.retry(a, e) ? totalInFlight() : 0;
        }
    }

    /**
     * One more request in flight to the backend in {@code slot}, counted in this process's lease.
     *
     * @param slot the backend's slot in the state file ({@link #slot(String)})
     */
    public void acquire(int slot) {
        count(slot, 1);
    }

    /**
     * One request fewer in flight to the backend in {@code slot}. A release with nothing acquired in
     * this process (a mistake, or counts zeroed because this lease was reaped while the process was
     * stopped) leaves the count at zero rather than below it.
     *
     * @param slot the backend's slot in the state file ({@link #slot(String)})
     */
    public void release(int slot) {
        count(slot, -1);
    }

    /**
     * {@code delta} more in flight to the caller's {@code slot}: counted on the heap and stored into this
     * process's cell of the file in use, which is read under {@link OwnCounts}'s lock (a move stores the
     * counts into the new file under it too, after publishing the move: so the new file gets every count
     * whole, whichever comes first). Counted without a file, too (one that shrank, or that has no slot
     * for the endpoint), for the file moved to.
     */
    private void count(int slot, int delta) {
        boolean again;
        own.lock();
        try {
            again = countLocked(slot, delta);
        } finally {
            own.unlock();
        }
        if (again) {
            count(slot, delta); // the file was let go of under the call, before anything was counted
        }
    }

    /** {@link #count} under the lock; {@return whether to count again, on the file in use} */
    private boolean countLocked(int slot, int delta) {
        AttachedFile a = at;
        int f = a.route(slot);
        try {
            if (f >= 0) {
                a.leases.count(f, slot, delta);
                MappedFaults.surface();
            } else {
                follower.noState(a, slot);
                if (a.callerSlot(slot)) {
                    own.add(slot, delta);
                }
            }
            return false;
        } catch (RuntimeException | InternalError e) {
            return follower.retry(a, e); // an InternalError (the file shrank): counted, the move stores it
        }
    }

    /**
     * A failed request to the backend in {@code slot} (nginx: {@code fails++}, {@code accessed = checked = now}).
     *
     * @param slot the backend's slot in the state file ({@link #slot(String)})
     * @param nowNanos now, by {@link System#nanoTime()}
     */
    public void reportFailure(int slot, long nowNanos) {
        write(slot, nowNanos, (a, f, s, now) -> a.health.reportFailure(f, now));
    }

    /**
     * A successful request to the backend in {@code slot}: clears its failures if it was checked after
     * its last failure (nginx: {@code if (accessed < checked) fails = 0}), so a success right after a
     * failure does not undo it, but the probe after {@code failTimeout} does.
     *
     * @param slot the backend's slot in the state file ({@link #slot(String)})
     */
    public void reportSuccess(int slot) {
        write(slot, 0, (a, f, s, now) -> a.health.reportSuccess(f));
    }

    /** A write to one backend's cells in the attached file, at {@code field}, the caller's {@code slot}'s place in it. */
    private interface SlotWrite {
        void apply(AttachedFile a, int field, int slot, long nowNanos);
    }

    /**
     * The write on the file attached; a slot the file does not have is reported once ({@code noState});
     * a file replaced or unmapped under the write has it done again on the new one when the follower
     * says so (non-capturing lambdas: no allocation on the hot path).
     */
    private void write(int slot, long nowNanos, SlotWrite op) {
        AttachedFile a = at;
        int f = a.route(slot);
        try {
            if (f >= 0) {
                op.apply(a, f, slot, nowNanos);
                MappedFaults.surface();
            } else {
                follower.noState(a, slot);
            }
        } catch (RuntimeException | InternalError e) {
            if (follower.retry(a, e)) {
                write(slot, nowNanos, op);
            }
        }
    }

    /**
     * {@return the {@link Availability} of a ring file's backends by their index, for a failover lookup: not
     * down, drained, failed by its own health settings, nor at its {@code max_conns} host-wide}
     *
     * @param backends the ring file's backends ({@link io.ringstore.RingStore#backends()})
     * @param slots    the slot of each, by backend index (from {@link #track})
     */
    public Availability availableBackends(List<Backend> backends, int[] slots) {
        return new Availability(this, backends, slots, System::nanoTime);
    }

    /**
     * {@return availability of backends by their slots alone: not drained, not failed by this state's
     * options} What a ring file says of its backends ({@code down}, their own health settings, {@code
     * max_conns}) is not known here: {@link #availableBackends(List, int[])} judges by it.
     *
     * @param slots the slot of each backend of a ring file, by backend index (from {@link #track})
     */
    public IntPredicate availableBackends(int[] slots) {
        int[] copy = slots.clone();
        return i -> available(copy[i], System.nanoTime());
    }

    /**
     * Slots for {@code endpoints} ({@code result[i]} for {@code endpoints.get(i)}), given to endpoints
     * seen for the first time; and from now on the endpoints this instance keeps named (replacing the
     * ones of the previous call). Call it with every backend of the rings in use, at open and after
     * each republish. The slot of an endpoint left out stays its own while a request to it is in
     * flight and for {@link Options#reclaimAfter()} after any router last named it.
     *
     * <p>A slot is this instance's name for the endpoint: the state file's slot, until the instance
     * moves to another file at the path (the old one replaced, deleted or truncated), after which it
     * keeps naming the same endpoint in the new file.
     *
     * @param endpoints backend addresses, as a ring file's backend table writes them
     * @return the slots, by the index of {@code endpoints}
     * @throws IllegalArgumentException an endpoint longer than 62 bytes in UTF-8
     * @throws IllegalStateException    the file has no free slot left ({@link Options#slots()})
     */
    public synchronized int[] track(List<String> endpoints) {
        return follower.track(endpoints);
    }

    /**
     * {@return the slot of {@code endpoint}, or -1 if it has none}
     *
     * @param endpoint the backend's address, as its ring file's backend table writes it
     */
    public int slot(String endpoint) {
        return slots(List.of(endpoint))[0];
    }

    /**
     * {@return the slots of {@code endpoints} (-1 for one that has none), in one pass: unlike {@link #track}, nothing is given or named}
     *
     * @param endpoints backend addresses, as a ring file's backend table writes them
     */
    public synchronized int[] slots(List<String> endpoints) {
        return follower.slots(endpoints);
    }

    /**
     * Drains {@code endpoint}: every process skips it from its next availability check. An endpoint
     * no ring names yet gets a slot, so it is drained when it appears.
     *
     * @param endpoint the backend's address, as its ring file's backend table writes it
     * @return whether it was drained before
     * @throws IllegalStateException when the state file shrank under this instance
     */
    public boolean drain(String endpoint) {
        return follower.operate(a -> a.health.drain(a.directory.slots(List.of(endpoint), true)[0], true));
    }

    /**
     * Ends the drain of {@code endpoint}.
     *
     * @param endpoint the backend's address, as its ring file's backend table writes it
     * @return whether it was drained
     * @throws IllegalStateException when the state file shrank under this instance
     */
    public boolean undrain(String endpoint) {
        return follower.operate(a -> {
            int slot = a.directory.slots(List.of(endpoint), false)[0];
            return slot >= 0 && a.health.drain(slot, false);
        });
    }

    /**
     * {@return a number that changes when a slot is given or freed in the file, or this instance moves to another
     * file} For a long-running reader (such as {@code lookup --watch}) that looked up endpoints without a
     * slot: when this changes, look them up again. A plain read of one header word.
     */
    public long directoryVersion() {
        return follower.directoryVersion();
    }

    /**
     * Looks whether another file took the path since this instance mapped its file (replaced, or
     * removed and made again, or truncated in place), and if so moves to it: a router (whose heartbeat
     * does this every beat) replaces a truncated or corrupt one, re-registers its requests in flight there
     * and takes a lease; an inspector maps the file at the path if there is one. For a long-running
     * inspector, such as {@code lookup --watch}, which calls it every 100 ms or so.
     *
     * @return whether this instance moved to another file
     */
    public boolean refresh() {
        return follower.refresh();
    }

    /**
     * {@return every backend slot in use, in slot order, with this state's health options}
     *
     * @throws IllegalStateException when the state file shrank under this instance
     */
    public List<BackendState> backends() {
        return backends(endpoint -> options.maxFails(), endpoint -> failTimeoutNanos);
    }

    /**
     * {@return every backend slot in use, in slot order, each failed or not by its own health rule} As
     * routers judge them: each backend by its ring file's {@code max_fails} and {@code fail_timeout}.
     * A {@link BackendState#slot()} is the state file's slot.
     *
     * @param maxFails         an endpoint's {@code max_fails} (0: never failed)
     * @param failTimeoutNanos an endpoint's {@code fail_timeout}, in nanoseconds
     * @throws IllegalStateException when the state file shrank under this instance
     */
    public List<BackendState> backends(ToIntFunction<String> maxFails, ToLongFunction<String> failTimeoutNanos) {
        return follower.operate(a -> a.backends(System.nanoTime(), maxFails, failTimeoutNanos));
    }

    /**
     * {@return whether this instance counts its requests in flight} False for an operator's instance,
     * for a router that found every lease of the file held (it routes with the host's drain and health,
     * its own requests uncounted, as logged once at open), for one whose lease was overwritten, and
     * while the file has shrunk under it.
     */
    public boolean counted() {
        AttachedFile a = at;
        return !a.lost && a.leases.counts();
    }

    /**
     * {@return every lease in use}
     *
     * @throws IllegalStateException when the state file shrank under this instance
     */
    public List<LeaseState> leases() {
        return follower.operate(a -> a.leases.states());
    }

    /**
     * Gives back this process's lease (its in-flight counts with it) and unmaps the file. Calls on this
     * instance after close throw {@link IllegalStateException}.
     */
    @Override
    public void close() {
        follower.close();
    }
}
