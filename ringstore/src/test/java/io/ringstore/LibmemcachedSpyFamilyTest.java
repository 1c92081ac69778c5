package io.ringstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
 * libmemcached's {@code MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA_SPY} ({@code libmemcached-spy})
 * against the family contract and the {@code spymemcached} section of libmemcached's
 * {@code memcached_ketama_compat} test: {@code ketama_test_cases_spy} (only its server column is
 * meaningful: its hash columns are copies of the weighted table's) and the wrap key.
 */
class LibmemcachedSpyFamilyTest extends RingFamilyContract {
    static final RingVersion VERSION = RingVersion.parse("libmemcached-spy");

    @Override
    RingFamily family() {
        return Families.LIBMEMCACHED_SPY;
    }

    @Override
    String expectedName() {
        return "libmemcached-spy";
    }

    @Override
    int expectedCode() {
        return 5;
    }

    /** Recorded by {@link SeededFleets#checksum} when this test was added (branch h/contract on 95f3c34): a regression guard. */
    @Override
    Map<RingVersion, String> goldenChecksums() {
        return Map.of(VERSION, "6332db379f16fa05bfbce1bf023399d742c0328075910424fe28f8355233cec4");
    }

    /** The share rule L, as the weighted mode. */
    @Override
    boolean monotone() {
        return false;
    }

    /** {@code continuum_item_cmp}: the lowest host index. */
    @Override
    Comparator<Backend> tieOrder() {
        return Comparator.comparingInt(Backend::index);
    }

    /**
     * {@code ketama_test_cases_spy}: each key's server, with the texts {@code /10.0.1.1:11211-i}.
     * Catches the text (without the slash, or without the port 11211, other servers come out: only 16
     * of 99 agree with the weighted table's).
     */
    @Test
    void ketamaTestCasesSpy() throws Exception {
        try (RingStore store = build(LibmemcachedFamilyTest.servers(Set.of()), VERSION)) {
            Ring ring = store.ring(Set.of(), VERSION);
            List<ProjectVectors.Row> rows = ProjectVectors.rows("libmemcached/spy.tsv");
            for (ProjectVectors.Row row : rows) {
                byte[] key = row.bytes("key");
                assertEquals(
                        row.unsigned("hash1"),
                        Integer.toUnsignedLong(ring.keyHash().hash(key)),
                        row + " hash1 (the key's hash)");
                assertEquals(
                        row.get("server") + ":11211",
                        store.backend(ring.lookup(key)).answer(family()),
                        row + " server");
            }
            assertEquals(99, rows.size());
        }
    }

    /** {@code VDEAAAAA} lies past the spy ring's last point too, and lands on {@code continuum[0]}. */
    @Test
    void theWrapKeyLandsOnTheFirstPoint() throws Exception {
        try (RingStore store = build(LibmemcachedFamilyTest.servers(Set.of()), VERSION)) {
            Ring ring = store.ring(Set.of(), VERSION);
            List<ProjectVectors.Row> rows = ProjectVectors.rows(
                    "libmemcached/wrap.tsv", r -> r.get("distribution").contains("SPY"));
            for (ProjectVectors.Row row : rows) {
                byte[] key = row.bytes("key");
                int h = ring.keyHash().hash(key);
                assertEquals(row.unsigned("hash"), Integer.toUnsignedLong(h), row.toString());
                assertTrue(
                        Integer.toUnsignedLong(h) > ring.pointHash(ring.pointCount() - 1),
                        row + ": past the last point");
                assertEquals(ring.pointBackend(0), ring.lookup(key), row.toString());
            }
            assertEquals(1, rows.size());
        }
    }
}
