package io.ringstore;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.ringstore.family.Families;
import io.ringstore.family.RingFamily;
import io.ringstore.family.RingVersion;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The Couchbase Java SDK's {@code KetamaRing} ({@code couchbase}) against the family contract and
 * couchbase-jvm-clients' {@code KetamaRingTest} ({@code vectors/couchbase/}, README.md there): the
 * whole 640-point ring of {@code ketama-hashes.json} (SDK RFC 26's dataset), the wrap, and a real
 * MD5 collision whose later node wins.
 */
class CouchbaseFamilyTest extends RingFamilyContract {
    static final RingVersion VERSION = RingVersion.parse("couchbase");

    @Override
    RingFamily family() {
        return Families.COUCHBASE;
    }

    @Override
    String expectedName() {
        return "couchbase";
    }

    @Override
    int expectedCode() {
        return 12;
    }

    /**
     * Recorded by {@link SeededFleets#checksum} when this test was added (branch h/contract on 95f3c34), a
     * regression guard; recorded again when IPv6 nodes' texts became the JDK's {@code 2001:db8:0:0:0:0:0:a}
     * (issue 30: the seeded fleets have IPv6 servers, whose points the old text {@code 2001:db8::a} gave).
     */
    @Override
    Map<RingVersion, String> goldenChecksums() {
        return Map.of(VERSION, "71a68b0b770b20cacc27e882d3e04c760cde69074a0bd9e6fa8252ea4707c0fb");
    }

    /** 160 points a node whatever the weights. */
    @Override
    boolean monotone() {
        return true;
    }

    /** "Order matters, because 'last value wins'": the node listed last. */
    @Override
    Comparator<Backend> tieOrder() {
        return Comparator.comparingInt(Backend::index).reversed();
    }

    /** A backends file of {@code host:port} nodes in order: an IP as the address, a host name given by name (the address then a placeholder). */
    static String nodes(String commaSeparated) {
        StringBuilder text = new StringBuilder();
        int i = 0;
        for (String node : commaSeparated.split(",")) {
            String host = node.substring(0, node.lastIndexOf(':'));
            String port = node.substring(node.lastIndexOf(':') + 1);
            if (host.chars().allMatch(c -> c == '.' || Character.isDigit(c))) {
                text.append("server ").append(node).append(";\n");
            } else {
                text.append("server 10.9.9.")
                        .append(++i)
                        .append(':')
                        .append(port)
                        .append(";  # ringstore: name=")
                        .append(host)
                        .append('\n');
            }
        }
        return text.toString();
    }

    /** What the SDK prints for a node: its host name if it has one, else its address, then the KV port. */
    String hostname(Backend b) {
        String answer = b.answer(family());
        return b.name() == null ? answer : b.name() + answer.substring(answer.lastIndexOf(':'));
    }

    /**
     * {@code matchesVerificationDataset}: every one of the 640 points, hash and node, in order. Catches
     * any change to the text ({@code host:port-i}), the word order or the count.
     */
    @Test
    void theWholeRingOfTheRfcDataset() throws Exception {
        String nodes = ProjectVectors.rows(
                        "couchbase/ring_tests.tsv", r -> r.get("test").equals("wrapsAround"))
                .getFirst()
                .get("nodes");
        try (RingStore store = build(nodes(nodes), VERSION)) {
            Ring ring = store.ring(Set.of(), VERSION);
            List<ProjectVectors.Row> rows = ProjectVectors.rows("couchbase/ketama_hashes.tsv");
            assertEquals(rows.size(), ring.pointCount());
            for (int p = 0; p < rows.size(); p++) {
                ProjectVectors.Row row = rows.get(p);
                assertEquals(row.unsigned("hash"), ring.pointHash(p), row.toString());
                assertEquals(row.get("hostname"), hostname(store.backend(ring.pointBackend(p))), row.toString());
            }
            assertEquals(640, rows.size());
        }
    }

    /**
     * {@code wrapsAround} ({@code get(4294967295)}, past the last point, is the first point's node)
     * and {@code lastValueWinsIfCollision} (example.com:11210 and example137723.com:11210 share
     * 1723476360: the ring has 319 points, the later node keeps it). Listed the other way round, the
     * other node keeps it (the rule, not a published row). Catches the first listed keeping a tie.
     */
    @Test
    void ringTests() throws Exception {
        List<ProjectVectors.Row> rows = ProjectVectors.rows("couchbase/ring_tests.tsv");
        for (ProjectVectors.Row row : rows) {
            try (RingStore store = build(nodes(row.get("nodes")), VERSION)) {
                Ring ring = store.ring(Set.of(), VERSION);
                switch (row.get("fact")) {
                    case "get(hash)" ->
                        assertEquals(
                                row.get("expected"),
                                hostname(store.backend(ring.lookupHash((int) row.unsigned("argument")))),
                                row.toString());
                    case "toMap().size()" -> assertEquals(row.integer("expected"), ring.pointCount(), row.toString());
                    case "toMap().get(point)" -> {
                        int h = (int) row.unsigned("argument");
                        assertEquals(Integer.toUnsignedLong(h), ring.pointHash(ring.pointIndex(h)), row.toString());
                        assertEquals(row.get("expected"), hostname(store.backend(ring.lookupHash(h))), row.toString());
                        String[] listed = row.get("nodes").split(",");
                        try (RingStore reversed = build(nodes(listed[1] + "," + listed[0]), VERSION)) {
                            assertEquals(
                                    listed[0],
                                    hostname(reversed.backend(
                                            reversed.ring(Set.of(), VERSION).lookupHash(h))),
                                    row + ", listed the other way round");
                        }
                    }
                    default -> throw new AssertionError(row + ": unknown fact " + row.get("fact"));
                }
            }
        }
        assertEquals(3, rows.size());
    }
}
