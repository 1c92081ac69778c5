package io.ringstore;

import io.ringstore.internal.TextLines;
import java.util.Arrays;
import java.util.List;

/**
 * nginx {@code hash $key consistent} (ngx_http_upstream_hash_module), {@code v1}: the {@code server}
 * text as written is the point source (host, a zero byte, port), 160 points per weight unit, equal
 * hashes go to the backend listed first, keys hashed with CRC-32, answers printed as nginx's
 * {@code $upstream_addr}. Its one parameter, the point multiple, is always 160, so a name writes none.
 */
final class NginxFamily extends RingFamily {
    /** nginx's points per weight unit. */
    static final int POINT_MULTIPLE = 160;

    NginxFamily() {
        super("v1", 1, KeyHash.CRC32);
    }

    @Override
    public int parameterCount() {
        return 1;
    }

    @Override
    public int writtenParameters() {
        return 0;
    }

    @Override
    public int[] defaultParameters() {
        return new int[] {POINT_MULTIPLE};
    }

    @Override
    long maxWrittenParameter() {
        return 0;
    }

    @Override
    List<String> syntax() {
        return List.of("v1");
    }

    @Override
    public void checkParameters(int[] parameters) {
        PingoraV2Family.checkPointMultiple(parameters);
        if (parameters[0] != POINT_MULTIPLE) {
            throw new IllegalArgumentException(
                    "v1 always has 160 points per weight unit (nginx): pointMultiple=" + parameters[0]);
        }
    }

    @Override
    int[] fromWritten(int[] written) {
        return defaultParameters();
    }

    @Override
    int[] written(int[] parameters) {
        return new int[0];
    }

    @Override
    String digestTag() {
        return "v1";
    }

    @Override
    public boolean crcChain() {
        return true;
    }

    @Override
    public byte[] pointInput(Backend backend) {
        return address(backend).nginxHashInput();
    }

    @Override
    public long[] points(long[] weights, RingVersion version) {
        return PingoraV2Family.linear(weights, version);
    }

    @Override
    public int[] tieRanks(List<Backend> backends) {
        int[] rank = new int[backends.size()];
        Arrays.setAll(rank, i -> i);
        return rank;
    }

    @Override
    public String addressProblem(Backend backend) {
        if (address(backend).hasScope()) {
            return "address " + TextLines.quote(address(backend).text())
                    + " has a scope id, which nginx refuses (and v1 would not tell two scopes apart): remove it, or build v2 only";
        }
        return null;
    }

    @Override
    public String answer(Backend backend) {
        return backend.upstreamAddress();
    }
}
