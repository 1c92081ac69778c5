package io.ringstore.internal.format;

import io.ringstore.internal.ServerAddress;
import io.ringstore.internal.ServerParameters;

/**
 * One backend table record as the file holds it (FORMAT.md, backend table), checked: what
 * {@code RingStore} makes its {@code Backend} from, and what the writer writes.
 *
 * @param featureMask the features' bits, without the flags
 * @param parameters  the down flag (format 2), the name (flag named) and the health settings (flag
 *                    health: max_fails, fail_timeout, max_conns; nginx's defaults without it)
 */
public record BackendRecord(ServerAddress address, long weight, int featureMask, ServerParameters parameters) {
    /** {@return whether the backend is marked down} */
    public boolean down() {
        return parameters.down();
    }

    /** {@return the backend's name, null without one} */
    public String name() {
        return parameters.name();
    }

    /** {@return whether the record carries health settings: some differ from nginx's defaults (flag health)} */
    public boolean hasHealth() {
        return parameters.maxFails() != ServerParameters.DEFAULT_MAX_FAILS
                || parameters.failTimeoutSeconds() != ServerParameters.DEFAULT_FAIL_TIMEOUT_SECONDS
                || parameters.maxConns() != ServerParameters.DEFAULT_MAX_CONNS;
    }
}
