package io.ringstore.family;

import io.ringstore.internal.BackendRecord;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * HAProxy's server ids ({@code puid}), which its consistent hash makes the nodes from: a server's own
 * {@code id N}, written in a backends file as the backend's name ({@code # ringstore: id=N}), else
 * HAProxy 2.6's automatic number ({@code check_config_validity}, {@code src/cfgparse.c}): a counter
 * that starts at 1 and moves on by one after every server, with or without an id, gives a server
 * without one the first id at or above it that no server has yet ({@code get_next_id}). So in
 * {@code A id 5, B, C} B is 2 and C is 3, and in {@code A, B id 1, C} A takes 2 (1 is B's) and C 3.
 */
final class HaproxyIds {
    /** The largest id: HAProxy reads {@code id} with {@code atol} into an {@code int} and refuses one below 1. */
    static final long MAX_ID = Integer.MAX_VALUE;

    private HaproxyIds() {}

    /** {@return each backend's id, index i for backend i, in file order} */
    static long[] of(List<BackendRecord> backends) {
        long[] ids = new long[backends.size()];
        Set<Long> used = new HashSet<>();
        for (int i = 0; i < ids.length; i++) {
            ids[i] = explicit(backends.get(i));
            if (ids[i] > 0) {
                used.add(ids[i]);
            }
        }
        long next = 1;
        for (int i = 0; i < ids.length; i++) {
            if (ids[i] == 0) {
                while (used.contains(next)) {
                    next++;
                }
                ids[i] = next;
                used.add(next);
            }
            next++;
        }
        return ids;
    }

    /** {@return the backend's own id (its name), 0 without one or when its name is not an id} */
    static long explicit(BackendRecord backend) {
        String name = backend.name();
        return name != null && problem(name) == null ? Long.parseLong(name) : 0;
    }

    /** {@return why {@code name} is not a HAProxy server id (1 to 2,147,483,647 in decimal, no leading zero), or null} */
    static String problem(String name) {
        if (!name.matches("[1-9][0-9]{0,9}") || Long.parseLong(name) > MAX_ID) {
            return "name " + name + " is not a HAProxy server id (1 to " + MAX_ID
                    + " in decimal, written '# ringstore: id=N')";
        }
        return null;
    }
}
