package io.ringstore;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.ringstore.family.Families;
import io.ringstore.family.KeyHash;
import io.ringstore.family.RingFamily;
import io.ringstore.family.RingVersion;
import java.nio.charset.StandardCharsets;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * libmemcached's {@code MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA_SPY} without {@code KETAMA_WEIGHTED}
 * ({@code libmemcached-spy-unweighted:HASH}) against the family contract; its parity with the real
 * library is {@link LibmemcachedParityTest}'s.
 */
class LibmemcachedSpyUnweightedFamilyTest extends RingFamilyContract {
    @Override
    RingFamily family() {
        return Families.LIBMEMCACHED_SPY_UNWEIGHTED;
    }

    @Override
    String expectedName() {
        return "libmemcached-spy-unweighted";
    }

    @Override
    int expectedCode() {
        return 17;
    }

    /**
     * Recorded by {@link SeededFleets#checksum} when this test was added (branch h/libmc): a regression
     * guard. md5 first: the contract looks for two backends sharing a point in the first version, and
     * among 2,048 candidates the one-at-a-time of the spy texts has none.
     */
    @Override
    Map<RingVersion, String> goldenChecksums() {
        Map<RingVersion, String> m = new LinkedHashMap<>();
        m.put(
                RingVersion.parse(expectedName() + ":md5"),
                "978e4c739fc9cbdbef3a67f77d3aa1fdac3a77ef0819ea71cb324718a9ca4e6f");
        m.put(RingVersion.parse(expectedName()), "68ab3caeb26731685d2f78f85ad970706ec902d235d6fd2e120fca92f2c4b0a3");
        return m;
    }

    @Override
    boolean monotone() {
        return true;
    }

    @Override
    Comparator<Backend> tieOrder() {
        return Comparator.comparingInt(Backend::index);
    }

    /**
     * 100 points a server whatever its weight, its texts {@code /host:port-i} from 0 with the port 11211
     * written, each the key hash's. Catches the weighted text's rules (no slash, port left out).
     */
    @Test
    void aHundredSpyTextsAServer() throws Exception {
        RingVersion v = RingVersion.parse(expectedName() + ":fnv1a_32");
        String text = "server 10.0.1.1:11211 weight=1;\nserver 10.0.1.2:11212 weight=9;\n";
        assertEquals(List.of(100L, 100L), pointsPerBackend(text, v));
        try (RingStore store = build(text, v)) {
            Ring ring = store.ring(Set.of(), v);
            KeyHash fnv = KeyHash.libmemcached("fnv1a_32");
            for (String[] point : new String[][] {{"/10.0.1.1:11211-0", "0"}, {"/10.0.1.2:11212-99", "1"}}) {
                int h = fnv.hash(point[0].getBytes(StandardCharsets.US_ASCII));
                assertEquals(Integer.toUnsignedLong(h), ring.pointHash(ring.pointIndex(h)), point[0]);
                assertEquals(Integer.parseInt(point[1]), ring.pointBackend(ring.pointIndex(h)), point[0]);
            }
        }
    }
}
