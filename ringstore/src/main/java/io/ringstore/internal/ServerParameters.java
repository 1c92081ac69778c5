package io.ringstore.internal;

/**
 * The nginx {@code server} parameters of a backend besides its address, weight and features, with
 * nginx's defaults ({@code ngx_http_upstream_server}: {@code max_fails=1 fail_timeout=10}, no
 * {@code max_conns} limit). Only {@code down} is stored in a ring file: it changes which backend
 * {@code ringstore lookup} answers; the others only matter to a router that counts failures and
 * connections, and a backend read from a ring file has their defaults.
 */
public record ServerParameters(boolean down, int maxFails, long failTimeoutSeconds, int maxConns) {
    public static final int DEFAULT_MAX_FAILS = 1;
    public static final long DEFAULT_FAIL_TIMEOUT_SECONDS = 10;
    public static final ServerParameters DEFAULTS = new ServerParameters(false, DEFAULT_MAX_FAILS, DEFAULT_FAIL_TIMEOUT_SECONDS, 0);
    public static final ServerParameters DOWN = DEFAULTS.withDown(true);

    public ServerParameters withDown(boolean d) {
        return new ServerParameters(d, maxFails, failTimeoutSeconds, maxConns);
    }
}
