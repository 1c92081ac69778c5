package com.example.grpcjava;

import io.grpc.ConnectivityState;
import io.grpc.ConnectivityStateInfo;
import io.grpc.EquivalentAddressGroup;
import io.grpc.LoadBalancer;
import io.grpc.Metadata;
import io.grpc.Status;
import io.ringstore.Backend;
import io.ringstore.RingFileException;
import io.ringstore.RingStore;
import io.ringstore.family.Families;
import io.ringstore.family.RingVersion;
import io.ringstore.live.RingRouter;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The {@value RingFileLoadBalancerProvider#POLICY_NAME} balancer: a subchannel per server the name
 * resolver gives (connected when a pick first needs it, as {@code ring_hash} does), and a picker that
 * looks the request hash key up in the ring file's {@code grpc-java} ring and walks on from there as
 * grpc-java's {@code RingHashPicker} does: the first entry whose server is READY takes the RPC; an
 * entry CONNECTING queues it; an IDLE one is asked to connect and queues it; a failed one
 * (TRANSIENT_FAILURE), or one whose server the resolver has not given, is passed over. A request
 * without the header gets a random hash, as in grpc-java.
 *
 * <p>The key's bytes are the header's values joined by {@code ,}, each character one byte
 * ({@code Metadata} keeps a character outside ASCII as {@code ?}): grpc-java's
 * {@code XxHash64.hashAsciiString} of the same text.
 */
final class RingFileLoadBalancer extends LoadBalancer {
    private final Helper helper;
    /** The servers the resolver gave, by address. */
    private final Map<InetSocketAddress, Endpoint> endpoints = new HashMap<>();
    /** Each ring file backend's address ({@link Backend#socketAddress()} parsed), shared by the pickers. */
    private final Map<String, InetSocketAddress> backendAddresses = new ConcurrentHashMap<>();
    private Path ringFile;
    private RingRouter router;
    private RingRouter.Route route;
    private Metadata.Key<String> header;

    RingFileLoadBalancer(Helper helper) {
        this.helper = helper;
    }

    /** A server the resolver gave: its subchannel and the state it reported last. */
    private static final class Endpoint {
        final Subchannel subchannel;
        volatile ConnectivityStateInfo state = ConnectivityStateInfo.forNonError(ConnectivityState.IDLE);

        Endpoint(Subchannel subchannel) {
            this.subchannel = subchannel;
        }
    }

    @Override
    public Status acceptResolvedAddresses(ResolvedAddresses resolved) {
        RingFileLoadBalancerProvider.Config config =
                (RingFileLoadBalancerProvider.Config) resolved.getLoadBalancingPolicyConfig();
        if (config == null) {
            return fail(Status.UNAVAILABLE.withDescription("no " + RingFileLoadBalancerProvider.POLICY_NAME + " configuration"));
        }
        if (!config.ringFile().equals(ringFile)) {
            try {
                follow(config.ringFile());
            } catch (RingFileException | RuntimeException e) {
                return fail(Status.UNAVAILABLE.withDescription(config.ringFile() + ": " + e.getMessage()).withCause(e));
            }
        }
        header = Metadata.Key.of(config.requestHashHeader(), Metadata.ASCII_STRING_MARSHALLER);
        Set<InetSocketAddress> given = new HashSet<>();
        for (EquivalentAddressGroup group : resolved.getAddresses()) {
            SocketAddress a = group.getAddresses().getFirst();
            if (!(a instanceof InetSocketAddress address) || !given.add(address)) {
                continue;
            }
            endpoints.computeIfAbsent(address, x -> start(group));
        }
        endpoints.entrySet().removeIf(e -> {
            if (given.contains(e.getKey())) {
                return false;
            }
            e.getValue().subchannel.shutdown();
            return true;
        });
        updatePicker();
        return Status.OK;
    }

    /** Follows {@code file}: its grpc-java version, the router over it. */
    private void follow(Path file) throws RingFileException {
        RingVersion version;
        try (RingStore s = RingStore.open(file)) {
            version = s.versions().stream()
                    .filter(v -> v.family() == Families.GRPC_JAVA)
                    .findFirst()
                    .orElseThrow(() -> new IllegalArgumentException("no grpc-java ring (the file has " + s.versions()
                            + "): build it with --algorithm grpc-java[:MIN[:MAX]]"));
        }
        RingRouter next = RingRouter.builder(file).versions(version, version).open();
        closeRouter();
        router = next;
        route = next.route(Set.of());
        ringFile = file;
        backendAddresses.clear();
    }

    private Endpoint start(EquivalentAddressGroup group) {
        Subchannel subchannel = helper.createSubchannel(
                CreateSubchannelArgs.newBuilder().setAddresses(group).build());
        Endpoint e = new Endpoint(subchannel);
        subchannel.start(state -> {
            e.state = state;
            if (state.getState() == ConnectivityState.IDLE || state.getState() == ConnectivityState.TRANSIENT_FAILURE) {
                helper.refreshNameResolution();
            }
            updatePicker();
        });
        return e;
    }

    /** A new picker over the endpoints' states now, and the channel's state: READY if one is, else CONNECTING, IDLE, TRANSIENT_FAILURE. */
    private void updatePicker() {
        ConnectivityState overall = ConnectivityState.TRANSIENT_FAILURE;
        for (Endpoint e : endpoints.values()) {
            ConnectivityState s = e.state.getState();
            if (s == ConnectivityState.READY
                    || (s == ConnectivityState.CONNECTING && overall != ConnectivityState.READY)
                    || (s == ConnectivityState.IDLE && overall == ConnectivityState.TRANSIENT_FAILURE)) {
                overall = s;
            }
        }
        helper.updateBalancingState(overall, new Picker(route, header, Map.copyOf(endpoints)));
    }

    private Status fail(Status status) {
        helper.updateBalancingState(ConnectivityState.TRANSIENT_FAILURE, new FixedResultPicker(PickResult.withError(status)));
        return status;
    }

    @Override
    public void handleNameResolutionError(Status error) {
        if (endpoints.isEmpty()) {
            fail(error);
        }
    }

    @Override
    public void shutdown() {
        for (Endpoint e : endpoints.values()) {
            e.subchannel.shutdown();
        }
        endpoints.clear();
        closeRouter();
    }

    private void closeRouter() {
        if (route != null) {
            route.close();
            router.close();
            route = null;
            router = null;
        }
    }

    /** The picker: the ring file's entry for the key, then grpc-java's walk. */
    private final class Picker extends SubchannelPicker {
        private final RingRouter.Route route;
        private final Metadata.Key<String> header;
        private final Map<InetSocketAddress, Endpoint> endpoints;

        Picker(RingRouter.Route route, Metadata.Key<String> header, Map<InetSocketAddress, Endpoint> endpoints) {
            this.route = route;
            this.header = header;
            this.endpoints = endpoints;
        }

        @Override
        public PickResult pickSubchannel(PickSubchannelArgs args) {
            Iterable<String> values = args.getHeaders().getAll(header);
            byte[] key;
            if (values != null) {
                key = String.join(",", values).getBytes(StandardCharsets.US_ASCII);
            } else { // grpc-java: a random hash
                key = new byte[8];
                ThreadLocalRandom.current().nextBytes(key);
            }
            Backend b = route.select(key, route.newRing().pointCount(), x -> {
                Endpoint e = endpoint(x);
                return e != null && e.state.getState() != ConnectivityState.TRANSIENT_FAILURE;
            });
            Endpoint e = b == null ? null : endpoint(b);
            if (e == null) {
                return PickResult.withError(Status.UNAVAILABLE.withDescription(
                        "ringstore_ring_hash: no server of the ring is connected or connecting"));
            }
            return switch (e.state.getState()) {
                case READY -> PickResult.withSubchannel(e.subchannel);
                case IDLE -> {
                    helper.getSynchronizationContext().execute(e.subchannel::requestConnection);
                    yield PickResult.withNoResult();
                }
                default -> PickResult.withNoResult();
            };
        }

        private Endpoint endpoint(Backend b) {
            return endpoints.get(backendAddresses.computeIfAbsent(b.socketAddress(), RingFileLoadBalancer::parse));
        }
    }

    /** {@code 10.0.0.1:8080}, {@code [2001:db8::1]:8080} as an address, without DNS. */
    private static InetSocketAddress parse(String socketAddress) {
        int colon = socketAddress.lastIndexOf(':');
        String host = socketAddress.substring(0, colon);
        if (host.startsWith("[")) {
            host = host.substring(1, host.length() - 1);
        }
        return new InetSocketAddress(InetAddress.ofLiteral(host), Integer.parseInt(socketAddress.substring(colon + 1)));
    }
}
