package io.ringstore.state;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * This process's requests in flight, by the caller's slot, on the heap: what a {@link HostState}
 * counts, and what it stores into its lease's cells of whichever file it is on. Counting here and
 * storing there, rather than adding in the file, means no read-modify-write on the mapping (an
 * interpreted one on a truncated file kills the JVM), and counts that survive a file truncated under
 * the process: the file moved to gets them whole.
 *
 * <p>One lock for the instance ({@link #lock}): a count changes, and is stored into the file in use,
 * under it, and a move to another file stores every count there under it, after the move is published;
 * so a cell always ends equal to its count, by plain stores. The lock is held for a few stores, never
 * across a call that can block: a compare-and-set on the heap, spun for, then yielded for. Counting
 * and storing is one heap compare-and-set and a few stores, where adding in the file was two atomic
 * adds on the mapping per change.
 *
 * <p>Slots from 0 to {@value #LIMIT} − 1 are counted (a caller's slot is below the first file's slot
 * count, at most 65,536, or below the number of endpoints it has named); a block of {@value #BLOCK}
 * counts is made on its first request (1 KiB), allocation-free after.
 */
final class OwnCounts {
    private static final int BLOCK = 256;
    static final int LIMIT = 2 * StateFileLayout.MAX_SLOTS;
    private static final VarHandle LOCK;

    static {
        try {
            LOCK = MethodHandles.lookup().findVarHandle(OwnCounts.class, "locked", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Guarded by {@link #lock}. */
    private final int[][] blocks = new int[LIMIT / BLOCK][];
    /** Guarded by {@link #lock}. */
    private int total;

    @SuppressWarnings("unused") // through LOCK
    private volatile int locked;

    /** Takes the lock: spins, then yields, until it is free. */
    void lock() {
        if (LOCK.compareAndSet(this, 0, 1)) {
            return;
        }
        for (int spins = 0; !LOCK.compareAndSet(this, 0, 1); spins++) {
            if (spins < 64) {
                Thread.onSpinWait();
            } else {
                Thread.yield();
            }
        }
    }

    void unlock() {
        LOCK.setRelease(this, 0);
    }

    /**
     * Adds {@code delta} to the count of {@code slot} (and to the total) under the lock; a count never
     * goes below 0, and a slot out of range is not counted. {@return the slot's count after}
     */
    int add(int slot, int delta) {
        if (slot < 0 || slot >= LIMIT) {
            return 0;
        }
        int[] b = blocks[slot / BLOCK];
        if (b == null) {
            if (delta <= 0) {
                return 0;
            }
            b = blocks[slot / BLOCK] = new int[BLOCK];
        }
        int i = slot % BLOCK;
        int before = b[i];
        int after = Math.max(0, before + delta);
        b[i] = after;
        total += after - before;
        return after;
    }

    /** {@return the count of {@code slot}}, under the lock */
    int get(int slot) {
        if (slot < 0 || slot >= LIMIT) {
            return 0;
        }
        int[] b = blocks[slot / BLOCK];
        return b == null ? 0 : b[slot % BLOCK];
    }

    /** {@return the counts of every slot summed}, under the lock */
    int total() {
        return total;
    }
}
