package com.example.grpcjava;

import io.grpc.Attributes;
import io.grpc.CallOptions;
import io.grpc.ChannelLogger;
import io.grpc.ConnectivityState;
import io.grpc.ConnectivityStateInfo;
import io.grpc.EquivalentAddressGroup;
import io.grpc.LoadBalancer;
import io.grpc.LoadBalancerProvider;
import io.grpc.LoadBalancerRegistry;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.NameResolver;
import io.grpc.Status;
import io.grpc.SynchronizationContext;

import java.lang.reflect.Field;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

/**
 * grpc-java's own {@code ring_hash} ({@code io.grpc.xds.RingHashLoadBalancer}, from grpc-xds), driven
 * through the load balancer API as a channel drives it: the provider the registry holds parses the
 * policy's configuration, the balancer takes the resolved addresses (a server's weight as the xDS
 * attribute {@code ATTR_SERVER_WEIGHT}), and its picker picks for a request whose header carries the
 * key. Its subchannels are stand-ins that connect when asked (READY at once), or fail when told to:
 * the picker's failover over them is grpc-java's own.
 */
final class ReferenceRingHash implements AutoCloseable {
    static final String HEADER = "x-ring-key";
    private static final Metadata.Key<String> KEY = Metadata.Key.of(HEADER, Metadata.ASCII_STRING_MARSHALLER);
    private static final MethodDescriptor<Void, Void> METHOD = MethodDescriptor.<Void, Void>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName("test/Call")
            .setRequestMarshaller(new VoidMarshaller())
            .setResponseMarshaller(new VoidMarshaller())
            .build();

    private final SynchronizationContext sync = new SynchronizationContext((t, e) -> {
        throw new AssertionError(e);
    });
    private final ScheduledExecutorService timers = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "reference-ring-hash-timers");
        t.setDaemon(true);
        return t;
    });
    private final LoadBalancerProvider provider =
            LoadBalancerRegistry.getDefaultRegistry().getProvider("ring_hash_experimental");
    private final Map<InetSocketAddress, StandIn> subchannels = new HashMap<>();
    private final LoadBalancer balancer;
    private LoadBalancer.SubchannelPicker picker;

    ReferenceRingHash() {
        if (provider == null) {
            throw new IllegalStateException("grpc-xds registers no ring_hash_experimental");
        }
        balancer = provider.newLoadBalancer(new Helper());
    }

    /**
     * Gives the balancer {@code servers} (their weights as the xDS attribute) and a configuration of ring
     * sizes {@code min} and {@code max}, as a service config's {@code ring_hash_experimental} would, the
     * request hash from {@link #HEADER}. A max above grpc-java's cap of 4,096 needs the cap raised first
     * ({@code RingHashOptions.setRingSizeCap}), as a client wanting it must.
     */
    void accept(List<Fleet.Server> servers, long min, long max) {
        io.grpc.xds.RingHashOptions.setRingSizeCap(Math.max(max, 4096));
        Map<String, Object> json = new HashMap<>();
        json.put("minRingSize", (double) min);
        json.put("maxRingSize", (double) max);
        json.put("requestHashHeader", HEADER);
        NameResolver.ConfigOrError config = provider.parseLoadBalancingPolicyConfig(json);
        if (config.getError() != null) {
            throw new IllegalArgumentException(config.getError().toString());
        }
        List<EquivalentAddressGroup> groups = new ArrayList<>();
        for (Fleet.Server s : servers) {
            groups.add(new EquivalentAddressGroup(
                    s.address(), Attributes.newBuilder().set(serverWeight(), (long) s.weight()).build()));
        }
        sync.execute(() -> {
            Status status = balancer.acceptResolvedAddresses(LoadBalancer.ResolvedAddresses.newBuilder()
                    .setAddresses(groups)
                    .setLoadBalancingPolicyConfig(config.getConfig())
                    .build());
            if (!status.isOk()) {
                throw new IllegalArgumentException(status.toString());
            }
        });
    }

    /** {@return the address grpc-java's picker sends a request whose header is {@code key} to, connecting what it asks for} */
    InetSocketAddress pick(String key) {
        Metadata headers = new Metadata();
        headers.put(KEY, key);
        LoadBalancer.PickSubchannelArgs args = new LoadBalancer.PickSubchannelArgs() {
            @Override
            public CallOptions getCallOptions() {
                return CallOptions.DEFAULT;
            }

            @Override
            public Metadata getHeaders() {
                return headers;
            }

            @Override
            public MethodDescriptor<?, ?> getMethodDescriptor() {
                return METHOD;
            }
        };
        for (int attempt = 0; attempt < 4; attempt++) {
            LoadBalancer.PickResult r = picker.pickSubchannel(args);
            if (r.getSubchannel() != null) {
                return ((StandIn) r.getSubchannel()).address;
            }
            if (!r.getStatus().isOk()) {
                throw new AssertionError("grpc-java's picker failed: " + r.getStatus());
            }
            sync.drain(); // the connection it asked for: READY, and a new picker
        }
        throw new AssertionError("grpc-java's picker queued " + key + " four times");
    }

    /** Makes the subchannel of {@code address} fail (TRANSIENT_FAILURE), as a refused connection does; it stays failed. */
    void fail(InetSocketAddress address) {
        sync.execute(() -> {
            StandIn s = subchannels.get(address);
            s.failed = true;
            s.listener.onSubchannelState(ConnectivityStateInfo.forTransientFailure(Status.UNAVAILABLE));
        });
    }

    @Override
    public void close() {
        sync.execute(balancer::shutdown);
        timers.shutdownNow();
    }

    /** {@code io.grpc.xds.XdsAttributes.ATTR_SERVER_WEIGHT}: package-private in grpc-xds, where EDS sets it. */
    @SuppressWarnings("unchecked")
    private static Attributes.Key<Long> serverWeight() {
        try {
            Field f = Class.forName("io.grpc.xds.XdsAttributes").getDeclaredField("ATTR_SERVER_WEIGHT");
            f.setAccessible(true);
            return (Attributes.Key<Long>) f.get(null);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    private final class Helper extends LoadBalancer.Helper {
        @Override
        public LoadBalancer.Subchannel createSubchannel(LoadBalancer.CreateSubchannelArgs args) {
            StandIn s = new StandIn(args);
            subchannels.put(s.address, s);
            return s;
        }

        @Override
        public void updateBalancingState(ConnectivityState state, LoadBalancer.SubchannelPicker newPicker) {
            picker = newPicker;
        }

        @Override
        public SynchronizationContext getSynchronizationContext() {
            return sync;
        }

        @Override
        public ScheduledExecutorService getScheduledExecutorService() {
            return timers;
        }

        @Override
        public ChannelLogger getChannelLogger() {
            return new ChannelLogger() {
                @Override
                public void log(ChannelLogLevel level, String message) {
                }

                @Override
                public void log(ChannelLogLevel level, String messageFormat, Object... args) {
                }
            };
        }

        @Override
        public String getAuthority() {
            return "reference";
        }

        @Override
        public void refreshNameResolution() {
        }

        @Override
        public io.grpc.ManagedChannel createOobChannel(EquivalentAddressGroup eag, String authority) {
            throw new UnsupportedOperationException();
        }
    }

    /** A subchannel that connects at once when asked, unless told to fail. */
    private final class StandIn extends LoadBalancer.Subchannel {
        private final LoadBalancer.CreateSubchannelArgs args;
        final InetSocketAddress address;
        LoadBalancer.SubchannelStateListener listener;
        boolean failed;

        StandIn(LoadBalancer.CreateSubchannelArgs args) {
            this.args = args;
            this.address = (InetSocketAddress) args.getAddresses().getFirst().getAddresses().getFirst();
        }

        @Override
        public void start(LoadBalancer.SubchannelStateListener l) {
            listener = l;
        }

        @Override
        public void requestConnection() {
            if (!failed) {
                sync.execute(() -> listener.onSubchannelState(ConnectivityStateInfo.forNonError(ConnectivityState.CONNECTING)));
                sync.execute(() -> listener.onSubchannelState(ConnectivityStateInfo.forNonError(ConnectivityState.READY)));
            }
        }

        @Override
        public void shutdown() {
        }

        @Override
        public List<EquivalentAddressGroup> getAllAddresses() {
            return args.getAddresses();
        }

        @Override
        public Attributes getAttributes() {
            return args.getAttributes();
        }

        @Override
        public ChannelLogger getChannelLogger() {
            return new ChannelLogger() {
                @Override
                public void log(ChannelLogLevel level, String message) {
                }

                @Override
                public void log(ChannelLogLevel level, String messageFormat, Object... args) {
                }
            };
        }
    }

    /** No message: the picker never reads one. */
    private static final class VoidMarshaller implements MethodDescriptor.Marshaller<Void> {
        @Override
        public java.io.InputStream stream(Void value) {
            return java.io.InputStream.nullInputStream();
        }

        @Override
        public Void parse(java.io.InputStream stream) {
            return null;
        }
    }
}
