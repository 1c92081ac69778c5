package com.example.grpcjava;

import io.grpc.LoadBalancer;
import io.grpc.LoadBalancerProvider;
import io.grpc.NameResolver;
import io.grpc.Status;

import java.nio.file.Path;
import java.util.Map;

/**
 * grpc-java's {@code ring_hash} answered from a ringstore ring file: the load balancing policy
 * {@value #POLICY_NAME}, whose picker sends each RPC where grpc-java's own {@code RingHashLoadBalancer}
 * would over the same servers (the file's {@code grpc-java[:MIN[:MAX]]} ring), with the ring in the
 * file's pages, shared by every channel and process mapping it, instead of in each channel's heap.
 *
 * <p>Register it and name it in a service config, with the file and the header the request hash comes
 * from (grpc-java's {@code requestHashHeader}, gRFC A76: the header's values joined by {@code ,}):
 *
 * <pre>{@code
 * LoadBalancerRegistry.getDefaultRegistry().register(new RingFileLoadBalancerProvider());
 * ManagedChannel channel = Grpc.newChannelBuilder(target, InsecureChannelCredentials.create())
 *         .defaultServiceConfig(Map.of("loadBalancingConfig", List.of(Map.of(
 *                 "ringstore_ring_hash", Map.of(
 *                         "ringFile", "/etc/ringstore/api.ring",
 *                         "requestHashHeader", "x-user-id")))))
 *         .build();
 * }</pre>
 *
 * <p>The file is followed: one published again at the path (a weight changed, a server added or
 * removed) places the next RPCs, without a new channel. The channel's name resolver still gives the
 * servers to connect to; a ring entry whose server the resolver has not given is passed over like a
 * failed one ({@link RingFileLoadBalancer}).
 */
public final class RingFileLoadBalancerProvider extends LoadBalancerProvider {
    /** The policy's name in a service config. */
    public static final String POLICY_NAME = "ringstore_ring_hash";

    /** The policy's configuration: the ring file, and the header whose values are the request hash key. */
    record Config(Path ringFile, String requestHashHeader) {
    }

    @Override
    public boolean isAvailable() {
        return true;
    }

    @Override
    public int getPriority() {
        return 5;
    }

    @Override
    public String getPolicyName() {
        return POLICY_NAME;
    }

    @Override
    public LoadBalancer newLoadBalancer(LoadBalancer.Helper helper) {
        return new RingFileLoadBalancer(helper);
    }

    @Override
    public NameResolver.ConfigOrError parseLoadBalancingPolicyConfig(Map<String, ?> raw) {
        Object file = raw.get("ringFile");
        Object header = raw.get("requestHashHeader");
        if (!(file instanceof String f) || f.isEmpty()) {
            return NameResolver.ConfigOrError.fromError(
                    Status.UNAVAILABLE.withDescription(POLICY_NAME + ": \"ringFile\" must be a path: " + file));
        }
        if (!(header instanceof String h) || h.isEmpty() || h.endsWith("-bin")) {
            return NameResolver.ConfigOrError.fromError(Status.UNAVAILABLE.withDescription(
                    POLICY_NAME + ": \"requestHashHeader\" must be an ASCII header's name: " + header));
        }
        return NameResolver.ConfigOrError.fromConfig(new Config(Path.of(f), h.toLowerCase(java.util.Locale.ROOT)));
    }
}
