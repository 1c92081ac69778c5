package io.ringstore.internal;

/**
 * The {@code server} parameters of a backend besides its address, weight and features, with
 * nginx's defaults ({@code ngx_http_upstream_server}: {@code max_fails=1 fail_timeout=10}, no
 * {@code max_conns} limit), and its name ({@code # ringstore: name=NAME}; null without one). All
 * are stored in a ring file: {@code down} changes which backend {@code ringstore lookup} answers, the
 * name is the backend's hashed identity in the families that hash one (twemproxy's server name,
 * Envoy's {@code hash_key}), and the health settings are what every router counts failures and
 * connections by (flag health, written only for a backend whose settings are not the defaults).
 */
public record ServerParameters(boolean down, int maxFails, long failTimeoutSeconds, int maxConns, String name) {
    public static final int DEFAULT_MAX_FAILS = 1;
    public static final long DEFAULT_FAIL_TIMEOUT_SECONDS = 10;
    public static final int DEFAULT_MAX_CONNS = 0;
    public static final ServerParameters DEFAULTS =
            new ServerParameters(false, DEFAULT_MAX_FAILS, DEFAULT_FAIL_TIMEOUT_SECONDS, DEFAULT_MAX_CONNS, null);
    public static final ServerParameters DOWN = DEFAULTS.withDown(true);

    public ServerParameters(boolean down, int maxFails, long failTimeoutSeconds, int maxConns) {
        this(down, maxFails, failTimeoutSeconds, maxConns, null);
    }

    public ServerParameters withDown(boolean d) {
        return new ServerParameters(d, maxFails, failTimeoutSeconds, maxConns, name);
    }

    public ServerParameters withName(String n) {
        return new ServerParameters(down, maxFails, failTimeoutSeconds, maxConns, n);
    }
}
