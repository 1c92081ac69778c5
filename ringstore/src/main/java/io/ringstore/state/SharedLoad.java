package io.ringstore.state;

import io.ringstore.Backend;
import io.ringstore.Ring;
import io.ringstore.RingStore;
import io.ringstore.balance.BoundedLoad;
import io.ringstore.balance.LoadView;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.function.IntPredicate;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * A router's link between the ring file it serves (a {@code io.ringstore.live.RingRouter}'s
 * {@code current()}) and the host's {@link HostState}: which backend a key
 * goes to under the state every process on the host shares (drain, health, in-flight load), and the
 * bookkeeping of each request ({@link #acquire}, {@link #release}, {@link #reportFailure},
 * {@link #reportSuccess}).
 *
 * <pre>{@code
 * try (RingRouter router = RingRouter.builder(ringFile).open();
 *      HostState state = HostState.open(ringFile)) {
 *     SharedLoad load = SharedLoad.open(state, router::current, BoundedLoad.of(1.25));
 *     RingRouter.Route route = router.route(Set.of());
 *     Backend b = route.chooseAndAcquire(key, load); // null: no backend available
 *     int token = load.token(b);                      // (route.choose, then load.acquire: the same, not strict)
 *     try {
 *         ...send; then load.reportSuccess(b) or load.reportFailure(b)
 *     } finally {
 *         load.release(token);
 *     }
 * }
 * }</pre>
 *
 * <p><b>Available</b> means ({@link Availability}, as {@code ringstore lookup} judges it too): not
 * {@link Backend#down()} in the ring file, not drained by the operator,
 * not failed host-wide by the backend's own {@link Backend#maxFails()} within its
 * {@link Backend#failTimeoutSeconds()} (once that time has passed, one request on the host probes it:
 * {@link HostState#available(int, long, int, long)}), and, when it has a {@link Backend#maxConns()},
 * holding fewer requests in flight host-wide than that (nginx's hash balancer skips a peer with
 * {@code conns >= max_conns}). These settings are the ring file's (flag health): every router on the
 * host judges a backend alike. The {@code max_conns} check reads the count, then {@link #acquire}
 * adds to it, so requests choosing the backend at the same moment may exceed it by their number.
 *
 * <p><b>Choosing.</b> With a {@link BoundedLoad}, the backend is the one {@link BoundedLoad#choose}
 * picks on the key's ring: the ring's answer unless it is unavailable or holds more than c × the mean
 * in flight, then the next candidate of the key's bounded walk. The pool whose mean counts is the
 * ring's members (the backends with every feature of the ring): m counts the requests still in flight
 * on members that became unavailable, n only the available ones, so a drain or a failure raises the
 * capacity of the others until those requests end. Without a bound (null), only
 * availability counts, as in nginx: the ring's answer, else the first available backend of the
 * {@value Ring#NGINX_MAX_POINTS} points from the key's ({@link Ring#select}), else of the whole ring;
 * for a family that fails over by rehashing the key (spymemcached, xmemcached), its rehash sequence
 * takes the place of the 21 points ({@link #choose(Ring, byte[], int, int)}).
 *
 * <p><b>A strict bound.</b> {@link #chooseAndAcquire} chooses and counts in one step (reserve, then
 * check: {@link BoundedLoad#chooseAndAcquire}), so that no request is taken above the bound, host-wide,
 * however many threads and processes race; {@link #choose} then {@link #acquire} (kept, and the same
 * without a bound) checks and then counts, so racing requests can take a backend one or more over it.
 *
 * <p><b>Generations.</b> The slots of the backends of the generation the router serves are
 * {@linkplain HostState#track tracked} when that generation is first used (after a switch, the first
 * request pays one pass over the state file's directory); the steady path compares one reference and
 * allocates nothing. A backend of the replaced generation (a request that started before the switch)
 * is still counted in its own slot, found by endpoint.
 *
 * <p><b>Cost per {@link #choose}</b>, with a bound: the ring search, then per candidate examined one
 * cache line of its state record (drain, health) and its in-flight cells (two lines for 32 leases).
 * The mean's total is the sum of the per-process totals (one line) when the ring's members are every
 * backend of the file, else the sum of the members' counts (O(members) lines: keep feature pools
 * small, or route on the all-backends ring). The number of available members is counted at most once
 * a millisecond per pool (O(members) lines, shared in every core's cache: written only on a drain or
 * a failure); between counts it may lag a drain or a failure by that much, which moves only the
 * bound, never lets an unavailable backend be chosen. Measured in bench/results/2026-12-01-xeon.md ("One host, one view").
 *
 * <p>Thread-safe; {@link #choose}, {@link #acquire}, {@link #release}, {@link #reportFailure} and
 * {@link #reportSuccess} allocate nothing on the steady path.
 */
public final class SharedLoad {
    private static final System.Logger LOG = System.getLogger(SharedLoad.class.getName());

    /** {@link Generation#slotOf}: not a backend of that generation. */
    private static final int NO_SLOT = Integer.MIN_VALUE;

    /** How old the count of a pool's available backends may be: see {@code Pool.availableBackends()}. */
    static final long COUNT_REFRESH_NANOS = 1_000_000L;

    private final HostState state;
    /** The generation the router serves now. */
    private final Supplier<RingStore> serving;

    private final BoundedLoad policy;
    /** {@link System#nanoTime()}; a test's clock to pass a fail_timeout without waiting it. */
    private final LongSupplier clock;
    /** The generation serving, as last seen; replaced under this. */
    private volatile Generation current;
    /** The one before it, for requests placed before the switch that finish after it. */
    private volatile Generation previous;

    private SharedLoad(HostState state, Supplier<RingStore> serving, BoundedLoad policy, LongSupplier clock) {
        this.state = Objects.requireNonNull(state, "state");
        this.serving = Objects.requireNonNull(serving, "serving");
        this.policy = policy;
        this.clock = clock;
        this.current = view(serving.get(), true);
    }

    /**
     * Starts sharing {@code state} for the rings of the store {@code serving} answers, tracking the
     * backends of the generation serving now.
     *
     * @param policy the load bound, or null for none (availability only)
     * @param state the host's shared state (a {@link HostState} opened as a router)
     * @param serving the generation the router serves now, asked after each switch
     *        ({@code router::current}); a fixed store's {@code () -> store}
     * @return the shared load; close it to stop
     * @throws IllegalStateException the state file has no free slot left for the generation's backends
     */
    public static SharedLoad open(HostState state, Supplier<RingStore> serving, BoundedLoad policy) {
        return new SharedLoad(state, serving, policy, System::nanoTime);
    }

    /** {@link #open(HostState, Supplier, BoundedLoad)} on another clock, for tests. */
    static SharedLoad open(HostState state, Supplier<RingStore> serving, BoundedLoad policy, LongSupplier nanoClock) {
        return new SharedLoad(state, serving, policy, nanoClock);
    }

    /** {@return the host's shared state this shares} */
    public HostState state() {
        return state;
    }

    /** {@return the load bound, or null when only availability counts} */
    public BoundedLoad policy() {
        return policy;
    }

    /**
     * {@return the backend for a key of {@code hash} on {@code ring} (a ring of the generation serving,
     * or of one just replaced), or null when none is available} See the class comment. Called by
     * {@code io.ringstore.live.RingRouter.Route#choose}, which looks up again when the ring's generation is unmapped
     * under the call (this then throws {@link IllegalStateException}). Without a bound the failover is the
     * walk from the hash's point, whatever the family: {@link #choose(Ring, byte[], int, int)} tries a
     * rehashing family's sequence first.
     *
     * @param ring a ring of the router's generation serving (or of one just replaced)
     * @param hash the key's hash ({@link Ring#hash(byte[])})
     */
    public Backend choose(Ring ring, long hash) {
        return choose(ring, hash, null, 0, 0);
    }

    /**
     * {@return the backend for {@code key} on {@code ring}, or null when none is available}
     * {@link #choose(Ring, long)} of the key's hash by the ring's key hash, except that without a bound
     * a family that fails over by rehashing the key ({@link io.ringstore.family.Failover#rehashesKey()}: spymemcached,
     * xmemcached) tries its rehash sequence first ({@link Ring#select(byte[], int, int, int, IntPredicate)}),
     * as its client does, and only then walks the whole ring. Allocation-free.
     *
     * @param ring   a ring of the router's generation serving (or of one just replaced)
     * @param key    the key's array
     * @param offset where the key starts
     * @param length the key's length in bytes
     */
    public Backend choose(Ring ring, byte[] key, int offset, int length) {
        return choose(ring, ring.hash(key, offset, length), key, offset, length);
    }

    /**
     * {@link #choose(Ring, byte[], int, int)} for a caller that has hashed the key already ({@code hash} is
     * {@link Ring#hash(byte[], int, int)} of it); null for {@code key} gives {@link #choose(Ring, long)}
     * (see {@link Ring#select(long, byte[], int, int, int, IntPredicate)}: only a rehashing family reads
     * the key's bytes, and only without a bound).
     *
     * @param ring   a ring of the router's generation serving (or of one just replaced)
     * @param hash   the key's hash
     * @param key    the key's bytes, or null
     * @param offset where the key starts
     * @param length the key's length in bytes
     * @return the backend, or null when none is available
     */
    public Backend choose(Ring ring, long hash, byte[] key, int offset, int length) {
        Generation g = generation(ring.store());
        int b;
        if (policy != null) {
            // The bound looks at up to maxProbes candidates through a read-only view; only the one
            // chosen takes the host's one probe of a failed backend whose fail_timeout has passed. If
            // another process took that probe meanwhile, the backend now reads as failed: choose again.
            Generation.Pool pool = g.pool(ring);
            b = policy.choose(ring, hash, pool);
            if (b >= 0 && !g.test(b)) {
                b = policy.choose(ring, hash, pool);
            }
        } else {
            b = ring.select(hash, key, offset, length, Ring.NGINX_MAX_POINTS, g);
            if (b == Ring.GAVE_UP) {
                b = ring.select(hash, ring.pointCount(), g);
            }
        }
        return b < 0 ? null : g.backends[b];
    }

    /**
     * {@link #choose(Ring, long)} and {@link #acquire} in one step: the backend returned (null: none
     * available, nothing counted) already counts the request host-wide; release it with
     * {@link #token}{@code (b)}. With a bound this is {@link BoundedLoad#chooseAndAcquire}: reserve, then
     * check, so that no request is taken above the bound even when requests of several threads and
     * processes race for a backend's last place (with {@code choose} then {@code acquire} they can all
     * take it). Without a bound it is {@code choose} then {@code acquire}.
     *
     * @param ring a ring of the router's generation serving (or of one just replaced)
     * @param hash the key's hash ({@link Ring#hash(byte[])})
     * @return the backend, counted in flight, or null
     */
    public Backend chooseAndAcquire(Ring ring, long hash) {
        return chooseAndAcquire(ring, hash, null, 0, 0);
    }

    /**
     * {@link #chooseAndAcquire(Ring, long)} for {@code key}, as {@link #choose(Ring, byte[], int, int)}.
     *
     * @param ring   a ring of the router's generation serving (or of one just replaced)
     * @param key    the key's array
     * @param offset where the key starts
     * @param length the key's length in bytes
     * @return the backend, counted in flight, or null
     */
    public Backend chooseAndAcquire(Ring ring, byte[] key, int offset, int length) {
        return chooseAndAcquire(ring, ring.hash(key, offset, length), key, offset, length);
    }

    /**
     * {@link #chooseAndAcquire(Ring, byte[], int, int)} for a caller that has hashed the key already, as
     * {@link #choose(Ring, long, byte[], int, int)}.
     *
     * @param ring   a ring of the router's generation serving (or of one just replaced)
     * @param hash   the key's hash
     * @param key    the key's bytes, or null
     * @param offset where the key starts
     * @param length the key's length in bytes
     * @return the backend, counted in flight, or null
     */
    public Backend chooseAndAcquire(Ring ring, long hash, byte[] key, int offset, int length) {
        if (policy == null) {
            return acquired(choose(ring, hash, key, offset, length));
        }
        Generation g = generation(ring.store());
        Generation.Pool pool = g.pool(ring);
        // As in choose(): only the backend taken uses up a failed backend's probe; if another process
        // took that probe meanwhile, give the place back and choose again.
        int b = policy.chooseAndAcquire(ring, hash, pool);
        if (b >= 0 && !g.test(b)) {
            pool.release(b);
            b = policy.chooseAndAcquire(ring, hash, pool);
        }
        return b < 0 ? null : g.backends[b];
    }

    /** {@code b} counted in flight ({@link #acquire}); null stays null. */
    private Backend acquired(Backend b) {
        if (b != null) {
            acquire(b);
        }
        return b;
    }

    /**
     * {@return the token to {@link #release} a request to {@code b} with, counting nothing: for a backend
     * {@link #chooseAndAcquire} answered, the same token {@link #acquire} would have returned}
     *
     * @param b a backend {@link #chooseAndAcquire} answered
     */
    public int token(Backend b) {
        return slot(b);
    }

    /**
     * One more request in flight to {@code b} (not null: an answer of {@link #choose}), host-wide;
     * returns the token to {@link #release} it with (-1, released as nothing, for a backend that has
     * no slot: one that left the ring and was reclaimed).
     *
     * @param b a backend the router answered with
     * @return the token to {@link #release} the request with
     */
    public int acquire(Backend b) {
        int slot = slot(b);
        if (slot >= 0) {
            state.acquire(slot);
        }
        return slot;
    }

    /**
     * The request {@code token} (from {@link #acquire}) is done.
     *
     * @param token what {@link #acquire} returned
     */
    public void release(int token) {
        if (token >= 0) {
            state.release(token);
        }
    }

    /**
     * A request to {@code b} failed: counted host-wide against its {@code max_fails}.
     *
     * @param b a backend the router answered with
     */
    public void reportFailure(Backend b) {
        int slot = slot(b);
        if (slot >= 0) {
            state.reportFailure(slot, clock.getAsLong());
        }
    }

    /**
     * A request to {@code b} succeeded: clears its failures if it was the probe after {@code fail_timeout}.
     *
     * @param b a backend the router answered with
     */
    public void reportSuccess(Backend b) {
        int slot = slot(b);
        if (slot >= 0) {
            state.reportSuccess(slot);
        }
    }

    private int slot(Backend b) {
        Generation g = current;
        int slot = g.slotOf(b);
        if (slot != NO_SLOT) {
            return slot;
        }
        Generation p = previous;
        slot = p == null ? NO_SLOT : p.slotOf(b);
        return slot != NO_SLOT ? slot : state.slot(b.socketAddress()); // a backend two generations old: rare
    }

    /** The generation of {@code store}: the one last seen on the steady path, else tracked now. */
    private Generation generation(RingStore store) {
        Generation g = current;
        if (g.store == store) {
            return g;
        }
        synchronized (this) {
            g = current;
            if (g.store == store) {
                return g;
            }
            Generation p = previous;
            if (p != null && p.store == store) {
                return p; // a lookup that started before the switch
            }
            if (store == serving.get()) {
                previous = g;
                current = view(store, true);
                return current;
            }
            // Older than both (a lookup that slept through two switches): its slots by endpoint, untracked.
            return view(store, false);
        }
    }

    /**
     * A generation's view: with {@code track}, its endpoints {@linkplain HostState#track tracked} (given
     * slots, and named by this process from now on); else only looked up.
     */
    private Generation view(RingStore store, boolean track) {
        List<Backend> backends = store.backends();
        List<String> endpoints = backends.stream().map(Backend::socketAddress).toList();
        int[] slots;
        try {
            slots = track ? state.track(endpoints) : state.slots(endpoints);
        } catch (IllegalStateException full) { // every slot of the state file in use: serve, share what has slots
            slots = state.slots(endpoints);
            LOG.log(
                    System.Logger.Level.WARNING,
                    "{0}: {1}; backends without a slot are routed without shared state "
                            + "(no drain, health or load from other processes)",
                    state.path(),
                    full.getMessage());
        }
        return new Generation(store, backends.toArray(Backend[]::new), slots);
    }

    /** One generation's backends and their slots; their {@link Availability} as an {@link IntPredicate} for {@link Ring#select}. */
    private final class Generation implements IntPredicate {
        final RingStore store;
        final Backend[] backends;
        final int[] slots;
        final Availability availability;
        /** One per ring used so far, in {@link #rings}' order; copied on write. */
        private volatile Pool[] pools = new Pool[0];

        Generation(RingStore store, Backend[] backends, int[] slots) {
            this.store = store;
            this.backends = backends;
            this.slots = slots;
            this.availability = new Availability(state, Arrays.asList(backends), slots, clock);
        }

        /** {@code b}'s slot if it is a backend of this generation (-1: it has none), else {@link #NO_SLOT}. */
        int slotOf(Backend b) {
            int i = b.index();
            return i < backends.length && backends[i] == b ? slots[i] : NO_SLOT;
        }

        /** Available, taking the probe of a failed backend whose fail_timeout has passed: for the backend a request goes to. */
        @Override
        public boolean test(int b) {
            return availability.test(b);
        }

        Pool pool(Ring ring) {
            Pool[] ps = pools;
            for (Pool p : ps) {
                if (p.ring == ring) {
                    return p;
                }
            }
            synchronized (this) {
                for (Pool p : pools) {
                    if (p.ring == ring) {
                        return p;
                    }
                }
                Pool p = new Pool(ring);
                Pool[] next = Arrays.copyOf(pools, pools.length + 1);
                next[next.length - 1] = p;
                pools = next;
                return p;
            }
        }

        /** The {@link LoadView} of one ring: its members are the backends with every feature of the ring. */
        private final class Pool implements LoadView {
            final Ring ring;
            final int[] members;
            /** Whether every backend of the file is a member, so that the per-process totals are the pool's. */
            final boolean everyBackend;
            /** {@link #availableBackends()} as last counted, and when (the clock's time); racy by design. */
            private volatile int count;

            private volatile long countedAt;

            Pool(Ring ring) {
                this.ring = ring;
                this.members = Arrays.stream(backends)
                        .filter(b -> b.features().containsAll(ring.features()))
                        .mapToInt(Backend::index)
                        .toArray();
                this.everyBackend = members.length == backends.length;
                this.countedAt = clock.getAsLong() - 2 * COUNT_REFRESH_NANOS; // counted on first use
            }

            /** Read-only: a candidate the bound passes over must not use up a failed backend's probe. */
            @Override
            public boolean available(int backend) {
                return availability.peek(backend);
            }

            @Override
            public long inFlight(int backend) {
                int slot = slots[backend];
                return slot < 0 ? 0 : state.inFlight(slot);
            }

            /** The reservation of {@link BoundedLoad#chooseAndAcquire}: counted in this process's lease; nothing for a backend with no slot. */
            @Override
            public void acquire(int backend) {
                int slot = slots[backend];
                if (slot >= 0) {
                    state.acquire(slot);
                }
            }

            @Override
            public void release(int backend) {
                int slot = slots[backend];
                if (slot >= 0) {
                    state.release(slot);
                }
            }

            @Override
            public long totalInFlight() {
                if (everyBackend) {
                    return state.totalInFlight();
                }
                long sum = 0;
                for (int b : members) {
                    sum += inFlight(b);
                }
                return sum;
            }

            /**
             * Counted over the members at most every {@link #COUNT_REFRESH_NANOS}: availability changes
             * at an operator's or a failure's pace, and a count that far behind only moves the bound of
             * the requests placed meanwhile (each candidate's own availability is always read fresh). A
             * count and its time read torn between two refreshes is the same kind of lag.
             */
            @Override
            public int availableBackends() {
                long now = clock.getAsLong();
                if (now - countedAt <= COUNT_REFRESH_NANOS) {
                    return count;
                }
                int n = 0;
                for (int b : members) {
                    if (availability.peek(b, now)) {
                        n++;
                    }
                }
                count = n;
                countedAt = now;
                return n;
            }
        }
    }
}
