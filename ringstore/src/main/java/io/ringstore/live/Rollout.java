package io.ringstore.live;

import io.ringstore.family.KeyHash;
import io.ringstore.family.RingVersion;
import io.ringstore.migration.RolloutPolicy;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.LongAdder;

/**
 * A router's rollout bookkeeping: the policy in force and its changes (logged, a JFR event, told to
 * the listener), what lookups read of it, and the lookups counted per version. A
 * {@link RingRouter.Route} holds it in a final field, so a lookup reads the threshold through one
 * load and one volatile read, as it did from the router itself.
 */
final class Rollout {
    /** The router's logger: a policy change is the router's event. */
    private static final System.Logger LOG = System.getLogger(RingRouter.class.getName());

    private final WatchedRingStore watched;
    private volatile RolloutPolicy policy;
    /**
     * What a lookup reads of the policy: the basis points below which a key's bucket goes to the new
     * version, 0 out of scope ({@link #threshold(RolloutPolicy)}). Written with {@link #policy}, so a
     * lookup reads one int instead of the policy's scope set.
     */
    volatile int threshold;
    /**
     * Whether both versions hash keys by CRC-32 (v1, v2): then a lookup of a direct buffer or a native
     * segment rolling out computes the ring's CRC-32 and the bucket's CRC-32C in one pass over the key
     * ({@code internal.KeyCrcs}), the same answers as hashing twice.
     */
    private final boolean bothCrc32;

    final LongAdder oldLookups = new LongAdder();
    final LongAdder newLookups = new LongAdder();

    Rollout(RolloutPolicy policy, RingVersion oldVersion, RingVersion newVersion, WatchedRingStore watched) {
        this.watched = watched;
        this.bothCrc32 = oldVersion.keyHash() == KeyHash.CRC32 && newVersion.keyHash() == KeyHash.CRC32;
        this.policy = policy;
        this.threshold = threshold(policy);
    }

    /** {@return the basis points below which a key's bucket migrates under {@code p}: 0 when it is out of scope here} */
    private static int threshold(RolloutPolicy p) {
        return p.inScope() ? p.basisPoints() : 0;
    }

    RolloutPolicy policy() {
        return policy;
    }

    /** Puts {@code next} in force for the next lookup on any thread; a change is logged and told. */
    void replace(RolloutPolicy next) {
        RolloutPolicy before;
        synchronized (this) {
            before = policy;
            threshold = threshold(next);
            policy = next;
        }
        if (before.equals(next)) {
            return;
        }
        LOG.log(System.Logger.Level.INFO, "{0}: rollout policy {1} (was {2})", watched.path(), next, before);
        RingEvents.PolicyChange event = new RingEvents.PolicyChange();
        if (event.shouldCommit()) {
            event.path = watched.path().toString();
            event.before = before.toString();
            event.after = next.toString();
            event.basisPoints = next.basisPoints();
            event.commit();
        }
        watched.tell(l -> l.policyChanged(watched.path(), before, next));
    }

    /** Whether a lookup of a key read through tables hashes it once for the bucket and the ring at threshold {@code t}: both versions CRC-32, rolling out. */
    boolean onePass(int t) {
        return bothCrc32 && t != 0 && t != RolloutPolicy.FULL;
    }

    // Whether the new version answers the key: RolloutPolicy.migrates on the threshold, so the same
    // answer (out of scope, at 0 % and at 100 % the bucket is not computed).

    boolean migrates(byte[] key, int offset, int length) {
        int t = threshold;
        return t != 0 && (t == RolloutPolicy.FULL || RolloutPolicy.bucket(key, offset, length) < t);
    }

    boolean migrates(ByteBuffer key) {
        int t = threshold;
        return t != 0 && (t == RolloutPolicy.FULL || RolloutPolicy.bucket(key) < t);
    }

    boolean migrates(MemorySegment key) {
        int t = threshold;
        return t != 0 && (t == RolloutPolicy.FULL || RolloutPolicy.bucket(key) < t);
    }
}
