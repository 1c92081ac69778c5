package io.ringstore.state;

import java.lang.System.Logger.Level;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The slots a {@link HostState} hands out, as its callers' names for endpoints: the state file's own
 * slots while the instance is on its first file; after it moved to another file, each endpoint keeps
 * the number it had, mapped to its slot there ({@link AttachedFile#toFile}), and a new endpoint gets a
 * number no endpoint has. Guarded by the {@link HostState}, whose lock a move holds too.
 */
final class CallerSlots {
    private static final System.Logger LOG = System.getLogger(HostState.class.getName());

    /** The caller's slots handed out: slot to endpoint, and back. */
    private String[] endpointOf = new String[0];

    private final Map<String, Integer> slotOf = new HashMap<>();
    /** The endpoints of the last {@link #track}. */
    private List<String> tracked = List.of();

    /** {@link #of} all of {@code endpoints}, which are from now on the ones a move tracks in the new file. */
    int[] track(AttachedFile a, List<String> endpoints, int[] found) {
        tracked = List.copyOf(endpoints);
        return of(a, endpoints, found, true);
    }

    /**
     * The caller's slots for {@code endpoints}, whose slots in {@code a}'s file are {@code found} (-1:
     * none): the same numbers in the first file; after a move, each endpoint's earlier slot, or a new
     * one ({@code all}: also for an endpoint the file has no slot for, so that it is counted once it has).
     */
    int[] of(AttachedFile a, List<String> endpoints, int[] found, boolean all) {
        int[] result = new int[found.length];
        int[] toFile = a.toFile;
        for (int i = 0; i < found.length; i++) {
            String e = endpoints.get(i);
            int f = found[i];
            if (toFile == null && !a.lost) { // the first file: its slots are the caller's
                if (f >= 0) {
                    name(f, e);
                }
                result[i] = f;
                continue;
            }
            if (f < 0 && !all) {
                result[i] = -1;
                continue;
            }
            Integer known = slotOf.get(e);
            int slot = known != null
                    ? known
                    : f >= 0 && (f >= endpointOf.length || endpointOf[f] == null) ? f : freeSlot();
            name(slot, e);
            if (toFile != null) {
                if (slot >= toFile.length) {
                    int old = toFile.length;
                    toFile = Arrays.copyOf(toFile, Math.max(slot + 1, old * 2));
                    Arrays.fill(toFile, old, toFile.length, -1);
                } else {
                    toFile = toFile.clone();
                }
                toFile[slot] = f;
            }
            result[i] = slot;
        }
        if (toFile != null) {
            a.mapSlots(toFile);
        }
        return result;
    }

    /**
     * Gives every caller's slot its endpoint's slot in {@code n}, a file being moved to, tracking there
     * what was tracked ({@code router}); an endpoint that cannot be given one is answered without state
     * (one log line says why).
     */
    void moveTo(AttachedFile n, boolean router, Path path, String why) {
        List<String> known = new ArrayList<>();
        for (String e : endpointOf) {
            if (e != null) {
                known.add(e);
            }
        }
        int[] toFile = new int[endpointOf.length];
        Arrays.fill(toFile, -1);
        try {
            if (router && !tracked.isEmpty()) {
                n.directory.track(tracked);
            }
            int[] found = n.directory.slots(known, false);
            for (int i = 0; i < found.length; i++) {
                toFile[slotOf.get(known.get(i))] = found[i];
            }
        } catch (RuntimeException | InternalError e) {
            LOG.log(
                    Level.WARNING,
                    "{0}: the state file was {1}, and its endpoints cannot be tracked in the new file: {2}",
                    path,
                    why,
                    e.toString());
        }
        n.mapSlots(toFile);
    }

    /** Records that the caller's {@code slot} names {@code endpoint}. */
    private void name(int slot, String endpoint) {
        if (slot >= endpointOf.length) {
            endpointOf = Arrays.copyOf(endpointOf, Math.max(slot + 1, endpointOf.length * 2));
        }
        String before = endpointOf[slot];
        if (before != null && !before.equals(endpoint)) {
            slotOf.remove(before, slot);
        }
        Integer old = slotOf.put(endpoint, slot);
        if (old != null && old != slot && old < endpointOf.length && endpoint.equals(endpointOf[old])) {
            endpointOf[old] = null;
        }
        endpointOf[slot] = endpoint;
    }

    /** {@return a caller's slot no endpoint has} */
    private int freeSlot() {
        for (int i = 0; i < endpointOf.length; i++) {
            if (endpointOf[i] == null) {
                return i;
            }
        }
        return endpointOf.length;
    }
}
