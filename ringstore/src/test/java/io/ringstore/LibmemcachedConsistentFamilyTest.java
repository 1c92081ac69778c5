package io.ringstore;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.ringstore.family.Families;
import io.ringstore.family.KeyHash;
import io.ringstore.family.RingFamily;
import io.ringstore.family.RingVersion;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * libmemcached's unweighted {@code MEMCACHED_DISTRIBUTION_CONSISTENT} ({@code libmemcached-consistent:HASH})
 * against the family contract. Its parity with the real library, every hash, is
 * {@link LibmemcachedParityTest}'s; here the rule's shape: 100 points a server whatever its weight,
 * texts {@code host-i} / {@code host:port-i}, each the key hash's.
 */
class LibmemcachedConsistentFamilyTest extends RingFamilyContract {
    @Override
    RingFamily family() {
        return Families.LIBMEMCACHED_CONSISTENT;
    }

    @Override
    String expectedName() {
        return "libmemcached-consistent";
    }

    @Override
    int expectedCode() {
        return 16;
    }

    /**
     * Recorded by {@link SeededFleets#checksum} when this test was added (branch h/libmc): a regression
     * guard. Not {@code crc}: its 15-bit hashes put every key and point in the first 32,768 of the ring,
     * which the contract's statistical checks do not expect ({@link LibmemcachedParityTest} checks it).
     */
    @Override
    Map<RingVersion, String> goldenChecksums() {
        Map<RingVersion, String> m = new LinkedHashMap<>();
        m.put(RingVersion.parse(expectedName()), "f214809f1265163fec8b9236ae6e89d8161c97b71df9e315cb8902918ef8a111");
        m.put(
                RingVersion.parse(expectedName() + ":fnv1a_32"),
                "4c77412dc719833c7508f4961b8a54b861e6653c3574b05885a8a15cf3ca70b6");
        m.put(
                RingVersion.parse(expectedName() + ":murmur3"),
                "e818b1ff180cbb865e90435aae5652fbe998df4aa3cc44bf1f5cea9b01e6ab28");
        return m;
    }

    /** 100 points a server, whoever else is in the ring. */
    @Override
    boolean monotone() {
        return true;
    }

    /** {@code continuum_item_cmp} orders equal points by host index, and the lookup takes the first. */
    @Override
    Comparator<Backend> tieOrder() {
        return Comparator.comparingInt(Backend::index);
    }

    /** A bare name is the {@code default} hash (one-at-a-time); each name writes its hash. */
    @Test
    void aBareNameIsTheDefaultHash() {
        RingVersion bare = RingVersion.parse(expectedName());
        assertEquals(expectedName() + ":default", bare.name());
        assertEquals(KeyHash.libmemcached("default"), bare.keyHash());
        for (String hash : KeyHash.LIBMEMCACHED_HASHES) {
            RingVersion v = RingVersion.parse(expectedName() + ":" + hash);
            assertEquals(expectedName() + ":" + hash, v.name());
            assertEquals(KeyHash.libmemcached(hash), v.keyHash());
        }
    }

    /**
     * Every server has 100 points whatever its weight (1, 7, 100), and its points are the key hash of
     * its texts from {@code -0}: the one-at-a-time of {@code 10.0.1.1-0} and of
     * {@code 10.0.1.2:11212-99} are points of their servers. Catches 160 points, weighted counts and
     * texts counted from 1.
     */
    @Test
    void aHundredPointsAServerWhateverItsWeight() throws Exception {
        RingVersion v = RingVersion.parse(expectedName());
        String text = "server 10.0.1.1:11211 weight=1;\nserver 10.0.1.2:11212 weight=7;\nserver 10.0.1.3 weight=100;\n";
        assertEquals(List.of(100L, 100L, 100L), pointsPerBackend(text, v));
        try (RingStore store = build(text, v)) {
            Ring ring = store.ring(Set.of(), v);
            KeyHash oaat = KeyHash.libmemcached("default");
            int first = oaat.hash("10.0.1.1-0".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            assertEquals(0, ring.pointBackend(ring.pointIndex(first)));
            assertEquals(Integer.toUnsignedLong(first), ring.pointHash(ring.pointIndex(first)));
            int last = oaat.hash("10.0.1.2:11212-99".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            assertEquals(1, ring.pointBackend(ring.pointIndex(last)));
            assertEquals(Integer.toUnsignedLong(last), ring.pointHash(ring.pointIndex(last)));
        }
    }

    /**
     * libhashkit's own table ({@code test/fixtures/hashes.hpp}, {@code vectors/libmemcached/hashes.tsv}):
     * 26 inputs under each of the eleven hashes, hsieh too (the values of a build with
     * {@code HAVE_HSIEH_HASH}, which Debian's lacks). Catches a hash that differs from libmemcached's
     * where twemproxy's same-named function was assumed to be it.
     */
    @Test
    void libhashkitTestVectors() {
        List<ProjectVectors.Row> rows = ProjectVectors.rows("libmemcached/hashes.tsv");
        for (ProjectVectors.Row row : rows) {
            byte[] input = row.get("input").getBytes(java.nio.charset.StandardCharsets.US_ASCII);
            assertEquals(
                    row.unsigned("expected"),
                    Integer.toUnsignedLong(KeyHash.libmemcached(row.get("hash")).hash(input)),
                    row.toString());
        }
        assertEquals(26 * KeyHash.LIBMEMCACHED_HASHES.size(), rows.size());
    }
}
