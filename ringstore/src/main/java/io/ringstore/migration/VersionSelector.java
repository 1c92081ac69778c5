package io.ringstore.migration;

import io.ringstore.Ring;
import io.ringstore.RingStore;
import io.ringstore.RingVersion;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.LongAdder;

/**
 * Routes each request to the old or the new version of a ring of one fixed {@link RingStore} during a
 * migration (a router that follows a published file uses {@link io.ringstore.RingRouter}), by a
 * {@link RolloutPolicy} that can change at any time: a new policy takes effect on the next lookup,
 * without reopening anything, and a policy of 0 % is the rollback.
 *
 * <pre>{@code
 * VersionSelector sel = new VersionSelector(store, RingVersion.V1, RingVersion.v2(16), RolloutPolicy.everywhere(1));
 * VersionSelector.Pair eu = sel.rings(Set.of("eu"));
 * int backend = eu.lookup(key);            // per request
 * sel.policy(sel.policy().withPercent(10)); // roll out further; withPercent(0) rolls back
 * }</pre>
 * Thread-safe; lookups allocate nothing. Counters ({@link #oldLookups()}, {@link #newLookups()}) use
 * {@link LongAdder}, cheap under contention.
 */
public final class VersionSelector {
    private final RingStore store;
    private final RingVersion oldVersion;
    private final RingVersion newVersion;
    private volatile RolloutPolicy policy;
    private final LongAdder oldLookups = new LongAdder();
    private final LongAdder newLookups = new LongAdder();

    /**
     * A selector between two versions of {@code store}, starting with {@code policy}.
     *
     * @param store      the open ring file holding both versions
     * @param oldVersion the version keys leave
     * @param newVersion the version keys move to
     * @param policy     the rollout policy at start
     * @throws IllegalArgumentException when {@code store} lacks either version
     */
    public VersionSelector(RingStore store, RingVersion oldVersion, RingVersion newVersion, RolloutPolicy policy) {
        this.store = Objects.requireNonNull(store, "store");
        for (RingVersion v : new RingVersion[] {oldVersion, newVersion}) {
            if (!store.versions().contains(v)) {
                throw new IllegalArgumentException("version " + v + " is not in " + store.path() + " (it has " + store.versions() + ")");
            }
        }
        this.oldVersion = oldVersion;
        this.newVersion = newVersion;
        this.policy = Objects.requireNonNull(policy, "policy");
    }

    /** {@return the rollout policy in force} */
    public RolloutPolicy policy() {
        return policy;
    }

    /**
     * Replaces the policy; the next lookup on any thread uses it.
     *
     * @param policy the rollout policy
     */
    public void policy(RolloutPolicy policy) {
        this.policy = Objects.requireNonNull(policy, "policy");
    }

    /** {@return the version keys leave} */
    public RingVersion oldVersion() {
        return oldVersion;
    }

    /** {@return the version keys move to} */
    public RingVersion newVersion() {
        return newVersion;
    }

    /** {@return lookups answered by the old version since creation (or {@link #resetCounters()})} */
    public long oldLookups() {
        return oldLookups.sum();
    }

    /** {@return lookups answered by the new version since creation (or {@link #resetCounters()})} */
    public long newLookups() {
        return newLookups.sum();
    }

    /** Sets the old and new lookup counts to zero. */
    public void resetCounters() {
        oldLookups.reset();
        newLookups.reset();
    }

    /**
     * {@return the old and new ring of a feature set, looked up through this selector's current policy}
     *
     * @param features the features every backend of the ring must have (the empty set: all backends)
     */
    public Pair rings(Set<String> features) {
        return new Pair(store.ring(features, oldVersion), store.ring(features, newVersion));
    }

    /**
     * {@return whether the new version answers {@code key} under the current policy}
     *
     * @param key the key
     * @param offset where the key starts in {@code key}
     * @param length the key's length in bytes
     */
    public boolean usesNew(byte[] key, int offset, int length) {
        return policy.migrates(key, offset, length);
    }

    /** One feature set's two rings. */
    public final class Pair {
        private final Ring oldRing;
        private final Ring newRing;

        private Pair(Ring oldRing, Ring newRing) {
            this.oldRing = oldRing;
            this.newRing = newRing;
        }

        /**
         * {@return the ring that answers {@code key} now}
         *
         * @param key the key
         */
        public Ring select(byte[] key) {
            return select(key, 0, key.length);
        }

        /**
         * {@link #select(byte[])} for the key in {@code key[offset, offset+length)}; counts the lookup.
         *
         * @param key    the key's array
         * @param offset where the key starts
         * @param length the key's length in bytes
         * @return the ring that answers the key now
         */
        public Ring select(byte[] key, int offset, int length) {
            if (usesNew(key, offset, length)) {
                newLookups.increment();
                return newRing;
            }
            oldLookups.increment();
            return oldRing;
        }

        /**
         * {@return the backend for {@code key} from the version the policy chooses, or -1}
         *
         * @param key the key
         */
        public int lookup(byte[] key) {
            return select(key, 0, key.length).lookup(key);
        }

        /**
         * {@link #lookup(byte[])} for the key in {@code key[offset, offset+length)}.
         *
         * @param key    the key's array
         * @param offset where the key starts
         * @param length the key's length in bytes
         * @return the backend index, or -1
         */
        public int lookup(byte[] key, int offset, int length) {
            return select(key, offset, length).lookup(key, offset, length);
        }

        /** {@return the old version's ring of this feature set} */
        public Ring oldRing() {
            return oldRing;
        }

        /** {@return the new version's ring of this feature set} */
        public Ring newRing() {
            return newRing;
        }
    }
}
