package io.ringstore.migration;

import static io.ringstore.migration.RolloutPolicyTest.assertWithinBinomial;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.Ring;
import io.ringstore.RingFileException;
import io.ringstore.RingStore;
import io.ringstore.TestRings;
import io.ringstore.builder.BackendsFileException;
import io.ringstore.family.RingVersion;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.Objects;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.LongFunction;
import java.util.zip.CRC32;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link RingDiff} against three independent answers: brute-force sampling of a million random hashes
 * through both rings' lookups (within binomial error), an exact sweep over every elementary interval of
 * the hash line asking each ring's own {@code lookupHash} (equal to the last bit), and, for small rings,
 * point hashes computed here with {@link CRC32} as nginx and pingora-ketama define them and arcs
 * measured by hand in {@code long} arithmetic.
 */
class RingDiffTest {
    private static final long LINE = 1L << 32;
    private static final long LAST = LINE - 1;

    @TempDir
    Path dir;

    private int files;

    private Path build(String text, RingVersion... versions)
            throws IOException, BackendsFileException, RingFileException {
        Path p = dir.resolve("f" + files++ + ".ring");
        TestRings.build(p, text, versions);
        return p;
    }

    // ---- oracles ----

    /** Moved length and per-endpoint lengths, in units of one hash value. */
    record Moved(
            long moved,
            Map<String, Long> before,
            Map<String, Long> after,
            Map<String, Long> out,
            Map<String, Long> in) {
        static Map<String, Double> shares(Map<String, Long> lengths) {
            Map<String, Double> m = new HashMap<>();
            lengths.forEach((k, v) -> m.put(k, v / (double) LINE));
            return m;
        }
    }

    /**
     * Walks the elementary intervals (previous bound, bound] of the line, the bounds being every point of
     * either ring and 2^32 - 1; within one interval neither ring changes its answer, so asking each ring's
     * owner of the interval's top hash value is exact. A null owner means an empty ring.
     */
    static Moved sweep(NavigableSet<Long> pointHashes, LongFunction<String> ownerA, LongFunction<String> ownerB) {
        TreeSet<Long> bounds = new TreeSet<>(pointHashes);
        bounds.add(LAST);
        Map<String, Long> before = new HashMap<>();
        Map<String, Long> after = new HashMap<>();
        Map<String, Long> out = new HashMap<>();
        Map<String, Long> in = new HashMap<>();
        long moved = 0;
        long prev = -1;
        for (long bound : bounds) {
            long len = bound - prev;
            String a = ownerA.apply(bound);
            String b = ownerB.apply(bound);
            if (a != null) {
                before.merge(a, len, Long::sum);
            }
            if (b != null) {
                after.merge(b, len, Long::sum);
            }
            if (!Objects.equals(a, b)) {
                moved += len;
                if (a != null) {
                    out.merge(a, len, Long::sum);
                }
                if (b != null) {
                    in.merge(b, len, Long::sum);
                }
            }
            prev = bound;
        }
        assertEquals(LAST, prev);
        return new Moved(moved, before, after, out, in);
    }

    /** The exact answer from both rings' own lookups. */
    static Moved byLookups(Ring a, Ring b) {
        TreeSet<Long> hashes = new TreeSet<>();
        for (Ring r : List.of(a, b)) {
            for (int i = 0; i < r.pointCount(); i++) {
                hashes.add(r.pointHash(i));
            }
        }
        return sweep(hashes, h -> owner(a, h), h -> owner(b, h));
    }

    private static String owner(Ring r, long hash) {
        int b = r.lookupHash((int) hash);
        return b < 0 ? null : r.store().backend(b).socketAddress();
    }

    /** The exact answer from points generated here: a {@code TreeMap} per ring, {@code ceilingEntry} with wrap-around. */
    static Moved byPoints(TreeMap<Long, String> a, TreeMap<Long, String> b) {
        TreeSet<Long> hashes = new TreeSet<>(a.keySet());
        hashes.addAll(b.keySet());
        return sweep(hashes, h -> owner(a, h), h -> owner(b, h));
    }

    private static String owner(TreeMap<Long, String> ring, long hash) {
        if (ring.isEmpty()) {
            return null;
        }
        Map.Entry<Long, String> e = ring.ceilingEntry(hash);
        return (e != null ? e : ring.firstEntry()).getValue();
    }

    /**
     * The point hashes of backend {@code 127.0.0.N:port}, as nginx ({@code server} text "host:port") and
     * pingora-ketama (IP, a zero byte, the port) both generate them for a canonical address: CRC-32 over
     * "host\0port" followed by the previous point's hash as 4 little-endian bytes, the first previous being 0.
     */
    static long[] points(String host, int port, int count) {
        byte[] input = (host + '\0' + port).getBytes(StandardCharsets.ISO_8859_1);
        long[] h = new long[count];
        int prev = 0;
        for (int i = 0; i < count; i++) {
            CRC32 crc = new CRC32();
            crc.update(input);
            crc.update(new byte[] {(byte) prev, (byte) (prev >>> 8), (byte) (prev >>> 16), (byte) (prev >>> 24)});
            h[i] = crc.getValue();
            prev = (int) h[i];
        }
        return h;
    }

    /** A ring of points generated here; fails on an equal hash from two backends, which these small cases avoid. */
    static TreeMap<Long, String> ringOf(int pointsPerWeight, Object... hostWeight) {
        TreeMap<Long, String> ring = new TreeMap<>();
        for (int i = 0; i < hostWeight.length; i += 2) {
            String host = (String) hostWeight[i];
            int weight = (Integer) hostWeight[i + 1];
            for (long h : points(host, 80, pointsPerWeight * weight)) {
                String was = ring.put(h, host + ":80");
                assertTrue(
                        was == null || was.equals(host + ":80"),
                        "two backends on hash " + h + ": pick other addresses");
            }
        }
        return ring;
    }

    static String serverLines(Object... hostWeight) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < hostWeight.length; i += 2) {
            sb.append("server ")
                    .append(hostWeight[i])
                    .append(":80 weight=")
                    .append(hostWeight[i + 1])
                    .append('\n');
        }
        return sb.toString();
    }

    /** Asserts {@code d} is exactly {@code m}: every length divided by 2^32 is exact in a double. */
    static void assertExact(Moved m, RingDiff d, String what) {
        assertEquals(m.moved() / (double) LINE, d.movedFraction(), what + ": moved fraction");
        assertEquals(Moved.shares(m.before()), d.before(), what + ": shares before");
        assertEquals(Moved.shares(m.after()), d.after(), what + ": shares after");
        assertEquals(Moved.shares(m.out()), d.movedOut(), what + ": moved out");
        assertEquals(Moved.shares(m.in()), d.movedIn(), what + ": moved in");
    }

    /** Sums and ranges that hold for every diff. */
    static void assertConsistent(RingDiff d, String what) {
        double f = d.movedFraction();
        assertTrue(f >= 0 && f <= 1, what + ": moved fraction " + f);
        assertEquals(f, sum(d.movedOut()), 1e-12, what + ": moved out adds up to the moved fraction");
        assertEquals(f, sum(d.movedIn()), 1e-12, what + ": moved in adds up to the moved fraction");
        d.movedOut()
                .forEach((e, v) ->
                        assertTrue(v <= d.before().getOrDefault(e, 0.0), what + ": " + e + " loses more than it had"));
        d.movedIn()
                .forEach((e, v) ->
                        assertTrue(v <= d.after().getOrDefault(e, 0.0), what + ": " + e + " gains more than it has"));
        for (double p : new double[] {0, 0.01, 10, 100}) {
            assertEquals(f * p / 100, d.movedAtRollout(p), 1e-15, what + ": moved at a rollout of " + p + " %");
        }
    }

    private static double sum(Map<String, Double> m) {
        return m.values().stream().mapToDouble(Double::doubleValue).sum();
    }

    // ---- small rings computed by hand ----

    /**
     * v2 with one point per backend: three points on the line. Removing backend x moves exactly the arc
     * from the point before x's (cyclically) up to x's point, and all of it to the backend of the point
     * after x's. The arcs are computed here from the CRC-32 point hashes in {@code long} arithmetic.
     */
    @Test
    void removingOneOfThreeSinglePointBackendsMovesExactlyItsArc() throws Exception {
        String[] hosts = {"127.0.0.1", "127.0.0.2", "127.0.0.3"};
        long[] h = new long[3];
        for (int i = 0; i < 3; i++) {
            h[i] = points(hosts[i], 80, 1)[0];
        }
        Path all = build(serverLines(hosts[0], 1, hosts[1], 1, hosts[2], 1), RingVersion.v2(1));
        try (RingStore sa = RingStore.open(all)) {
            Ring a = sa.ring(Set.of());
            long[] sorted = h.clone();
            java.util.Arrays.sort(sorted);
            for (int i = 0; i < 3; i++) {
                assertEquals(sorted[i], a.pointHash(i), "point " + i + " of the built ring");
            }
            for (int x = 0; x < 3; x++) {
                int pred = -1;
                int succ = -1;
                for (int o = 0; o < 3; o++) {
                    if (o != x
                            && (pred < 0 || Long.compareUnsigned((h[x] - h[o]) & LAST, (h[x] - h[pred]) & LAST) < 0)) {
                        pred = o; // the nearest point before x's, going backwards round the line
                    }
                    if (o != x && (succ < 0 || ((h[o] - h[x]) & LAST) < ((h[succ] - h[x]) & LAST))) {
                        succ = o; // the nearest point after x's
                    }
                }
                long arc = (h[x] - h[pred]) & LAST;
                List<Object> rest = new ArrayList<>();
                for (int o = 0; o < 3; o++) {
                    if (o != x) {
                        rest.add(hosts[o]);
                        rest.add(1);
                    }
                }
                Path without = build(serverLines(rest.toArray()), RingVersion.v2(1));
                try (RingStore sb = RingStore.open(without)) {
                    RingDiff d = RingDiff.between(a, sb.ring(Set.of()));
                    String what = "removing " + hosts[x];
                    assertEquals(arc / (double) LINE, d.movedFraction(), what);
                    assertEquals(Map.of(hosts[x] + ":80", arc / (double) LINE), d.movedOut(), what + ": moved out");
                    assertEquals(Map.of(hosts[succ] + ":80", arc / (double) LINE), d.movedIn(), what + ": moved in");
                    // Before: each backend owns the arc up to its point; after: the successor also owns x's arc.
                    Map<String, Double> before = new HashMap<>();
                    for (int o = 0; o < 3; o++) {
                        int p = o;
                        long own = java.util.stream.LongStream.of(h)
                                .filter(v -> v != h[p])
                                .map(v -> (h[p] - v) & LAST)
                                .min()
                                .orElseThrow();
                        before.put(hosts[o] + ":80", own / (double) LINE);
                    }
                    assertEquals(before, d.before(), what + ": shares before");
                    assertEquals(
                            before.get(hosts[succ] + ":80") + arc / (double) LINE,
                            d.after().get(hosts[succ] + ":80"),
                            what + ": the successor's share after");
                    assertConsistent(d, what);
                }
            }
        }
    }

    /** One backend each, different: every key moves, exactly the whole line. */
    @Test
    void disjointSingleBackendsMoveTheWholeLine() throws Exception {
        try (RingStore a = RingStore.open(build("server 127.0.0.1:80\n", RingVersion.v2(1)));
                RingStore b = RingStore.open(build("server 127.0.0.2:80\n", RingVersion.v2(1)));
                RingStore b160 = RingStore.open(build("server 127.0.0.2:80 weight=3\n", RingVersion.V1))) {
            for (RingStore other : List.of(b, b160)) {
                RingDiff d = RingDiff.between(a.ring(Set.of()), other.ring(Set.of()));
                assertEquals(1.0, d.movedFraction());
                assertEquals(Map.of("127.0.0.1:80", 1.0), d.movedOut());
                assertEquals(Map.of("127.0.0.2:80", 1.0), d.movedIn());
                assertEquals(Map.of("127.0.0.1:80", 1.0), d.before());
            }
        }
    }

    /**
     * Small rings whose every point is generated here, compared exactly with the {@code TreeMap} oracle:
     * v2 with 1 and 2 points per weight unit (weight changes, a backend replaced) and v1 with nginx's 160.
     */
    @Test
    void smallRingsMatchIndependentlyGeneratedPointsExactly() throws Exception {
        Object[][][] cases = {
            // {A backends}, {B backends}: host, weight, ...
            {{"127.0.0.1", 1, "127.0.0.2", 1, "127.0.0.3", 1}, {"127.0.0.1", 3, "127.0.0.2", 1, "127.0.0.3", 1}},
            {
                {"127.0.0.1", 1, "127.0.0.2", 2, "127.0.0.3", 1, "127.0.0.4", 1},
                {"127.0.0.1", 1, "127.0.0.2", 2, "127.0.0.5", 1, "127.0.0.4", 1}
            },
            {{"127.0.0.1", 2, "127.0.0.2", 2}, {"127.0.0.2", 1, "127.0.0.3", 1}},
            {{"127.0.0.7", 1}, {"127.0.0.7", 1, "127.0.0.8", 1}},
        };
        int[][] multiples = {{1, 1}, {2, 2}, {160, 160}};
        for (Object[][] c : cases) {
            for (int[] k : multiples) {
                RingVersion va = k[0] == 160 ? RingVersion.V1 : RingVersion.v2(k[0]);
                RingVersion vb = k[1] == 160 ? RingVersion.V1 : RingVersion.v2(k[1]);
                try (RingStore a = RingStore.open(build(serverLines(c[0]), va));
                        RingStore b = RingStore.open(build(serverLines(c[1]), vb))) {
                    Moved expected = byPoints(ringOf(k[0], c[0]), ringOf(k[1], c[1]));
                    String what = va + " " + List.of(c[0]) + " vs " + vb + " " + List.of(c[1]);
                    assertTrue(expected.moved() > 0, what + ": a case where something moves");
                    RingDiff d = RingDiff.between(a.ring(Set.of()), b.ring(Set.of()));
                    assertExact(expected, d, what);
                    assertConsistent(d, what);
                }
            }
        }
    }

    /**
     * For canonical {@code 127.0.0.N:80} addresses nginx and pingora-ketama hash the same bytes, so v2:K's
     * points are the first K of each backend's 160 v1 points: v1 against v2:160 of the same file moves
     * nothing, and against v2:16 exactly what the oracle over those prefixes says.
     */
    @Test
    void v1AgainstV2OfTheSameFile() throws Exception {
        Object[] backends = {"127.0.0.1", 1, "127.0.0.2", 2, "127.0.0.3", 1};
        try (RingStore s =
                RingStore.open(build(serverLines(backends), RingVersion.V1, RingVersion.v2(160), RingVersion.v2(16)))) {
            Ring v1 = s.ring(Set.of(), RingVersion.V1);
            RingDiff same = RingDiff.between(v1, s.ring(Set.of(), RingVersion.v2(160)));
            assertEquals(0.0, same.movedFraction(), "v1 vs v2:160");
            assertEquals(Map.of(), same.movedOut());
            RingDiff d = RingDiff.between(v1, s.ring(Set.of(), RingVersion.v2(16)));
            assertExact(byPoints(ringOf(160, backends), ringOf(16, backends)), d, "v1 vs v2:16");
            assertExact(byLookups(v1, s.ring(Set.of(), RingVersion.v2(16))), d, "v1 vs v2:16 by lookups");
            assertTrue(d.movedFraction() > 0.05, "v2:16 differs from v1: " + d.movedFraction());
        }
    }

    @Test
    void aFileAgainstItselfOrItsRebuildMovesNothing() throws Exception {
        String text = serverLines("127.0.0.1", 1, "127.0.0.2", 3, "127.0.0.3", 2, "127.0.0.4", 1);
        List<RingVersion> versions = List.of(RingVersion.V1, RingVersion.v2(1), RingVersion.v2(16));
        try (RingStore a = RingStore.open(build(text, versions.toArray(RingVersion[]::new)));
                RingStore b = RingStore.open(build(text, versions.toArray(RingVersion[]::new)));
                RingStore reordered = RingStore.open(build(
                        serverLines("127.0.0.4", 1, "127.0.0.3", 2, "127.0.0.2", 3, "127.0.0.1", 1),
                        RingVersion.v2(16)));
                // pingora hashes the parsed address: a port-less address is port 80, the same endpoint.
                RingStore portless = RingStore.open(build(text.replace(":80", ""), RingVersion.v2(16)))) {
            for (RingVersion v : versions) {
                Ring r = a.ring(Set.of(), v);
                for (Ring other : List.of(r, b.ring(Set.of(), v))) {
                    RingDiff d = RingDiff.between(r, other);
                    assertEquals(0.0, d.movedFraction(), v + ": moved");
                    assertEquals(Map.of(), d.movedOut(), v + ": moved out");
                    assertEquals(Map.of(), d.movedIn(), v + ": moved in");
                    assertEquals(d.before(), d.after(), v + ": shares");
                    assertEquals(1.0, sum(d.before()), 1e-12, v + ": shares add up to the line");
                }
            }
            for (RingStore other : List.of(reordered, portless)) {
                RingDiff d = RingDiff.between(a.ring(Set.of(), RingVersion.v2(16)), other.ring(Set.of()));
                assertEquals(
                        0.0,
                        d.movedFraction(),
                        other.path() + ": v2 points depend on the endpoint, not on order or spelling");
            }
        }
    }

    /**
     * Removing one of N equal backends moves exactly that backend's share (only its keys move: moved out
     * only from it, moved in only to the others), about 1/N of the line, and the N removals together move
     * exactly the whole line once. "About": with P points per backend a share's relative standard
     * deviation is about 1/sqrt(P) (8 % at 160, 25 % at 16); the bound is 4.5 of those.
     */
    @Test
    void removingOneOfNEqualBackendsMovesOnlyItsKeys() throws Exception {
        int n = 10;
        for (RingVersion v : List.of(RingVersion.V1, RingVersion.v2(16))) {
            StringBuilder text = new StringBuilder();
            for (int i = 0; i < n; i++) {
                text.append("server 127.0.1.").append(i + 1).append(":80\n");
            }
            try (RingStore all = RingStore.open(build(text.toString(), v))) {
                Ring a = all.ring(Set.of());
                double[] shares = a.lineShares();
                double total = 0;
                for (int x = 0; x < n; x++) {
                    String removed = "127.0.1." + (x + 1) + ":80";
                    try (RingStore without =
                            RingStore.open(build(text.toString().replace("server " + removed + "\n", ""), v))) {
                        assertEquals(n - 1, without.backendCount());
                        RingDiff d = RingDiff.between(a, without.ring(Set.of()));
                        String what = v + " without " + removed;
                        assertEquals(
                                shares[x], d.movedFraction(), what + ": exactly the removed backend's share moves");
                        assertEquals(Map.of(removed, shares[x]), d.movedOut(), what + ": moved out");
                        assertNull(d.movedIn().get(removed), what + ": nothing moves to the removed backend");
                        assertEquals(n - 1, d.after().size(), what);
                        double relativeSd = 1 / Math.sqrt(v.pointMultiple());
                        assertEquals(1.0 / n, d.movedFraction(), 4.5 * relativeSd / n, what + ": about 1/N");
                        assertConsistent(d, what);
                        total += d.movedFraction();
                    }
                }
                assertEquals(1.0, total, v + ": the N removals together move the line exactly once");
            }
        }
    }

    @Test
    void emptyRings() throws Exception {
        // No backend has both a and b: that ring is empty.
        try (RingStore s = RingStore.open(
                build("server 127.0.0.1:80 features=a\nserver 127.0.0.2:80 features=b\n", RingVersion.v2(4)))) {
            Ring empty = s.ring(Set.of("a", "b"));
            Ring a = s.ring(Set.of("a"));
            assertTrue(empty.isEmpty());
            RingDiff none = RingDiff.between(empty, empty);
            assertEquals(0.0, none.movedFraction());
            assertEquals(Map.of(), none.before());
            RingDiff gain = RingDiff.between(empty, a);
            assertEquals(1.0, gain.movedFraction());
            assertEquals(Map.of("127.0.0.1:80", 1.0), gain.movedIn());
            assertEquals(Map.of(), gain.movedOut());
            RingDiff lose = RingDiff.between(a, empty);
            assertEquals(1.0, lose.movedFraction());
            assertEquals(Map.of("127.0.0.1:80", 1.0), lose.movedOut());
            assertEquals(Map.of(), lose.movedIn());
            for (RingDiff d : List.of(none, gain, lose)) {
                assertExact(
                        d == none ? byLookups(empty, empty) : d == gain ? byLookups(empty, a) : byLookups(a, empty),
                        d,
                        "empty");
            }
        }
    }

    // ---- random rings ----

    /** Random canonical backends on 127.0.0.0/8: 2 to 30 of them, weights 1 to 4, some with feature x. */
    private static Map<String, Integer> randomFleet(SplittableRandom r) {
        Map<String, Integer> fleet = new LinkedHashMap<>();
        int n = 2 + r.nextInt(29);
        while (fleet.size() < n) {
            fleet.put(
                    "127." + r.nextInt(256) + "." + r.nextInt(256) + "." + (1 + r.nextInt(254)) + ":"
                            + (1 + r.nextInt(65535)),
                    1 + r.nextInt(4));
        }
        return fleet;
    }

    /** The next generation of a fleet: about a fifth removed, a fifth reweighted, up to three added. */
    private static Map<String, Integer> mutate(Map<String, Integer> fleet, SplittableRandom r) {
        Map<String, Integer> next = new LinkedHashMap<>();
        fleet.forEach((a, w) -> {
            int roll = r.nextInt(5);
            if (roll != 0) {
                next.put(a, roll == 1 ? 1 + r.nextInt(4) : w);
            }
        });
        Map<String, Integer> added = randomFleet(r);
        added.entrySet().stream()
                .limit(r.nextInt(4) + (next.isEmpty() ? 1 : 0))
                .forEach(e -> next.put(e.getKey(), e.getValue()));
        return next;
    }

    private static String text(Map<String, Integer> fleet) {
        StringBuilder sb = new StringBuilder();
        int i = 0;
        for (Map.Entry<String, Integer> e : fleet.entrySet()) {
            sb.append("server ")
                    .append(e.getKey())
                    .append(" weight=")
                    .append(e.getValue())
                    .append(i++ % 3 == 0 ? " features=x" : "")
                    .append('\n');
        }
        return sb.toString();
    }

    /**
     * Random fleets and their next generations, v1 against v1, v2:K against v2:K, v1 against v2:16 of the
     * same file, and the rings of feature x: exact against the sweep over both rings' lookups, and for
     * the first round also within 5 binomial SDs of a million random hashes looked up in both rings.
     */
    @Test
    void randomRingsMatchSamplingAndTheExactSweep() throws Exception {
        SplittableRandom r = new SplittableRandom(0xD1FFL);
        int[] multiples = {1, 3, 16, 160};
        for (int round = 0; round < 4; round++) {
            Map<String, Integer> fleetA = randomFleet(r);
            Map<String, Integer> fleetB = mutate(fleetA, r);
            RingVersion k = RingVersion.v2(multiples[r.nextInt(multiples.length)]);
            try (RingStore a = RingStore.open(build(
                            text(fleetA),
                            RingVersion.V1,
                            k,
                            RingVersion.v2(16).equals(k) ? RingVersion.v2(17) : RingVersion.v2(16)));
                    RingStore b = RingStore.open(build(text(fleetB), RingVersion.V1, k))) {
                RingVersion sixteen = a.versions().get(2);
                List<Ring[]> pairs = List.of(
                        new Ring[] {a.ring(Set.of(), RingVersion.V1), b.ring(Set.of(), RingVersion.V1)},
                        new Ring[] {a.ring(Set.of(), k), b.ring(Set.of(), k)},
                        new Ring[] {a.ring(Set.of(), RingVersion.V1), a.ring(Set.of(), sixteen)},
                        new Ring[] {a.ring(Set.of("x"), k), b.ring(Set.of("x"), RingVersion.V1)});
                for (Ring[] p : pairs) {
                    String what = "round " + round + ": " + p[0] + " of " + fleetA.size() + " backends vs " + p[1]
                            + " of " + p[1].store().backendCount();
                    RingDiff d = RingDiff.between(p[0], p[1]);
                    assertExact(byLookups(p[0], p[1]), d, what);
                    assertConsistent(d, what);
                    if (round == 0) {
                        assertMatchesSampling(p[0], p[1], d, r.split(), what);
                    }
                }
            }
        }
    }

    private static void assertMatchesSampling(Ring a, Ring b, RingDiff d, SplittableRandom r, String what) {
        String[] ea = endpoints(a.store());
        String[] eb = endpoints(b.store());
        int samples = 1_000_000;
        int moved = 0;
        for (int i = 0; i < samples; i++) {
            int h = r.nextInt();
            int x = a.lookupHash(h);
            int y = b.lookupHash(h);
            moved += Objects.equals(x < 0 ? null : ea[x], y < 0 ? null : eb[y]) ? 0 : 1;
        }
        assertWithinBinomial(moved, samples, d.movedFraction(), what + ": sampled moved keys");
    }

    private static String[] endpoints(RingStore s) {
        String[] e = new String[s.backendCount()];
        for (int i = 0; i < e.length; i++) {
            e[i] = s.backend(i).socketAddress();
        }
        return e;
    }
}
