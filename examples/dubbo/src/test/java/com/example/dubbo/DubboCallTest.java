package com.example.dubbo;

import com.example.dubbo.Fixtures.Provider;
import io.ringstore.Ring;
import io.ringstore.RingStore;
import org.apache.dubbo.config.ApplicationConfig;
import org.apache.dubbo.config.ProtocolConfig;
import org.apache.dubbo.config.ReferenceConfig;
import org.apache.dubbo.config.RegistryConfig;
import org.apache.dubbo.config.ServiceConfig;
import org.apache.dubbo.config.bootstrap.DubboBootstrap;
import org.apache.dubbo.rpc.cluster.LoadBalance;
import org.apache.dubbo.rpc.model.FrameworkModel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Real Dubbo 3.3.5 calls over loopback: four providers in this JVM, each in a framework of its own,
 * exporting {@link Identity} on the dubbo protocol at 127.0.0.1 and answering its own address; a consumer
 * with direct URLs to them (no registry) and two references, {@code loadbalance=ringstore} over the
 * providers' ring file and Dubbo's own {@code loadbalance=consistenthash}. Every call is made through
 * both and must reach the same provider, which is also the ring file's answer for the call's key.
 * Then a provider stops and leaves the URL list: calls through references of the other three agree
 * again, and the load balance indexed the file once and built no ring.
 */
class DubboCallTest {
    private static final int PROVIDERS = 4;

    @TempDir
    Path dir;

    private final List<DubboBootstrap> started = new ArrayList<>();

    @AfterEach
    void stop() {
        for (DubboBootstrap b : started.reversed()) {
            b.destroy();
        }
    }

    /** The answer of a provider: its own address. */
    record Answer(String address) implements Identity {
        @Override
        public String who(String key) {
            return address;
        }

        @Override
        public String who2(String key, int n) {
            return address;
        }
    }

    @Test
    void callsLandWhereConsistentHashSendsThem() throws Exception {
        List<Provider> providers = new ArrayList<>();
        List<DubboBootstrap> servers = new ArrayList<>();
        for (int i = 0; i < PROVIDERS; i++) {
            int port = freePort();
            providers.add(new Provider("127.0.0.1", port));
            servers.add(provider(i, port));
        }
        Path file = Fixtures.ringFile(dir.resolve("providers.ring"), providers, "dubbo", 1);
        int gone = 2;
        List<Provider> rest = new ArrayList<>(providers);
        rest.remove(gone);

        DubboBootstrap consumer = DubboBootstrap.newInstance(new FrameworkModel()).application(application("consumer"));
        ReferenceConfig<Identity> ours = reference("ringstore-all", providers, "ringstore", file);
        ReferenceConfig<Identity> theirs = reference("consistenthash-all", providers, "consistenthash", file);
        ReferenceConfig<Identity> oursRest = reference("ringstore-rest", rest, "ringstore", file);
        ReferenceConfig<Identity> theirsRest = reference("consistenthash-rest", rest, "consistenthash", file);
        consumer.reference(ours).reference(theirs).reference(oursRest).reference(theirsRest).start();
        started.add(consumer);

        List<String> keys = Fixtures.keys(40, 4_000);
        try (RingStore store = RingStore.open(file)) {
            Ring ring = store.ring(Set.of());
            // All four providers.
            Map<String, Long> spread = compare(ours.get(), theirs.get(), keys, ring, store, providers);
            assertEquals(PROVIDERS, spread.size(), "every provider answers some keys: " + spread);
            System.out.println("all providers: " + spread);

            // Provider 2 stops and leaves the list.
            servers.get(gone).destroy();
            spread = compare(oursRest.get(), theirsRest.get(), keys, ring, store, rest);
            assertEquals(PROVIDERS - 1, spread.size(), "the other providers answer: " + spread);
            System.out.println("provider " + providers.get(gone).address() + " gone: " + spread);
        }
        RingstoreLoadBalance lb = (RingstoreLoadBalance) consumer.getApplicationModel()
                .getExtensionLoader(LoadBalance.class).getExtension(RingstoreLoadBalance.NAME);
        assertEquals(1, lb.generationsIndexed(), "the file was indexed once");
        assertEquals(2, lb.placementsBuilt(), "one placement per invoker list (Dubbo: a ring per list and method)");
        assertTrue(lb.walkedPast() > keys.size() / 10, "the keys of the provider gone walked on: " + lb.walkedPast());
        System.out.println("calls compared: " + compared + ", walked past the provider gone: " + lb.walkedPast());
    }

    private long compared;

    /**
     * Calls {@code who(k)} and {@code who2(k, n)} through both references for every key: the same
     * provider answers both, one of {@code listed}; {@code who}'s is the file's for {@code k} when every
     * provider is listed.
     */
    private Map<String, Long> compare(Identity ours, Identity theirs, List<String> keys, Ring ring, RingStore store,
                                      List<Provider> listed) {
        Set<String> addresses = listed.stream().map(Provider::address).collect(Collectors.toSet());
        List<String> answers = new ArrayList<>();
        int n = 0;
        for (String k : keys) {
            String got = ours.who(k);
            assertEquals(theirs.who(k), got, k);
            assertTrue(addresses.contains(got), got);
            if (listed.size() == PROVIDERS) {
                assertEquals(DubboRing.dubboAddress(store.backend(ring.lookup(k.getBytes(StandardCharsets.UTF_8)))), got, k);
            }
            answers.add(got);
            // who2 hashes n then k (hash.arguments=1,0).
            n++;
            String got2 = ours.who2(k, n);
            assertEquals(theirs.who2(k, n), got2, k + " " + n);
            if (listed.size() == PROVIDERS) {
                byte[] key = (n + k).getBytes(StandardCharsets.UTF_8);
                assertEquals(DubboRing.dubboAddress(store.backend(ring.lookup(key))), got2, n + k);
            }
            compared += 2;
        }
        return answers.stream().collect(Collectors.groupingBy(a -> a, Collectors.counting()));
    }

    /** A provider of {@link Identity} at 127.0.0.1:{@code port}, in a framework of its own, started. */
    private DubboBootstrap provider(int i, int port) {
        ServiceConfig<Identity> service = new ServiceConfig<>();
        service.setInterface(Identity.class);
        service.setRef(new Answer("127.0.0.1:" + port));
        ProtocolConfig protocol = new ProtocolConfig("dubbo", port);
        protocol.setHost("127.0.0.1");
        DubboBootstrap b = DubboBootstrap.newInstance(new FrameworkModel())
                .application(application("provider-" + i))
                .registry(new RegistryConfig(RegistryConfig.NO_AVAILABLE))
                .protocol(protocol)
                .service(service)
                .start();
        started.add(b);
        return b;
    }

    private static ApplicationConfig application(String name) {
        ApplicationConfig a = new ApplicationConfig(name);
        a.setQosEnable(false); // no QoS port
        return a;
    }

    /** A reference to {@code providers} by direct URLs, with {@code loadbalance} and the ring file. */
    private static ReferenceConfig<Identity> reference(String id, List<Provider> providers, String loadbalance, Path file) {
        ReferenceConfig<Identity> r = new ReferenceConfig<>();
        r.setId(id);
        r.setInterface(Identity.class);
        // Direct URLs are the invokers' URLs, where both load balances read hash.*: who has one argument, so
        // its key is argument 0; who2's is argument 1 then 0.
        r.setUrl(providers.stream().map(p -> "dubbo://" + p.address() + "?hash.arguments=1,0").collect(Collectors.joining(";")));
        r.setLoadbalance(loadbalance);
        r.setParameters(Map.of(RingstoreLoadBalance.FILE, file.toString()));
        r.setTimeout(10_000);
        r.setRetries(0);
        return r;
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
