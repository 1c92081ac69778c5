package io.ringstore.state;

import static io.ringstore.state.StateFileLayout.*;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.time.Duration;

/**
 * Whether a backend may be chosen, by the hot line of its record: the operator's drain flag and
 * nginx's passive health ({@code fails}, {@code checked}, {@code accessed}), counted for the whole
 * host. Plain loads and stores of the mapped memory, allocation-free, and no read-modify-write (a
 * compare-and-set or add on a page of a truncated file is not guarded in interpreted code: it kills the
 * JVM): a failure is counted by a load and a store (two processes counting one at the same instant may
 * count it once), the probe after {@code fail_timeout} is taken under a record lock on the record's
 * {@code checked} word, and a drain under the directory lock. {@link HostState} documents the rules.
 */
final class BackendHealth {
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();

    private final StateMapping file;
    private final MemorySegment s;

    BackendHealth(StateMapping file) {
        this.file = file;
        this.s = file.segment;
    }

    /** {@link HostState#available(int, long, int, long)}, taking the probe when {@code probe}, else {@link HostState#peekAvailable}. */
    boolean available(int slot, long nowNanos, int maxFails, long failTimeoutNanos, boolean probe) {
        long r = file.record(slot);
        if (s.get(ValueLayout.JAVA_LONG, r + DRAINED_OFFSET) != 0) {
            return false;
        }
        if (maxFails == 0 || (long) LONG.getOpaque(s, r + FAILS_OFFSET) < maxFails) {
            return true;
        }
        long checked = (long) LONG.getAcquire(s, r + CHECKED_OFFSET);
        long age = nowNanos - checked;
        if (age >= 0 && age <= failTimeoutNanos) { // a time in the future (a clock of an earlier boot, forged) is stale
            return false;
        }
        return !probe || takeProbe(slot, r, checked, nowNanos);
    }

    /**
     * {@return whether this caller takes the probe of {@code slot}, seen with {@code checked}: moves it to
     * now} Under the POSIX record lock of the record's {@code checked} word, tried once and not waited
     * for: held by another process or thread, it is that one's probe. A file system without record
     * locks gets the store alone (two processes may then probe at once).
     */
    private boolean takeProbe(int slot, long r, long checked, long nowNanos) {
        FileLock lock;
        try {
            lock = file.tryLockRecord(slot);
        } catch (OverlappingFileLockException e) {
            return false; // another thread of this process is taking it
        } catch (IOException e) {
            if ((long) LONG.getAcquire(s, r + CHECKED_OFFSET) != checked) {
                return false;
            }
            LONG.setRelease(s, r + CHECKED_OFFSET, nowNanos);
            return true;
        }
        if (lock == null) {
            return false; // another process is taking it
        }
        try {
            if ((long) LONG.getAcquire(s, r + CHECKED_OFFSET) != checked) {
                return false; // taken meanwhile, or a failure reported since
            }
            LONG.setRelease(s, r + CHECKED_OFFSET, nowNanos);
            return true;
        } finally {
            StateMapping.release(lock);
        }
    }

    /** nginx: {@code fails++}, {@code accessed = checked = now}; by a load and a store (see the class). */
    void reportFailure(int slot, long nowNanos) {
        long r = file.record(slot);
        LONG.setVolatile(s, r + FAILS_OFFSET, (long) LONG.getVolatile(s, r + FAILS_OFFSET) + 1);
        LONG.setRelease(s, r + ACCESSED_OFFSET, nowNanos);
        LONG.setRelease(s, r + CHECKED_OFFSET, nowNanos);
    }

    /** nginx: {@code if (accessed < checked) fails = 0}. */
    void reportSuccess(int slot) {
        long r = file.record(slot);
        if ((long) LONG.getOpaque(s, r + FAILS_OFFSET) == 0) {
            return; // the common case writes nothing, so a healthy backend's line stays shared
        }
        if ((long) LONG.getAcquire(s, r + CHECKED_OFFSET) - (long) LONG.getAcquire(s, r + ACCESSED_OFFSET) > 0) {
            LONG.setRelease(s, r + FAILS_OFFSET, 0L);
        }
    }

    /** Sets or clears the drain flag of {@code slot}, under the directory lock; {@return whether it was set before} */
    boolean drain(int slot, boolean drained) {
        long offset = file.record(slot) + DRAINED_OFFSET;
        FileLock lock = file.lockDirectory();
        try {
            boolean before = (long) LONG.getVolatile(s, offset) != 0;
            LONG.setVolatile(s, offset, drained ? 1L : 0L);
            return before;
        } finally {
            file.unlockDirectory(lock);
        }
    }

    /** {@return whether {@code slot} is drained} */
    boolean drained(int slot) {
        return (long) LONG.getOpaque(s, file.record(slot) + DRAINED_OFFSET) != 0;
    }

    /**
     * {@return the health of {@code slot} as operators see it, {@code inFlight} and {@code endpoint} given}
     *
     * @param maxFails         the health rule's {@code max_fails}: 0 never fails
     * @param failTimeoutNanos the health rule's {@code fail_timeout}
     */
    HostState.BackendState state(
            int slot, String endpoint, long now, int maxFails, long failTimeoutNanos, long inFlight) {
        long r = file.record(slot);
        long fails = (long) LONG.getOpaque(s, r + FAILS_OFFSET);
        long accessed = (long) LONG.getOpaque(s, r + ACCESSED_OFFSET);
        long checkedAge = now - (long) LONG.getOpaque(s, r + CHECKED_OFFSET);
        boolean failed = maxFails > 0 && fails >= maxFails && checkedAge >= 0 && checkedAge <= failTimeoutNanos;
        // A time in the future is from another boot's clock (or forged): no time since, rather than a negative one.
        return new HostState.BackendState(
                slot,
                endpoint,
                drained(slot),
                fails,
                failed,
                accessed == 0 || now - accessed < 0 ? null : Duration.ofNanos(now - accessed),
                inFlight);
    }
}
