package io.ringstore.internal.format;

import io.ringstore.internal.ServerAddress;

/**
 * One backend table record as the file holds it (FORMAT.md, backend table), checked: what
 * {@code RingStore} makes its {@code Backend} from, and what the writer writes.
 *
 * @param featureMask the features' bits, without the flags
 * @param down        the down flag (format 2)
 * @param name        the backend's name (flag named, format 2), null without one
 */
public record BackendRecord(ServerAddress address, long weight, int featureMask, boolean down, String name) {
    /** A record without a name. */
    public BackendRecord(ServerAddress address, long weight, int featureMask, boolean down) {
        this(address, weight, featureMask, down, null);
    }
}
