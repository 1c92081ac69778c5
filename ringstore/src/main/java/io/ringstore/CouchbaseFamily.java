package io.ringstore;

import java.util.List;

/**
 * The Couchbase Java SDK's {@code KetamaRing} (memcached buckets; {@code core-io}
 * {@code StandardMemcachedHashingStrategy}), {@code couchbase}: point texts {@code host:port-i} (the KV
 * port, 11210 when none is written), 160 points a node whatever its weight, the last listed keeps a tie
 * ("last value wins"), keys hashed with MD5's first word. No failover: a {@code down} node leaves the
 * ring, as it leaves the cluster map.
 */
final class CouchbaseFamily extends KetamaFamily {
    /** Couchbase's data (KV) port. */
    static final int KV_PORT = 11210;

    CouchbaseFamily() {
        super("couchbase", 12, KeyHash.MD5);
    }

    @Override
    String pointText(Backend backend, int i) {
        return host(backend) + ":" + port(backend) + "-" + i;
    }

    @Override
    public int defaultPort() {
        return KV_PORT;
    }

    @Override
    public long[] points(long[] weights, RingVersion version) {
        return unweighted(weights, NginxFamily.POINT_MULTIPLE);
    }

    @Override
    public int[] tieRanks(List<Backend> backends) {
        return lastListed(backends);
    }

    @Override
    public boolean downLeavesRing() {
        return true;
    }
}
