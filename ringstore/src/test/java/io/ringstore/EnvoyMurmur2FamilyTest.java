package io.ringstore;

import io.ringstore.family.Families;
import io.ringstore.family.RingFamily;
import io.ringstore.family.RingVersion;
import java.util.List;
import java.util.Map;

/**
 * Envoy's {@code ring_hash} with {@code MURMUR_HASH_2} ({@code envoy-murmur2[:MIN[:MAX]]}) against the
 * family contract and Envoy's one test of that hash, {@code BasicWithMurmur2}: its ring of 12 entries
 * (libstdc++'s 64-bit {@code _Hash_bytes}, seed 0xc70f6907), its gauges and its five lookups. The
 * checks are {@link EnvoyFamilyTest}'s over that test.
 */
class EnvoyMurmur2FamilyTest extends EnvoyFamilyTest {
    @Override
    RingFamily family() {
        return Families.ENVOY_MURMUR2;
    }

    @Override
    String expectedName() {
        return "envoy-murmur2";
    }

    @Override
    int expectedCode() {
        return 14;
    }

    /** Recorded by {@link SeededFleets#checksum} when this test was added (branch h/contract on 95f3c34): a regression guard. */
    @Override
    Map<RingVersion, String> goldenChecksums() {
        return Map.of(
                RingVersion.parse("envoy-murmur2"), "9db7065873e987a96e4b07c9895522182452cc5ef25138d9828a7bb102b22fd5");
    }

    @Override
    List<ProjectVectors.Row> tests() {
        return EnvoyVectors.tests(r -> r.get("hash_function").equals("MURMUR_HASH_2"));
    }

    @Override
    int expectedPhases() {
        return 1;
    }

    @Override
    int expectedEntries() {
        return 12;
    }

    @Override
    int expectedLookups() {
        return 5;
    }

    @Override
    int expectedHistogramRows() {
        return 0;
    }
}
