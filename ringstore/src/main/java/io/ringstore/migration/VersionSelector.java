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

    public RolloutPolicy policy() {
        return policy;
    }

    /** Replaces the policy; the next lookup on any thread uses it. */
    public void policy(RolloutPolicy policy) {
        this.policy = Objects.requireNonNull(policy, "policy");
    }

    public RingVersion oldVersion() {
        return oldVersion;
    }

    public RingVersion newVersion() {
        return newVersion;
    }

    /** Lookups answered by the old version since creation (or {@link #resetCounters()}). */
    public long oldLookups() {
        return oldLookups.sum();
    }

    /** Lookups answered by the new version since creation (or {@link #resetCounters()}). */
    public long newLookups() {
        return newLookups.sum();
    }

    public void resetCounters() {
        oldLookups.reset();
        newLookups.reset();
    }

    /** The old and new ring of a feature set, looked up through this selector's current policy. */
    public Pair rings(Set<String> features) {
        return new Pair(store.ring(features, oldVersion), store.ring(features, newVersion));
    }

    /** Whether the new version answers {@code key} under the current policy. */
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

        /** The ring that answers {@code key} now. */
        public Ring select(byte[] key) {
            return select(key, 0, key.length);
        }

        public Ring select(byte[] key, int offset, int length) {
            if (usesNew(key, offset, length)) {
                newLookups.increment();
                return newRing;
            }
            oldLookups.increment();
            return oldRing;
        }

        /** The backend for {@code key} from the version the policy chooses, or -1. */
        public int lookup(byte[] key) {
            return select(key, 0, key.length).lookup(key);
        }

        public int lookup(byte[] key, int offset, int length) {
            return select(key, offset, length).lookup(key, offset, length);
        }

        public Ring oldRing() {
            return oldRing;
        }

        public Ring newRing() {
            return newRing;
        }
    }
}
