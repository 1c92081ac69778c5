package io.ringstore;

import io.ringstore.internal.hash.Md5;
import java.util.Arrays;
import java.util.List;

/**
 * spymemcached's {@code KetamaNodeLocator} with {@code DefaultHashAlgorithm.KETAMA_HASH} and the default
 * {@code SPYMEMCACHED} key format: a node's point texts are {@code String.valueOf(socketAddress)} with
 * its one leading {@code /} stripped ({@code 10.0.1.1:11211-i}, or {@code cache1/10.0.1.1:11211-i} for a
 * node named by its host name), four points an MD5, the last listed keeps a tie ({@code TreeMap.put}),
 * keys hashed with MD5's first word.
 *
 * <ul>
 *   <li>{@code spymemcached[:K]}: K repetitions a node (default 160; K/4 digests), the weight not used;
 *       a {@code down} node keeps its points and lookups go on by spymemcached's rehash sequence
 *       ({@code KetamaIterator}: 7 tries, each adding the MD5 of {@code try + key}).</li>
 *   <li>{@code spymemcached-weighted}: with a weights map, the float share rule of libmemcached with a
 *       double {@code 0.0000000001} added; a {@code down} node keeps its points and lookups go on by
 *       the same rehash sequence.</li>
 * </ul>
 */
final class SpymemcachedFamily extends KetamaFamily {
    /** {@code KetamaNodeLocator}'s default node repetitions. */
    static final int DEFAULT_REPETITIONS = 160;
    /** {@code KetamaNodeLocator.getSequence}: {@code new KetamaIterator(k, 7, ...)}. */
    static final int SEQUENCE_TRIES = 7;

    private final boolean weighted;

    SpymemcachedFamily(boolean weighted) {
        super(weighted ? "spymemcached-weighted" : "spymemcached", weighted ? 8 : 7, KeyHash.MD5);
        this.weighted = weighted;
    }

    @Override
    String pointText(Backend backend, int i) {
        String s = javaSocketAddress(backend);
        return (s.startsWith("/") ? s.substring(1) : s) + "-" + i;
    }

    @Override
    public long[] points(long[] weights, RingVersion version) {
        return weighted ? shareFloatPlusDouble(weights) : unweighted(weights, version.pointMultiple());
    }

    @Override
    public int[] tieRanks(List<Backend> backends) {
        return lastListed(backends);
    }

    /** The weighted count depends on every member's weight: views only without weights. */
    @Override
    public boolean viewable() {
        return !weighted;
    }

    /** Both locators hand out the same {@code KetamaIterator} sequence; neither rebuilds its ring without a node. */
    @Override
    public Failover failover() {
        return Failover.REHASH;
    }

    @Override
    public int rehash(int previous, byte[] key, int offset, int length, int attempt) {
        return previous + Md5.le32WithDecimalPrefix(attempt - 1, key, offset, length); // numTries counts from 0
    }

    @Override
    public int rehashTries(int members) {
        return SEQUENCE_TRIES;
    }

    // ---- spymemcached:K ----

    @Override
    public int writtenParameters() {
        return weighted ? 0 : 1;
    }

    @Override
    public boolean writtenPointMultiple() {
        return !weighted;
    }

    @Override
    int minWrittenParameters() {
        return 0;
    }

    @Override
    public int[] defaultParameters() {
        return new int[] {DEFAULT_REPETITIONS};
    }

    @Override
    long maxWrittenParameter() {
        return weighted ? 0 : 1 << 20;
    }

    @Override
    List<String> syntax() {
        return weighted ? List.of(name()) : List.of(name(), name() + ":K with K from 4 to " + (1 << 20));
    }

    @Override
    public void checkParameters(int[] parameters) {
        if (weighted) {
            super.checkParameters(parameters);
        } else if (parameters.length != 1 || parameters[0] < POINTS_PER_DIGEST || parameters[0] > 1 << 20) {
            throw new IllegalArgumentException("spymemcached has one parameter, the node repetitions, 4 to " + (1 << 20)
                    + ": parameters=" + Arrays.toString(parameters));
        }
    }

    @Override
    int[] fromWritten(int[] written) {
        return weighted ? defaultParameters() : written.clone();
    }

    @Override
    int[] written(int[] parameters) {
        return weighted ? new int[0] : parameters.clone();
    }
}
