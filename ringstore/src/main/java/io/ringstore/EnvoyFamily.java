package io.ringstore;

import io.ringstore.internal.hash.Murmur2x64;
import io.ringstore.internal.hash.Xxh64;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * Envoy's {@code ring_hash} ({@code source/extensions/load_balancing_policies/ring_hash/ring_hash_lb.cc})
 * and gRPC's, which builds the same ring (gRFC A42; C-core {@code ring_hash.cc}): 64-bit points.
 *
 * <ul>
 *   <li>A host's identity is its name (Envoy's {@code hash_key} metadata, or its host name with
 *       {@code use_hostname_for_hashing}) or its address as Envoy prints it ({@code 10.0.0.1:80},
 *       {@code [::1]:80}); its entries hash {@code identity_i}, i from 0, with xxHash64 seed 0
 *       ({@code envoy}, {@code grpc}) or libstdc++'s 64-bit MurmurHash2 seed {@code 0xc70f6907}
 *       ({@code envoy-murmur2}).</li>
 *   <li>Entry counts, in double arithmetic as Envoy's: normalized weights {@code w · 1.0 / W}, the
 *       scale {@code min(ceil(minWeight · MIN) / minWeight, MAX)}, and for each host in file order a
 *       running target {@code target += scale · weight}, one entry per whole step
 *       ({@code while (current < target)}). MIN and MAX are the minimum and maximum ring size:
 *       {@code envoy[:MIN[:MAX]]} defaults 1,024 and 8,388,608; {@code grpc[:MIN[:MAX]]} 1,024 and
 *       4,096 (C-core's and grpc-go's cap).</li>
 *   <li>Equal hashes (a 64-bit collision: never seen) keep the first listed; keys are hashed with the
 *       family's hash; a lookup is ceil and wrap on 64 bits; failover takes the next entry (Envoy's
 *       retry {@code (index + attempt) % size}); a {@code down} host leaves the ring (Envoy builds it
 *       from the healthy hosts).</li>
 * </ul>
 */
final class EnvoyFamily extends RingFamily {
    /** Envoy's {@code maximum_ring_size} default. */
    static final int ENVOY_MAX_RING_SIZE = 8_388_608;
    /** gRPC's ring size cap ({@code kRingSizeCapDefault}, {@code RingHashOptions.DEFAULT_RING_SIZE_CAP}). */
    static final int GRPC_MAX_RING_SIZE = 4_096;
    /** {@code minimum_ring_size}'s default in both. */
    static final int MIN_RING_SIZE = 1_024;
    /** libstdc++'s {@code std::_Hash_bytes} seed, Envoy's {@code MurmurHash::STD_HASH_SEED}. */
    static final long STD_HASH_SEED = 0xc70f6907L;

    private final int defaultMax;
    private final boolean murmur;

    EnvoyFamily(String name, int code, KeyHash keyHash, int defaultMax) {
        super(name, code, keyHash);
        this.defaultMax = defaultMax;
        this.murmur = keyHash == KeyHash.MURMUR2_64;
    }

    @Override
    public int pointBits() {
        return 64;
    }

    /** The host's hashed identity: its name, else its address as Envoy prints it. */
    static String identity(Backend backend) {
        return backend.name() != null
                ? backend.name()
                : address(backend).endpointText(io.ringstore.internal.ServerAddress.DEFAULT_PORT);
    }

    @Override
    public void pointHashes(Backend backend, RingVersion version, int count, long[] out) {
        String prefix = identity(backend) + "_";
        for (int i = 0; i < count; i++) {
            byte[] text = (prefix + i).getBytes(StandardCharsets.UTF_8);
            out[i] =
                    murmur ? Murmur2x64.hash(text, 0, text.length, STD_HASH_SEED) : Xxh64.hash(text, 0, text.length, 0);
        }
    }

    @Override
    public long[] points(long[] weights, RingVersion version) {
        int[] p = version.parameters();
        return entries(weights, p[0], p[1]);
    }

    /** Envoy's entry counts ({@code RingHashLoadBalancer::Ring::Ring}), in its double arithmetic. */
    static long[] entries(long[] weights, long minRingSize, long maxRingSize) {
        long sum = 0;
        for (long w : weights) {
            sum = Math.addExact(sum, w);
        }
        double[] normalized = new double[weights.length];
        double min = Double.MAX_VALUE;
        for (int i = 0; i < weights.length; i++) {
            normalized[i] = (double) weights[i] * 1.0 / (double) sum;
            min = Math.min(min, normalized[i]);
        }
        double scale = Math.min(Math.ceil(min * (double) minRingSize) / min, (double) maxRingSize);
        long[] counts = new long[weights.length];
        double current = 0;
        double target = 0;
        for (int i = 0; i < weights.length; i++) {
            target += scale * normalized[i];
            long c = 0;
            while (current < target) {
                c++;
                current++;
            }
            counts[i] = c;
        }
        return counts;
    }

    /** The scale is at most MAX, and each host's running target rounds up by less than one entry. */
    @Override
    public long pointBound(RingVersion version, long totalWeight, int backends) {
        return (long) version.parameters()[1] + backends;
    }

    @Override
    public int[] tieRanks(List<Backend> backends) {
        return KetamaFamily.firstListed(backends);
    }

    /** The scale depends on every member's weight: no views. */
    @Override
    public boolean viewable() {
        return false;
    }

    @Override
    public boolean downLeavesRing() {
        return true;
    }

    @Override
    public Failover failover() {
        return Failover.NEXT_ENTRY;
    }

    @Override
    public String addressProblem(Backend backend) {
        return null;
    }

    @Override
    public String answer(Backend backend) {
        return address(backend).endpointText(io.ringstore.internal.ServerAddress.DEFAULT_PORT);
    }

    // ---- parameters: MIN and MAX, both written, both optional ----

    @Override
    public int parameterCount() {
        return 2;
    }

    @Override
    public int writtenParameters() {
        return 2;
    }

    @Override
    int minWrittenParameters() {
        return 0;
    }

    @Override
    public int[] defaultParameters() {
        return new int[] {MIN_RING_SIZE, defaultMax};
    }

    @Override
    long maxWrittenParameter() {
        return ENVOY_MAX_RING_SIZE;
    }

    @Override
    List<String> syntax() {
        return List.of(name(), name() + ":MIN", name() + ":MIN:MAX with 1 ≤ MIN ≤ MAX ≤ " + ENVOY_MAX_RING_SIZE);
    }

    @Override
    public void checkParameters(int[] parameters) {
        if (parameters.length != 2
                || parameters[0] < 1
                || parameters[1] < parameters[0]
                || parameters[1] > ENVOY_MAX_RING_SIZE) {
            throw new IllegalArgumentException(
                    name() + " has two parameters, the minimum and maximum ring size, 1 ≤ MIN ≤ MAX ≤ "
                            + ENVOY_MAX_RING_SIZE + ": parameters=" + Arrays.toString(parameters));
        }
    }

    @Override
    int[] fromWritten(int[] written) {
        int min = written.length > 0 ? written[0] : MIN_RING_SIZE;
        int max = written.length > 1 ? written[1] : Math.max(defaultMax, min);
        return new int[] {min, max};
    }

    @Override
    int[] written(int[] parameters) {
        return parameters.clone();
    }

    @Override
    String digestTag() {
        return name();
    }
}
