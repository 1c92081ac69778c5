package com.example.dubbo;

import io.ringstore.builder.BackendList;
import io.ringstore.builder.RingBuilder;
import io.ringstore.family.RingVersion;
import org.apache.dubbo.common.URL;
import org.apache.dubbo.rpc.Invocation;
import org.apache.dubbo.rpc.Invoker;
import org.apache.dubbo.rpc.RpcInvocation;

import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;

/** What the tests share: providers, ring files built from them, stand-in invokers, seeded keys. */
final class Fixtures {
    private Fixtures() {
    }

    /** A provider of a test fleet: its IP and port, its host name ({@code # ringstore: name=}) or null. */
    record Provider(String ip, int port, String name) {
        Provider(String ip, int port) {
            this(ip, port, null);
        }

        Provider named(String n) {
            return new Provider(ip, port, n);
        }

        /** What Dubbo's invoker URL has as its address: {@code host:port}, the host its name when it has one. */
        String address() {
            return (name != null ? name : ip) + ":" + port;
        }

        /** Its line of a backends file (nginx's {@code server} syntax, ringstore's comment). */
        String line() {
            return "server " + ip + ":" + port + ";" + (name != null ? "  # ringstore: name=" + name : "");
        }
    }

    /** {@code count} providers at distinct random IPs of 10.0.0.0/8 (never contacted), ports 20880 or random. */
    static List<Provider> randomProviders(SplittableRandom random, int count) {
        List<Provider> out = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        while (out.size() < count) {
            String ip = "10." + random.nextInt(256) + "." + random.nextInt(256) + "." + (1 + random.nextInt(254));
            int port = random.nextInt(3) == 0 ? 20880 : 20000 + random.nextInt(2000);
            if (seen.add(ip + ":" + port)) {
                out.add(new Provider(ip, port));
            }
        }
        return out;
    }

    /** Builds the ring file of {@code providers} for {@code version} at {@code file}, by rename (a watcher sees one complete file). */
    static Path ringFile(Path file, List<Provider> providers, String version, long generation) throws Exception {
        StringBuilder text = new StringBuilder();
        for (Provider p : providers) {
            text.append(p.line()).append('\n');
        }
        BackendList list = BackendList.parse("providers.conf", text.toString());
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        RingBuilder.of(list).version(RingVersion.parse(version)).generation(generation).build(tmp);
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        return file;
    }

    /**
     * A stand-in for a connected invoker: it has its URL and nothing else, which is all a load balance
     * asks of an invoker. Equal only to itself.
     */
    static Invoker<?> invoker(URL url) {
        return (Invoker<?>) Proxy.newProxyInstance(Fixtures.class.getClassLoader(), new Class<?>[] {Invoker.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "getUrl" -> url;
                    case "getInterface" -> Identity.class;
                    case "isAvailable" -> true;
                    case "toString" -> "invoker " + url.getAddress();
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "equals" -> proxy == args[0];
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }

    /** Stand-in invokers of {@code providers}, their URLs carrying {@code parameters} (a query string, or ""). */
    @SuppressWarnings({"unchecked", "rawtypes"})
    static List<Invoker<Identity>> invokers(List<Provider> providers, String parameters) {
        List<Invoker<Identity>> out = new ArrayList<>();
        for (Provider p : providers) {
            out.add((Invoker) invoker(URL.valueOf("dubbo://" + p.address() + "/" + Identity.class.getName() + "?" + parameters)));
        }
        return out;
    }

    /** A call of {@code method} with {@code arguments}, as Dubbo's proxy makes it. */
    static Invocation call(String method, Object... arguments) {
        Class<?>[] types = Arrays.stream(arguments).map(a -> a == null ? Object.class : a.getClass()).toArray(Class<?>[]::new);
        return new RpcInvocation(null, method, Identity.class.getName(), "", types, arguments);
    }

    private static final String[] NON_ASCII = {"é", "日本", "Ω", "😀", "ß", "\uD800", "\uDC00x"};

    /** {@code count} distinct seeded keys: short and long ASCII, about one in five with non-ASCII characters (an unpaired surrogate among them). */
    static List<String> keys(long seed, int count) {
        SplittableRandom random = new SplittableRandom(seed);
        Set<String> keys = new LinkedHashSet<>();
        while (keys.size() < count) {
            StringBuilder k = new StringBuilder(random.nextBoolean() ? "user:" : "");
            int length = 1 + random.nextInt(random.nextInt(8) == 0 ? 200 : 24);
            for (int i = 0; i < length; i++) {
                k.append((char) ('!' + random.nextInt(94)));
            }
            if (random.nextInt(5) == 0) {
                k.insert(random.nextInt(k.length() + 1), NON_ASCII[random.nextInt(NON_ASCII.length)]);
            }
            keys.add(k.toString());
        }
        return List.copyOf(keys);
    }

    /**
     * Two loopback providers on ports from {@code from} whose Dubbo points share a hash (K = 160): a
     * real 32-bit MD5 tie, found by sorting every point of 10,000 ports (about 300 such pairs expected).
     * The second port is the higher.
     *
     * @return the two ports and the hash they share
     */
    static long[] tiedPorts(int from) throws Exception {
        int ports = 10_000;
        long[] points = new long[ports * 160];
        MessageDigest md5 = MessageDigest.getInstance("MD5");
        int n = 0;
        for (int port = from; port < from + ports; port++) {
            for (int i = 0; i < 40; i++) {
                byte[] d = md5.digest(("127.0.0.1:" + port + i).getBytes());
                for (int w = 0; w < 4; w++) {
                    long h = (d[w * 4] & 0xFFL) | (d[w * 4 + 1] & 0xFFL) << 8 | (d[w * 4 + 2] & 0xFFL) << 16 | (d[w * 4 + 3] & 0xFFL) << 24;
                    points[n++] = h << 20 | (port - from);
                }
            }
        }
        Arrays.sort(points);
        for (int i = 1; i < n; i++) {
            int a = (int) (points[i - 1] & 0xFFFFF);
            int b = (int) (points[i] & 0xFFFFF);
            if (points[i] >>> 20 == points[i - 1] >>> 20 && a != b) {
                return new long[] {from + Math.min(a, b), from + Math.max(a, b), points[i] >>> 20};
            }
        }
        throw new AssertionError("no tie among " + ports + " ports");
    }
}
