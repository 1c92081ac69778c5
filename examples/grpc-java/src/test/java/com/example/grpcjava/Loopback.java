package com.example.grpcjava;

import io.grpc.Attributes;
import io.grpc.CallOptions;
import io.grpc.ClientInterceptors;
import io.grpc.EquivalentAddressGroup;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.NameResolver;
import io.grpc.NameResolverProvider;
import io.grpc.NameResolverRegistry;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.ServerCalls;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.reflect.Field;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Real gRPC on loopback: netty servers on 127.0.0.1 answering one unary method with their own port,
 * a name resolver ({@code fleet://NAME}) giving a channel a fleet's addresses with their weights (as
 * xDS gives them, grpc-java's {@code ATTR_SERVER_WEIGHT}), and channels whose service config names
 * grpc-java's own {@code ring_hash_experimental} or {@link RingFileLoadBalancerProvider}.
 */
final class Loopback {
    /** The method: a string in, the answering server's {@code ip:port} out. */
    static final MethodDescriptor<String, String> WHO = MethodDescriptor.<String, String>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName("ringstore.Test/Who")
            .setRequestMarshaller(new Text())
            .setResponseMarshaller(new Text())
            .build();
    private static final Map<String, List<EquivalentAddressGroup>> FLEETS = new ConcurrentHashMap<>();

    static {
        NameResolverRegistry.getDefaultRegistry().register(new FleetResolverProvider());
    }

    private Loopback() {
    }

    /** Starts a server on 127.0.0.1 (a free port) answering {@link #WHO}. */
    static Server server() throws IOException {
        return server("127.0.0.1");
    }

    /** Starts a server on the loopback address {@code ip} (a free port) answering {@link #WHO} with {@link #id}. */
    static Server server(String ip) throws IOException {
        String[] id = new String[1];
        ServerServiceDefinition service = ServerServiceDefinition.builder("ringstore.Test")
                .addMethod(WHO, ServerCalls.asyncUnaryCall((String request, io.grpc.stub.StreamObserver<String> out) -> {
                    out.onNext(id[0]);
                    out.onCompleted();
                }))
                .build();
        Server s = NettyServerBuilder.forAddress(new InetSocketAddress(InetAddress.ofLiteral(ip), 0))
                .addService(service)
                .build()
                .start();
        id[0] = id(ip, s.getPort());
        return s;
    }

    /** {@return whether a socket binds to ::1 here (a container without IPv6 has none)} */
    static boolean hasIpv6Loopback() {
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, InetAddress.ofLiteral("::1"))) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** {@return how a server answers: its IP as written and its port} */
    static String id(String ip, int port) {
        return ip + " " + port;
    }

    /** {@return the target of a fleet of these servers with these weights, as a name resolver gives them} */
    static String fleet(String name, List<Fleet.Server> servers) {
        List<EquivalentAddressGroup> groups = new ArrayList<>();
        for (Fleet.Server s : servers) {
            groups.add(new EquivalentAddressGroup(
                    s.address(), Attributes.newBuilder().set(serverWeight(), (long) s.weight()).build()));
        }
        FLEETS.put(name, groups);
        return "fleet://" + name;
    }

    /** A channel to {@code target} with the load balancing policy {@code policy} configured by {@code config}. */
    static ManagedChannel channel(String target, String policy, Map<String, ?> config) {
        return Grpc.newChannelBuilder(target, InsecureChannelCredentials.create())
                .defaultServiceConfig(Map.of("loadBalancingConfig", List.of(Map.of(policy, config))))
                .build();
    }

    /** A channel with grpc-java's own {@code ring_hash}, sizes {@code min} and {@code max}, the hash from {@link ReferenceRingHash#HEADER}. */
    static ManagedChannel ringHashChannel(String target, long min, long max) {
        io.grpc.xds.RingHashOptions.setRingSizeCap(Math.max(max, 4096));
        return channel(target, "ring_hash_experimental", Map.of(
                "minRingSize", (double) min, "maxRingSize", (double) max, "requestHashHeader", ReferenceRingHash.HEADER));
    }

    /** A channel with {@link RingFileLoadBalancerProvider} over {@code ringFile}, the hash from {@link ReferenceRingHash#HEADER}. */
    static ManagedChannel ringFileChannel(String target, java.nio.file.Path ringFile) {
        return channel(target, RingFileLoadBalancerProvider.POLICY_NAME, Map.of(
                "ringFile", ringFile.toString(), "requestHashHeader", ReferenceRingHash.HEADER));
    }

    /** {@return the server ({@link #id}) that answered a call whose header is {@code key}; waits for a ready server} */
    static String call(ManagedChannel channel, String key) {
        Metadata headers = new Metadata();
        headers.put(Metadata.Key.of(ReferenceRingHash.HEADER, Metadata.ASCII_STRING_MARSHALLER), key);
        return ClientCalls.blockingUnaryCall(
                ClientInterceptors.intercept(channel, MetadataUtils.newAttachHeadersInterceptor(headers)),
                WHO,
                CallOptions.DEFAULT.withWaitForReady().withDeadlineAfter(20, TimeUnit.SECONDS),
                key);
    }

    static void close(ManagedChannel channel) throws InterruptedException {
        channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
    }

    /** {@code io.grpc.xds.XdsAttributes.ATTR_SERVER_WEIGHT}: package-private in grpc-xds, where EDS sets it. */
    @SuppressWarnings("unchecked")
    static Attributes.Key<Long> serverWeight() {
        try {
            Field f = Class.forName("io.grpc.xds.XdsAttributes").getDeclaredField("ATTR_SERVER_WEIGHT");
            f.setAccessible(true);
            return (Attributes.Key<Long>) f.get(null);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    /** {@code fleet://NAME}: the addresses {@link #fleet} registered under NAME. */
    private static final class FleetResolverProvider extends NameResolverProvider {
        @Override
        protected boolean isAvailable() {
            return true;
        }

        @Override
        protected int priority() {
            return 5;
        }

        @Override
        public String getDefaultScheme() {
            return "fleet";
        }

        @Override
        public NameResolver newNameResolver(URI target, NameResolver.Args args) {
            if (!"fleet".equals(target.getScheme())) {
                return null;
            }
            String name = target.getAuthority();
            return new NameResolver() {
                @Override
                public String getServiceAuthority() {
                    return name;
                }

                @Override
                public void start(Listener2 listener) {
                    List<EquivalentAddressGroup> groups = FLEETS.get(name);
                    if (groups == null) {
                        listener.onError(Status.UNAVAILABLE.withDescription("no fleet " + name));
                        return;
                    }
                    listener.onResult(ResolutionResult.newBuilder().setAddressesOrError(
                            io.grpc.StatusOr.fromValue(groups)).build());
                }

                @Override
                public void shutdown() {
                }
            };
        }

        @Override
        public java.util.Collection<Class<? extends java.net.SocketAddress>> getProducedSocketAddressTypes() {
            return List.of(InetSocketAddress.class);
        }
    }

    /** UTF-8 text messages. */
    private static final class Text implements MethodDescriptor.Marshaller<String> {
        @Override
        public InputStream stream(String value) {
            return new ByteArrayInputStream(value.getBytes(StandardCharsets.UTF_8));
        }

        @Override
        public String parse(InputStream stream) {
            try {
                return new String(stream.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
