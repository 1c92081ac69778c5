package io.ringstore.internal;

import io.ringstore.Ring;


/**
 * A walk over a {@link Ring}'s points by <em>cursor</em> for the rest of the module (bounded load):
 * a cursor is where a point lies in the segment the ring reads, so a view or a ring kept with ties is
 * walked without the table that positional access ({@link Ring#pointBackend}) builds. {@code Ring}
 * registers the implementation when its class initialises (the JDK's "shared secrets" pattern, as
 * {@link BackendAccess}).
 */
public final class RingAccess {
    /** The operations {@code Ring} grants to the rest of the module. */
    public interface Operations {
        /** The cursor of the point a key of CRC-32 {@code hash} lands on; -1 for an empty ring. */
        int cursor(Ring ring, int hash);

        /** The backend of the point at {@code cursor}, -1 if the file names one outside the backend table. */
        int backend(Ring ring, int cursor);

        /** The cursor of the ring's next point (wrapping): what failover walks to. */
        int next(Ring ring, int cursor);
    }

    private static volatile Operations operations;

    private RingAccess() {
    }

    /** Called once, by {@code Ring}'s static initialiser. */
    public static void register(Operations ops) {
        operations = ops;
    }

    public static Operations get() {
        Operations ops = operations;
        if (ops == null) {
            SharedSecrets.initialize(Ring.class);
            ops = operations;
        }
        return ops;
    }
}
