package io.ringstore.live;

import static io.ringstore.live.WatchedRingStore.Handle.CHOOSE;
import static io.ringstore.live.WatchedRingStore.Handle.CHOOSE_AND_ACQUIRE;
import static io.ringstore.live.WatchedRingStore.Handle.SELECT;

import io.ringstore.Backend;
import io.ringstore.Ring;
import io.ringstore.RingFileException;
import io.ringstore.RingStore;
import io.ringstore.family.RingVersion;
import io.ringstore.internal.KeyCrcs;
import io.ringstore.migration.RolloutPolicy;
import io.ringstore.state.SharedLoad;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Predicate;
import javax.management.ObjectName;

/**
 * The one serving handle: it follows a published ring file (verify before switching, refuse bad
 * files, old generations unmapped a grace period after a switch) and routes each key to the old or
 * the new version of the current generation by a {@link RolloutPolicy} that can change at any time
 * ({@link #policy(RolloutPolicy)}, or a {@link PolicyFileWatcher}). Over a fixed, already-open
 * {@link RingStore} ({@link #builder(RingStore)}) it routes the same way and never switches.
 * ({@link RingStore} and {@link Ring} are the offline handle, for tools.)
 *
 * <pre>{@code
 * try (RingRouter router = RingRouter.builder(Path.of("/etc/ring/fleet.ring"))
 *         .versions(RingVersion.V1, RingVersion.v2(16))
 *         .policy(RolloutPolicy.everywhere(5))
 *         .open();
 *      PolicyFileWatcher pf = PolicyFileWatcher.watch(Path.of("/etc/ring/rollout.policy"), router::policy, router::policy, "ams", 1000)) {
 *     RingRouter.Route eu = router.route(Set.of("eu"));   // once per feature set
 *     Backend b = eu.backend(key);                        // per request; null: no backend
 * }
 * }</pre>
 *
 * <p><b>Answers are {@link Backend}s.</b> A backend index belongs to one generation; a {@code Backend}
 * is a heap object of its generation's table that stays valid after that generation is unmapped,
 * so the answer of a lookup made just before a switch still names the server it named (its address,
 * weight and features), and two answers can be compared by {@link Backend#address()}.
 *
 * <p><b>What is in use holds back new files.</b> From {@link #route(Set)} on, a new generation that
 * lacks the route's features, or either of the router's versions (checked from the start), is
 * refused, and the generation serving keeps serving; close the route to release that hold.
 *
 * <p><b>Observable with the JDK alone.</b> Switches, refusals and policy changes are logged
 * ({@link System.Logger}), emitted as JFR events ({@code io.ringstore.Switch}, {@code
 * io.ringstore.Refusal}, {@code io.ringstore.PolicyChange}), and told to a {@link RingListener};
 * while open, the router is an MBean ({@link RingRouterMXBean}) named
 * {@code io.ringstore:type=RingRouter,name="<path>"} (with {@code ,instance=N} when that name is taken).
 *
 * <p>Thread-safe; lookups allocate nothing. Counters per version use {@link LongAdder}.
 */
public final class RingRouter implements AutoCloseable {
    private final WatchedRingStore watched;
    private final RingVersion oldVersion;
    private final RingVersion newVersion;
    private final Rollout rollout;
    /** A route of all backends, held open so that every new file has the router's versions, whatever the routes. */
    private final Route pin;

    private final ObjectName mbeanName;

    private RingRouter(Builder b, WatchedRingStore watched) {
        this.watched = watched;
        RingVersion first = watched.current().versions().getFirst();
        this.oldVersion = b.oldVersion != null ? b.oldVersion : first;
        this.newVersion = b.newVersion != null ? b.newVersion : oldVersion;
        this.rollout = new Rollout(b.policy, oldVersion, newVersion, watched);
        this.pin = route(Set.of());
        this.mbeanName = b.jmx ? RouterBean.register(this, watched.path()) : null;
    }

    /**
     * Starts a router over {@code store}, open already and left open: the router never switches
     * (no path is watched), closing it leaves the store to its owner, and it registers no MBean unless
     * told to. What a migration over one file uses: the rollout counting and lookups are the router's.
     *
     * @param store the open store
     * @return this builder
     */
    public static Builder builder(RingStore store) {
        return new Builder(Objects.requireNonNull(store, "store").path(), store);
    }

    /**
     * Starts a router on the ring file at {@code path}.
     *
     * @param path the ring file's path
     * @return this builder
     */
    public static Builder builder(Path path) {
        return new Builder(Objects.requireNonNull(path, "path"), null);
    }

    /** How a router is made; every setting has a default. */
    public static final class Builder {
        private RingVersion oldVersion;
        private RingVersion newVersion;
        private RolloutPolicy policy = RolloutPolicy.NONE;
        private boolean jmx;
        // The engine's settings, which it reads from here (WatchedRingStore.open).
        final Path path;
        /** A fixed store to route over, or null to follow {@link #path}. */
        final RingStore store;

        long pollMillis = WatchedRingStore.DEFAULT_POLL_MILLIS;
        long graceMillis = WatchedRingStore.DEFAULT_GRACE_MILLIS;
        boolean allowOlderGeneration;
        RingListener listener = new RingListener() {};

        /** {@code store} null: a router following {@code path}, with an MBean by default. */
        private Builder(Path path, RingStore store) {
            this.path = path;
            this.store = store;
            this.jmx = store == null;
        }

        /**
         * The two versions the rollout moves between; by default the file's default version for both (no rollout).
         *
         * @param oldVersion the version keys leave
         * @param newVersion the version keys move to
         * @return this builder
         */
        public Builder versions(RingVersion oldVersion, RingVersion newVersion) {
            this.oldVersion = Objects.requireNonNull(oldVersion, "oldVersion");
            this.newVersion = Objects.requireNonNull(newVersion, "newVersion");
            return this;
        }

        /**
         * The policy at start; by default {@link RolloutPolicy#NONE} (everything on the old version).
         *
         * @param policy the rollout policy at start
         * @return this builder
         */
        public Builder policy(RolloutPolicy policy) {
            this.policy = Objects.requireNonNull(policy, "policy");
            return this;
        }

        /**
         * How often the path is checked (200 ms by default); 0: only on {@link RingRouter#checkNow()}.
         *
         * @param pollMillis how often to look at the file, in milliseconds (0: only on {@code checkNow()})
         * @return this builder
         */
        public Builder pollMillis(long pollMillis) {
            this.pollMillis = pollMillis;
            return this;
        }

        /**
         * How long a replaced generation stays mapped (500 ms by default). 0 unmaps it at the switch:
         * lookups racing the switch are then looked up again on the new generation, which is correct but
         * costs them a second lookup.
         *
         * @param graceMillis the grace period, in milliseconds
         * @return this builder
         */
        public Builder graceMillis(long graceMillis) {
            this.graceMillis = graceMillis;
            return this;
        }

        /**
         * Whether a file with a lower generation than the one serving is switched to (false by
         * default: it is refused, most likely an old file copied into place). Allow it to roll back
         * by republishing an old file unchanged.
         *
         * @param allow true to switch to an older generation too
         * @return this builder
         */
        public Builder allowOlderGeneration(boolean allow) {
            this.allowOlderGeneration = allow;
            return this;
        }

        /**
         * Told of each switch, refusal and policy change; none by default.
         *
         * @param listener the listener
         * @return this builder
         */
        public Builder listener(RingListener listener) {
            this.listener = Objects.requireNonNull(listener, "listener");
            return this;
        }

        /**
         * Whether the router registers its MBean (true by default for a path, false over a fixed store).
         *
         * @param jmx false for no MBean
         * @return this builder
         */
        public Builder jmx(boolean jmx) {
            this.jmx = jmx;
            return this;
        }

        /**
         * Opens and verifies the file and starts watching it; over a fixed store, only checks that the
         * store has the versions (the store is not verified again).
         *
         * @return the router, serving the file's current generation
         * @throws RingFileException        when the file there now cannot be opened or fails verification
         * @throws IllegalArgumentException when the file lacks either version
         */
        public RingRouter open() throws RingFileException {
            WatchedRingStore w = WatchedRingStore.open(this);
            try {
                return new RingRouter(this, w);
            } catch (RuntimeException e) {
                w.close();
                throw e;
            }
        }
    }

    /**
     * {@return the live route for keys that need backends with every feature in {@code features} (the empty
     * set: all backends): both versions' rings of that feature set in whichever generation serves}
     *
     * @param features the features every backend of the ring must have (the empty set: all backends)
     * @throws IllegalArgumentException when the generation serving lacks a feature
     */
    public Route route(Set<String> features) {
        WatchedRingStore.Handle oldRing = watched.ring(features, oldVersion);
        try {
            return new Route(oldRing, oldVersion.equals(newVersion) ? oldRing : watched.ring(features, newVersion));
        } catch (RuntimeException e) {
            oldRing.close();
            throw e;
        }
    }

    /**
     * One feature set's route: lookups pick the version by the router's policy (counting each in
     * {@link #oldLookups()} or {@link #newLookups()}), then answer from that version's ring of the
     * generation serving. A lookup never fails because of a switch or an unmapped generation.
     *
     * <p>Keys come in four shapes, the same for every operation: {@code byte[]}, a range of a
     * {@code byte[]}, a {@link ByteBuffer}'s bytes from its position to its limit (heap or direct; the
     * buffer is not moved) and a {@link MemorySegment}'s bytes (heap or native); every shape gets the
     * version, answer and counts an array of the same bytes gets. Each shape's method picks the version
     * and hashes the key once, then calls the one implementation of the operation. Allocation-free, but
     * for the failover of a family that rehashes the key (spymemcached, xmemcached: in {@code select},
     * and in {@code choose} and {@code chooseAndAcquire} without a bound), which copies a buffer's or
     * segment's key.
     */
    public final class Route implements AutoCloseable {
        private final WatchedRingStore.Handle oldRing;
        private final WatchedRingStore.Handle newRing;
        /** The router's, in a field of the route's own: a lookup reaches the threshold and counters in one load. */
        private final Rollout rollout = RingRouter.this.rollout;

        private Route(WatchedRingStore.Handle oldRing, WatchedRingStore.Handle newRing) {
            this.oldRing = oldRing;
            this.newRing = newRing;
        }

        /**
         * {@return the backend for {@code key}, or null when the ring has none}
         *
         * @param key the key
         */
        public Backend backend(byte[] key) {
            return backend(key, 0, key.length);
        }

        /**
         * The backend for the key in {@code key[offset, offset+length)}, or null when the ring has none.
         *
         * @param key    the key's array
         * @param offset where the key starts
         * @param length the key's length in bytes
         * @return the backend, or null
         */
        public Backend backend(byte[] key, int offset, int length) {
            WatchedRingStore.Handle h = ring(rollout.migrates(key, offset, length));
            return h.lookup(h.keyHash.hash64(key, offset, length));
        }

        /**
         * {@return the backend for the key's bytes from the buffer's position to its limit, heap or direct (the buffer is not moved), or null}
         *
         * @param key the key
         */
        public Backend backend(ByteBuffer key) {
            Rollout r = rollout; // one load for the threshold and the one-pass test
            int t = r.threshold;
            if (!key.hasArray() && r.onePass(t)) {
                return lookupRollingOut(KeyCrcs.of(key), t);
            }
            WatchedRingStore.Handle h = ring(rollout.migrates(key));
            return h.lookup(h.keyHash.hash64(key));
        }

        /**
         * {@return the backend for the segment's bytes as the key, heap or native, or null}
         *
         * @param key the key
         */
        public Backend backend(MemorySegment key) {
            Rollout r = rollout; // one load for the threshold and the one-pass test
            int t = r.threshold;
            if (key.isNative() && r.onePass(t)) { // a heap array goes to the JDK's intrinsics
                return lookupRollingOut(KeyCrcs.of(key), t);
            }
            WatchedRingStore.Handle h = ring(rollout.migrates(key));
            return h.lookup(h.keyHash.hash64(key));
        }

        /**
         * {@return failover ({@link Ring#select}) on the version the policy chooses for {@code key}: the
         * backend of the first of at most {@code maxPoints} points from the key's that {@code accept}
         * approves, or null when none was approved (nginx then falls back to round robin) or the ring
         * has no backend} With {@link Ring#NGINX_MAX_POINTS} it answers as nginx's {@code hash ...
         * consistent} does; a family that fails over by rehashing the key (spymemcached, xmemcached) runs
         * its rehash sequence instead ({@link Ring#select(byte[], int, int, int, java.util.function.IntPredicate)}).
         * {@code accept} is given {@link Backend}s, which mean the same server in every generation; when
         * the generation is unmapped during the walk the walk starts again on the current one, so
         * {@code accept} may see a backend twice.
         *
         * @param key the key
         * @param maxPoints the most points to walk ({@link io.ringstore.Ring#NGINX_MAX_POINTS} as nginx)
         * @param accept whether a backend may be chosen; asked once per point walked
         */
        public Backend select(byte[] key, int maxPoints, Predicate<Backend> accept) {
            return select(key, 0, key.length, maxPoints, accept);
        }

        /**
         * {@link #select(byte[], int, Predicate)} for the key in {@code key[offset, offset+length)}.
         *
         * @param key       the key's array
         * @param offset    where the key starts
         * @param length    the key's length in bytes
         * @param maxPoints the most points to walk
         * @param accept    whether a backend may be chosen
         * @return the accepted backend, or null
         */
        public Backend select(byte[] key, int offset, int length, int maxPoints, Predicate<Backend> accept) {
            return ring(rollout.migrates(key, offset, length))
                    .answer(SELECT, key, offset, length, maxPoints, accept, null);
        }

        /**
         * {@link #select(byte[], int, Predicate)} for the key's bytes from the buffer's position to its limit.
         *
         * @param key       the key
         * @param maxPoints the most points to walk
         * @param accept    whether a backend may be chosen
         * @return the accepted backend, or null
         */
        public Backend select(ByteBuffer key, int maxPoints, Predicate<Backend> accept) {
            return ring(rollout.migrates(key)).answer(SELECT, key, maxPoints, accept, null);
        }

        /**
         * {@link #select(byte[], int, Predicate)} for the segment's bytes as the key.
         *
         * @param key       the key
         * @param maxPoints the most points to walk
         * @param accept    whether a backend may be chosen
         * @return the accepted backend, or null
         */
        public Backend select(MemorySegment key, int maxPoints, Predicate<Backend> accept) {
            return ring(rollout.migrates(key)).answer(SELECT, key, maxPoints, accept, null);
        }

        /**
         * {@return the key's backend under the host's shared state ({@link SharedLoad#choose}): the ring's answer
         * on the version the policy chooses, unless that backend is down, drained, failed host-wide or
         * (with a load bound) over c × the mean in flight; then the bounded-load candidate, or without a
         * bound the family's failover ({@link #select}'s: for spymemcached and xmemcached the rehash
         * sequence)} Null when no backend is available. Like {@link #backend(byte[])}, it never fails
         * because of a switch (a lookup meeting an unmapped generation is done again on the current one).
         *
         * @param key the key
         * @param load the host's load and availability
         */
        public Backend choose(byte[] key, SharedLoad load) {
            return choose(key, 0, key.length, load);
        }

        /**
         * {@link #choose(byte[], SharedLoad)} for the key in {@code key[offset, offset+length)}.
         *
         * @param key    the key's array
         * @param offset where the key starts
         * @param length the key's length in bytes
         * @param load   the host's shared state
         * @return the chosen backend, or null
         */
        public Backend choose(byte[] key, int offset, int length, SharedLoad load) {
            return ring(rollout.migrates(key, offset, length)).answer(CHOOSE, key, offset, length, 0, null, load);
        }

        /**
         * {@link #choose(byte[], SharedLoad)} for the key's bytes from the buffer's position to its limit.
         *
         * @param key  the key
         * @param load the host's shared state
         * @return the chosen backend, or null
         */
        public Backend choose(ByteBuffer key, SharedLoad load) {
            return ring(rollout.migrates(key)).answer(CHOOSE, key, 0, null, load);
        }

        /**
         * {@link #choose(byte[], SharedLoad)} for the segment's bytes as the key.
         *
         * @param key  the key
         * @param load the host's shared state
         * @return the chosen backend, or null
         */
        public Backend choose(MemorySegment key, SharedLoad load) {
            return ring(rollout.migrates(key)).answer(CHOOSE, key, 0, null, load);
        }

        /**
         * {@return {@link #choose(byte[], SharedLoad)}'s backend, already counted in flight host-wide
         * ({@link SharedLoad#chooseAndAcquire}: with a bound, reserved then checked, so that racing requests
         * never take a backend above it)} Release with {@code load.release(load.token(b))}; null: none
         * available, nothing counted.
         *
         * @param key  the key
         * @param load the host's shared state
         */
        public Backend chooseAndAcquire(byte[] key, SharedLoad load) {
            return chooseAndAcquire(key, 0, key.length, load);
        }

        /**
         * {@link #chooseAndAcquire(byte[], SharedLoad)} for the key in {@code key[offset, offset+length)}.
         *
         * @param key    the key's array
         * @param offset where the key starts
         * @param length the key's length in bytes
         * @param load   the host's shared state
         * @return the chosen backend, counted in flight, or null
         */
        public Backend chooseAndAcquire(byte[] key, int offset, int length, SharedLoad load) {
            return ring(rollout.migrates(key, offset, length))
                    .answer(CHOOSE_AND_ACQUIRE, key, offset, length, 0, null, load);
        }

        /**
         * {@link #chooseAndAcquire(byte[], SharedLoad)} for the key's bytes from the buffer's position to its limit.
         *
         * @param key  the key
         * @param load the host's shared state
         * @return the chosen backend, counted in flight, or null
         */
        public Backend chooseAndAcquire(ByteBuffer key, SharedLoad load) {
            return ring(rollout.migrates(key)).answer(CHOOSE_AND_ACQUIRE, key, 0, null, load);
        }

        /**
         * {@link #chooseAndAcquire(byte[], SharedLoad)} for the segment's bytes as the key.
         *
         * @param key  the key
         * @param load the host's shared state
         * @return the chosen backend, counted in flight, or null
         */
        public Backend chooseAndAcquire(MemorySegment key, SharedLoad load) {
            return ring(rollout.migrates(key)).answer(CHOOSE_AND_ACQUIRE, key, 0, null, load);
        }

        /**
         * A lookup rolling out between two CRC-32 versions, from one pass over the key for the ring's CRC-32
         * and the bucket's CRC-32C ({@link KeyCrcs#of}).
         */
        private Backend lookupRollingOut(long both, int threshold) {
            return ring(KeyCrcs.bucket(KeyCrcs.crc32c(both)) < threshold).lookup(KeyCrcs.crc32(both));
        }

        /** The handle of the version chosen, counted. */
        private WatchedRingStore.Handle ring(boolean migrates) {
            if (migrates) {
                rollout.newLookups.increment();
                return newRing;
            }
            rollout.oldLookups.increment();
            return oldRing;
        }

        /**
         * {@return the old version's ring of this feature set in the generation serving now} For tools
         * and tests; it is unmapped a grace period after its generation is replaced.
         */
        public Ring oldRing() {
            return oldRing.ring();
        }

        /** {@return the new version's ring of this feature set in the generation serving now (the old one's when the router has one version)} */
        public Ring newRing() {
            return newRing.ring();
        }

        /** Stops holding new files to this route's features. */
        @Override
        public void close() {
            oldRing.close();
            newRing.close();
        }
    }

    /** {@return the rollout policy in force} */
    public RolloutPolicy policy() {
        return rollout.policy();
    }

    /**
     * Replaces the policy; the next lookup on any thread uses it. Logged, and told as a policy change.
     *
     * @param next the new policy
     */
    public void policy(RolloutPolicy next) {
        rollout.replace(Objects.requireNonNull(next, "policy"));
    }

    /** {@return the version keys leave} */
    public RingVersion oldVersion() {
        return oldVersion;
    }

    /** {@return the version keys move to (the old one when the router has one version)} */
    public RingVersion newVersion() {
        return newVersion;
    }

    /** {@return lookups answered by the old version since the router opened (or its counters were reset)} */
    public long oldLookups() {
        return rollout.oldLookups.sum();
    }

    /** {@return lookups answered by the new version since the router opened (or its counters were reset)} */
    public long newLookups() {
        return rollout.newLookups.sum();
    }

    /** Sets the old and new lookup counts to zero. */
    public void resetCounters() {
        rollout.oldLookups.reset();
        rollout.newLookups.reset();
    }

    /**
     * {@return the generation serving now} It stays mapped until the grace period after it is replaced has
     * passed; a caller that keeps it longer gets {@link IllegalStateException} from its lookups. What
     * {@link SharedLoad} follows ({@code router::current}).
     */
    public RingStore current() {
        return watched.current();
    }

    /** {@return the ring file's path (over a fixed store, the path it was opened from)} */
    public Path path() {
        return watched.path();
    }

    /** {@return the generation serving now, unsigned} */
    public long generation() {
        return watched.generation();
    }

    /** {@return when the current generation started serving (for the first, when the router opened)} */
    public Instant lastSwitch() {
        return watched.file().lastSwitch();
    }

    /** {@return number of switches to a new generation so far} */
    public long switches() {
        return watched.file().switches();
    }

    /** {@return why the last file seen at the path was refused, or null if the newest file is serving} */
    public String lastError() {
        return watched.file().lastError();
    }

    /** {@return replaced generations still mapped (in their grace period)} */
    public int retiredGenerations() {
        return watched.file().retiredCount();
    }

    /** {@return lookups that met a generation unmapped under them and were answered by the current one instead} */
    public long lookupRetries() {
        return watched.lookupRetries();
    }

    /**
     * Looks at the path now: if a different file is there, opens and verifies it and switches to it
     * (over a fixed store: nothing, false).
     *
     * @return true when it switched to a new file
     */
    public boolean checkNow() {
        return watched.checkNow();
    }

    /** The engine, for tests in this package (its hooks). */
    WatchedRingStore engine() {
        return watched;
    }

    /** {@return the MBean's name, or null when the router was built without JMX} */
    public ObjectName mbeanName() {
        return mbeanName;
    }

    /**
     * Stops watching, unregisters the MBean and unmaps every generation (over a fixed store: leaves the
     * store open, to its owner): lookups through its routes afterwards throw {@link IllegalStateException}.
     */
    @Override
    public void close() {
        if (mbeanName != null) {
            RouterBean.unregister(mbeanName);
        }
        pin.close();
        watched.close();
    }
}
