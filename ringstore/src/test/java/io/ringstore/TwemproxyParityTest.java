package io.ringstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.ringstore.builder.BackendList;
import io.ringstore.builder.RingBuilder;
import io.ringstore.family.RingVersion;
import io.ringstore.testing.KeyPlacement;
import io.ringstore.testing.Memcached;
import io.ringstore.testing.MemcachedClient;
import io.ringstore.testing.MemcachedKeys;
import io.ringstore.testing.Twemproxy;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.FieldSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Parity with twemproxy itself: real memcached processes behind a real nutcracker pool with
 * {@code distribution: ketama}; each key is set through the pool and looked for on every memcached
 * directly, and the one holding it must be the backend ringstore's {@code twemproxy:HASH} ring
 * answers for it. The same servers are written once as nutcracker's {@code servers:} list
 * ({@code 127.0.0.1:PORT:WEIGHT [NAME]}) and once as a ringstore backends file, in the same order,
 * so backend index = memcached index.
 *
 * <p>Cases: every one of nutcracker's 12 key hashes on a weighted pool (1, 1, 3, 2, 5) of unnamed
 * servers (nutcracker names them {@code 127.0.0.1:PORT}); named servers ({@code # ringstore: name=}
 * in the backends file); a server on port 11211 (nutcracker names it {@code 127.0.0.1}, without the
 * port; skipped when 11211 is taken); 25 equal servers (the float weighting gives 156 points each,
 * not 160); two servers sharing a ring point, listed in either order. The keys are seeded, a fifth of them UTF-8 text with bytes {@code >= 0x80}, which several
 * of nutcracker's C hashes read as signed {@code char}.
 *
 * <p>Needs Debian's memcached and nutcracker: skipped without them, unless
 * {@code -Dringstore.requireMemcached=true}, which turns their absence into a failure.
 */
@Tag("process")
@EnabledIf(value = Twemproxy.TESTS_RUN, disabledReason = Twemproxy.MISSING)
class TwemproxyParityTest {
    private static final long SEED = 0x7E3A_11AD_2026L;
    private static final int[] WEIGHTS = {1, 1, 3, 2, 5};
    private static final int KEYS = 2_000;
    private static final int BIG_SERVERS = 25;
    private static final int BIG_KEYS = 5_000;
    private static final int MEMCACHED_PORT = 11211;
    private static final int SHOWN_DISAGREEMENTS = 10;

    static final List<String> HASHES = Twemproxy.HASHES;

    @TempDir
    static Path dir;

    /** The weighted pool's memcached, one per weight, in pool order. */
    private static List<Memcached> memcached = List.of();

    private static int totalKeys;
    private static int totalCases;

    /** One pool member: its memcached, weight, and name (null: nutcracker's default name, ringstore's address). */
    private record Member(Memcached memcached, int weight, String name) {
        Twemproxy.Server server() {
            return new Twemproxy.Server(memcached.port(), weight, name);
        }

        String backendLine() {
            return "    server 127.0.0.1:" + memcached.port() + " weight=" + weight + ";"
                    + (name == null ? "" : "  # ringstore: name=" + name) + "\n";
        }

        /** The name nutcracker gives it (nc_conf.c conf_add_server), written out here rather than taken from ringstore. */
        String twemproxyName() {
            return name != null
                    ? name
                    : memcached.port() == MEMCACHED_PORT ? "127.0.0.1" : "127.0.0.1:" + memcached.port();
        }
    }

    @BeforeAll
    static void startMemcached() throws Exception {
        Twemproxy.requireInstalled("the twemproxy parity test");
        memcached = Memcached.startAll(dir.resolve("memcached"), WEIGHTS.length, 16);
    }

    @AfterAll
    static void stopMemcached() throws Exception {
        for (Memcached m : memcached) {
            m.close();
        }
        if (totalCases > 0) {
            System.out.printf("twemproxy parity total: %,d keys in %d cases, no disagreement%n", totalKeys, totalCases);
        }
    }

    @ParameterizedTest
    @FieldSource("HASHES")
    void weightedPoolOfUnnamedServers(String hash) throws Exception {
        List<Member> members = new ArrayList<>();
        for (int i = 0; i < WEIGHTS.length; i++) {
            members.add(new Member(memcached.get(i), WEIGHTS[i], null));
        }
        assertParity("weighted-" + hash, hash, members, MemcachedKeys.random(SEED ^ hash.hashCode(), KEYS));
    }

    @ParameterizedTest
    @ValueSource(strings = {"md5", "fnv1a_64"})
    void weightedPoolOfNamedServers(String hash) throws Exception {
        List<Member> members = new ArrayList<>();
        for (int i = 0; i < WEIGHTS.length; i++) {
            members.add(new Member(memcached.get(i), WEIGHTS[i], "cache-" + (char) ('a' + i)));
        }
        assertParity("named-" + hash, hash, members, MemcachedKeys.random(SEED ^ 0x4E ^ hash.hashCode(), KEYS));
    }

    /** A server on memcached's own port is named by its host alone, in nutcracker (and libmemcached). */
    @ParameterizedTest
    @ValueSource(strings = {"md5", "fnv1a_64"})
    void serverOnPort11211(String hash) throws Exception {
        assumeTrue(portFree(MEMCACHED_PORT), "127.0.0.1:" + MEMCACHED_PORT + " is in use (a memcached service?)");
        try (Memcached on11211 = Memcached.startOn(dir.resolve("memcached-11211"), MEMCACHED_PORT, 16)) {
            List<Member> members = new ArrayList<>();
            members.add(new Member(memcached.get(0), WEIGHTS[0], null));
            members.add(new Member(on11211, WEIGHTS[1], null));
            for (int i = 2; i < WEIGHTS.length; i++) {
                members.add(new Member(memcached.get(i), WEIGHTS[i], null));
            }
            assertParity(
                    "port11211-" + hash, hash, members, MemcachedKeys.random(SEED ^ 11211 ^ hash.hashCode(), KEYS));
        }
    }

    @Test
    void twentyFiveEqualServers() throws Exception {
        List<Memcached> big = Memcached.startAll(dir.resolve("memcached-big"), BIG_SERVERS, 8);
        try {
            List<Member> members = new ArrayList<>();
            for (Memcached m : big) {
                members.add(new Member(m, 1, null));
            }
            for (String hash : List.of("md5", "fnv1a_64")) {
                assertParity(
                        "big-" + hash,
                        hash,
                        members,
                        MemcachedKeys.random(SEED ^ BIG_SERVERS ^ hash.hashCode(), BIG_KEYS));
            }
        } finally {
            for (Memcached m : big) {
                m.close();
            }
        }
    }

    /**
     * Two servers whose rings share a point: nutcracker sorts a pool's servers by name (length first,
     * then bytes: nc_conf.c {@code conf_validate_server}, {@code string_compare}) before building the
     * ring, and its qsort of the points keeps equal points in generation order, so a key hashing onto the
     * shared point goes to the server whose name sorts first, whichever order the config lists them in.
     * The names here sort one way by length and the other by bytes ({@code t919} before {@code t1742}).
     * Keys are forged to crc32a (the standard CRC-32) values on the point and next to it.
     */
    @Test
    void sharedPointGoesToTheServerWhoseNameSortsFirst() throws Exception {
        Tie tie = Tie.find();
        List<byte[]> keys = new ArrayList<>();
        for (int target : new int[] {tie.point() - 1, tie.point(), tie.point() + 1}) {
            for (int r = 0; r < 3; r++) {
                keys.add(CrcForge.forge(
                        ("tie-" + Integer.toUnsignedString(target) + "-" + r + "-").getBytes(StandardCharsets.US_ASCII),
                        target));
            }
        }
        for (List<String> names : List.of(List.of(tie.second(), tie.first()), List.of(tie.first(), tie.second()))) {
            List<Member> members = List.of(
                    new Member(memcached.get(0), 1, names.get(0)), new Member(memcached.get(1), 1, names.get(1)));
            KeyPlacement placed = assertParity("tie-" + names.getFirst(), "crc32a", members, keys);
            System.out.printf(
                    "twemproxy: %s and %s share point %s; listed as %s, the keys on it went to %s%n",
                    tie.first(),
                    tie.second(),
                    Integer.toUnsignedString(tie.point()),
                    names,
                    members.get(placed.owner(3)).twemproxyName());
        }
    }

    /**
     * The first pair of names {@code t0, t1, ...} with a common point among their 160 (MD5 of
     * {@code "name-i"}, i < 40, four little-endian 32-bit words each), one name shorter but greater
     * bytewise than the other. Computed here with the JDK's MD5, not ringstore's.
     */
    private record Tie(String first, String second, int point) {
        static Tie find() throws Exception {
            MessageDigest md5 = MessageDigest.getInstance("MD5");
            Map<Integer, String> owners = new HashMap<>();
            for (int k = 0; ; k++) {
                String name = "t" + k;
                List<Integer> points = new ArrayList<>();
                for (int i = 0; i < 40; i++) {
                    ByteBuffer digest = ByteBuffer.wrap(
                                    md5.digest((name + "-" + i).getBytes(StandardCharsets.US_ASCII)))
                            .order(ByteOrder.LITTLE_ENDIAN);
                    for (int word = 0; word < 4; word++) {
                        int point = digest.getInt(4 * word);
                        String other = owners.get(point);
                        if (other != null && other.length() < name.length() && other.compareTo(name) > 0) {
                            return new Tie(other, name, point);
                        }
                        points.add(point);
                    }
                }
                points.forEach(p -> owners.putIfAbsent(p, name));
            }
        }
    }

    /** Places {@code keys} with twemproxy and with ringstore, asserts they agree, and returns twemproxy's placement. */
    private static KeyPlacement assertParity(String name, String hash, List<Member> members, List<byte[]> keys)
            throws Exception {
        int[] ringstore = ringstoreBackends(name, hash, members, keys);
        List<Twemproxy.Server> servers = members.stream().map(Member::server).toList();
        List<Memcached> order = members.stream().map(Member::memcached).toList();
        KeyPlacement twemproxy;
        try (Twemproxy proxy = Twemproxy.start(dir.resolve("twemproxy-" + name), hash, servers)) {
            Set<String> names = new LinkedHashSet<>();
            members.forEach(m -> names.add(m.twemproxyName()));
            assertEquals(
                    names, proxy.serverNames(), () -> "nutcracker's server names (its stats)\n" + proxy.diagnostics());
            twemproxy = KeyPlacement.find(proxy, order, keys);
        }
        int disagreements = 0;
        int nonAscii = 0;
        int nonAsciiDisagreements = 0;
        StringBuilder shown = new StringBuilder();
        for (int i = 0; i < keys.size(); i++) {
            int k = i;
            assertEquals(
                    1,
                    twemproxy.holders(i),
                    () -> name + ": memcached holding key #" + k + " " + MemcachedClient.printable(keys.get(k))
                            + " after one set through twemproxy");
            boolean ascii = MemcachedKeys.isAscii(keys.get(i));
            nonAscii += ascii ? 0 : 1;
            if (twemproxy.owner(i) != ringstore[i]) {
                disagreements++;
                nonAsciiDisagreements += ascii ? 0 : 1;
                if (disagreements <= SHOWN_DISAGREEMENTS) {
                    shown.append("\n  key #")
                            .append(i)
                            .append(' ')
                            .append(MemcachedClient.printable(keys.get(i)))
                            .append(": twemproxy ")
                            .append(members.get(twemproxy.owner(i)).twemproxyName())
                            .append(", ringstore ")
                            .append(members.get(ringstore[i]).twemproxyName());
                }
            }
        }
        System.out.printf(
                "twemproxy parity %s: %,d keys (%,d non-ASCII), %d disagreements (%d non-ASCII); keys per server %s%n",
                name,
                keys.size(),
                nonAscii,
                disagreements,
                nonAsciiDisagreements,
                Arrays.toString(twemproxy.keysPerServer()));
        assertEquals(
                0,
                disagreements,
                name + ": keys twemproxy and ringstore's twemproxy:" + hash + " ring place differently ("
                        + nonAsciiDisagreements + " of them non-ASCII, of " + nonAscii + ")" + shown);
        totalKeys += keys.size();
        totalCases++;
        return twemproxy;
    }

    /** The backend ringstore's {@code twemproxy:HASH} ring gives each key, from a backends file listing the members in order. */
    private static int[] ringstoreBackends(String name, String hash, List<Member> members, List<byte[]> keys)
            throws Exception {
        StringBuilder text = new StringBuilder(
                        "# twemproxy pool '" + name + "' (hash: " + hash + ", distribution: ketama)\n")
                .append("upstream pool {\n");
        members.forEach(m -> text.append(m.backendLine()));
        Path backends = dir.resolve(name + ".backends");
        Files.writeString(backends, text.append("}\n"));
        Path ringFile = dir.resolve(name + ".ring");
        RingVersion version = RingVersion.parse("twemproxy:" + hash);
        RingBuilder.of(BackendList.parse(backends)).version(version).build(ringFile);
        int[] backend = new int[keys.size()];
        try (RingStore store = RingStore.open(ringFile)) {
            Ring ring = store.ring(Set.of(), version);
            for (int i = 0; i < keys.size(); i++) {
                backend[i] = ring.lookup(keys.get(i));
            }
        }
        return backend;
    }

    private static boolean portFree(int port) {
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            return true;
        } catch (IOException taken) {
            return false;
        }
    }
}
