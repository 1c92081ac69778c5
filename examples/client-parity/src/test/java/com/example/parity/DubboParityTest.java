package com.example.parity;

import com.example.parity.Fleets.Server;
import io.ringstore.Ring;
import io.ringstore.RingStore;
import org.apache.dubbo.common.URL;
import org.apache.dubbo.rpc.Invoker;
import org.apache.dubbo.rpc.RpcInvocation;
import org.apache.dubbo.rpc.cluster.loadbalance.ConsistentHashLoadBalance;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.reflect.Field;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * ringstore's {@code dubbo} and {@code dubbo:K} rings against Apache Dubbo 3.3.5's own
 * {@code ConsistentHashLoadBalance} (its {@code ConsistentHashSelector}), over providers whose URLs are
 * written as the backends file writes them: {@code dubbo://10.0.1.1:20880/...},
 * {@code dubbo://[2001:db8::a]:20880/...} (Dubbo keeps the URL's host as written, brackets and zero runs
 * included, and hashes {@code getAddress()}: host, {@code :}, port), a host name for a {@code name=}
 * backend, port 20880 where the file writes none. For each fleet of {@link Fleets#all}: every point of
 * the selector's {@code TreeMap} (hash and provider, read by reflection: Dubbo has no accessor), and
 * each key's provider as {@code select} picks it (the key the call's first argument).
 */
class DubboParityTest {
    static final int KEYS = 100_000;

    @TempDir
    Path dir;

    @Test
    void everyPointAndKeyAsDubbosSelector() throws Exception {
        List<String> keys = Fleets.keys(11, KEYS);
        long compared = 0;
        List<String> failures = new ArrayList<>();
        for (Map.Entry<String, List<Server>> fleet : Fleets.all(30).entrySet()) {
            for (String version : List.of("dubbo", "dubbo:40")) {
                int nodes = version.equals("dubbo") ? 160 : 40;
                List<Invoker<Object>> invokers = invokers(fleet.getValue(), nodes);
                Map<Invoker<?>, Integer> index = new IdentityHashMap<>();
                for (int i = 0; i < invokers.size(); i++) {
                    index.put(invokers.get(i), i);
                }
                ConsistentHashLoadBalance balance = new ConsistentHashLoadBalance();
                String what = version + " over " + fleet.getKey();
                try (RingStore store = RingStore.open(Fleets.ringFile(dir, fleet.getKey(), fleet.getValue(), version))) {
                    Ring ring = Fleets.ring(store);
                    List<String> disagree = new ArrayList<>();
                    int count = version.equals("dubbo") ? keys.size() : keys.size() / 5;
                    for (String key : keys.subList(0, count)) {
                        Invoker<Object> theirs = balance.select(invokers, invokers.getFirst().getUrl(), invocation(key));
                        int ours = ring.lookup(key.getBytes(StandardCharsets.UTF_8));
                        if (ours != index.get(theirs)) {
                            disagree.add(key);
                        }
                    }
                    compared += count;
                    System.out.printf("%s: %d keys, %d disagreements%n", what, count, disagree.size());
                    if (!disagree.isEmpty()) {
                        failures.add(disagree.size() + " of " + count + " keys disagree, " + what + " (the first: "
                                + disagree.subList(0, Math.min(3, disagree.size())) + ")");
                        continue;
                    }
                    TreeMap<Long, Invoker<?>> points = points(balance);
                    assertEquals(points.size(), ring.pointCount(), what + ": points");
                    int p = 0;
                    for (Map.Entry<Long, Invoker<?>> e : points.entrySet()) {
                        assertEquals(e.getKey(), ring.pointHash(p), what + ": point " + p);
                        assertEquals(index.get(e.getValue()), ring.pointBackend(p), what + ": point " + p + "'s provider");
                        p++;
                    }
                }
            }
        }
        System.out.println("dubbo: " + compared + " keys compared with ConsistentHashLoadBalance");
        assertEquals(List.of(), failures);
    }

    /** A provider's URL as a registry or a reference would give it: the address as the backends file writes it, port 20880 where it has none. */
    static String url(Server s, int nodes) {
        String host = s.name() != null ? s.name() : s.ipv6() ? "[" + s.host() + "]" : s.host();
        return "dubbo://" + host + ":" + s.port(20880) + "/com.example.Cache?hash.nodes=" + nodes;
    }

    /** Invokers that are their URL and nothing else, all a load balance asks of them. */
    @SuppressWarnings("unchecked")
    static List<Invoker<Object>> invokers(List<Server> servers, int nodes) {
        List<Invoker<Object>> out = new ArrayList<>();
        for (Server s : servers) {
            URL url = URL.valueOf(url(s, nodes));
            out.add((Invoker<Object>) Proxy.newProxyInstance(DubboParityTest.class.getClassLoader(), new Class<?>[] {Invoker.class},
                    (proxy, method, args) -> switch (method.getName()) {
                        case "getUrl" -> url;
                        case "isAvailable" -> true;
                        case "getInterface" -> Object.class;
                        case "toString" -> "invoker " + url.getAddress();
                        case "hashCode" -> System.identityHashCode(proxy);
                        case "equals" -> proxy == args[0];
                        default -> throw new UnsupportedOperationException(method.getName());
                    }));
        }
        return out;
    }

    /** A call of {@code get(key)}: Dubbo hashes its first argument ({@code hash.arguments} 0). */
    static RpcInvocation invocation(String key) {
        RpcInvocation call = new RpcInvocation();
        call.setMethodName("get");
        call.setParameterTypes(new Class<?>[] {String.class});
        call.setArguments(new Object[] {key});
        return call;
    }

    /** The points of the balance's one selector ({@code selectors}' one value, its {@code virtualInvokers}). */
    @SuppressWarnings("unchecked")
    static TreeMap<Long, Invoker<?>> points(ConsistentHashLoadBalance balance) throws Exception {
        Field selectors = ConsistentHashLoadBalance.class.getDeclaredField("selectors");
        selectors.setAccessible(true);
        Map<String, ?> all = (Map<String, ?>) selectors.get(balance);
        assertEquals(1, all.size(), "one service method, one selector");
        Object selector = all.values().iterator().next();
        Field points = selector.getClass().getDeclaredField("virtualInvokers");
        points.setAccessible(true);
        return (TreeMap<Long, Invoker<?>>) points.get(selector);
    }
}
