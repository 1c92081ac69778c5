package com.example.parity;

import com.example.parity.Fleets.Server;
import com.google.code.yanf4j.core.Session;
import io.ringstore.Ring;
import io.ringstore.RingStore;
import io.ringstore.family.KeyHash;
import net.rubyeye.xmemcached.impl.KetamaMemcachedSessionLocator;
import net.rubyeye.xmemcached.networking.MemcachedSession;
import net.rubyeye.xmemcached.utils.InetSocketAddressWrapper;
import net.spy.memcached.DefaultHashAlgorithm;
import net.spy.memcached.KetamaNodeLocator;
import net.spy.memcached.MemcachedNode;
import org.apache.dubbo.rpc.Invocation;
import org.apache.dubbo.rpc.Invoker;
import org.apache.dubbo.rpc.cluster.loadbalance.ConsistentHashLoadBalance;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.lang.reflect.Field;
import java.lang.reflect.Proxy;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * A measuring program, not a test: each MD5 family's lookup from the {@code String} key, as an adapter
 * makes it ({@code key.getBytes(UTF_8)}, {@link Ring#lookup(byte[])}, the backend's node), against the
 * client's own locator on the same fleet and keys:
 *
 * <ul>
 *   <li>{@code spymemcached} against spymemcached 2.12.3's {@code KetamaNodeLocator.getPrimary}
 *       ({@code KETAMA_HASH}, 160 points a server);
 *   <li>{@code xmemcached} against xmemcached 2.4.8's {@code KetamaMemcachedSessionLocator.getSessionByKey}
 *       (failure mode on, so that no session's {@code isClosed} is asked: a stand-in's is a proxy call,
 *       and none is closed, so the answers are the same);
 *   <li>{@code dubbo} against Apache Dubbo 3.3.5's {@code ConsistentHashSelector.select} (the selector
 *       {@code ConsistentHashLoadBalance} made for the invokers, called through a method handle: it is a
 *       private class), a call of {@code get(key)}, {@code hash.nodes} 160.
 * </ul>
 * Servers: {@value #SERVERS} at seeded random IPv4 addresses (port 11211, Dubbo's 20880); keys:
 * {@value #KEYS} distinct URL-like strings of 20 to 60 characters (or fewer distinct ones, repeated to
 * {@value #KEYS}: the second argument, for a working set that stays in cache). Every key's answer is checked equal
 * on both sides first. Then rounds: each round times every side over all the keys, the client's and
 * ringstore's in turn (which goes first alternates), by the thread's CPU time (wall time beside it); and
 * ringstore's parts alone, to say where its time goes: the string's UTF-8 bytes
 * ({@code getBytes}), the MD5 of ready bytes, the lookup from ready bytes; and ringstore's lookups with
 * the key's bytes written into a reused buffer instead of a new array. Medians last.
 *
 * <pre>
 * mvn -B -q install -DskipTests                      # at the repository's root
 * mvn -B -q -f examples/client-parity/pom.xml test-compile dependency:build-classpath \
 *     -Dmdep.outputFile=target/cp.txt -Dmdep.includeScope=test
 * java -Xmx2g -cp examples/client-parity/target/test-classes:$(cat examples/client-parity/target/cp.txt) \
 *     com.example.parity.ClientLookupCost [rounds [distinct keys]]
 * </pre>
 */
public final class ClientLookupCost {
    static final int SERVERS = 200;
    static final int KEYS = 1 << 20;
    private static final ThreadMXBean THREAD = ManagementFactory.getThreadMXBean();

    /** The answer the sides count. */
    private static Object FIRST;
    private static String[] keys;
    private static byte[][] keyBytes;

    private ClientLookupCost() {
    }

    /**
     * One side: a lookup of every key, counting the answers that are {@link #FIRST} (a comparison, so that
     * each answer is used: the stand-ins' {@code hashCode()} is a proxy handler's call, and
     * {@code System.identityHashCode} measured tens of ns, both timed on both sides).
     */
    interface Side {
        long run();
    }

    public static void main(String[] args) throws Throwable {
        int rounds = count(args, 0, 7);
        int distinct = count(args, 1, KEYS);
        String[] unique = keys(distinct, 0xC0FFEE);
        keys = new String[KEYS];
        keyBytes = new byte[KEYS][];
        for (int i = 0; i < KEYS; i++) {
            keys[i] = unique[i % distinct]; // the same objects again when fewer are distinct: a working set in cache
            keyBytes[i] = i < distinct ? keys[i].getBytes(StandardCharsets.UTF_8) : keyBytes[i % distinct];
        }
        List<String> ips = ips(new SplittableRandom(32), SERVERS);
        Path dir = Files.createTempDirectory("client-lookup-cost");

        // spymemcached
        List<Server> memcached = ips.stream().map(ip -> new Server(ip + ":11211")).toList();
        List<MemcachedNode> nodes = new ArrayList<>();
        for (String ip : ips) {
            nodes.add(node(new InetSocketAddress(InetAddress.getByAddress(InetAddress.ofLiteral(ip).getAddress()), 11211)));
        }
        KetamaNodeLocator spy = new KetamaNodeLocator(nodes, DefaultHashAlgorithm.KETAMA_HASH);
        RingStore spyStore = RingStore.open(Fleets.ringFile(dir, "spy", memcached, "spymemcached"));
        Ring spyRing = Fleets.ring(spyStore);
        MemcachedNode[] spyNodes = nodes.toArray(new MemcachedNode[0]);

        // xmemcached
        List<Session> sessions = new ArrayList<>();
        for (String ip : ips) {
            sessions.add(session(new InetSocketAddress(InetAddress.getByAddress(InetAddress.ofLiteral(ip).getAddress()), 11211)));
        }
        KetamaMemcachedSessionLocator xmem = new KetamaMemcachedSessionLocator();
        xmem.updateSessions(sessions);
        xmem.setFailureMode(true);
        RingStore xmemStore = RingStore.open(Fleets.ringFile(dir, "xmem", memcached, "xmemcached"));
        Ring xmemRing = Fleets.ring(xmemStore);
        Session[] xmemSessions = sessions.toArray(new Session[0]);

        // Dubbo
        List<Server> providers = ips.stream().map(ip -> new Server(ip + ":20880")).toList();
        List<Invoker<Object>> invokers = DubboParityTest.invokers(providers, 160);
        ConsistentHashLoadBalance balance = new ConsistentHashLoadBalance();
        Invocation[] calls = new Invocation[KEYS];
        for (int i = 0; i < KEYS; i++) {
            calls[i] = i < distinct ? DubboParityTest.invocation(keys[i]) : calls[i % distinct];
        }
        balance.select(invokers, invokers.getFirst().getUrl(), calls[0]); // makes the selector
        Object selector = selector(balance);
        MethodHandle select = MethodHandles.privateLookupIn(selector.getClass(), MethodHandles.lookup())
                .findVirtual(selector.getClass(), "select", MethodType.methodType(Invoker.class, Invocation.class))
                .asType(MethodType.methodType(Invoker.class, Object.class, Invocation.class));
        RingStore dubboStore = RingStore.open(Fleets.ringFile(dir, "dubbo", providers, "dubbo"));
        Ring dubboRing = Fleets.ring(dubboStore);
        @SuppressWarnings("unchecked")
        Invoker<Object>[] dubboInvokers = invokers.toArray(new Invoker[0]);

        FIRST = spyNodes[0];
        System.out.printf(Locale.ROOT, "%d servers, %d keys of 20-60 characters (%d distinct); points: spymemcached %d, xmemcached %d, dubbo %d%n",
                SERVERS, KEYS, distinct, spyRing.pointCount(), xmemRing.pointCount(), dubboRing.pointCount());
        int spyDiffer = 0;
        int xmemDiffer = 0;
        int dubboDiffer = 0;
        for (int i = 0; i < KEYS; i++) {
            byte[] k = keys[i].getBytes(StandardCharsets.UTF_8);
            spyDiffer += spy.getPrimary(keys[i]) == spyNodes[spyRing.lookup(k)] ? 0 : 1;
            xmemDiffer += xmem.getSessionByKey(keys[i]) == xmemSessions[xmemRing.lookup(k)] ? 0 : 1;
            dubboDiffer += (Invoker<?>) select.invokeExact(selector, calls[i]) == dubboInvokers[dubboRing.lookup(k)] ? 0 : 1;
        }
        System.out.printf(Locale.ROOT, "answers differing: spymemcached %d, xmemcached %d, dubbo %d (of %d keys each)%n",
                spyDiffer, xmemDiffer, dubboDiffer, KEYS);
        if (spyDiffer + xmemDiffer + dubboDiffer != 0) {
            throw new IllegalStateException("the ring files do not answer as the clients do");
        }

        String[] names = {"spymemcached getPrimary", "ringstore spymemcached", "xmemcached getSessionByKey", "ringstore xmemcached",
            "dubbo select", "ringstore dubbo", "  parts: getBytes(UTF_8)", "  parts: MD5 of the bytes", "  parts: lookup from the bytes",
            "ringstore spymemcached, no byte[]", "ringstore xmemcached, no byte[]", "ringstore dubbo, no byte[]"};
        Side[] sides = {
            () -> {
                long s = 0;
                for (String k : keys) {
                    s += spy.getPrimary(k) == FIRST ? 1 : 0;
                }
                return s;
            },
            () -> {
                long s = 0;
                for (String k : keys) {
                    s += spyNodes[spyRing.lookup(k.getBytes(StandardCharsets.UTF_8))] == FIRST ? 1 : 0;
                }
                return s;
            },
            () -> {
                long s = 0;
                for (String k : keys) {
                    s += xmem.getSessionByKey(k) == FIRST ? 1 : 0;
                }
                return s;
            },
            () -> {
                long s = 0;
                for (String k : keys) {
                    s += xmemSessions[xmemRing.lookup(k.getBytes(StandardCharsets.UTF_8))] == FIRST ? 1 : 0;
                }
                return s;
            },
            () -> {
                long s = 0;
                try {
                    for (Invocation c : calls) {
                        s += (Invoker<?>) select.invokeExact(selector, c) == FIRST ? 1 : 0;
                    }
                } catch (Throwable e) {
                    throw new IllegalStateException(e);
                }
                return s;
            },
            () -> {
                long s = 0;
                for (Invocation c : calls) {
                    String k = String.valueOf(c.getArguments()[0]); // Dubbo's toKey of hash.arguments 0
                    s += dubboInvokers[dubboRing.lookup(k.getBytes(StandardCharsets.UTF_8))] == FIRST ? 1 : 0;
                }
                return s;
            },
            () -> {
                long s = 0;
                for (String k : keys) {
                    s += k.getBytes(StandardCharsets.UTF_8).length;
                }
                return s;
            },
            () -> {
                long s = 0;
                for (byte[] k : keyBytes) {
                    s += KeyHash.MD5.hash(k);
                }
                return s;
            },
            () -> {
                long s = 0;
                for (byte[] k : keyBytes) {
                    s += spyRing.lookup(k);
                }
                return s;
            },
            () -> {
                long s = 0;
                byte[] buffer = new byte[256];
                for (String k : keys) {
                    s += spyNodes[lookupInto(spyRing, k, buffer)] == FIRST ? 1 : 0;
                }
                return s;
            },
            () -> {
                long s = 0;
                byte[] buffer = new byte[256];
                for (String k : keys) {
                    s += xmemSessions[lookupInto(xmemRing, k, buffer)] == FIRST ? 1 : 0;
                }
                return s;
            },
            () -> {
                long s = 0;
                byte[] buffer = new byte[256];
                for (Invocation c : calls) {
                    s += dubboInvokers[lookupInto(dubboRing, String.valueOf(c.getArguments()[0]), buffer)] == FIRST ? 1 : 0;
                }
                return s;
            },
        };
        double[][] cpu = new double[sides.length][rounds];
        double[][] wall = new double[sides.length][rounds];
        long sink = 0;
        for (int r = -2; r < rounds; r++) {
            StringBuilder line = new StringBuilder(r < 0 ? "warm-up" : "round " + (r + 1));
            for (int pair = 0; pair < sides.length; pair += 2) {
                for (int j = 0; j < 2 && pair + j < sides.length; j++) {
                    int s = pair + ((r & 1) == 0 || pair + 1 >= sides.length ? j : 1 - j); // who goes first alternates
                    long w0 = System.nanoTime();
                    long c0 = THREAD.getCurrentThreadCpuTime();
                    sink += sides[s].run();
                    long c1 = THREAD.getCurrentThreadCpuTime();
                    long w1 = System.nanoTime();
                    if (r >= 0) {
                        cpu[s][r] = (c1 - c0) / (double) KEYS;
                        wall[s][r] = (w1 - w0) / (double) KEYS;
                    }
                }
            }
            if (r >= 0) {
                for (int s = 0; s < sides.length; s++) {
                    line.append(String.format(Locale.ROOT, " | %s %.1f (%.1f)", names[s].strip(), cpu[s][r], wall[s][r]));
                }
                line.append(String.format(Locale.ROOT, " | ratios %.2f %.2f %.2f, no byte[] %.2f %.2f %.2f",
                        cpu[0][r] / cpu[1][r], cpu[2][r] / cpu[3][r], cpu[4][r] / cpu[5][r],
                        cpu[0][r] / cpu[9][r], cpu[2][r] / cpu[10][r], cpu[4][r] / cpu[11][r]));
            }
            System.out.println(line);
        }
        System.out.println("medians, ns a key (CPU time; wall time in brackets):");
        for (int s = 0; s < sides.length; s++) {
            System.out.printf(Locale.ROOT, "  %-30s %7.1f (%.1f)%n", names[s], median(cpu[s]), median(wall[s]));
        }
        String[] clients = {"spymemcached", "xmemcached", "dubbo"};
        for (int c = 0; c < 3; c++) {
            for (int ours : new int[] {2 * c + 1, 9 + c}) {
                double[] ratio = new double[rounds];
                for (int r = 0; r < rounds; r++) {
                    ratio[r] = cpu[2 * c][r] / cpu[ours][r];
                }
                double[] sorted = ratio.clone();
                Arrays.sort(sorted);
                System.out.printf(Locale.ROOT, "%s / %s: median %.2f (rounds %.2f to %.2f)%n",
                        clients[c], names[ours], median(ratio), sorted[0], sorted[rounds - 1]);
            }
        }
        System.out.println("(" + (sink & 1) + ")");
        spyStore.close();
        xmemStore.close();
        dubboStore.close();
    }

    /**
     * {@return the backend of {@code k} in {@code ring}, its UTF-8 bytes written into {@code buffer} when it
     * is ASCII and fits (no array a call, as examples/dubbo's {@code KeyBytes} does), else from
     * {@code getBytes}}
     */
    private static int lookupInto(Ring ring, String k, byte[] buffer) {
        int n = k.length();
        if (n > buffer.length) {
            return ring.lookup(k.getBytes(StandardCharsets.UTF_8));
        }
        for (int i = 0; i < n; i++) {
            char c = k.charAt(i);
            if (c >= 0x80) {
                return ring.lookup(k.getBytes(StandardCharsets.UTF_8));
            }
            buffer[i] = (byte) c;
        }
        return ring.lookup(buffer, 0, n);
    }

    /** The selector {@code balance} made: the one value of its {@code selectors}. */
    private static Object selector(ConsistentHashLoadBalance balance) throws Exception {
        Field selectors = ConsistentHashLoadBalance.class.getDeclaredField("selectors");
        selectors.setAccessible(true);
        Map<?, ?> all = (Map<?, ?>) selectors.get(balance);
        if (all.size() != 1) {
            throw new IllegalStateException("one service method, one selector: " + all.size());
        }
        return all.values().iterator().next();
    }

    /** {@code count} distinct IPv4 addresses in 10.0.0.0/8. */
    static List<String> ips(SplittableRandom random, int count) {
        Set<String> seen = new HashSet<>();
        List<String> out = new ArrayList<>();
        while (out.size() < count) {
            String ip = "10." + random.nextInt(256) + "." + random.nextInt(256) + "." + (1 + random.nextInt(254));
            if (seen.add(ip)) {
                out.add(ip);
            }
        }
        return out;
    }

    /** {@code count} distinct URL-like keys of 20 to 60 characters. */
    static String[] keys(int count, long seed) {
        String[] prefixes = {"/api/v1/users/", "/static/img/", "/cart?item=", "/search?q=", "/video/segment/", "/u/"};
        String alphabet = "abcdefghijklmnopqrstuvwxyz0123456789-_/.";
        SplittableRandom random = new SplittableRandom(seed);
        Set<String> seen = new HashSet<>();
        String[] out = new String[count];
        int n = 0;
        while (n < count) {
            int length = random.nextInt(20, 61);
            StringBuilder sb = new StringBuilder(length).append(prefixes[random.nextInt(prefixes.length)]);
            while (sb.length() < length) {
                sb.append(alphabet.charAt(random.nextInt(alphabet.length())));
            }
            String k = sb.toString();
            if (seen.add(k)) {
                out[n++] = k;
            }
        }
        return out;
    }

    /** A stand-in for a connected spymemcached node: its address is all a locator asks of it. */
    static MemcachedNode node(InetSocketAddress address) {
        return (MemcachedNode) Proxy.newProxyInstance(ClientLookupCost.class.getClassLoader(), new Class<?>[] {MemcachedNode.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "getSocketAddress" -> address;
                    case "toString" -> "node " + address;
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "equals" -> proxy == args[0];
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }

    /** A stand-in for a connected xmemcached session, as examples/xmemcached's tests make it. */
    static Session session(InetSocketAddress address) {
        InetSocketAddressWrapper wrapper = new InetSocketAddressWrapper(address, 0, 1, null, false);
        wrapper.setRemoteAddressStr(String.valueOf(address));
        return (Session) Proxy.newProxyInstance(ClientLookupCost.class.getClassLoader(), new Class<?>[] {MemcachedSession.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "getRemoteSocketAddress" -> address;
                    case "getInetSocketAddressWrapper" -> wrapper;
                    case "getWeight" -> 1;
                    case "isClosed" -> false;
                    case "toString" -> "session " + address;
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "equals" -> proxy == args[0];
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    /** {@code args[i]} as a positive int, else {@code fallback} when absent; a bad one: one line, exit 2. */
    private static int count(String[] args, int i, int fallback) {
        if (args.length <= i) {
            return fallback;
        }
        try {
            int n = Integer.parseInt(args[i]);
            if (n > 0) {
                return n;
            }
        } catch (NumberFormatException e) {
            // said below
        }
        System.err.println("ClientLookupCost: argument " + (i + 1) + " must be a positive integer, got '" + args[i]
                + "' (usage: ClientLookupCost [ROUNDS [DISTINCT_KEYS]])");
        System.exit(2);
        return fallback; // not reached
    }
}
