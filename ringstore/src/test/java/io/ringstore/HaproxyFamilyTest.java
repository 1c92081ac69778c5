package io.ringstore;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.builder.BackendList;
import io.ringstore.builder.BackendsFileException;
import io.ringstore.family.Families;
import io.ringstore.family.KeyHash;
import io.ringstore.family.RingFamily;
import io.ringstore.family.RingVersion;
import io.ringstore.internal.BackendAccess;
import io.ringstore.internal.BackendRecord;
import java.nio.charset.StandardCharsets;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * HAProxy 2.6's {@code hash-type consistent} ({@code haproxy[:HASH]}) against the family contract. The
 * reference is HAProxy itself: {@code HaproxyParityTest} (ringstore-tools, tag process) sends keys
 * through a real haproxy; here the contract's properties, the ids, and the nearest-node edges.
 */
class HaproxyFamilyTest extends RingFamilyContract {
    /** Ids this far apart give the same nodes: {@code puid * 4096} wraps at 2^32. */
    private static final long ID_PERIOD = 1L << 20;

    @Override
    RingFamily family() {
        return Families.HAPROXY;
    }

    @Override
    String expectedName() {
        return "haproxy";
    }

    @Override
    int expectedCode() {
        return 18;
    }

    /** Recorded by {@link SeededFleets#checksum} when this test was added (branch h/haproxy): a regression guard. */
    @Override
    Map<RingVersion, String> goldenChecksums() {
        Map<RingVersion, String> m = new LinkedHashMap<>();
        m.put(RingVersion.parse("haproxy"), "47b29a3110f7da617bf126a5e8d28c55ed9a20987ee44a75b68454a278bc9dad");
        m.put(RingVersion.parse("haproxy:crc32"), "765c8ed3d64d197262e3a9cefce365b8905b8e5baa5e75db9c47219d9afbbb27");
        return m;
    }

    /** A server's nodes are its id's, 16 a weight unit; an added last server takes the next free id, the others keep theirs. */
    @Override
    boolean monotone() {
        return true;
    }

    /** The first inserted node keeps a shared key: servers are inserted in list order. */
    @Override
    Comparator<Backend> tieOrder() {
        return Comparator.comparingInt(Backend::index);
    }

    /** Two servers whose ids are 2^20 apart share all their nodes. */
    @Override
    String[] collidingPair() {
        return new String[] {
            "server 10.0.0.1:80;  # ringstore: id=3\n", "server 10.0.0.2:80;  # ringstore: id=" + (3 + ID_PERIOD) + "\n"
        };
    }

    private static long[] nodes(BackendList list, int backend, int count) {
        List<BackendRecord> records =
                list.backends().stream().map(BackendAccess::record).toList();
        long[] out = new long[count];
        Families.HAPROXY.points(new int[] {1}).hashes(records, backend, count, out);
        return out;
    }

    /**
     * HAProxy's numbering: a counter from 1, moved on after every server, skipping the ids servers have:
     * A, B id 1, C, D id 9, E are 2, 1, 4, 9, 6 (the counter is 3 after A, 4 after B).
     */
    @Test
    void serversWithoutAnIdAreNumberedAsHaproxyDoes() throws Exception {
        BackendList list = BackendList.parse("ids", """
                server 10.0.0.1:80;
                server 10.0.0.2:80;  # ringstore: id=1
                server 10.0.0.3:80;
                server 10.0.0.4:80;  # ringstore: id=9
                server 10.0.0.5:80;
                """);
        BackendList explicit = BackendList.parse("ids", """
                server 10.0.0.1:80;  # ringstore: id=2
                server 10.0.0.2:80;  # ringstore: id=1
                server 10.0.0.3:80;  # ringstore: id=4
                server 10.0.0.4:80;  # ringstore: id=9
                server 10.0.0.5:80;  # ringstore: id=6
                """);
        for (int b = 0; b < 5; b++) {
            assertArrayEquals(nodes(explicit, b, 16), nodes(list, b, 16), "backend " + b);
        }
    }

    /** A key on a node goes to it; exactly midway between two nodes, to the one before; one past, to the one after. */
    @Test
    void aKeyGoesToTheNearerNodeAndMidwayToTheOneBefore() throws Exception {
        RingVersion v = RingVersion.parse("haproxy:sdbm");
        try (RingStore store = build("server 10.0.0.1:80;\nserver 10.0.0.2:80 weight=3;\n", v)) {
            Ring ring = store.ring(Set.of(), v);
            int checked = 0;
            for (int p = 0; p + 1 < ring.pointCount(); p++) {
                long here = ring.pointHash(p);
                long next = ring.pointHash(p + 1);
                if (ring.pointBackend(p) == ring.pointBackend(p + 1) || next - here < 2) {
                    continue;
                }
                long mid = (here + next) / 2;
                assertEquals(ring.pointBackend(p), ring.lookupHash(here));
                assertEquals(ring.pointBackend(p + 1), ring.lookupHash(next));
                assertEquals(ring.pointBackend(p), ring.lookupHash(mid), "midway or below: the node before");
                assertEquals(ring.pointBackend(p + 1), ring.lookupHash(mid + 1), "past the middle: the node after");
                checked++;
            }
            assertTrue(checked > 10, "gaps between nodes of two servers: " + checked);
            // wrapping: below the first node and above the last, the nearer across 0
            long first = ring.pointHash(0);
            long last = ring.pointHash(ring.pointCount() - 1);
            long gap = first + (1L << 32) - last;
            long mid = (last + gap / 2) & 0xFFFF_FFFFL;
            assertEquals(ring.pointBackend(ring.pointCount() - 1), ring.lookupHash(mid));
            assertEquals(ring.pointBackend(0), ring.lookupHash((mid + 1) & 0xFFFF_FFFFL));
        }
    }

    /** HAProxy's hashes of "haproxy": sdbm, djb2, wt6, crc32 by their C definitions, and full_hash on top. */
    @Test
    void keyHashesAreHaproxys() {
        byte[] key = "haproxy".getBytes(StandardCharsets.US_ASCII);
        int sdbm = 0;
        int djb2 = 5381;
        for (byte b : key) {
            sdbm = b + (sdbm << 6) + (sdbm << 16) - sdbm;
            djb2 = djb2 * 33 + b;
        }
        java.util.zip.CRC32 crc = new java.util.zip.CRC32();
        crc.update(key);
        assertEquals(sdbm, KeyHash.haproxy("sdbm").hash(key));
        assertEquals(djb2, KeyHash.haproxy("djb2").hash(key));
        assertEquals((int) crc.getValue(), KeyHash.haproxy("crc32").hash(key));
        assertEquals(
                KeyHash.haproxy("sdbm-avalanche"), RingVersion.parse("haproxy").keyHash(), "bare = sdbm avalanche");
        assertEquals(
                List.of(
                        "sdbm",
                        "sdbm-avalanche",
                        "djb2",
                        "djb2-avalanche",
                        "wt6",
                        "wt6-avalanche",
                        "crc32",
                        "crc32-avalanche"),
                KeyHash.HAPROXY_HASHES);
    }

    /** A name that is not an id, a weight above 256: refused as HAProxy refuses them. */
    @Test
    void namesAreIdsAndWeightsAtMost256() throws Exception {
        for (String line :
                List.of("server 10.0.0.1:80;  # ringstore: name=web1\n", "server 10.0.0.1:80 weight=257;\n")) {
            BackendRecord r =
                    BackendAccess.record(BackendList.parse("x", line).backends().getFirst());
            assertTrue(Families.HAPROXY.addresses().problem(r) != null, line);
        }
        assertThrows(
                BackendsFileException.class, () -> BackendList.parse("x", "server 10.0.0.1:80;  # ringstore: id=0\n"));
        assertEquals(
                "x:2: id=3 again: the server on line 1 has it (HAProxy refuses an id used twice)",
                assertThrows(
                                BackendsFileException.class,
                                () -> BackendList.parse(
                                        "x",
                                        "server 10.0.0.1:80;  # ringstore: id=3\nserver 10.0.0.2:80;  # ringstore: id=3\n"))
                        .getMessage());
        assertThrows(
                BackendsFileException.class,
                () -> BackendList.parse("x", "server 10.0.0.1:80;  # ringstore: id=2147483648\n"));
    }
}
