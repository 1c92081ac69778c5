package io.ringstore.internal;

/**
 * One backend as the module's internals hold it: what a backend table record of a ring file stores
 * (FORMAT.md, backend table), what the writer writes, what {@code Backend} wraps, and what the ring
 * families' rules read (address, weight, name, {@code down}).
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
