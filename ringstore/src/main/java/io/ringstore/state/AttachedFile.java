package io.ringstore.state;

import java.lang.System.Logger.Level;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.ToIntFunction;
import java.util.function.ToLongFunction;

/**
 * One state file as a {@link HostState} uses it: its mapping and the parts over it, and how the
 * caller's slots map to the file's. Replaced when another file takes the path ({@link StateFollower}):
 * the caller's slots stay what they were, mapped to the new file's by {@link #toFile}.
 */
final class AttachedFile {
    private static final System.Logger LOG = System.getLogger(HostState.class.getName());
    /** {@link #route} of a file that shrank: no slot maps to it. */
    private static final int[] LOST = new int[0];

    final StateMapping file;
    final SlotDirectory directory;
    final BackendHealth health;
    final LeaseTable leases;
    /** This process's requests in flight, which a slot newly mapped here gets stored. */
    private final OwnCounts own;
    /** The caller's slot to this file's slot; {@code null} while they are the same (the first file of the instance). */
    volatile int[] toFile;
    /**
     * What the request path maps a caller's slot through: {@code null} for the same slot, {@link #LOST}
     * once the file shrank (every slot answered without state), else {@link #toFile}. One read.
     */
    private volatile int[] route;
    /** Set when a call faulted on the mapping (the file shrank under it): calls then skip it, as without state. */
    volatile boolean lost;
    /** Whether {@link #sayLost} has told of it (guarded by this). */
    private boolean told;

    /**
     * Puts the parts over {@code file} (claiming a lease when {@code router}); unmaps it if they cannot be made.
     *
     * @param toFile the caller's slots to this file's ({@code null}: the same)
     */
    AttachedFile(StateMapping file, Duration staleAfter, boolean router, int[] toFile, OwnCounts own)
            throws StateFileException {
        try {
            if (file.writable()) {
                BootCheck.adopt(file); // before the leases: times of an earlier boot reset first
            }
            this.file = file;
            this.directory = new SlotDirectory(file);
            this.health = new BackendHealth(file);
            this.leases = new LeaseTable(file, staleAfter, router, own);
            this.own = own;
            this.toFile = toFile;
            this.route = toFile;
            MappedFaults.surface();
        } catch (StateFileException | RuntimeException | Error e) {
            file.close();
            throw e;
        }
    }

    /** {@return the file slot of the caller's {@code slot} for the request path, or -1 when this file has none for it} */
    int route(int slot) {
        int[] r = route;
        return r == null ? slot : map(r, slot);
    }

    /** {@return the file slot of the caller's {@code slot}, or -1 when this file has none for it} */
    int fileSlot(int slot) {
        int[] t = toFile;
        return t == null ? slot : map(t, slot);
    }

    /** {@return {@code r[slot]}, or -1 for a slot out of its range} */
    private static int map(int[] r, int slot) {
        return slot >= 0 && slot < r.length ? r[slot] : -1;
    }

    /** {@return whether {@code slot} is a slot the caller may have been given: its requests in flight are counted} */
    boolean callerSlot(int slot) {
        int[] t = toFile;
        return slot >= 0 && slot < (t == null ? file.slots : t.length);
    }

    /**
     * Maps the caller's slots through {@code next} from now on (unless the file shrank), and stores this
     * process's requests in flight to a slot newly mapped into its cell here.
     */
    void mapSlots(int[] next) {
        int[] before;
        synchronized (this) {
            before = toFile;
            toFile = next;
            if (!lost) {
                route = next;
            }
        }
        if (lost || !leases.counts()) {
            return;
        }
        own.lock();
        try {
            for (int slot = 0; slot < next.length; slot++) {
                int f = next[slot];
                if (f >= 0 && (before == null || slot >= before.length || before[slot] != f)) {
                    leases.store(f, slot);
                }
            }
            MappedFaults.surface();
        } catch (InternalError e) { // a page gone: the file shrank; the follower finds it at its next look
        } finally {
            own.unlock();
        }
    }

    /** Marks the file lost (it shrank under the mapping); {@return whether it was not lost before} */
    boolean markLost() {
        synchronized (this) {
            if (lost) {
                return false;
            }
            lost = true;
            route = LOST;
            return true;
        }
    }

    /** {@return whether the file is in use as mapped: not lost, and not shorter than its mapping (one fstat)} */
    boolean intact() {
        return !lost && file.sizeNow() >= file.segment.byteSize();
    }

    /** The one line for a file that shrank under this mapping and was not followed by a good one. */
    void sayLost(Path path, boolean router) {
        synchronized (this) {
            if (told) {
                return;
            }
            told = true;
        }
        LOG.log(
                Level.WARNING,
                "{0}: the state file shrank while in use (truncated?); this process routes without the host''s "
                        + "drain, health and load {1}",
                path,
                router
                        ? "until a good state file is at the path"
                        : "(reopen it, or refresh, when a good file is in place)");
    }

    /** {@return every backend slot in use, in slot order, as operators see it: {@link HostState#backends(ToIntFunction, ToLongFunction)}} */
    List<HostState.BackendState> backends(
            long now, ToIntFunction<String> maxFails, ToLongFunction<String> failTimeoutNanos) {
        List<HostState.BackendState> list = new ArrayList<>();
        for (int slot = 0; slot < file.slots; slot++) {
            if (directory.used(slot)) {
                String endpoint = directory.endpoint(slot);
                String shown = endpoint == null ? "(corrupt endpoint)" : endpoint;
                list.add(health.state(
                        slot,
                        shown,
                        now,
                        maxFails.applyAsInt(shown),
                        failTimeoutNanos.applyAsLong(shown),
                        leases.inFlight(slot)));
            }
        }
        return list;
    }

    /** Gives the lease back (what it can of a file that shrank) and unmaps the file. */
    void unmap() {
        leases.stopCounting();
        try {
            leases.giveBack();
            MappedFaults.surface();
        } catch (InternalError e) { // a mapped page gone: the lease goes with its lock alone
        }
        file.close();
    }
}
