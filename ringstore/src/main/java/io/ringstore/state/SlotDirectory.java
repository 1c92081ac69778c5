package io.ringstore.state;

import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntPredicate;

import static io.ringstore.state.StateFileLayout.*;

/**
 * Which endpoint owns which record of a state file: finding slots, giving free ones to new endpoints,
 * keeping the slots this instance tracks named, and freeing the ones no router named for a while.
 * Of a record it owns the state word, the named stamp and the endpoint line; giving a record zeroes
 * the rest. Every change of ownership is made under the directory lock (a CAS-held header word whose
 * dead holder is broken), off the lookup path.
 */
final class SlotDirectory {
    private static final System.Logger LOG = System.getLogger(HostState.class.getName());
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    /** Distinguishes the instances of one process in the directory lock word. */
    private static final AtomicInteger INSTANCES = new AtomicInteger();

    private final StateMapping file;
    private final MemorySegment s;
    private final long lockWord;
    private volatile int[] tracked = new int[0];

    SlotDirectory(StateMapping file) {
        this.file = file;
        this.s = file.segment;
        this.lockWord = (ProcessHandle.current().pid() << 32) | (INSTANCES.incrementAndGet() & 0x7FFF_FFFFL); // the counter starts at 1: never 0
    }

    /** The slots of {@code endpoints}, given where new; from now on the ones the heartbeat keeps named. */
    int[] track(List<String> endpoints) {
        int[] slots = slots(endpoints, true);
        tracked = Arrays.stream(slots).distinct().toArray();
        return slots;
    }

    /** {@return how many distinct slots the last {@link #track} named} */
    int trackedCount() {
        return tracked.length;
    }

    /** Marks the tracked slots named now (the heartbeat). */
    void nameTracked(long now) {
        for (int slot : tracked) {
            LONG.setOpaque(s, file.record(slot) + NAMED_OFFSET, now);
        }
    }

    /** {@return whether {@code slot} belongs to an endpoint} */
    boolean used(int slot) {
        return (long) LONG.getAcquire(s, file.record(slot) + STATE_OFFSET) == SLOT_USED;
    }

    /** {@return the endpoint of a used {@code slot}, or {@code null} if its length field is out of range (a corrupt record)} */
    String endpoint(int slot) {
        byte[] name = endpointBytes(file.record(slot));
        return name == null ? null : new String(name, StandardCharsets.UTF_8);
    }

    /**
     * The slots of {@code endpoints} (-1 for one that has none, unless {@code create}), marked named
     * now: one pass over the records under the directory lock, then a hash lookup per endpoint.
     */
    int[] slots(List<String> endpoints, boolean create) {
        byte[][] names = new byte[endpoints.size()][];
        for (int i = 0; i < names.length; i++) {
            names[i] = endpoints.get(i).getBytes(StandardCharsets.UTF_8);
            if (names[i].length == 0 || names[i].length > ENDPOINT_MAX_LENGTH) {
                throw new IllegalArgumentException("an endpoint is 1 to " + ENDPOINT_MAX_LENGTH + " bytes in UTF-8: " + endpoints.get(i));
            }
        }
        int[] slots = new int[names.length];
        long now = System.nanoTime();
        lock();
        try {
            Map<ByteBuffer, Integer> used = new HashMap<>();
            ArrayDeque<Integer> free = new ArrayDeque<>();
            for (int slot = 0; slot < file.slots; slot++) {
                long r = file.record(slot);
                if ((long) LONG.getAcquire(s, r + STATE_OFFSET) != SLOT_USED) {
                    free.add(slot);
                } else {
                    byte[] name = endpointBytes(r);
                    if (name != null) { // a corrupt record names nothing
                        used.putIfAbsent(ByteBuffer.wrap(name), slot);
                    }
                }
            }
            for (int i = 0; i < names.length; i++) {
                Integer slot = used.get(ByteBuffer.wrap(names[i]));
                if (slot == null && create) {
                    if (free.isEmpty()) {
                        throw new IllegalStateException(file.path + ": all " + file.slots + " backend slots are in use; "
                                + "recreate the state file with more (Options.slots) when no router runs");
                    }
                    slot = free.poll();
                    give(slot, names[i], now);
                    used.put(ByteBuffer.wrap(names[i]), slot);
                }
                if (slot != null && create) {
                    LONG.setOpaque(s, file.record(slot) + NAMED_OFFSET, now);
                }
                slots[i] = slot == null ? -1 : slot;
            }
        } finally {
            unlock();
        }
        return slots;
    }

    /** Gives the free record {@code slot} to the endpoint {@code name}: fields zeroed, endpoint written, then in use. */
    private void give(int slot, byte[] name, long now) {
        long r = file.record(slot);
        for (long o = DRAINED_OFFSET; o < file.recordLength - ENDPOINT_LINE_LENGTH; o += 8) {
            s.set(ValueLayout.JAVA_LONG, r + o, 0L);
        }
        LONG.setVolatile(s, r + NAMED_OFFSET, now);
        long e = r + file.recordLength - ENDPOINT_LINE_LENGTH;
        s.set(ValueLayout.JAVA_SHORT, e, (short) name.length);
        MemorySegment.copy(name, 0, s, ValueLayout.JAVA_BYTE, e + 2, name.length);
        LONG.setRelease(s, r + STATE_OFFSET, SLOT_USED);
        LONG.getAndAdd(s, (long) DIRECTORY_GENERATION_OFFSET, 1L);
    }

    /** The endpoint's bytes, or {@code null} if its length field is out of range (a corrupt record). */
    private byte[] endpointBytes(long record) {
        long e = record + file.recordLength - ENDPOINT_LINE_LENGTH;
        int length = Short.toUnsignedInt(s.get(ValueLayout.JAVA_SHORT, e));
        if (length == 0 || length > ENDPOINT_MAX_LENGTH) {
            return null;
        }
        return s.asSlice(e + 2, length).toArray(ValueLayout.JAVA_BYTE);
    }

    /**
     * Frees the used slots no router named for {@code afterNanos} that are {@code idle} (nothing in
     * flight, not drained: the caller knows those fields).
     */
    void reclaim(long now, long afterNanos, IntPredicate idle) {
        lock();
        try {
            for (int slot = 0; slot < file.slots; slot++) {
                long r = file.record(slot);
                if ((long) LONG.getAcquire(s, r + STATE_OFFSET) == SLOT_USED
                        && now - (long) LONG.getOpaque(s, r + NAMED_OFFSET) > afterNanos && idle.test(slot)) {
                    LONG.setRelease(s, r + STATE_OFFSET, SLOT_FREE);
                    LONG.getAndAdd(s, (long) DIRECTORY_GENERATION_OFFSET, 1L);
                }
            }
        } finally {
            unlock();
        }
    }

    /**
     * Takes the directory lock: a CAS of this instance's word into the lock field. A holder whose
     * process is gone, or that held it for over a second (it is held for microseconds), is broken.
     */
    private void lock() {
        long waitedSince = 0;
        long waitedFor = 0; // the holder waited for: the second counts from when this holder was first seen
        while (true) {
            long holder = (long) LONG.getVolatile(s, (long) DIRECTORY_LOCK_OFFSET);
            if (holder == 0) {
                if (LONG.compareAndSet(s, (long) DIRECTORY_LOCK_OFFSET, 0L, lockWord)) {
                    return;
                }
                continue;
            }
            long now = System.nanoTime();
            if (holder != waitedFor) {
                waitedFor = holder;
                waitedSince = now;
            }
            // Routers are assumed to share one pid namespace: a pid that does not exist is a holder that is gone.
            boolean holderGone = ProcessHandle.of(holder >>> 32).map(p -> !p.isAlive()).orElse(true);
            if (holderGone || now - waitedSince > 1_000_000_000L) {
                if (LONG.compareAndSet(s, (long) DIRECTORY_LOCK_OFFSET, holder, lockWord)) {
                    LOG.log(Level.WARNING, "{0}: broke the directory lock held by pid {1} ({2})", file.path, String.valueOf(holder >>> 32),
                            holderGone ? "process gone" : "held over a second");
                    return;
                }
            }
            Thread.onSpinWait();
            Thread.yield();
        }
    }

    private void unlock() {
        LONG.compareAndSet(s, (long) DIRECTORY_LOCK_OFFSET, lockWord, 0L);
    }
}
