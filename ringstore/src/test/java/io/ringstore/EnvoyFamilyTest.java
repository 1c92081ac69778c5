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
import org.junit.jupiter.api.Test;

/**
 * Envoy's {@code ring_hash} with xxHash64 ({@code envoy[:MIN[:MAX]]}) against the family contract and
 * every {@code XX_HASH} test of Envoy's {@code ring_hash_lb_test.cc} ({@code vectors/envoy/}, through
 * {@link EnvoyVectors}): ring sizes and per-host gauges of 15 tests, their listed rings entry by entry
 * (64-bit hashes), their lookups (the retry walk included) and histograms.
 */
class EnvoyFamilyTest extends RingFamilyContract {
    @Override
    RingFamily family() {
        return Families.ENVOY;
    }

    @Override
    String expectedName() {
        return "envoy";
    }

    @Override
    int expectedCode() {
        return 13;
    }

    /** Recorded by {@link SeededFleets#checksum} when this test was added (branch h/contract on 95f3c34): a regression guard. */
    @Override
    Map<RingVersion, String> goldenChecksums() {
        Map<RingVersion, String> m = new LinkedHashMap<>();
        m.put(RingVersion.parse("envoy"), "59012a796632a4ad7ec5edb96345994ac91f7f350fdedd991db38c55f41602e4");
        m.put(RingVersion.parse("envoy:100:200"), "a06a47e0e86b7a7a0370444657c4cefe1a110bbbcaf0198386344e50695ec28f");
        return m;
    }

    /** The scale depends on the lightest member's share: every count changes with the members. */
    @Override
    boolean monotone() {
        return false;
    }

    /** Envoy's std::sort leaves equal hashes unspecified; ringstore keeps the first listed (no 64-bit collision is known). */
    @Override
    Comparator<Backend> tieOrder() {
        return Comparator.comparingInt(Backend::index);
    }

    /** {@code envoy:MIN:MAX} of a test's ring sizes. */
    RingVersion version(ProjectVectors.Row test) {
        return RingVersion.parse(
                family().name() + ":" + test.get("minimum_ring_size") + ":" + test.get("maximum_ring_size"));
    }

    /** The tests this family's vectors are. */
    List<ProjectVectors.Row> tests() {
        return EnvoyVectors.tests(r -> r.get("hash_function").equals("XX_HASH"));
    }

    /**
     * {@code size}, {@code min_hashes_per_host} and {@code max_hashes_per_host} of every phase. Catches
     * any change to the scaling (e.g. {@code while (current <= target)}, or the counts rounded per host
     * instead of by the running target: LargeFractionalScale's 511/512).
     */
    @Test
    void ringSizesAndHashesPerHost() throws Exception {
        int phases = 0;
        for (ProjectVectors.Row test : tests()) {
            for (String phase : EnvoyVectors.phases(test.get("test"))) {
                try (EnvoyVectors.Built b = EnvoyVectors.build(this, test, phase, version(test))) {
                    EnvoyVectors.checkGauges(b.ring(), b.store(), test, phase);
                    phases++;
                }
            }
        }
        assertEquals(expectedPhases(), phases);
    }

    int expectedPhases() {
        return 15 + 5; // 15 tests; Basic, the bounded-load and the two hostname tests, UnevenHosts: a second phase
    }

    /** The rings the tests list, entry by entry: 64-bit hash and host. Catches the text ({@code address_i}), the hash, the key source. */
    @Test
    void ringEntries() throws Exception {
        int entries = 0;
        for (ProjectVectors.Row test : tests()) {
            for (String phase : EnvoyVectors.phases(test.get("test"))) {
                try (EnvoyVectors.Built b = EnvoyVectors.build(this, test, phase, version(test))) {
                    entries += EnvoyVectors.checkEntries(b.ring(), test.get("test"), phase);
                }
            }
        }
        assertEquals(expectedEntries(), entries);
    }

    int expectedEntries() {
        return 80 - 12; // every ring but BasicWithMurmur2's
    }

    /**
     * Every lookup: by hash, wrapping past the last entry (hash 2^64-1), the retry walk to the next
     * entry and the last attempt's host when all are rejected. Catches a 32-bit lookup
     * (3551244743356806947 and …948 share their high word yet go to different hosts) and a walk that
     * skips the same host's entries.
     */
    @Test
    void lookups() throws Exception {
        int checked = 0;
        for (ProjectVectors.Row test : tests()) {
            for (String phase : EnvoyVectors.phases(test.get("test"))) {
                try (EnvoyVectors.Built b = EnvoyVectors.build(this, test, phase, version(test))) {
                    checked += EnvoyVectors.checkLookups(b.ring(), test.get("test"), phase, retries());
                }
            }
        }
        assertEquals(expectedLookups(), checked);
    }

    boolean retries() {
        return true;
    }

    int expectedLookups() {
        return 65 - 5; // every lookup but BasicWithMurmur2's
    }

    /** The histograms of the large and fractional rings: hits per host of evenly spaced hashes. */
    @Test
    void histograms() throws Exception {
        int checked = 0;
        for (ProjectVectors.Row test : tests()) {
            try (EnvoyVectors.Built b = EnvoyVectors.build(this, test, "a", version(test))) {
                checked += EnvoyVectors.checkHistogram(b.ring(), b.store().backendCount(), test.get("test"));
            }
        }
        assertEquals(expectedHistogramRows(), checked);
    }

    int expectedHistogramRows() {
        return 13;
    }

    /**
     * {@code SmallFractionalScale}: a ring of 2 over 4 equal hosts; of 1,024 evenly spaced hashes two
     * hosts get none and two get all (derived in the vectors' README: hosts 0 and 2).
     */
    @Test
    void smallFractionalScale() throws Exception {
        List<ProjectVectors.Row> small = tests().stream()
                .filter(r -> r.get("test").equals("SmallFractionalScale"))
                .toList();
        for (ProjectVectors.Row test : small) {
            try (EnvoyVectors.Built b = EnvoyVectors.build(this, test, "a", version(test))) {
                long[] hits = EnvoyVectors.hits(b.ring(), 4, 1024);
                assertEquals(List.of(0, 2), EnvoyVectors.receiving(hits));
                assertEquals(1024, hits[0] + hits[2]);
            }
        }
        assertEquals(RingVersion.parse(family().name()).keyHash() == KeyHash.XXH64 ? 1 : 0, small.size());
    }
}
