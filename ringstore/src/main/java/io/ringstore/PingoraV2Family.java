package io.ringstore;

import java.util.Arrays;
import java.util.List;

/**
 * pingora-ketama {@code Version::V2 { point_multiple }}, {@code v2:K}: the parsed socket address as
 * Rust prints it is the point source (IP, a zero byte, port), K points per weight unit, equal hashes
 * go to the smallest socket address, keys hashed with CRC-32, answers printed as Rust's
 * {@code SocketAddr}. Its one parameter is K, written in the name; a bare {@code v2} is {@code v2:160}.
 */
final class PingoraV2Family extends RingFamily {
    PingoraV2Family() {
        super("v2", 2, KeyHash.CRC32);
    }

    @Override
    public int parameterCount() {
        return 1;
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
    public int[] defaultParameters() {
        return new int[] {NginxFamily.POINT_MULTIPLE};
    }

    @Override
    long maxWrittenParameter() {
        return Integer.MAX_VALUE;
    }

    @Override
    List<String> syntax() {
        return List.of("v2", "v2:K with K from 1 to " + Integer.MAX_VALUE);
    }

    @Override
    public void checkParameters(int[] parameters) {
        checkPointMultiple(parameters);
    }

    /** One parameter, a point multiple of at least 1. */
    static void checkPointMultiple(int[] parameters) {
        if (parameters.length != 1) {
            throw new IllegalArgumentException(
                    "one parameter, the point multiple: parameters=" + Arrays.toString(parameters));
        }
        if (parameters[0] < 1) {
            throw new IllegalArgumentException("point multiple must be at least 1: pointMultiple=" + parameters[0]);
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

    @Override
    String digestTag() {
        return "v2";
    }

    @Override
    public boolean crcChain() {
        return true;
    }

    @Override
    public byte[] pointInput(Backend backend) {
        return address(backend).pingoraHashInput();
    }

    @Override
    public long[] points(long[] weights, RingVersion version) {
        return linear(weights, version);
    }

    /** Weight × the point multiple: nginx's and pingora's weight rule. */
    static long[] linear(long[] weights, RingVersion version) {
        long k = version.pointMultiple();
        long[] points = new long[weights.length];
        for (int i = 0; i < weights.length; i++) {
            points[i] = Math.multiplyExact(weights[i], k);
        }
        return points;
    }

    @Override
    public int[] tieRanks(List<Backend> backends) {
        int n = backends.size();
        Integer[] order = new Integer[n];
        Arrays.setAll(order, i -> i);
        Arrays.sort(order, (a, b) -> address(backends.get(a)).compareTo(address(backends.get(b))));
        int[] rank = new int[n];
        for (int r = 0; r < n; r++) {
            rank[order[r]] = r;
        }
        return rank;
    }

    @Override
    public String addressProblem(Backend backend) {
        return null;
    }

    @Override
    public String answer(Backend backend) {
        return backend.socketAddress();
    }
}
