package io.ringstore.state;

import static io.ringstore.state.StateFileLayout.*;

import io.ringstore.internal.TextLines;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.channels.FileLock;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntPredicate;

/**
 * Which endpoint owns which record of a state file: finding slots, giving free ones to new endpoints,
 * keeping the slots this instance tracks named, and freeing the ones no router named for a while.
 * Of a record it owns the state word, the named stamp and the endpoint line; giving a record zeroes
 * the rest. Every change of ownership is made under the directory lock (a POSIX record lock on the
 * directory word's range, never broken: the kernel releases a dead holder's), off the lookup path;
 * finding slots without giving any takes no lock.
 */
final class SlotDirectory {
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
        this.lockWord = (ProcessHandle.current().pid() << 32)
                | (INSTANCES.incrementAndGet() & 0x7FFF_FFFFL); // the counter starts at 1: never 0
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

    /** {@return the directory generation: changed whenever a slot is given or freed} */
    long generation() {
        return (long) LONG.getAcquire(s, (long) DIRECTORY_GENERATION_OFFSET);
    }

    /** {@return whether {@code slot} belongs to an endpoint} */
    boolean used(int slot) {
        return (long) LONG.getAcquire(s, file.record(slot) + STATE_OFFSET) == SLOT_USED;
    }

    /**
     * {@return the endpoint of a used {@code slot}, or {@code null} if its length field is out of range (a
     * corrupt record)} Bytes that are not UTF-8 come back as {@link TextLines#printable} shows them
     * (printable ASCII as is, any other byte {@code \xNN}), since no router's endpoint is such.
     */
    String endpoint(int slot) {
        byte[] name = endpointBytes(file.record(slot));
        if (name == null) {
            return null;
        }
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .decode(ByteBuffer.wrap(name))
                    .toString();
        } catch (CharacterCodingException e) { // not UTF-8 (forged, or corrupt): shown byte for byte, as \xNN
            return TextLines.printable(name);
        }
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
                throw new IllegalArgumentException(
                        "an endpoint is 1 to " + ENDPOINT_MAX_LENGTH + " bytes in UTF-8: " + endpoints.get(i));
            }
        }
        int[] slots = new int[names.length];
        long now = System.nanoTime();
        if (!create) {
            return find(names);
        }
        FileLock lock = lock();
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
                        throw new IllegalStateException(
                                file.path + ": all " + file.slots + " backend slots are in use; "
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
            unlock(lock);
        }
        return slots;
    }

    /**
     * The slots of {@code names} (-1 for none), read without the lock and without writing: what a
     * lookup or an inspection needs. The directory generation, read before and after, says whether a
     * slot was given or freed meanwhile (its endpoint then possibly read half-written): then again.
     */
    private int[] find(byte[][] names) {
        int[] slots = new int[names.length];
        for (int attempt = 0; ; attempt++) {
            long generation = (long) LONG.getAcquire(s, (long) DIRECTORY_GENERATION_OFFSET);
            Map<ByteBuffer, Integer> used = new HashMap<>();
            for (int slot = 0; slot < file.slots; slot++) {
                long r = file.record(slot);
                if ((long) LONG.getAcquire(s, r + STATE_OFFSET) == SLOT_USED) {
                    byte[] name = endpointBytes(r);
                    if (name != null) {
                        used.putIfAbsent(ByteBuffer.wrap(name), slot);
                    }
                }
            }
            for (int i = 0; i < names.length; i++) {
                slots[i] = used.getOrDefault(ByteBuffer.wrap(names[i]), -1);
            }
            if ((long) LONG.getAcquire(s, (long) DIRECTORY_GENERATION_OFFSET) == generation || attempt >= 100) {
                return slots;
            }
        }
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
        bumpGeneration();
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
        FileLock lock = lock();
        try {
            for (int slot = 0; slot < file.slots; slot++) {
                long r = file.record(slot);
                if ((long) LONG.getAcquire(s, r + STATE_OFFSET) == SLOT_USED
                        && now - (long) LONG.getOpaque(s, r + NAMED_OFFSET) > afterNanos
                        && idle.test(slot)) {
                    LONG.setRelease(s, r + STATE_OFFSET, SLOT_FREE);
                    bumpGeneration();
                }
            }
        } finally {
            unlock(lock);
        }
    }

    /**
     * Takes the directory lock (StateMapping#lockDirectory: a record lock, never broken, released by
     * the kernel if its holder dies) and writes this instance's word into the lock field, for display.
     */
    private FileLock lock() {
        if (!file.writable()) {
            // Before any lock is taken: a lock taken and then left by a failed write would stall every
            // later holder in this process (the heartbeat's reclaim, a drain) for good.
            throw new IllegalStateException(file.path + ": opened read-only: slots cannot be given or freed");
        }
        FileLock lock = file.lockDirectory();
        try {
            LONG.setVolatile(s, (long) DIRECTORY_LOCK_OFFSET, lockWord);
        } catch (RuntimeException | Error e) {
            file.unlockDirectory(lock);
            throw e;
        }
        return lock;
    }

    private void unlock(FileLock lock) {
        // Under the record lock this instance is the word's only writer: no compare-and-set, which HotSpot
        // does not guard against a truncated mapping in interpreted code (a SIGBUS, not an InternalError).
        if ((long) LONG.getVolatile(s, (long) DIRECTORY_LOCK_OFFSET) == lockWord) {
            LONG.setVolatile(s, (long) DIRECTORY_LOCK_OFFSET, 0L);
        }
        file.unlockDirectory(lock);
    }

    /**
     * One more directory generation: a slot was given or freed. Only under the directory lock, so a
     * plain read and write (guarded, unlike a compare-and-set or an add, see {@link #unlock}).
     */
    private void bumpGeneration() {
        LONG.setVolatile(
                s,
                (long) DIRECTORY_GENERATION_OFFSET,
                (long) LONG.getVolatile(s, (long) DIRECTORY_GENERATION_OFFSET) + 1L);
    }
}
