package io.ringstore;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.ringstore.family.Families;
import io.ringstore.family.RingFamily;
import io.ringstore.family.RingVersion;
import java.nio.charset.StandardCharsets;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * spymemcached's {@code KetamaNodeLocator} with a weights map ({@code spymemcached-weighted}) against
 * the family contract. spymemcached publishes no weighted vector in its own key format (its one
 * weighted test uses the {@code LIBMEMCACHED} format: {@link LibmemcachedFamilyTest}); checked here:
 * {@code testLibKetamaCompatTwo} and {@code Three}, whose eight nodes of equal weight get
 * {@code floor(1/8 · 160 / 4 · 8 + 1e-10) = 40} digests, the unweighted ring; and the counts of
 * rings.md §4 (weights 1, 1, 3: 96/96/288; 25 equal nodes: 156 each, as libmemcached's rule).
 */
class SpymemcachedWeightedFamilyTest extends RingFamilyContract {
    static final RingVersion VERSION = RingVersion.parse("spymemcached-weighted");

    @Override
    RingFamily family() {
        return Families.SPYMEMCACHED_WEIGHTED;
    }

    @Override
    String expectedName() {
        return "spymemcached-weighted";
    }

    @Override
    int expectedCode() {
        return 8;
    }

    /** Recorded by {@link SeededFleets#checksum} when this test was added (branch h/contract on 95f3c34): a regression guard. */
    @Override
    Map<RingVersion, String> goldenChecksums() {
        return Map.of(VERSION, "e5b0ce85e2319a14b85308895a42a800eefc98f5f43898792f04b612677eceb3");
    }

    /** libmemcached's share rule: every count is the node's share of all the weights. */
    @Override
    boolean monotone() {
        return false;
    }

    /** {@code TreeMap.put}: the last put wins, the node listed last. */
    @Override
    Comparator<Backend> tieOrder() {
        return Comparator.comparingInt(Backend::index).reversed();
    }

    /** The 3,241 pairs of {@code testLibKetamaCompatTwo} and {@code Three}, the eight nodes weighing the same. */
    @Test
    void libKetamaCompatAtEqualWeights() throws Exception {
        int rows = 0;
        for (String file : List.of("spymemcached/compat_two.tsv", "spymemcached/compat_three.tsv")) {
            try (RingStore store = build(SpymemcachedFamilyTest.nodes("mockNodes(10.0.1.1..8:11211)"), VERSION)) {
                Ring ring = store.ring(Set.of(), VERSION);
                for (ProjectVectors.Row row : ProjectVectors.rows(file)) {
                    assertEquals(
                            row.get("server"),
                            store.backend(ring.lookup(row.get("key").getBytes(StandardCharsets.US_ASCII)))
                                    .answer(family()),
                            row.toString());
                    rows++;
                }
            }
        }
        assertEquals(3_241, rows);
    }

    /** Weights 1, 1, 3: 96, 96 and 288 points; the unweighted family would give 160 each. */
    @Test
    void weightsOneOneThree() throws Exception {
        assertEquals(
                List.of(96L, 96L, 288L),
                pointsPerBackend(
                        "server 10.0.0.1:11211;\nserver 10.0.0.2:11211;\nserver 10.0.0.3:11211 weight=3;\n", VERSION));
    }

    /** 25 equal nodes: the float rule gives 39 digests, 156 points each (a double rule would give 40). */
    @Test
    void twentyFiveEqualNodesGet156PointsEach() throws Exception {
        assertEquals(
                List.of(156L),
                pointsPerBackend(equalServers(25), VERSION).stream().distinct().toList());
    }
}
