package io.ringstore.tools.analysis;

import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.Backend;
import io.ringstore.Ring;
import io.ringstore.RingStore;
import io.ringstore.builder.BackendList;
import io.ringstore.builder.RingBuilder;
import io.ringstore.family.Families;
import io.ringstore.family.RingVersion;
import io.ringstore.internal.BackendAccess;
import io.ringstore.internal.PointGenerator;
import io.ringstore.internal.PointSorter;
import io.ringstore.internal.ServerAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What {@code analyze} measures is what {@code build} writes: for every ring of the built files, v1
 * (without the scoped addresses, which v1 refuses) and v2, with feature rings, the simulator's points (its own input path: {@link SimulatedRing#of} over
 * the ring's members, then {@link RingSimulator#points}), with equal hashes dropped, are the file's
 * points one for one, hash and backend, read through {@link Ring#pointHash} and {@link Ring#pointBackend}.
 *
 * <p>Equal hashes are forced for v2: pingora-ketama hashes an IPv6 address without its scope, so the
 * scoped and unscoped forms of one link-local address generate the same points, and every one of them
 * must go to the smallest socket address among the ring's members (not the first listed). v1 hashes
 * the text as written, which two backends cannot share; there the 2,500-backend fleet (about 600,000
 * points) has CRC-32 birthday collisions between different backends, which the first listed keeps.
 */
class SimulationIsTheBuiltFileTest {
    private static final List<String> FEATURES = List.of("a", "b");
    /** One link-local address four ways (v2 hashes them all as fe80::1), listed largest socket address first. */
    private static final List<String> SAME_V2_INPUT =
            List.of("[fe80::1%3]:80", "[fe80::1%2]:80", "[fe80:0::1]:80", "[FE80::1%1]:0080");

    @Tag("slow") // an exhaustive sweep of several seconds: the full lane runs it
    @Test
    void everyRingsSimulatedPointsAreItsFilePoints(@TempDir Path dir) throws Exception {
        SplittableRandom random = new SplittableRandom(2026);
        StringBuilder file = new StringBuilder("upstream pool {\n");
        List<String> addresses = new ArrayList<>(SAME_V2_INPUT);
        SimulatedRing.randomAddresses(2500, 17).forEach(a -> addresses.add(a.text()));
        for (int i = 0; i < addresses.size(); i++) {
            String features = i < SAME_V2_INPUT.size()
                    ? FEATURES.get(i % 2) // each feature ring keeps some of the four
                    : switch (random.nextInt(4)) {
                        case 0 -> "";
                        case 1 -> "a";
                        case 2 -> "b";
                        default -> "a,b";
                    };
            file.append("    server ")
                    .append(addresses.get(i))
                    .append(" weight=")
                    .append(1 + random.nextInt(2))
                    .append(features.isEmpty() ? "" : " features=" + features)
                    .append(";\n");
        }
        String text = file.append("}\n").toString();
        RingVersion v2 = RingVersion.v2(40);
        Path ringFile = dir.resolve("pool.ring");
        RingBuilder.of(BackendList.parse("pool.conf", text)).version(v2).build(ringFile);
        // nginx refuses scope ids, and so does a v1 build (issue 10): v1 is built from the other lines.
        Path v1File = dir.resolve("pool-v1.ring");
        String v1Text =
                text.lines().filter(l -> !l.contains("%")).map(l -> l + "\n").collect(Collectors.joining());
        RingBuilder.of(BackendList.parse("pool.conf", v1Text))
                .version(RingVersion.V1)
                .build(v1File);

        RingSimulator simulator = new RingSimulator(2);
        Map<RingVersion, Long> dropped = new HashMap<>();
        int rings = 0;
        for (Path builtFile : List.of(v1File, ringFile)) {
            try (RingStore store = RingStore.open(builtFile)) {
                for (Ring ring : store.rings()) {
                    List<Backend> members = FleetRing.members(store.backends(), ring.features());
                    String what = ring.toString();
                    if (members.isEmpty()) {
                        assertTrue(ring.isEmpty(), what);
                        continue;
                    }
                    int multiple = ring.version().pointMultiple();
                    SimulatedRing sim = SimulatedRing.of(
                            members.stream()
                                    .map(b -> BackendAccess.record(b).address())
                                    .toList(),
                            ring.version().family(),
                            members.stream()
                                    .mapToInt(b -> Math.toIntExact(b.weight() * multiple))
                                    .toArray());
                    PointGenerator.Sorted points = simulator.points(sim, 32, line -> {});
                    int kept = 0;
                    for (int i = 0; i < points.count(); i++) {
                        long p = points.points()[i];
                        if (i > 0 && PointSorter.hash(p) == PointSorter.hash(points.points()[i - 1])) {
                            continue; // the file keeps one point per hash: the first in tie order
                        }
                        assertTrue(
                                kept < ring.pointCount(),
                                what + ": more simulated points than the file's " + ring.pointCount());
                        assertEquals(ring.pointLineHash(kept), PointSorter.hash(p), what + ": hash of point " + kept);
                        assertEquals(
                                ring.pointBackend(kept),
                                members.get(PointSorter.backend(p)).index(),
                                what + ": backend of point " + kept);
                        kept++;
                    }
                    assertEquals(ring.pointCount(), kept, what + ": points kept");
                    dropped.merge(ring.version(), (long) points.count() - kept, Long::sum);

                    RingSimulator.Measurement m = simulator.simulate(sim, 32, what, line -> {});
                    assertEquals(ring.pointCount(), m.points() - m.dropped(), what + ": the measurement's points");
                    double[] shares = ring.lineShares();
                    for (int i = 0; i < members.size(); i++) {
                        assertEquals(
                                shares[members.get(i).index()] * ArcShares.LINE,
                                (double) m.owned()[i],
                                0,
                                what + ": arc of member " + i);
                    }
                    rings++;
                }
            }
        }
        assertEquals(2 * (1 << FEATURES.size()), rings, "every ring of both versions compared");
        assertTrue(dropped.get(RingVersion.V1) > 0, "v1 has birthday collisions to resolve: " + dropped);
        assertTrue(dropped.get(v2) >= (SAME_V2_INPUT.size() - 1) * 40L, "v2's forced collisions: " + dropped);
        assertV2TieGoesToTheSmallestAddress();
    }

    /** The fixture does what it says: the four forms share v2's hash input and order differently from their listing. */
    private static void assertV2TieGoesToTheSmallestAddress() {
        List<ServerAddress> four =
                SAME_V2_INPUT.stream().map(ServerAddress::parse).toList();
        for (ServerAddress a : four) {
            assertEquals(
                    new String(four.getFirst().pingoraHashInput(), ISO_8859_1),
                    new String(a.pingoraHashInput(), ISO_8859_1),
                    a.text());
        }
        int[] rank = SimulatedRing.equal(four, Families.PINGORA, 1).ranks();
        assertTrue(rank[0] != 0, "the first listed is not the smallest socket address: ranks " + Arrays.toString(rank));
    }
}
