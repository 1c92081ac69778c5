package io.ringstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.family.Families;
import io.ringstore.family.RingFamily;
import io.ringstore.family.RingVersion;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * libmemcached's weighted ketama ({@code libmemcached}) against the family contract and
 * awesomized/libmemcached's {@code memcached_ketama_compat} test ({@code vectors/libmemcached/},
 * README.md there): the 99 keys of {@code ketama_test_cases} (key hash, point, server), the wrap key
 * and the auto-eject section; and spymemcached's {@code LIBMEMCACHED} key format, which is this
 * family's text ({@code vectors/spymemcached/}).
 */
class LibmemcachedFamilyTest extends RingFamilyContract {
    static final RingVersion VERSION = RingVersion.parse("libmemcached");

    @Override
    RingFamily family() {
        return Families.LIBMEMCACHED;
    }

    @Override
    String expectedName() {
        return "libmemcached";
    }

    @Override
    int expectedCode() {
        return 4;
    }

    /** Recorded by {@link SeededFleets#checksum} when this test was added (branch h/contract on 95f3c34): a regression guard. */
    @Override
    Map<RingVersion, String> goldenChecksums() {
        return Map.of(VERSION, "a02f052e743f4a7a3a5ad377a141c5aee8c65cfc5ffc2986102e6a9695174e09");
    }

    /** The share rule L: every count is the backend's share of all the weights. */
    @Override
    boolean monotone() {
        return false;
    }

    /** {@code continuum_item_cmp} orders equal points by host index, and the lookup takes the first: the first listed. */
    @Override
    Comparator<Backend> tieOrder() {
        return Comparator.comparingInt(Backend::index);
    }

    /** {@code servers.tsv} as a backends file; {@code down} names host indexes in retry delay (auto-eject leaves them out). */
    static String servers(Set<Integer> down) {
        StringBuilder text = new StringBuilder();
        for (ProjectVectors.Row row : ProjectVectors.rows("libmemcached/servers.tsv")) {
            text.append("server ")
                    .append(row.get("hostname"))
                    .append(':')
                    .append(row.get("port"))
                    .append(" weight=")
                    .append(row.get("weight"))
                    .append(down.contains(row.integer("index")) ? " down" : "")
                    .append(";\n");
        }
        return text.toString();
    }

    /**
     * {@code ketama_test_cases}: for every key, {@code hash1} is its MD5 hash, {@code hash2} the point
     * it lands on and {@code server} the host (test sections "generate hash" and "user bug 18").
     * Catches the point text (libketama's {@code 10.0.1.1:11211-i} would match 19 of 99 servers),
     * the float rule and the key hash.
     */
    @Test
    void ketamaTestCases() throws Exception {
        try (RingStore store = build(servers(Set.of()), VERSION)) {
            Ring ring = store.ring(Set.of(), VERSION);
            List<ProjectVectors.Row> rows = ProjectVectors.rows("libmemcached/weighted.tsv");
            for (ProjectVectors.Row row : rows) {
                byte[] key = row.bytes("key");
                int h = ring.keyHash().hash(key);
                assertEquals(row.unsigned("hash1"), Integer.toUnsignedLong(h), row + " hash1");
                assertEquals(row.unsigned("hash2"), ring.pointHash(ring.pointIndex(h)), row + " hash2");
                assertEquals(
                        row.get("server") + ":11211",
                        store.backend(ring.lookup(key)).answer(family()),
                        row + " server");
            }
            assertEquals(99, rows.size());
        }
    }

    /**
     * "VDEAAAAA hashes to fffcd1b5, after the last continuum point": it must land on
     * {@code continuum[0]}. Catches a lookup that does not wrap (the last point instead).
     */
    @Test
    void theWrapKeyLandsOnTheFirstPoint() throws Exception {
        try (RingStore store = build(servers(Set.of()), VERSION)) {
            Ring ring = store.ring(Set.of(), VERSION);
            for (ProjectVectors.Row row : ProjectVectors.rows(
                    "libmemcached/wrap.tsv", r -> !r.get("distribution").contains("SPY"))) {
                byte[] key = row.bytes("key");
                int h = ring.keyHash().hash(key);
                assertEquals(row.unsigned("hash"), Integer.toUnsignedLong(h), row.toString());
                assertTrue(
                        Integer.toUnsignedLong(h) > ring.pointHash(ring.pointCount() - 1),
                        row + ": past the last point");
                assertEquals(ring.pointBackend(0), ring.lookup(key), row.toString());
            }
        }
    }

    /**
     * Section {@code auto_eject_hosts}: with host index 2 (10.0.1.3) in retry delay the continuum is
     * rebuilt from the live hosts, and none of the 99 keys may map to it. Catches a family that keeps
     * a down host's points.
     */
    @Test
    void autoEjectLeavesTheHostOut() throws Exception {
        try (RingStore store = build(servers(Set.of(2)), VERSION)) {
            Ring ring = store.ring(Set.of(), VERSION);
            for (ProjectVectors.Row row : ProjectVectors.rows("libmemcached/weighted.tsv")) {
                assertNotEquals(2, ring.lookup(row.bytes("key")), row.toString());
            }
            for (int p = 0; p < ring.pointCount(); p++) {
                assertNotEquals(2, ring.pointBackend(p), "point " + p);
            }
        }
    }

    /**
     * spymemcached's {@code testLibKetamaWeightedCompatLibmemcached}: 127.0.0.1:11211 and :11212 with
     * weights 8 and 8 in the {@code LIBMEMCACHED} key format, which hashes {@code getHostName()} (here
     * {@code localhost}, given by name) and the port only when it is not 11211: this family's text.
     * The two clients' float rules give the same 160 points each here, and the ring has no shared
     * point, so their tie rules do not matter.
     */
    @Test
    void spymemcachedLibmemcachedKeyFormat() throws Exception {
        String text =
                "server 127.0.0.1:11211 weight=8;  # ringstore: name=localhost\nserver 127.0.0.1:11212 weight=8;  # ringstore: name=localhost\n";
        try (RingStore store = build(text, VERSION)) {
            Ring ring = store.ring(Set.of(), VERSION);
            assertEquals(320, ring.pointCount());
            List<ProjectVectors.Row> rows = ProjectVectors.rows(
                    "spymemcached/lookups.tsv", r -> r.get("key_format").equals("LIBMEMCACHED"));
            for (ProjectVectors.Row row : rows) {
                int b = ring.lookup(row.bytes("key"));
                assertEquals(row.integer("expected_node_index"), b, row.toString());
                Backend chosen = store.backend(b);
                assertEquals(
                        row.get("expected_to_string"), chosen.name() + "/" + chosen.answer(family()), row.toString());
            }
            assertEquals(4, rows.size());
        }
    }
}
