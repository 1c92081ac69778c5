package io.ringstore;

import io.ringstore.internal.hash.Md5;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;

/**
 * xmemcached's {@code KetamaMemcachedSessionLocator} with {@code HashAlgorithm.KETAMA_HASH}: 160
 * points per weight unit ({@code numReps *= weight}, numReps/4 digests), four points an MD5, keys
 * hashed with MD5's first word; a closed session makes the lookup go on by the rehash of spymemcached
 * ({@code nextHash}: up to one retry a server).
 *
 * <ul>
 *   <li>{@code xmemcached}: point texts {@code String.valueOf(remoteSocketAddress) + "-" + i}, the
 *       leading {@code /} kept ({@code /10.0.1.1:11211-0}; {@code host/10.0.1.1:11211-0} for a
 *       named server).</li>
 *   <li>{@code xmemcached-nginx} ({@code cwNginxUpstreamConsistent}): the IP, plus {@code :port} when it
 *       is not 11211 ({@code 10.0.1.1-0}).</li>
 * </ul>
 */
final class XmemcachedFamily extends KetamaFamily {
    private final boolean nginx;

    XmemcachedFamily(boolean nginx) {
        super(nginx ? "xmemcached-nginx" : "xmemcached", nginx ? 10 : 9, KeyHash.MD5);
        this.nginx = nginx;
    }

    @Override
    String pointText(Backend backend, int i) {
        if (!nginx) {
            return javaSocketAddress(backend) + "-" + i;
        }
        String ip;
        try {
            ip = InetAddress.getByAddress(address(backend).ipBytes()).getHostAddress();
        } catch (UnknownHostException e) {
            throw new IllegalStateException("an address of 4 or 16 bytes is always accepted", e);
        }
        int port = port(backend);
        return (port == MEMCACHED_PORT ? ip : ip + ":" + port) + "-" + i;
    }

    @Override
    public long[] points(long[] weights, RingVersion version) {
        return linearDigests(weights, NginxFamily.POINT_MULTIPLE);
    }

    /** 160 points per weight unit. */
    @Override
    public long pointBound(RingVersion version, long totalWeight, int backends) {
        return totalWeight > Long.MAX_VALUE / NginxFamily.POINT_MULTIPLE
                ? Long.MAX_VALUE
                : totalWeight * NginxFamily.POINT_MULTIPLE;
    }

    @Override
    public int[] tieRanks(List<Backend> backends) {
        return lastListed(backends);
    }

    /**
     * Each point holds a list of the sessions producing it, sorted by their text ({@code sockStr},
     * {@code String.compareTo}); the pick is {@code list.get((int) (pointHash % list.size()))}.
     */
    @Override
    public boolean tiesByRank() {
        return false;
    }

    @Override
    public int tieWinner(long hash, List<Backend> tied) {
        java.util.List<String> texts = tied.stream().map(this::sessionText).toList();
        java.util.List<String> sorted = texts.stream().sorted().toList();
        return texts.indexOf(sorted.get((int) (hash % sorted.size())));
    }

    /** The session's {@code sockStr}: the text its point texts start with. */
    private String sessionText(Backend backend) {
        String t = pointText(backend, 0);
        return t.substring(0, t.length() - 2); // without "-0"
    }

    @Override
    public Failover failover() {
        return Failover.REHASH;
    }

    @Override
    public int rehash(int previous, byte[] key, int offset, int length, int attempt) {
        return previous + Md5.le32WithDecimalPrefix(attempt, key, offset, length); // tries counts from 1
    }

    @Override
    public int rehashTries(int members) {
        return members + 1; // the first lookup, then maxTries = the number of sessions
    }
}
