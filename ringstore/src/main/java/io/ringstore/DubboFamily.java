package io.ringstore;

import java.util.Arrays;
import java.util.List;

/**
 * Apache Dubbo's {@code ConsistentHashLoadBalance}, {@code dubbo[:K]}: point texts
 * {@code host:port} and the digest number with no separator ({@code 10.0.0.1:208800}), K/4 digests
 * a provider ({@code hash.nodes}, default 160), four points an MD5, the weight not used, the last
 * listed keeps a tie ({@code TreeMap.put}); keys are the call's first argument as text, hashed with
 * MD5's first word. A provider written without a port has Dubbo's 20880. No failover: a {@code down}
 * provider leaves the ring, as it leaves the invoker list.
 */
final class DubboFamily extends KetamaFamily {
    /** Dubbo's default protocol port. */
    static final int DUBBO_PORT = 20880;
    /** {@code hash.nodes}' default. */
    static final int DEFAULT_NODES = 160;

    DubboFamily() {
        super("dubbo", 11, KeyHash.MD5);
    }

    @Override
    String pointText(Backend backend, int i) {
        return host(backend) + ":" + port(backend) + i;
    }

    @Override
    public int defaultPort() {
        return DUBBO_PORT;
    }

    @Override
    public long[] points(long[] weights, RingVersion version) {
        return unweighted(weights, version.pointMultiple());
    }

    @Override
    public int[] tieRanks(List<Backend> backends) {
        return lastListed(backends);
    }

    @Override
    public boolean downLeavesRing() {
        return true;
    }

    @Override
    public int writtenParameters() {
        return 1;
    }

    @Override
    public boolean writtenPointMultiple() {
        return true;
    }

    @Override
    int minWrittenParameters() {
        return 0;
    }

    @Override
    public int[] defaultParameters() {
        return new int[] {DEFAULT_NODES};
    }

    @Override
    long maxWrittenParameter() {
        return 1 << 20;
    }

    @Override
    List<String> syntax() {
        return List.of("dubbo", "dubbo:K with K from 4 to " + (1 << 20));
    }

    @Override
    public void checkParameters(int[] parameters) {
        if (parameters.length != 1 || parameters[0] < POINTS_PER_DIGEST || parameters[0] > 1 << 20) {
            throw new IllegalArgumentException("dubbo has one parameter, hash.nodes, 4 to " + (1 << 20)
                    + ": parameters=" + Arrays.toString(parameters));
        }
    }

    @Override
    int[] fromWritten(int[] written) {
        return written.clone();
    }

    @Override
    int[] written(int[] parameters) {
        return parameters.clone();
    }
}
