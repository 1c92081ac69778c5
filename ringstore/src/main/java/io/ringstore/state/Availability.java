package io.ringstore.state;

import io.ringstore.Backend;
import java.util.Arrays;
import java.util.List;
import java.util.function.IntPredicate;
import java.util.function.LongSupplier;

/**
 * Whether each backend of one ring file may take a request now, by everything that decides it: not
 * {@link Backend#down()} in the ring file, not drained by an operator, not failed host-wide by its own
 * {@link Backend#maxFails()} within its {@link Backend#failTimeoutSeconds()}, and, when it has a
 * {@link Backend#maxConns()}, holding fewer requests in flight host-wide than that (nginx's hash
 * balancer skips a peer with {@code conns >= max_conns}). The one rule {@link SharedLoad} (with a bound
 * and without), {@link HostState#availableBackends(List, int[])} and {@code ringstore lookup} apply.
 *
 * <p>Backends are the ring file's backend indexes ({@link io.ringstore.RingStore#backend(int)}). A
 * backend without a slot in the state file (a full file), or every backend when there is no state
 * file, is judged by {@code down} alone. {@link #test} is the check of the backend a request goes to:
 * a failed backend whose {@code fail_timeout} has passed is available to one caller on the host, which
 * probes it ({@link HostState#available(int, long, int, long)}); {@link #peek} only looks, for a
 * request that is not sent there (a candidate passed over, a count, a lookup that routes nothing). The
 * {@code max_conns} check reads the count, and the caller adds to it afterwards, so requests choosing
 * the backend at the same moment may exceed it by their number.
 *
 * <p>Thread-safe; allocation-free.
 */
public final class Availability implements IntPredicate {
    private static final long NANOS_PER_SECOND = 1_000_000_000L;

    /** Null without a state file. */
    private final HostState state;

    private final int[] slots;
    private final boolean[] down;
    private final int[] maxFails;
    private final long[] failTimeoutNanos;
    /** nginx's max_conns (0: no limit). */
    private final int[] maxConns;
    /** {@link System#nanoTime()}, or a test's clock. */
    private final LongSupplier clock;

    /**
     * @param backends the ring file's backends, by index
     * @param slots    each one's slot in {@code state} (-1: none); null without a state
     */
    Availability(HostState state, List<Backend> backends, int[] slots, LongSupplier clock) {
        this.state = state;
        this.slots = slots == null ? new int[backends.size()] : slots.clone();
        this.down = new boolean[backends.size()];
        this.maxFails = new int[backends.size()];
        this.failTimeoutNanos = new long[backends.size()];
        this.maxConns = new int[backends.size()];
        this.clock = clock;
        if (state == null) {
            Arrays.fill(this.slots, -1);
        }
        for (int i = 0; i < down.length; i++) {
            Backend b = backends.get(i);
            down[i] = b.down();
            maxFails[i] = b.maxFails();
            failTimeoutNanos[i] =
                    Math.min(b.failTimeoutSeconds(), Long.MAX_VALUE / NANOS_PER_SECOND) * NANOS_PER_SECOND;
            maxConns[i] = b.maxConns();
        }
    }

    /**
     * {@return the availability of {@code backends} without a state file: each one unless marked down}
     *
     * @param backends a ring file's backends, by index ({@link io.ringstore.RingStore#backends()})
     */
    public static Availability of(List<Backend> backends) {
        return new Availability(null, backends, null, System::nanoTime);
    }

    /**
     * {@return whether {@code backend} may take the request about to be sent to it} Takes the host's one
     * probe of a failed backend whose {@code fail_timeout} has passed.
     *
     * @param backend a backend index of the ring file
     */
    @Override
    public boolean test(int backend) {
        return !down[backend]
                && (slots[backend] < 0
                        || belowMaxConns(backend)
                                && state.available(
                                        slots[backend],
                                        clock.getAsLong(),
                                        maxFails[backend],
                                        failTimeoutNanos[backend]));
    }

    /**
     * {@return whether {@code backend} may take a request, looked at only: the probe is not taken, and nothing is written}
     *
     * @param backend a backend index of the ring file
     */
    public boolean peek(int backend) {
        return !down[backend] && (slots[backend] < 0 || sharedPeek(backend, clock.getAsLong()));
    }

    /** {@link #peek(int)} at {@code now}, for a count over many backends. */
    boolean peek(int backend, long now) {
        return !down[backend] && (slots[backend] < 0 || sharedPeek(backend, now));
    }

    /** What the state file says of a backend with a slot, looked at only. */
    private boolean sharedPeek(int backend, long now) {
        return belowMaxConns(backend)
                && state.peekAvailable(slots[backend], now, maxFails[backend], failTimeoutNanos[backend]);
    }

    /** {@return {@link #peek(int)} as a predicate: for a lookup that routes no request} */
    public IntPredicate peeking() {
        return this::peek;
    }

    /** Below its max_conns host-wide, or without one (the default: nothing read). Checked before the probe, which it must not take. */
    private boolean belowMaxConns(int backend) {
        return maxConns[backend] == 0 || state.inFlight(slots[backend]) < maxConns[backend];
    }
}
