package com.example.grpcjava;

import io.ringstore.builder.BackendList;
import io.ringstore.builder.RingBuilder;
import io.ringstore.family.RingVersion;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;

/** What the tests share: servers, the ring files built from them, seeded fleets and keys. */
final class Fleet {
    private Fleet() {
    }

    /** A server: its IP and port, weight, name ({@code # ringstore: name=}) or null, whether {@code down}. */
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

        /**
         * The address grpc-java's resolver gives the channel: resolved without DNS, the name as its host
         * name (a DNS resolver's {@code InetAddress} keeps the name it resolved).
         */
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
            return "server " + host + ":" + port + (weight != 1 ? " weight=" + weight : "") + (down ? " down" : "")
                    + ";" + (name != null ? "  # ringstore: name=" + name : "");
        }
    }

    /** Builds {@code version}'s ring of {@code servers} into {@code file}, published whole (a rename). */
    static void publish(List<Server> servers, RingVersion version, Path file) throws Exception {
        StringBuilder text = new StringBuilder();
        for (Server s : servers) {
            text.append(s.line()).append('\n');
        }
        Path tmp = Files.createTempFile(file.toAbsolutePath().getParent(), "ring", ".tmp");
        RingBuilder.of(BackendList.parse("fleet", text.toString()))
                .version(version)
                .generation(System.nanoTime())
                .build(tmp);
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    /**
     * A seeded fleet of {@code n} distinct servers: IPv4, IPv6 with and without zero runs, some named,
     * weights 1–100 when {@code weighted}.
     */
    static List<Server> seeded(SplittableRandom random, int n, boolean weighted) {
        List<Server> servers = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        while (servers.size() < n) {
            String ip = switch (random.nextInt(3)) {
                case 0 -> "10." + random.nextInt(256) + "." + random.nextInt(256) + "." + (1 + random.nextInt(254));
                case 1 -> "2001:db8::" + Integer.toHexString(1 + random.nextInt(0xfffe));
                default -> "2001:db8:" + Integer.toHexString(random.nextInt(0x10000)) + ":1:2:3:"
                        + Integer.toHexString(random.nextInt(0x10000)) + ":" + Integer.toHexString(1 + random.nextInt(0xfffe));
            };
            int port = 8000 + random.nextInt(2000);
            if (!seen.add(ip + "/" + port)) {
                continue;
            }
            Server s = new Server(ip, port);
            if (weighted) {
                s = s.weight(1 + random.nextInt(100));
            }
            if (random.nextInt(8) == 0) {
                s = s.named("backend-" + servers.size() + ".example");
            }
            servers.add(s);
        }
        return servers;
    }

    /** A seeded key: printable ASCII of 0 to 40 characters, now and then a long one or one with non-ASCII letters. */
    static String key(SplittableRandom random) {
        int length = switch (random.nextInt(50)) {
            case 0 -> 0;
            case 1 -> 200 + random.nextInt(300);
            default -> 1 + random.nextInt(40);
        };
        StringBuilder s = new StringBuilder(length);
        boolean wide = random.nextInt(40) == 0;
        for (int i = 0; i < length; i++) {
            s.append(wide && random.nextInt(4) == 0 ? (char) (0xe0 + random.nextInt(0x300)) : (char) (0x20 + random.nextInt(0x5f)));
        }
        return s.toString();
    }
}
