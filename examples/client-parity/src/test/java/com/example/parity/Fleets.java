package com.example.parity;

import io.ringstore.Ring;
import io.ringstore.RingStore;
import io.ringstore.builder.BackendList;
import io.ringstore.builder.RingBuilder;
import io.ringstore.family.RingVersion;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;

/** What the parity tests share: fleets as people write them (IPv4, IPv6 with and without zero runs), ring files of them, seeded keys. */
final class Fleets {
    private Fleets() {
    }

    /**
     * A server of a backends file: its address as written ({@code 10.0.0.1:20880}, {@code [2001:db8::a]},
     * port optional) and its {@code # ringstore: name=} or null.
     */
    record Server(String address, String name) {
        Server(String address) {
            this(address, null);
        }

        /** The host as written: the IP without brackets or port, or the name. */
        String host() {
            if (name != null) {
                return name;
            }
            if (address.startsWith("[")) {
                return address.substring(1, address.indexOf(']'));
            }
            int colon = address.indexOf(':');
            return colon < 0 ? address : address.substring(0, colon);
        }

        /** Whether the address is IPv6 (written in brackets). */
        boolean ipv6() {
            return address.startsWith("[");
        }

        /** The port as written, or {@code defaultPort}. */
        int port(int defaultPort) {
            int close = address.lastIndexOf(']');
            int colon = address.lastIndexOf(':');
            return colon > close ? Integer.parseInt(address.substring(colon + 1)) : defaultPort;
        }

        String line() {
            return "server " + address + ";" + (name != null ? "  # ringstore: name=" + name : "");
        }
    }

    /**
     * The fleets every parity test runs: IPv4 (ports written and not, a server known by a host name); IPv6
     * written with zero runs ({@code ::}), without any (all eight groups), at full width and in capitals;
     * loopback and an IPv4-mapped address; and a random mix of 40.
     */
    static Map<String, List<Server>> all(int seed) {
        Map<String, List<Server>> fleets = new LinkedHashMap<>();
        fleets.put("ipv4", List.of(new Server("10.0.1.1:20880"), new Server("10.0.1.2:11210"), new Server("10.0.1.3"),
                new Server("192.168.7.44:8080"), new Server("10.9.9.1:11210", "cache1.example.com"),
                new Server("172.16.0.9:20881")));
        fleets.put("ipv6 with zero runs", List.of(new Server("[2001:db8::a]:20880"), new Server("[2001:db8::b]"),
                new Server("[::1]:20881"), new Server("[fd00::1:2]:11210"), new Server("[2001:db8:0:0:1::7]:8080"),
                new Server("[fe80::1:2:3:4]")));
        fleets.put("ipv6 without zero runs", List.of(new Server("[2001:db8:1:2:3:4:5:6]:20880"),
                new Server("[fd12:3456:789a:1:2:3:4:5]"), new Server("[2001:db8:aaaa:bbbb:cccc:dddd:eeee:1]:11210"),
                new Server("[2001:db8:1:2:3:4:5:7]:20880")));
        fleets.put("ipv6 as written otherwise", List.of(new Server("[2001:0db8:0000:0000:0000:0000:0000:00ff]:8080"),
                new Server("[2001:DB8::C]:20880"), new Server("[::ffff:10.0.0.7]:20880"), new Server("[0:0:0:0:0:0:0:2]"),
                new Server("10.0.0.8:20880")));
        fleets.put("mixed 40", random(new SplittableRandom(seed), 40));
        return fleets;
    }

    /** {@code count} distinct servers, a third of them IPv6 (some with a zero run, some of eight groups), ports written three times in four. */
    static List<Server> random(SplittableRandom random, int count) {
        List<Server> out = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        while (out.size() < count) {
            String host = switch (random.nextInt(3)) {
                case 0 -> "[2001:db8:" + Integer.toHexString(random.nextInt(16)) + "::" + Integer.toHexString(1 + random.nextInt(0xffff)) + "]";
                case 1 -> {
                    StringBuilder groups = new StringBuilder("[fd00");
                    for (int g = 0; g < 7; g++) {
                        groups.append(':').append(Integer.toHexString(1 + random.nextInt(0xffff)));
                    }
                    yield groups.append(']').toString();
                }
                default -> "10." + random.nextInt(256) + "." + random.nextInt(256) + "." + (1 + random.nextInt(254));
            };
            String address = random.nextInt(4) == 0 ? host : host + ":" + (11210 + random.nextInt(10000));
            if (seen.add(host)) {
                out.add(new Server(address));
            }
        }
        return out;
    }

    /** Builds the ring file of {@code servers} for {@code version} in {@code dir}. */
    static Path ringFile(Path dir, String fleet, List<Server> servers, String version) throws Exception {
        StringBuilder text = new StringBuilder();
        for (Server s : servers) {
            text.append(s.line()).append('\n');
        }
        Path file = dir.resolve(fleet.replace(' ', '-') + "-" + version.replace(':', '-') + ".ring");
        RingBuilder.of(BackendList.parse("servers.conf", text.toString())).version(RingVersion.parse(version)).build(file);
        return file;
    }

    /** The ring of the file's one version. */
    static Ring ring(RingStore store) {
        return store.ring(Set.of(), store.versions().getFirst());
    }

    private static final String[] NON_ASCII = {"é", "日本", "Ω", "😀", "ß", "東京"};

    /**
     * {@code count} distinct seeded keys: the empty key first, then short and long ASCII (one in 50 of
     * 1,000 to 5,000 characters), about one in five with non-ASCII characters, some decimal numbers.
     */
    static List<String> keys(long seed, int count) {
        SplittableRandom random = new SplittableRandom(seed);
        Set<String> keys = new LinkedHashSet<>();
        keys.add("");
        while (keys.size() < count) {
            if (random.nextInt(10) == 0) {
                keys.add(Long.toString(random.nextLong()));
                continue;
            }
            StringBuilder k = new StringBuilder(random.nextBoolean() ? "user:" : "");
            int length = random.nextInt(50) == 0 ? 1000 + random.nextInt(4000) : 1 + random.nextInt(40);
            for (int i = 0; i < length; i++) {
                k.append((char) (' ' + random.nextInt(95)));
            }
            if (random.nextInt(5) == 0) {
                k.insert(random.nextInt(k.length() + 1), NON_ASCII[random.nextInt(NON_ASCII.length)]);
            }
            keys.add(k.toString());
        }
        return List.copyOf(keys);
    }
}
