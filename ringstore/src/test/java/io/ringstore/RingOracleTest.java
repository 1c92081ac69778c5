package io.ringstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.builder.BackendList;
import io.ringstore.builder.BackendsFileException;
import io.ringstore.builder.BuildResult;
import io.ringstore.builder.RingBuilder;
import io.ringstore.builder.Views;
import io.ringstore.family.Families;
import io.ringstore.family.RingVersion;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.PrimitiveIterator;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.stream.IntStream;
import java.util.stream.LongStream;
import java.util.zip.CRC32;
import net.openhft.chronicle.testframework.Combination;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Property test: every ring of randomly generated backend sets against a naive oracle, a
 * {@code TreeMap<hash, backend>} built here from points generated independently with
 * {@link java.util.zip.CRC32}, with {@code ceilingEntry} and wrap-around to {@code firstEntry}.
 *
 * <p>The oracle knows each backend from how it was generated (address bytes, port, scope, the text as
 * written), not from the library's parser. The only thing borrowed is Rust's text form of the IP
 * address, taken from {@link Backend#socketAddress()}, which ServerAddressTest checks by hand.
 */
class RingOracleTest {
    private static final int[] V2_MULTIPLES = {1, 2, 3, 5, 16, 160};

    /** A generated backend; {@code port} is the port as written, or null when the text has none. */
    record Gen(String host, String port, byte[] ip, int portNumber, long scope, long weight, Set<String> features) {
        String text() {
            return port == null ? host : host + ":" + port;
        }

        String line() {
            return "server " + text() + (weight != 1 || (host.hashCode() & 1) == 0 ? " weight=" + weight : "")
                    + (features.isEmpty() ? "" : " features=" + String.join(",", features)) + ";";
        }

        /** nginx: the host as written, a zero byte, the port as written (empty when absent). */
        byte[] v1Input() {
            return (host + '\0' + (port == null ? "" : port)).getBytes(StandardCharsets.ISO_8859_1);
        }

        String endpoint() {
            return Arrays.toString(ip) + "/" + portNumber + "%" + scope;
        }
    }

    /** Rust's SocketAddr order: IPv4 before IPv6, then address bytes unsigned, port, scope. */
    private static final Comparator<Gen> SOCKET_ORDER = Comparator.comparingInt((Gen g) -> g.ip().length)
            .thenComparing(Gen::ip, Arrays::compareUnsigned)
            .thenComparingInt(Gen::portNumber)
            .thenComparingLong(Gen::scope);

    // ---- generation of backends ----

    private static String octet(SplittableRandom r, int value) {
        String s = Integer.toString(value);
        int pad = r.nextInt(8) == 0 ? 3 - s.length() : 0; // sometimes leading zeros, as nginx allows
        return "0".repeat(Math.max(0, pad)) + s;
    }

    private static String portText(SplittableRandom r, int port) {
        return r.nextInt(20) == 0 ? "0" + port : Integer.toString(port);
    }

    private static Gen ipv4(SplittableRandom r, long weight, Set<String> features) {
        byte[] ip = {127, (byte) r.nextInt(256), (byte) r.nextInt(256), (byte) r.nextInt(256)};
        StringBuilder host = new StringBuilder();
        for (int i = 0; i < 4; i++) {
            host.append(i > 0 ? "." : "").append(octet(r, ip[i] & 0xFF));
        }
        return withPort(r, host.toString(), ip, 0, weight, features);
    }

    private static Gen withPort(
            SplittableRandom r, String host, byte[] ip, long scope, long weight, Set<String> features) {
        if (r.nextInt(3) == 0) {
            return new Gen(host, null, ip, 80, scope, weight, features);
        }
        int port = r.nextInt(65536);
        return new Gen(host, portText(r, port), ip, port, scope, weight, features);
    }

    private static String group(SplittableRandom r, int value) {
        String s = Integer.toHexString(value);
        if (r.nextInt(6) == 0) {
            s = "0".repeat(4 - s.length()) + s;
        }
        return r.nextBoolean() ? s : s.toUpperCase();
    }

    /** An IPv6 address in one of several shapes, written in one of several valid ways. */
    private static Gen ipv6(SplittableRandom r, long weight, Set<String> features) {
        int[] g = new int[8];
        long scope = 0;
        String text;
        switch (r.nextInt(5)) {
            case 0 -> { // IPv4-mapped
                g[5] = 0xFFFF;
                g[6] = 0x7F00 | r.nextInt(256);
                g[7] = r.nextInt(65536);
                text = r.nextBoolean()
                        ? null
                        : "::ffff:" + (g[6] >> 8) + "." + (g[6] & 0xFF) + "." + (g[7] >> 8) + "." + (g[7] & 0xFF);
            }
            case 1 -> { // link-local with a scope
                g[0] = 0xFE80;
                g[7] = r.nextInt(4);
                scope = r.nextInt(4);
                text = null;
            }
            case 2 -> { // a few small groups: loopback-like
                g[7] = r.nextInt(4);
                text = null;
            }
            default -> {
                for (int i = 0; i < 8; i++) {
                    g[i] = r.nextInt(3) == 0 ? 0 : (r.nextBoolean() ? r.nextInt(16) : r.nextInt(65536));
                }
                g[0] = 0xFD00 | r.nextInt(256);
                text = null;
            }
        }
        if (text == null) {
            text = writeIpv6(r, g);
        }
        byte[] ip = new byte[16];
        for (int i = 0; i < 8; i++) {
            ip[2 * i] = (byte) (g[i] >> 8);
            ip[2 * i + 1] = (byte) g[i];
        }
        String host = "[" + text + (scope != 0 || (g[0] == 0xFE80 && r.nextInt(4) == 0) ? "%" + scope : "") + "]";
        return withPort(r, host, ip, scope, weight, features);
    }

    /** Full form, or "::" in place of a randomly chosen run of zero groups (not necessarily the longest). */
    private static String writeIpv6(SplittableRandom r, int[] g) {
        List<int[]> runs = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            if (g[i] == 0) {
                int j = i;
                while (j < 8 && g[j] == 0) {
                    j++;
                }
                int start = i + r.nextInt(j - i);
                int end = start + 1 + r.nextInt(j - start);
                runs.add(new int[] {start, end});
                i = j;
            }
        }
        StringBuilder sb = new StringBuilder();
        if (runs.isEmpty() || r.nextInt(4) == 0) {
            for (int i = 0; i < 8; i++) {
                sb.append(i > 0 ? ":" : "").append(group(r, g[i]));
            }
            return sb.toString();
        }
        int[] run = runs.get(r.nextInt(runs.size()));
        for (int i = 0; i < run[0]; i++) {
            sb.append(i > 0 ? ":" : "").append(group(r, g[i]));
        }
        sb.append("::");
        for (int i = run[1]; i < 8; i++) {
            sb.append(i > run[1] ? ":" : "").append(group(r, g[i]));
        }
        return sb.toString();
    }

    private static List<Gen> randomBackends(SplittableRandom r, int count, int maxWeight, int featureCount) {
        List<Gen> out = new ArrayList<>();
        Set<String> endpoints = new HashSet<>();
        while (out.size() < count) {
            Set<String> features = new LinkedHashSet<>();
            for (int f = 0; f < featureCount; f++) {
                if (r.nextInt(3) > 0) {
                    features.add("f" + f);
                }
            }
            long weight = 1 + r.nextInt(maxWeight);
            Gen g = r.nextInt(3) == 0 ? ipv6(r, weight, features) : ipv4(r, weight, features);
            if (endpoints.add(g.endpoint())) {
                out.add(g);
            }
        }
        return out;
    }

    private static String fileText(List<Gen> gens, SplittableRandom r) {
        StringBuilder sb = new StringBuilder();
        boolean block = r.nextBoolean();
        if (block) {
            sb.append("upstream oracle {\n    hash $request_uri consistent;\n");
        }
        for (Gen g : gens) {
            sb.append(block ? "    " : "").append(g.line()).append('\n');
        }
        if (block) {
            sb.append("}\n");
        }
        return sb.toString();
    }

    // ---- the oracle ----

    private static byte[] littleEndian(int v) {
        return new byte[] {(byte) v, (byte) (v >>> 8), (byte) (v >>> 16), (byte) (v >>> 24)};
    }

    /** Each point: CRC-32 of the base input followed by the previous point's hash, little-endian (first: 0). */
    private static int[] points(byte[] input, long count) {
        int[] out = new int[Math.toIntExact(count)];
        CRC32 crc = new CRC32();
        int previous = 0;
        for (int i = 0; i < out.length; i++) {
            crc.reset();
            crc.update(input);
            crc.update(littleEndian(previous));
            previous = (int) crc.getValue();
            out[i] = previous;
        }
        return out;
    }

    /** pingora-ketama: Rust's IpAddr text (no brackets, no scope), a zero byte, the port in decimal. */
    private static byte[] v2Input(Gen g, Backend parsed) {
        String socket = parsed.socketAddress();
        String ip = socket.startsWith("[")
                ? socket.substring(1, socket.indexOf(socket.contains("%") ? '%' : ']'))
                : socket.substring(0, socket.lastIndexOf(':'));
        return (ip + '\0' + g.portNumber()).getBytes(StandardCharsets.ISO_8859_1);
    }

    /** Everything the oracle needs about one case. */
    static final class Oracle {
        final List<Gen> gens;
        final Map<RingVersion, int[][]> points = new HashMap<>();
        final Map<RingVersion, int[]> tieOrder = new HashMap<>();
        private List<Object> lastKey;
        private TreeMap<Long, Integer> lastRing;

        Oracle(List<Gen> gens, BackendList parsed, List<RingVersion> versions) {
            this.gens = gens;
            for (RingVersion v : versions) {
                int[][] p = new int[gens.size()][];
                for (int b = 0; b < gens.size(); b++) {
                    Gen g = gens.get(b);
                    byte[] input = v.family() == Families.NGINX ? g.v1Input() : v2Input(g, parsed.backend(b));
                    p[b] = points(input, g.weight() * v.pointMultiple());
                }
                points.put(v, p);
                Integer[] order = IntStream.range(0, gens.size()).boxed().toArray(Integer[]::new);
                if (v.family() == Families.PINGORA) {
                    Arrays.sort(order, Comparator.comparing(gens::get, SOCKET_ORDER)); // smallest socket address first
                } // v1: the backend listed first
                tieOrder.put(v, Arrays.stream(order).mapToInt(Integer::intValue).toArray());
            }
        }

        BitSet members(Set<String> features) {
            BitSet m = new BitSet();
            for (int b = 0; b < gens.size(); b++) {
                if (gens.get(b).features().containsAll(features)) {
                    m.set(b);
                }
            }
            return m;
        }

        long pointsBeforeDedup(BitSet members, RingVersion v) {
            return members.stream().mapToLong(b -> points.get(v)[b].length).sum();
        }

        /** The expected ring; the last one is kept for a second look. */
        TreeMap<Long, Integer> ring(BitSet members, RingVersion v) {
            List<Object> key = List.of(members.clone(), v);
            if (key.equals(lastKey)) {
                return lastRing;
            }
            TreeMap<Long, Integer> map = new TreeMap<>();
            for (int b : tieOrder.get(v)) {
                if (members.get(b)) {
                    for (int h : points.get(v)[b]) {
                        map.putIfAbsent(Integer.toUnsignedLong(h), b);
                    }
                }
            }
            lastKey = key;
            lastRing = map;
            return map;
        }

        static int lookup(TreeMap<Long, Integer> ring, long hash) {
            Map.Entry<Long, Integer> e = ring.ceilingEntry(hash);
            if (e == null) {
                e = ring.firstEntry();
            }
            return e == null ? Ring.NO_BACKEND : e.getValue();
        }

        /** Distinct backends from the key's point on, wrapping. */
        static List<Integer> failover(TreeMap<Long, Integer> ring, long hash) {
            LinkedHashSet<Integer> order =
                    new LinkedHashSet<>(ring.tailMap(hash, true).values());
            order.addAll(ring.headMap(hash, false).values());
            return List.copyOf(order);
        }
    }

    /** Totals over a file's distinct segments (compared with the build's own counts), and the oracle used. */
    private record Totals(long points, long collisions, Oracle oracle) {}

    /**
     * Builds {@code gens} into a file and compares every ring with the oracle.
     *
     * @return points and collisions per distinct segment, summed, and the oracle
     */
    private static Totals check(
            Path dir,
            List<Gen> gens,
            List<RingVersion> versions,
            SplittableRandom r,
            int randomHashes,
            int failoverKeys)
            throws Exception {
        String text = fileText(gens, r);
        BackendList parsed = BackendList.parse("oracle", text);
        assertEquals(gens.size(), parsed.size());
        // Every third fleet each way: the oracle checks views (Views.ALL, AUTO) as it checks stored rings.
        Views views = Views.values()[Math.floorMod(text.hashCode(), 3)];
        RingBuilder builder = RingBuilder.of(parsed).views(views);
        versions.forEach(builder::version);
        Path file = dir.resolve("oracle.ring");
        BuildResult result = builder.generation(1).build(file);
        Oracle oracle = new Oracle(gens, parsed, versions);
        long points = 0;
        long collisions = 0;
        try (RingStore store = RingStore.open(file)) {
            store.verify();
            List<Set<String>> featureSets = Combination.of(store.features()).toList();
            for (RingVersion v : versions) {
                Set<BitSet> counted = new HashSet<>();
                for (Set<String> features : featureSets) {
                    BitSet members = oracle.members(features);
                    TreeMap<Long, Integer> expected = oracle.ring(members, v);
                    Ring ring = store.ring(features, v);
                    String what = v + " " + features + " of\n" + text;
                    if (!members.isEmpty() && counted.add(members)) {
                        points += expected.size();
                        collisions += oracle.pointsBeforeDedup(members, v) - expected.size();
                    }
                    compare(expected, members, ring, r, randomHashes, failoverKeys, what);
                }
            }
        }
        if (views == Views.NONE) {
            assertEquals(points, result.points(), "points over distinct segments");
            assertEquals(collisions, result.collisions(), "collisions over distinct segments");
        }
        return new Totals(points, collisions, oracle);
    }

    private static void compare(
            TreeMap<Long, Integer> expected,
            BitSet members,
            Ring ring,
            SplittableRandom r,
            int randomHashes,
            int failoverKeys,
            String what) {
        // The points themselves, in order.
        assertEquals(expected.size(), ring.pointCount(), what);
        int i = 0;
        for (Map.Entry<Long, Integer> e : expected.entrySet()) {
            int position = i++;
            if (ring.pointHash(position) != e.getKey() || ring.pointBackend(position) != e.getValue()) {
                throw new AssertionError("point " + position + ": expected " + e.getKey() + "->" + e.getValue()
                        + ", found " + ring.pointHash(position) + "->"
                        + ring.pointBackend(position) + " in " + what);
            }
        }
        // Lookups: random hashes, both ends, and on and beside every point.
        LongStream.Builder hashes =
                LongStream.builder().add(0).add(1).add(0xFFFF_FFFEL).add(0xFFFF_FFFFL);
        for (int k = 0; k < randomHashes; k++) {
            hashes.add(r.nextLong(1L << 32));
        }
        for (long h : expected.keySet()) {
            hashes.add(h).add((h + 1) & 0xFFFF_FFFFL).add((h - 1) & 0xFFFF_FFFFL);
        }
        for (long h : hashes.build().toArray()) {
            int want = Oracle.lookup(expected, h);
            int got = ring.lookupHash((int) h);
            if (want != got) {
                throw new AssertionError("lookupHash(" + h + "): expected " + want + ", found " + got + " in " + what);
            }
        }
        // A member whose every point went to another backend (v2: same IP, other scope) is not on the ring.
        BitSet owners = new BitSet();
        expected.values().forEach(owners::set);
        BitSet outside = (BitSet) owners.clone();
        outside.andNot(members);
        assertTrue(outside.isEmpty(), what);
        // Keys: lookup by CRC-32, and the failover order.
        for (int k = 0; k < failoverKeys; k++) {
            byte[] key = ("/k/" + r.nextLong()).getBytes(StandardCharsets.US_ASCII);
            CRC32 crc = new CRC32();
            crc.update(key);
            long h = crc.getValue();
            int first = ring.lookup(key);
            assertEquals(Oracle.lookup(expected, h), first, what);
            List<Integer> order = new ArrayList<>();
            PrimitiveIterator.OfInt it = ring.backends(key);
            while (it.hasNext()) {
                order.add(it.nextInt());
            }
            if (members.isEmpty()) {
                assertEquals(List.of(), order, what);
                continue;
            }
            assertEquals(first, order.getFirst(), what);
            assertEquals(owners.cardinality(), order.size(), () -> "each backend once: " + order + " " + what);
            assertEquals(owners, order.stream().collect(BitSet::new, BitSet::set, BitSet::or), what);
            assertEquals(Oracle.failover(expected, h), order, what);
            int count = 0;
            for (PrimitiveIterator.OfInt p = ring.points(key); p.hasNext(); p.nextInt()) {
                count++;
            }
            assertEquals(ring.pointCount(), count, what);
        }
    }

    // ---- the cases ----

    static IntStream seeds() {
        return IntStream.rangeClosed(1, 40);
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void randomBackendSetsMatchTheOracle(int seed, @TempDir Path dir) throws Exception {
        SplittableRandom r = new SplittableRandom(seed * 0x9E3779B97F4A7C15L);
        int featureCount = r.nextInt(4);
        List<Gen> gens = randomBackends(r, 1 + r.nextInt(25), 1 + r.nextInt(4), featureCount);
        List<RingVersion> versions = new ArrayList<>();
        if (r.nextInt(4) > 0) {
            versions.add(RingVersion.V1);
        }
        int v2s = versions.isEmpty() ? 1 + r.nextInt(2) : r.nextInt(3);
        while (v2s > 0) {
            RingVersion v = RingVersion.v2(V2_MULTIPLES[r.nextInt(V2_MULTIPLES.length)]);
            if (!versions.contains(v)) {
                versions.add(r.nextBoolean() ? versions.size() : 0, v);
                v2s--;
            }
        }
        check(dir, versions.contains(RingVersion.V1) ? unscoped(gens) : gens, versions, r, 300, 8);
    }

    /**
     * {@code gens} without scope ids, for builds that include v1 (nginx refuses scope ids, and so does
     * the builder since issue 10); addresses that then name one endpoint twice are kept once.
     */
    private static List<Gen> unscoped(List<Gen> gens) {
        Set<String> endpoints = new HashSet<>();
        List<Gen> out = new ArrayList<>();
        for (Gen g : gens) {
            int percent = g.host().indexOf('%');
            Gen u = percent < 0
                    ? g
                    : new Gen(
                            g.host().substring(0, percent) + "]",
                            g.port(),
                            g.ip(),
                            g.portNumber(),
                            0,
                            g.weight(),
                            g.features());
            if (endpoints.add(Arrays.toString(u.ip()) + "/" + u.portNumber())) {
                out.add(u);
            }
        }
        return out;
    }

    /**
     * A scoped and an unscoped link-local address print the same IP for Rust, so pingora-ketama v2 gives
     * them the same points: every point collides and the smaller socket address (scope 0) must win, but
     * only among the backends of the ring (feature rings without it go to the next smallest).
     */
    @Test
    void v2CollisionsGoToTheSmallestSocketAddressAmongTheRingsBackends(@TempDir Path dir) throws Exception {
        byte[] ip = new byte[16];
        ip[0] = (byte) 0xFE;
        ip[1] = (byte) 0x80;
        ip[15] = 1;
        List<Gen> gens = List.of(
                new Gen("[fe80::1%3]", "80", ip, 80, 3, 2, Set.of("a")),
                new Gen("127.0.0.1", "80", new byte[] {127, 0, 0, 1}, 80, 0, 1, Set.of()),
                new Gen("[fe80::1%2]", null, ip, 80, 2, 1, Set.of("a", "b")),
                new Gen("[fe80:0::1]", "80", ip, 80, 0, 3, Set.of("b")),
                new Gen("[FE80::1%1]", "0080", ip, 80, 1, 1, Set.of("a")));
        Totals totals =
                check(dir, gens, List.of(RingVersion.v2(1), RingVersion.v2(3)), new SplittableRandom(11), 200, 10);
        assertTrue(totals.collisions() > 0, "the fixture forces v2 collisions");
        // v1 is nginx's, which refuses scope ids: a build that includes it is refused at the first scoped line.
        BackendList parsed = BackendList.parse("oracle", fileText(gens, new SplittableRandom(11)));
        BackendsFileException e = assertThrows(
                BackendsFileException.class,
                () -> RingBuilder.of(parsed)
                        .version(RingVersion.v2(1))
                        .version(RingVersion.V1)
                        .build(dir.resolve("v1.ring")));
        assertTrue(e.line() >= 1 && e.reason().contains("'[fe80::1%3]:80' has a scope id"), e.getMessage());
    }

    /**
     * Enough points (320,000 per ring) that CRC-32 birthday collisions happen between different
     * backends, in random listing order, so that the v1 rule (first listed) and the v2 rule (smallest
     * address) both decide some of them.
     */
    @Tag("slow")
    @Test
    void manyPointsCollideAndTheTieRulesHold(@TempDir Path dir) throws Exception {
        SplittableRandom r = new SplittableRandom(20_240_601);
        List<Gen> gens = unscoped(randomBackends(r, 2000, 1, 0)); // v1 refuses scope ids
        List<RingVersion> versions =
                List.of(RingVersion.v2(160), RingVersion.V1); // v1 last: its expected ring stays cached
        Totals totals = check(dir, gens, versions, r, 2000, 3);
        assertTrue(totals.collisions() >= 10, "expected about 2 × 12 birthday collisions: " + totals.collisions());

        // The two rules must actually disagree somewhere: a v1 collision won by a larger address listed first.
        Oracle oracle = totals.oracle();
        BitSet all = new BitSet();
        all.set(0, gens.size());
        TreeMap<Long, Integer> v1 = oracle.ring(all, RingVersion.V1);
        long listedFirstButLarger = 0;
        for (int b = 0; b < gens.size(); b++) {
            for (int h : oracle.points.get(RingVersion.V1)[b]) {
                int winner = v1.get(Integer.toUnsignedLong(h));
                if (winner != b && SOCKET_ORDER.compare(gens.get(b), gens.get(winner)) < 0) {
                    listedFirstButLarger++;
                }
            }
        }
        assertTrue(listedFirstButLarger > 0, "some v1 collision is won against a smaller address");
    }
}
