package io.ringstore;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.ringstore.family.Families;
import io.ringstore.family.RingFamily;
import io.ringstore.family.RingVersion;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * spymemcached's {@code KetamaNodeLocator} ({@code spymemcached[:K]}) against the family contract and
 * couchbase/spymemcached's {@code KetamaNodeLocatorTest} ({@code vectors/spymemcached/}, README.md
 * there): every {@code KETAMA_HASH} lookup, the rehash sequences, the largest point, and the 3,241
 * key → server pairs of {@code testLibKetamaCompatTwo} and {@code Three}.
 *
 * <p>Not checked here: the {@code FNV1A_32_HASH} rows (4 lookups, 1 sequence: 160 FNV-1a points a
 * node and FNV-1a keys, which no ringstore family builds) and the {@code LIBMEMCACHED} key-format rows
 * (4 lookups: libmemcached's text, checked in {@link LibmemcachedFamilyTest}).
 *
 * <p>The test's nodes are {@code InetSocketAddress.createUnresolved("127.0.0.1", 10000 + i)}, which
 * JDK 13 and earlier print {@code 127.0.0.1:10000} (JDK 14 and later {@code 127.0.0.1/<unresolved>:10000},
 * and the vectors then fail). This family prints a resolved IP literal, {@code /127.0.0.1:10000}, and
 * strips the slash as spymemcached does: the same text, checked by the vectors themselves.
 */
class SpymemcachedFamilyTest extends RingFamilyContract {
    static final RingVersion VERSION = RingVersion.parse("spymemcached");

    @Override
    RingFamily family() {
        return Families.SPYMEMCACHED;
    }

    @Override
    String expectedName() {
        return "spymemcached";
    }

    @Override
    int expectedCode() {
        return 7;
    }

    /** Recorded by {@link SeededFleets#checksum} when this test was added (branch h/contract on 95f3c34): a regression guard. */
    @Override
    Map<RingVersion, String> goldenChecksums() {
        Map<RingVersion, String> m = new LinkedHashMap<>();
        m.put(VERSION, "79dde678346d2ddb268f57523deb88e4be950532ce357e66e03f902332d720f5");
        m.put(RingVersion.parse("spymemcached:40"), "26638e166a2a2b4790b50d8e472a6e7d49ac2a43dcea508d3f0468e37917436c");
        m.put(
                RingVersion.parse("spymemcached:162"),
                "79dde678346d2ddb268f57523deb88e4be950532ce357e66e03f902332d720f5");
        return m;
    }

    /** K repetitions a node whatever the weights: a node's points are its own. */
    @Override
    boolean monotone() {
        return true;
    }

    /** {@code TreeMap.put}: the last put wins, the node listed last. */
    @Override
    Comparator<Backend> tieOrder() {
        return Comparator.comparingInt(Backend::index).reversed();
    }

    /** The backends file of a node set of {@code nodes.tsv}, in its order. */
    static String nodes(String nodeSet) {
        StringBuilder text = new StringBuilder();
        for (ProjectVectors.Row row : ProjectVectors.rows(
                "spymemcached/nodes.tsv", r -> r.get("node_set").equals(nodeSet))) {
            text.append("server ")
                    .append(row.get("host"))
                    .append(':')
                    .append(row.get("port"))
                    .append(row.get("weight").equals("-") ? "" : " weight=" + row.get("weight"))
                    .append(";\n");
        }
        return text.toString();
    }

    /**
     * {@code testLookups}, {@code testClusterResizing}, {@code testContinuumWrapping},
     * {@code testLibKetamaCompat}: {@code getPrimary(key)} is the expected node. Catches the text
     * (with the slash kept, as xmemcached does, {@code dustin} goes elsewhere), the key hash, and
     * the wrap.
     */
    @Test
    void lookups() throws Exception {
        List<ProjectVectors.Row> rows = ProjectVectors.rows(
                "spymemcached/lookups.tsv",
                r -> r.get("hash_alg").equals("KETAMA_HASH")
                        && r.get("key_format").equals("SPYMEMCACHED"));
        for (ProjectVectors.Row row : rows) {
            try (RingStore store = build(nodes(row.get("node_set")), VERSION)) {
                Ring ring = store.ring(Set.of(), VERSION);
                assertEquals(row.integer("expected_node_index"), ring.lookup(row.bytes("key")), row.toString());
            }
        }
        assertEquals(16, rows.size());
    }

    /**
     * {@code testSequence1}, {@code testSequence2}: {@code getSequence(key)} yields exactly these 7
     * nodes, repeats included. Read twice: as the tries of {@link Ring#select(byte[], int, int, int,
     * java.util.function.IntPredicate)} (refusing every node), and restated from the family's
     * {@link io.ringstore.family.Failover#rehash} and {@link Ring#lookupHash}. Catches a try counter that starts at 1
     * (xmemcached's) instead of 0, and an unsigned add in place of the {@code (int)} one.
     */
    @Test
    void sequences() throws Exception {
        List<ProjectVectors.Row> rows = ProjectVectors.rows(
                "spymemcached/sequences.tsv", r -> r.get("hash_alg").equals("KETAMA_HASH"));
        for (ProjectVectors.Row row : rows) {
            List<Integer> expected = Arrays.stream(
                            row.get("expected_node_indexes").split(","))
                    .map(Integer::valueOf)
                    .toList();
            try (RingStore store = build(nodes(row.get("node_set")), VERSION)) {
                Ring ring = store.ring(Set.of(), VERSION);
                byte[] key = row.bytes("key");
                List<Integer> tried = new ArrayList<>();
                assertEquals(Ring.GAVE_UP, ring.select(key, 0, key.length, 1, b -> !tried.add(b)), row.toString());
                assertEquals(expected, tried, row + ": the tries of select");

                List<Integer> restated = new ArrayList<>();
                int h = ring.keyHash().hash(key);
                for (int attempt = 0; attempt < family().failover().lookups(store.backendCount()); attempt++) {
                    if (attempt > 0) {
                        h = family().failover().rehash(h, key, 0, key.length, attempt);
                    }
                    restated.add(ring.lookupHash(h));
                }
                assertEquals(expected, restated, row + ": rehash and lookupHash");
                assertEquals(
                        expected.stream().distinct().toList(),
                        toList(ring.backends(key)),
                        row + ": backends(key), the distinct tries");
            }
        }
        assertEquals(2, rows.size());
    }

    private static List<Integer> toList(java.util.PrimitiveIterator.OfInt it) {
        List<Integer> out = new ArrayList<>();
        it.forEachRemaining((int b) -> out.add(b));
        return out;
    }

    /** {@code testContinuumWrapping}: {@code getMaxKey()}, the largest point of the 4-node ring. */
    @Test
    void largestPoint() throws Exception {
        ProjectVectors.Row row = ProjectVectors.rows("spymemcached/facts.tsv").getFirst();
        assertEquals("getMaxKey()", row.get("fact"));
        try (RingStore store = build(nodes(row.get("node_set")), VERSION)) {
            Ring ring = store.ring(Set.of(), VERSION);
            assertEquals(row.unsigned("expected"), ring.pointHash(ring.pointCount() - 1), row.toString());
            assertEquals(4 * 160, ring.pointCount());
        }
    }

    /**
     * {@code testLibKetamaCompatTwo} (2,841 keys) and {@code Three} (400): 10.0.1.1..8:11211 unweighted;
     * the test asserts {@code toString() == "/" + server}, i.e. this family's answer. Catches any
     * change to the text, the count or the tie rule.
     */
    @Test
    void libKetamaCompat() throws Exception {
        assertEquals(2_841, compat("spymemcached/compat_two.tsv", VERSION));
        assertEquals(400, compat("spymemcached/compat_three.tsv", VERSION));
    }

    /** The rows of a compat file checked against {@code version}'s ring of the eight nodes; returns how many. */
    int compat(String file, RingVersion version) throws Exception {
        try (RingStore store = build(nodes("mockNodes(10.0.1.1..8:11211)"), version)) {
            Ring ring = store.ring(Set.of(), version);
            List<ProjectVectors.Row> rows = ProjectVectors.rows(file);
            for (ProjectVectors.Row row : rows) {
                assertEquals(
                        row.get("server"),
                        store.backend(ring.lookup(row.get("key").getBytes(StandardCharsets.US_ASCII)))
                                .answer(family()),
                        row.toString());
            }
            return rows.size();
        }
    }
}
