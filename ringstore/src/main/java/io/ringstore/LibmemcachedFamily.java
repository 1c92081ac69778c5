package io.ringstore;

import java.util.List;

/**
 * libmemcached's weighted ketama ({@code MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED}, {@code src/libmemcached/hosts.cc}),
 * {@code libmemcached}: point texts {@code host-i}, or {@code host:port-i} when the port is not 11211;
 * with {@code spy} ({@code MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA_SPY}, {@code libmemcached-spy}),
 * {@code /host:port-i} always. Four points an MD5, the all-float share rule L, the lowest host index
 * keeps a tie ({@code continuum_item_cmp}), keys hashed with MD5's first word. A {@code down} backend
 * leaves the ring (auto-eject rebuilds the continuum from the live servers).
 */
final class LibmemcachedFamily extends ShareRuleFamily {
    private final boolean spy;

    LibmemcachedFamily(boolean spy) {
        super(spy ? "libmemcached-spy" : "libmemcached", spy ? 5 : 4, KeyHash.MD5);
        this.spy = spy;
    }

    @Override
    String pointText(Backend backend, int i) {
        int port = port(backend);
        if (spy) {
            return "/" + host(backend) + ":" + port + "-" + i;
        }
        return port == MEMCACHED_PORT ? host(backend) + "-" + i : host(backend) + ":" + port + "-" + i;
    }

    @Override
    public long[] points(long[] weights, RingVersion version) {
        return shareL(weights);
    }

    @Override
    public int[] tieRanks(List<Backend> backends) {
        return firstListed(backends);
    }
}
