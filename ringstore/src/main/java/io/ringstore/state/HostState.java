package io.ringstore.state;

import static io.ringstore.state.StateFileLayout.*;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.locks.LockSupport;
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
 * {@link #reportFailure}, {@link #reportSuccess}) are lock-free atomic operations on the mapped memory,
 * allocate nothing, and are safe from any thread of any process.
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
 * drained, is freed for another endpoint. Slot allocation is the one step under a lock (a CAS-held
 * word whose dead holder is broken), off the lookup path.
 *
 * <p>Time is {@link System#nanoTime()}, which on Linux is the host-wide monotonic clock, so processes
 * compare each other's stamps.
 *
 * <p>This class puts four package-private parts together and runs the heartbeat: {@code StateMapping}
 * (the file: mapped, checked, created, a corrupt one replaced), {@code SlotDirectory} (which endpoint
 * has which slot), {@code BackendHealth} (drain and passive health) and {@code LeaseTable} (leases,
 * their liveness and reaping, the requests in flight).
 */
public final class HostState implements AutoCloseable {
    /**
     * The logger, made when first used: {@code System.getLogger} starts java.util.logging (about 10 ms),
     * which a lookup that only checks whether a state file exists does not need.
     */
    private static final class Log {
        static final System.Logger LOG = System.getLogger(HostState.class.getName());
    }

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

    /**
     * The file as this instance uses it now: one mapping and its parts. Replaced, by the heartbeat (or
     * {@link #refresh}), when another file takes the path (the old one deleted, replaced, or found
     * truncated): the caller's slots stay what they were, mapped to the new file's by {@link #toFile}.
     */
    private static final class Attached {
        /** {@link #route} of a file that shrank: no slot maps to it. */
        static final int[] LOST = new int[0];

        final StateMapping file;
        final SlotDirectory directory;
        final BackendHealth health;
        final LeaseTable leases;
        /** The caller's slot to this file's slot; {@code null} while they are the same (the first file of the instance). */
        volatile int[] toFile;
        /**
         * What the request path maps a caller's slot through: {@code null} for the same slot, {@link #LOST}
         * once the file shrank (every slot answered without state), else {@link #toFile}. One read.
         */
        volatile int[] route;
        /** Set when a call faulted on the mapping (the file shrank under it): calls then skip it, as without state. */
        volatile boolean lost;
        /** Whether {@link #sayLost} has told of it (guarded by the instance). */
        boolean told;
        /** When it was replaced (heartbeat thread): its lease is given back and its mapping closed a second later. */
        long retiredAt;

        Attached(StateMapping file, Duration staleAfter, boolean router, int[] toFile) throws StateFileException {
            try {
                if (file.writable()) {
                    BootCheck.adopt(file); // before the leases: times of an earlier boot reset first
                }
                this.file = file;
                this.directory = new SlotDirectory(file);
                this.health = new BackendHealth(file);
                this.leases = new LeaseTable(file, staleAfter, router);
                this.toFile = toFile;
                this.route = toFile;
            } catch (StateFileException | RuntimeException | Error e) {
                file.close();
                throw e;
            }
        }

        /** {@return the file slot of the caller's {@code slot}, or -1 when this file has none for it} */
        /** {@return {@code r[slot]}, or -1 for a slot out of its range} */
        static int map(int[] r, int slot) {
            return slot >= 0 && slot < r.length ? r[slot] : -1;
        }

        int fileSlot(int slot) {
            int[] t = toFile;
            return t == null ? slot : map(t, slot);
        }
    }

    private final Path path;
    private final Options options;
    private final boolean router;
    private final long failTimeoutNanos;
    private volatile Attached at;
    /** Files replaced, until their lease is given back (guarded by this). */
    private final List<Attached> retired = new ArrayList<>();
    /** The caller's slots handed out by this instance: slot to endpoint, and back (guarded by this). */
    private String[] endpointOf = new String[0];

    private final Map<String, Integer> slotOf = new HashMap<>();
    /** The endpoints of the last {@link #track} (guarded by this). */
    private List<String> tracked = List.of();
    /** Files this instance has moved to since it opened: part of {@link #directoryVersion}. */
    private volatile long moves;

    private final Thread heartbeat;
    /** Test hook: runs at the start of every beat. */
    volatile Runnable beforeBeat = () -> {};

    private volatile boolean closed;
    /** The heartbeat's last failure, logged once until a beat succeeds (heartbeat thread only). */
    private String lastFailure;
    /** The last failure to move to a new file, logged once (guarded by this). */
    private String lastMoveFailure;

    private HostState(StateMapping file, Options options, boolean router) throws StateFileException {
        this.path = file.path;
        this.options = options;
        this.router = router;
        this.failTimeoutNanos = options.failTimeout().toNanos();
        this.at = new Attached(file, options.staleAfter(), router, null);
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

    /** A new instance on {@code m} ({@code m} is unmapped again if it cannot be made: no lease left). */
    private static HostState of(StateMapping m, Options options, boolean router) throws StateFileException {
        try {
            return new HostState(m, options, router);
        } catch (
                InternalError
                        e) { // SIGBUS on a page of the file (check touched each, but a file can shrink since); Attached
            // unmapped m
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
        Attached a = at;
        int[] r = a.route;
        int f = r == null ? slot : Attached.map(r, slot);
        try {
            return f >= 0 ? a.health.available(f, nowNanos, maxFails, failTimeoutNanos, true) : noState(a, slot);
        } catch (RuntimeException | InternalError e) {
            return availableFailed(e, a, slot, nowNanos, maxFails, failTimeoutNanos, true);
        }
    }

    /** {@link #available} or {@link #peekAvailable} after {@code e}: retried on a new file, or answered without state. */
    private boolean availableFailed(
            Throwable e, Attached a, int slot, long nowNanos, int maxFails, long failTimeoutNanos, boolean probe) {
        if (!retry(a, e)) {
            return true;
        }
        return probe
                ? available(slot, nowNanos, maxFails, failTimeoutNanos)
                : peekAvailable(slot, nowNanos, maxFails, failTimeoutNanos);
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
        Attached a = at;
        int[] r = a.route;
        int f = r == null ? slot : Attached.map(r, slot);
        try {
            return f >= 0 ? a.health.available(f, nowNanos, maxFails, failTimeoutNanos, false) : noState(a, slot);
        } catch (RuntimeException | InternalError e) {
            return availableFailed(e, a, slot, nowNanos, maxFails, failTimeoutNanos, false);
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
        Attached a = at;
        int[] r = a.route;
        int f = r == null ? slot : Attached.map(r, slot);
        try {
            return f >= 0 ? a.leases.inFlight(f) : nothingInFlight(a, slot);
        } catch (RuntimeException | InternalError e) {
            return inFlightFailed(e, a, slot);
        }
    }

    private long nothingInFlight(Attached a, int slot) {
        noState(a, slot);
        return 0;
    }

    private long inFlightFailed(Throwable e, Attached a, int slot) {
        return retry(a, e) ? inFlight(slot) : 0;
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
        Attached a = at;
        if (a.lost) {
            noState(a, 0);
            return 0;
        }
        try {
            return a.leases.totalInFlight();
        } catch (RuntimeException | InternalError e) {
            return retry(a, e) ? totalInFlight() : 0;
        }
    }

    /**
     * One more request in flight to the backend in {@code slot}, counted in this process's lease.
     *
     * @param slot the backend's slot in the state file ({@link #slot(String)})
     */
    public void acquire(int slot) {
        Attached a = at;
        int[] r = a.route;
        int f = r == null ? slot : Attached.map(r, slot);
        try {
            if (f >= 0) {
                a.leases.acquire(f);
            } else {
                noState(a, slot);
            }
        } catch (RuntimeException | InternalError e) {
            if (retry(a, e)) {
                acquire(slot);
            }
        }
    }

    /**
     * One request fewer in flight to the backend in {@code slot}. A release with nothing acquired in
     * this process (a mistake, or counts zeroed because this lease was reaped while the process was
     * stopped) leaves the count at zero rather than below it.
     *
     * @param slot the backend's slot in the state file ({@link #slot(String)})
     */
    public void release(int slot) {
        Attached a = at;
        int[] r = a.route;
        int f = r == null ? slot : Attached.map(r, slot);
        try {
            if (f >= 0) {
                a.leases.release(f);
            } else {
                noState(a, slot);
            }
        } catch (RuntimeException | InternalError e) {
            if (retry(a, e)) {
                release(slot);
            }
        }
    }

    /**
     * A failed request to the backend in {@code slot} (nginx: {@code fails++}, {@code accessed = checked = now}).
     *
     * @param slot the backend's slot in the state file ({@link #slot(String)})
     * @param nowNanos now, by {@link System#nanoTime()}
     */
    public void reportFailure(int slot, long nowNanos) {
        Attached a = at;
        int[] r = a.route;
        int f = r == null ? slot : Attached.map(r, slot);
        try {
            if (f >= 0) {
                a.health.reportFailure(f, nowNanos);
            } else {
                noState(a, slot);
            }
        } catch (RuntimeException | InternalError e) {
            if (retry(a, e)) {
                reportFailure(slot, nowNanos);
            }
        }
    }

    /**
     * A successful request to the backend in {@code slot}: clears its failures if it was checked after
     * its last failure (nginx: {@code if (accessed < checked) fails = 0}), so a success right after a
     * failure does not undo it, but the probe after {@code failTimeout} does.
     *
     * @param slot the backend's slot in the state file ({@link #slot(String)})
     */
    public void reportSuccess(int slot) {
        Attached a = at;
        int[] r = a.route;
        int f = r == null ? slot : Attached.map(r, slot);
        try {
            if (f >= 0) {
                a.health.reportSuccess(f);
            } else {
                noState(a, slot);
            }
        } catch (RuntimeException | InternalError e) {
            if (retry(a, e)) {
                reportSuccess(slot);
            }
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
        Attached a = at;
        int[] found;
        if (a.lost) {
            found = new int[endpoints.size()];
            Arrays.fill(found, -1);
        } else {
            try {
                found = a.directory.track(endpoints);
            } catch (InternalError e) {
                lost(a);
                return track(endpoints);
            }
        }
        tracked = List.copyOf(endpoints);
        return callerSlots(a, endpoints, found, true);
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
        Attached a = at;
        int[] found = new int[endpoints.size()];
        Arrays.fill(found, -1);
        if (!a.lost) {
            try {
                found = a.directory.slots(endpoints, false);
            } catch (InternalError e) {
                lost(a);
                Arrays.fill(found, -1);
            }
        }
        return callerSlots(a, endpoints, found, false);
    }

    /**
     * The caller's slots for {@code endpoints}, whose slots in {@code a}'s file are {@code found} (-1:
     * none): the same numbers in the first file; after a move, each endpoint's earlier slot, or a new
     * one ({@code all}: also for an endpoint the file has no slot for, so that it is counted once it has).
     */
    private int[] callerSlots(Attached a, List<String> endpoints, int[] found, boolean all) {
        int[] result = new int[found.length];
        int[] toFile = a.toFile;
        for (int i = 0; i < found.length; i++) {
            String e = endpoints.get(i);
            int f = found[i];
            if (toFile == null && !a.lost) { // the first file: its slots are the caller's
                if (f >= 0) {
                    name(f, e);
                }
                result[i] = f;
                continue;
            }
            if (f < 0 && !all) {
                result[i] = -1;
                continue;
            }
            Integer known = slotOf.get(e);
            int slot = known != null
                    ? known
                    : f >= 0 && (f >= endpointOf.length || endpointOf[f] == null) ? f : freeSlot();
            name(slot, e);
            if (toFile != null) {
                if (slot >= toFile.length) {
                    int old = toFile.length;
                    toFile = Arrays.copyOf(toFile, Math.max(slot + 1, old * 2));
                    Arrays.fill(toFile, old, toFile.length, -1);
                } else {
                    toFile = toFile.clone();
                }
                toFile[slot] = f;
            }
            result[i] = slot;
        }
        if (toFile != null) {
            synchronized (a) {
                a.toFile = toFile;
                if (!a.lost) {
                    a.route = toFile;
                }
            }
        }
        return result;
    }

    /** Records that the caller's {@code slot} names {@code endpoint} (guarded by this). */
    private void name(int slot, String endpoint) {
        if (slot >= endpointOf.length) {
            endpointOf = Arrays.copyOf(endpointOf, Math.max(slot + 1, endpointOf.length * 2));
        }
        String before = endpointOf[slot];
        if (before != null && !before.equals(endpoint)) {
            slotOf.remove(before, slot);
        }
        Integer old = slotOf.put(endpoint, slot);
        if (old != null && old != slot && old < endpointOf.length && endpoint.equals(endpointOf[old])) {
            endpointOf[old] = null;
        }
        endpointOf[slot] = endpoint;
    }

    /** {@return a caller's slot no endpoint has (guarded by this)} */
    private int freeSlot() {
        for (int i = 0; i < endpointOf.length; i++) {
            if (endpointOf[i] == null) {
                return i;
            }
        }
        return endpointOf.length;
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
        Attached a = usable();
        try {
            return a.health.drain(a.directory.slots(List.of(endpoint), true)[0], true);
        } catch (InternalError e) {
            throw shrank(a);
        }
    }

    /**
     * Ends the drain of {@code endpoint}.
     *
     * @param endpoint the backend's address, as its ring file's backend table writes it
     * @return whether it was drained
     * @throws IllegalStateException when the state file shrank under this instance
     */
    public boolean undrain(String endpoint) {
        Attached a = usable();
        try {
            int slot = a.directory.slots(List.of(endpoint), false)[0];
            return slot >= 0 && a.health.drain(slot, false);
        } catch (InternalError e) {
            throw shrank(a);
        }
    }

    /**
     * {@return a number that changes when a slot is given or freed in the file, or this instance moves to another
     * file} For a long-running reader (such as {@code lookup --watch}) that looked up endpoints without a
     * slot: when this changes, look them up again. A plain read of one header word.
     */
    public long directoryVersion() {
        Attached a = at;
        long moved = moves << 48;
        if (a.lost) {
            return moved;
        }
        try {
            return moved ^ a.directory.generation();
        } catch (RuntimeException | InternalError e) {
            return retry(a, e) ? directoryVersion() : moved;
        }
    }

    // ---- a file replaced, deleted or truncated -----------------------------------------------------

    /**
     * What a call answers without state (the file shrank under this instance): every backend
     * available, nothing in flight, nothing counted.
     */
    private boolean noState(Attached a, int slot) {
        if (closed) {
            throw new IllegalStateException(path + ": closed");
        }
        if (!a.lost && a.toFile == null) {
            Objects.checkIndex(
                    slot, a.file.slots); // the first file's slots are the caller's: a negative one is a mistake
        }
        return true;
    }

    /**
     * A call on {@code a} threw {@code e}. A fault of the mapping (InternalError: the file shrank)
     * makes {@code a} lost; a closed mapping of a file replaced meanwhile is retried on the new one.
     *
     * @return whether to retry the call on {@link #at}
     */
    private boolean retry(Attached a, Throwable e) {
        if (e instanceof InternalError) {
            if (closed) {
                throw new IllegalStateException(path + ": closed", e);
            }
            lost(a);
            return false;
        }
        if (e instanceof IllegalStateException && !closed && a != at) {
            return true; // retired under the call: the new file answers
        }
        throw (RuntimeException) e;
    }

    /**
     * Marks {@code a} lost and wakes the heartbeat to find a new file; the one log line comes from the
     * move, or, if there is no good file to move to, from {@link #sayLost} (an inspector: at once).
     */
    private void lost(Attached a) {
        synchronized (a) {
            if (a.lost) {
                return;
            }
            a.lost = true;
            a.route = Attached.LOST;
        }
        if (heartbeat != null) {
            LockSupport.unpark(heartbeat);
        } else {
            sayLost(a);
        }
    }

    /** The one line for a file that shrank under {@code a} and was not followed by a good one. */
    private void sayLost(Attached a) {
        synchronized (a) {
            if (a.told) {
                return;
            }
            a.told = true;
        }
        Log.LOG.log(
                Level.WARNING,
                "{0}: the state file shrank while in use (truncated?); this process routes without the host''s "
                        + "drain, health and load {1}",
                path,
                router
                        ? "until a good state file is at the path"
                        : "(reopen it, or refresh, when a good file is in place)");
    }

    private Attached usable() {
        Attached a = at;
        if (a.lost) {
            throw shrank(a);
        }
        return a;
    }

    private IllegalStateException shrank(Attached a) {
        lost(a);
        return new IllegalStateException(
                path + ": the state file shrank while in use (truncated?); remove it when no router runs, "
                        + "and the next one makes a new one");
    }

    /**
     * Looks whether another file took the path since this instance mapped its file (replaced, or
     * removed and made again, or truncated in place), and if so moves to it: a router (whose heartbeat
     * does this every beat) replaces a truncated or corrupt one, re-registers its requests in flight there and takes a lease; an
     * inspector maps the file at the path if there is one. For a long-running inspector, such as
     * {@code lookup --watch}, which calls it every 100 ms or so.
     *
     * @return whether this instance moved to another file
     */
    public boolean refresh() {
        if (closed) {
            throw new IllegalStateException(path + ": closed");
        }
        return check(at);
    }

    /** {@link #refresh}: one stat of the path and one of the descriptor. */
    private boolean check(Attached a) {
        Object key = fileKey(path);
        boolean replaced = !Objects.equals(key, a.file.key());
        if (!replaced && !a.lost && a.file.sizeNow() >= a.file.segment.byteSize()) {
            return false;
        }
        if (key == null && !a.lost) {
            // Removed, and nothing at the path yet: the file this instance has is still shared by every
            // process that has it, until one makes a new one (a router starting, ringstore state drain).
            // Not made here: a directory being removed (a test's, a container's) would get it back.
            return false;
        }
        return move(a, key == null ? "removed" : replaced ? "replaced" : "truncated");
    }

    private static Object fileKey(Path path) {
        try {
            return Files.readAttributes(path, BasicFileAttributes.class).fileKey();
        } catch (IOException e) {
            return null;
        }
    }

    /**
     * Moves this instance to the file now at the path: maps it (a router creates or rebuilds it),
     * gives each of the caller's slots its endpoint's slot there (tracking what was tracked), copies
     * this process's requests in flight from {@code a} (unless it faulted), and retires {@code a},
     * whose lease is given back a second later.
     */
    private synchronized boolean move(Attached a, String why) {
        if (a != at || closed) {
            return false;
        }
        Attached n;
        try {
            StateMapping m = router
                    ? StateMapping.mapOrRebuild(path, options.leases(), options.slots())
                    : StateMapping.map(path, at.file.writable());
            if (m == null) {
                return false; // an inspector, and nothing at the path: what it has is all there is
            }
            if (Objects.equals(m.key(), a.file.key())) {
                m.close(); // the same file after all (it shrank, and was extended again?)
                return false;
            }
            n = new Attached(m, options.staleAfter(), router, new int[0]);
        } catch (StateFileException | RuntimeException e) {
            String message = e.getMessage();
            if (!Objects.equals(message, lastMoveFailure)) {
                lastMoveFailure = message;
                Log.LOG.log(
                        Level.WARNING,
                        "{0}: the state file was {1}, and the file now at the path cannot be used: {2}",
                        path,
                        why,
                        message);
            }
            return false;
        }
        lastMoveFailure = null;
        List<String> known = new ArrayList<>();
        for (String e : endpointOf) {
            if (e != null) {
                known.add(e);
            }
        }
        int[] toFile = new int[endpointOf.length];
        Arrays.fill(toFile, -1);
        try {
            if (router && !tracked.isEmpty()) {
                n.directory.track(tracked);
            }
            int[] found = n.directory.slots(known, false);
            for (int i = 0; i < found.length; i++) {
                toFile[slotOf.get(known.get(i))] = found[i];
            }
        } catch (RuntimeException | InternalError e) {
            Log.LOG.log(
                    Level.WARNING,
                    "{0}: the state file was {1}, and its endpoints cannot be tracked in the new file: {2}",
                    path,
                    why,
                    e.toString());
        }
        n.toFile = toFile;
        n.route = toFile;
        long moved = 0;
        boolean unknown = a.lost;
        if (!unknown && a.leases.counts() && n.leases.counts()) {
            try {
                for (int slot = 0; slot < toFile.length; slot++) {
                    int from = a.fileSlot(slot);
                    int count = from < 0 ? 0 : a.leases.own(from);
                    if (count > 0 && toFile[slot] >= 0) {
                        n.leases.add(toFile[slot], count);
                        moved += count;
                    }
                }
            } catch (RuntimeException | InternalError e) {
                unknown = true;
            }
        }
        at = n;
        moves++;
        a.retiredAt = System.nanoTime();
        retired.add(a);
        Log.LOG.log(
                Level.WARNING,
                "{0}: the state file was {1}; this process moved to the file now at the path{2}{3}",
                path,
                why,
                router
                        ? (n.leases.counts()
                                ? ", " + moved + " of its requests in flight counted there"
                                : ", without a lease (its requests uncounted)")
                        : "",
                unknown && router ? " (those in flight when it shrank are not: they end uncounted)" : "");
        return true;
    }

    /** Gives back the leases of files replaced more than a second ago, and unmaps them (heartbeat thread). */
    private void retireOld(long now) {
        List<Attached> done = new ArrayList<>();
        synchronized (this) {
            for (var it = retired.iterator(); it.hasNext(); ) {
                Attached r = it.next();
                if (now - r.retiredAt > 1_000_000_000L) {
                    it.remove();
                    done.add(r);
                }
            }
        }
        done.forEach(HostState::unmap);
    }

    /** Gives {@code a}'s lease back (what it can of a file that shrank) and unmaps it. */
    private static void unmap(Attached a) {
        a.leases.stopCounting();
        try {
            a.leases.giveBack();
        } catch (InternalError e) { // a mapped page gone: the lease goes with its lock alone
        }
        a.file.close();
    }

    // ---- the heartbeat ---------------------------------------------------------------------------

    /** The heartbeat thread: never dies of an exception or of a truncated file, ends when closed. */
    private void beat() {
        long lastReclaim = System.nanoTime();
        long period = options.heartbeat().toNanos();
        while (!closed) {
            try {
                beforeBeat.run();
                long now = System.nanoTime();
                Attached before = at;
                if (!check(before) && before.lost) {
                    sayLost(before); // truncated, and no good file to move to yet
                }
                Attached a = at;
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
                    } catch (InternalError e) { // a mapped page gone: the file truncated under the mapping
                        lost(a);
                    }
                }
                retireOld(now);
                lastFailure = null;
            } catch (RuntimeException
                    | Error e) { // an OutOfMemoryError too: the next beat tries again, the thread never dies
                if (closed) {
                    return;
                }
                String why = String.valueOf(e);
                if (!why.equals(lastFailure)) { // once per kind of failure, not ten times a second
                    Log.LOG.log(Level.WARNING, "{0}: heartbeat failed, retrying: {1}", path, why);
                    Log.LOG.log(Level.DEBUG, "heartbeat failure", e);
                    lastFailure = why;
                }
            }
            // Parked, not slept: close() must not interrupt this thread, since an interrupt during a lock
            // call closes the file's channel, and with it every lock of the process (StateChannels).
            LockSupport.parkNanos(this, period);
        }
    }

    // ---- what operators see ----------------------------------------------------------------------

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
        Attached a = usable();
        try {
            long now = System.nanoTime();
            List<BackendState> list = new ArrayList<>();
            for (int slot = 0; slot < a.file.slots; slot++) {
                if (a.directory.used(slot)) {
                    String endpoint = a.directory.endpoint(slot);
                    String shown = endpoint == null ? "(corrupt endpoint)" : endpoint;
                    list.add(a.health.state(
                            slot,
                            shown,
                            now,
                            maxFails.applyAsInt(shown),
                            failTimeoutNanos.applyAsLong(shown),
                            a.leases.inFlight(slot)));
                }
            }
            return list;
        } catch (InternalError e) {
            throw shrank(a);
        }
    }

    /**
     * {@return whether this instance counts its requests in flight} False for an operator's instance,
     * for a router that found every lease of the file held (it routes with the host's drain and health,
     * its own requests uncounted, as logged once at open), for one whose lease was overwritten, and
     * while the file has shrunk under it.
     */
    public boolean counted() {
        Attached a = at;
        return !a.lost && a.leases.counts();
    }

    /**
     * {@return every lease in use}
     *
     * @throws IllegalStateException when the state file shrank under this instance
     */
    public List<LeaseState> leases() {
        Attached a = usable();
        try {
            return a.leases.states();
        } catch (InternalError e) {
            throw shrank(a);
        }
    }

    /**
     * Gives back this process's lease (its in-flight counts with it) and unmaps the file. Calls on this
     * instance after close throw {@link IllegalStateException}.
     */
    @Override
    public void close() {
        List<Attached> all;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            all = new ArrayList<>(retired);
            all.add(at);
            retired.clear();
        }
        all.forEach(a -> a.leases.stopCounting());
        if (heartbeat != null) {
            LockSupport.unpark(heartbeat);
            try {
                heartbeat.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        for (Attached a : all) { // after the heartbeat
            if (a == at && !a.lost) {
                try {
                    a.leases.giveBack();
                } catch (InternalError e) { // a mapped page gone: the file was truncated under the mapping
                    Log.LOG.log(
                            Level.WARNING,
                            "{0}: the state file shrank while in use (truncated?); this process''s lease is given back "
                                    + "by its lock alone",
                            path);
                }
                a.file.close();
            } else {
                unmap(a);
            }
        }
    }
}
