package com.example.xmemcached;

import com.google.code.yanf4j.core.Session;
import io.ringstore.builder.BackendList;
import io.ringstore.builder.RingBuilder;
import io.ringstore.family.RingVersion;
import net.rubyeye.xmemcached.networking.MemcachedSession;
import net.rubyeye.xmemcached.utils.InetSocketAddressWrapper;

import java.lang.reflect.Proxy;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;

/** What the tests share: servers, ring files built from them, stand-in sessions, seeded keys. */
final class Fixtures {
    private Fixtures() {
    }

    /** A server of a test fleet: its IP and port, weight, name ({@code # ringstore: name=}) or null, whether {@code down}. */
    record Server(String ip, int port, int weight, String name, boolean down) {
        Server(String ip, int port) {
            this(ip, port, 1, null, false);
        }

        Server weight(int w) {
            return new Server(ip, port, w, name, down);
        }

        Server named(String n) {
            return new Server(ip, port, weight, n, down);
        }

        Server markedDown() {
            return new Server(ip, port, weight, name, true);
        }

        /** The address xmemcached's session has: resolved from the IP without DNS, the name as its host name. */
        InetSocketAddress address() {
            try {
                return new InetSocketAddress(InetAddress.getByAddress(name, InetAddress.ofLiteral(ip).getAddress()), port);
            } catch (UnknownHostException e) {
                throw new IllegalArgumentException(ip, e);
            }
        }

        /** Its line of a backends file (nginx's {@code server} syntax, ringstore's comment). */
        String line() {
            String host = ip.contains(":") ? "[" + ip + "]" : ip;
            return "server " + host + ":" + port + (weight != 1 ? " weight=" + weight : "") + (down ? " down" : "") + ";"
                    + (name != null ? "  # ringstore: name=" + name : "");
        }
    }

    /** {@code count} servers at distinct random IPs of 10.0.0.0/8, ports random from 11211 to 11274 (11211 about one in four). */
    static List<Server> randomServers(SplittableRandom random, int count) {
        List<Server> out = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        while (out.size() < count) {
            String ip = "10." + random.nextInt(256) + "." + random.nextInt(256) + "." + (1 + random.nextInt(254));
            int port = random.nextInt(4) == 0 ? 11211 : 11211 + random.nextInt(64);
            if (seen.add(ip + ":" + port)) {
                out.add(new Server(ip, port));
            }
        }
        return out;
    }

    /**
     * Builds the ring file of {@code servers} for {@code version} at {@code file} with {@code generation},
     * by rename (so that a watcher sees one complete file).
     */
    static Path ringFile(Path file, List<Server> servers, String version, long generation) throws Exception {
        StringBuilder text = new StringBuilder();
        for (Server s : servers) {
            text.append(s.line()).append('\n');
        }
        BackendList list = BackendList.parse("servers.conf", text.toString());
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        RingBuilder.of(list).version(RingVersion.parse(version)).generation(generation).build(tmp);
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        return file;
    }

    /** A stand-in session and the switch that closes it. */
    record StandIn(Session session, AtomicBoolean closed) {
    }

    /**
     * A stand-in for a connected session of {@code server}: its remote address, weight and the text
     * xmemcached recorded at its first connect ({@code String.valueOf} of the address), which is all a
     * locator asks of a session (xmemcached's own locator tests use mock sessions likewise). Equal only
     * to itself.
     */
    static StandIn session(Server server) {
        InetSocketAddress address = server.address();
        InetSocketAddressWrapper wrapper = new InetSocketAddressWrapper(address, 0, server.weight(), null, false);
        wrapper.setRemoteAddressStr(String.valueOf(address));
        AtomicBoolean closed = new AtomicBoolean();
        Session s = (Session) Proxy.newProxyInstance(Fixtures.class.getClassLoader(), new Class<?>[] {MemcachedSession.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "getRemoteSocketAddress" -> address;
                    case "getInetSocketAddressWrapper" -> wrapper;
                    case "getWeight" -> server.weight();
                    case "isClosed" -> closed.get();
                    case "toString" -> "session " + address;
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "equals" -> proxy == args[0];
                    default -> throw new UnsupportedOperationException(method.getName());
                });
        return new StandIn(s, closed);
    }

    static List<StandIn> sessions(List<Server> servers) {
        return servers.stream().map(Fixtures::session).toList();
    }

    static List<Session> list(List<StandIn> standIns) {
        return standIns.stream().map(StandIn::session).toList();
    }

    private static final String[] NON_ASCII = {"é", "日本", "Ω", "😀", "ß"};

    /**
     * {@code count} distinct seeded keys valid for memcached's text protocol (no space or control
     * character, at most 250 bytes): short and long ASCII, about one in five with non-ASCII characters.
     */
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
}
