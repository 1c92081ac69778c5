package io.ringstore;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.ringstore.family.Families;
import io.ringstore.family.KeyHash;
import io.ringstore.family.RingFamily;
import io.ringstore.family.RingVersion;
import io.ringstore.internal.BackendAccess;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * twemproxy ({@code twemproxy:HASH}) against the family contract and twitter/twemproxy's
 * {@code src/test_all.c} ({@code vectors/twemproxy/}): every key hash by its configuration name, and
 * {@code ketama_hash("server1-8", 0 and 3)} as points of a server named {@code server1}; the counts
 * of rings.md §3 (25 equal servers get 156 points each, weights 1, 1, 3 get 96/96/288), which
 * TwemproxyParityTest confirms against real nutcracker; and libmemcached's 99 keys, which twemproxy
 * with {@code hash: md5} and default names places as libmemcached does (rings.md §3: same text,
 * same counts).
 */
class TwemproxyFamilyTest extends RingFamilyContract {
    @Override
    RingFamily family() {
        return Families.TWEMPROXY;
    }

    @Override
    String expectedName() {
        return "twemproxy";
    }

    @Override
    int expectedCode() {
        return 6;
    }

    /** Recorded by {@link SeededFleets#checksum} when this test was added (branch h/contract on 95f3c34): a regression guard. */
    @Override
    Map<RingVersion, String> goldenChecksums() {
        Map<RingVersion, String> m = new LinkedHashMap<>();
        m.put(RingVersion.parse("twemproxy"), "3e1ca0bc4b04993491422581a2402bfbde7fb0018c483ceee29a86a76d7cdad1");
        m.put(RingVersion.parse("twemproxy:md5"), "a02f052e743f4a7a3a5ad377a141c5aee8c65cfc5ffc2986102e6a9695174e09");
        m.put(
                RingVersion.parse("twemproxy:murmur"),
                "b27fce86e0822ff95b4cd843a7ab1bf2ff70f4f6bfd2b8b4bccd323644480374");
        return m;
    }

    /** The share rule (float, a double 1e-10 added): every count is the backend's share of all the weights. */
    @Override
    boolean monotone() {
        return false;
    }

    /**
     * nutcracker sorts a pool's servers by name, shorter names first, then bytewise, before it builds
     * the continuum, and glibc's stable qsort keeps equal points in that order. A server's name is its
     * given name, else {@code host} when its port is 11211 and {@code host:port} otherwise.
     */
    @Override
    Comparator<Backend> tieOrder() {
        return Comparator.comparingInt((Backend b) -> serverName(b).length())
                .thenComparing(
                        TwemproxyFamilyTest::serverName,
                        (x, y) -> Arrays.compareUnsigned(
                                x.getBytes(StandardCharsets.UTF_8), y.getBytes(StandardCharsets.UTF_8)));
    }

    /** The server's name as nutcracker forms it ({@code conf_add_server}), from the address text: no port means 11211. */
    static String serverName(Backend b) {
        if (b.name() != null) {
            return b.name();
        }
        String a = b.address();
        String host;
        String port = "11211";
        if (a.startsWith("[")) {
            host = a.substring(1, a.indexOf(']'));
            if (a.indexOf("]:") > 0) {
                port = a.substring(a.indexOf("]:") + 2);
            }
        } else if (a.contains(":")) {
            host = a.substring(0, a.indexOf(':'));
            port = a.substring(a.indexOf(':') + 1);
        } else {
            host = a;
        }
        return port.equals("11211") ? host : host + ":" + port;
    }

    /**
     * {@code test_hash_algorithms()}: {@code hash_NAME("apple")} for the twelve, each read through the
     * version {@code twemproxy:NAME}'s key hash. Catches a version that names one hash and hashes with
     * another.
     */
    @Test
    void keyHashesOfTestAll() {
        List<ProjectVectors.Row> rows = ProjectVectors.rows(
                "twemproxy/hashes.tsv", r -> !r.get("function").equals("ketama_hash"));
        for (ProjectVectors.Row row : rows) {
            byte[] input = row.bytes("input");
            KeyHash hash = RingVersion.parse("twemproxy:" + row.get("function")).keyHash();
            assertEquals(row.unsigned("expected"), hash.hash64(input, 0, input.length), row.toString());
        }
        assertEquals(KeyHash.TWEMPROXY_HASHES.size(), rows.size());
    }

    /**
     * {@code ketama_hash("server1-8", 9, 0)} and {@code (…, 3)}: words 0 and 3 of digest 8 of a server
     * named {@code server1}, i.e. its points 32 and 35, found in the ring of that one server. Catches
     * a change to the text ({@code name-i}) or the word order.
     */
    @Test
    void ketamaHashOfTestAllIsAPointOfServer1() throws Exception {
        RingVersion v = RingVersion.parse("twemproxy:md5");
        try (RingStore store = build("server 10.0.0.1:11211;  # ringstore: name=server1\n", v)) {
            Ring ring = store.ring(Set.of(), v);
            List<ProjectVectors.Row> rows = ProjectVectors.rows(
                    "twemproxy/hashes.tsv", r -> r.get("function").equals("ketama_hash"));
            for (ProjectVectors.Row row : rows) {
                assertEquals("server1-8", row.get("input"));
                int expected = (int) row.unsigned("expected");
                assertEquals(
                        Integer.toUnsignedLong(expected),
                        ring.pointHash(ring.pointIndex(expected)),
                        row + ": a point of server1");
                long[] out = new long[36];
                ring.version().points().hashes(BackendAccess.record(store.backend(0)), 36, out);
                assertEquals(
                        row.unsigned("expected"),
                        out[32 + row.integer("alignment")],
                        row + ": its point 4 * 8 + alignment");
            }
            assertEquals(2, rows.size());
        }
    }

    /** 25 equal servers: the float rule gives 39 digests, 156 points each (TwemproxyParityTest: real nutcracker agrees). */
    @Test
    void twentyFiveEqualServersGet156PointsEach() throws Exception {
        assertEquals(
                List.of(156L),
                pointsPerBackend(equalServers(25), RingVersion.parse("twemproxy")).stream()
                        .distinct()
                        .toList());
    }

    /** Weights 1, 1, 3: 96, 96 and 288 points (rings.md's worked example). */
    @Test
    void weightsOneOneThree() throws Exception {
        assertEquals(
                List.of(96L, 96L, 288L),
                pointsPerBackend(
                        "server 10.0.0.1:11211;\nserver 10.0.0.2:11211;\nserver 10.0.0.3:11211 weight=3;\n",
                        RingVersion.parse("twemproxy")));
    }

    /**
     * libmemcached's {@code ketama_test_cases} under {@code twemproxy:md5} with nutcracker's default
     * names ({@code 10.0.1.1} for port 11211): key hash, point and server of all 99 keys. Derived
     * (rings.md §3), not published by twemproxy: the same texts and counts as libmemcached's weighted
     * ring, and no shared point in it, so the tie rules do not matter.
     */
    @Test
    void libmemcachedTestCasesUnderMd5() throws Exception {
        RingVersion v = RingVersion.parse("twemproxy:md5");
        try (RingStore store = build(LibmemcachedFamilyTest.servers(Set.of()), v)) {
            Ring ring = store.ring(Set.of(), v);
            for (ProjectVectors.Row row : ProjectVectors.rows("libmemcached/weighted.tsv")) {
                byte[] key = row.bytes("key");
                int h = ring.keyHash().hash(key);
                assertEquals(row.unsigned("hash1"), Integer.toUnsignedLong(h), row + " hash1");
                assertEquals(row.unsigned("hash2"), ring.pointHash(ring.pointIndex(h)), row + " hash2");
                assertEquals(
                        row.get("server") + ":11211",
                        store.backend(ring.lookup(key)).answer(family()),
                        row + " server");
            }
        }
    }
}
