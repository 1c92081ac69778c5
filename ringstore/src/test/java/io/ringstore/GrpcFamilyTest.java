package io.ringstore;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.ringstore.family.Families;
import io.ringstore.family.RingFamily;
import io.ringstore.family.RingVersion;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * gRPC's {@code ring_hash} as C-core and Go build it ({@code grpc[:MIN[:MAX]]}) against the family
 * contract and Envoy's vectors within gRPC's cap (gRFC A42: "the same algorithm as Envoy's"; gRPC
 * publishes no ring vector, vectors/grpc/README.md). C-core clamps both sizes to the cap (4,096 by
 * default: {@code min(config, ring_size_cap)}), so Envoy's test of sizes (MIN, MAX) is gRPC's
 * {@code grpc:MIN:min(MAX, 4096)} where MIN is within the cap. Left out, each for a stated reason:
 * HostWeightedLargeRing (MIN 6,144, beyond the cap), the locality-weighted tests (gRPC multiplies a
 * locality's weight into its endpoints' weights instead of normalizing per locality), and the retry
 * rows (Envoy's retry host predicate; gRPC's picker has none). The checks are
 * {@link EnvoyFamilyTest}'s.
 */
class GrpcFamilyTest extends EnvoyFamilyTest {
    @Override
    RingFamily family() {
        return Families.GRPC;
    }

    @Override
    String expectedName() {
        return "grpc";
    }

    @Override
    int expectedCode() {
        return 15;
    }

    /** Recorded by {@link SeededFleets#checksum} when this test was added (branch h/contract on 95f3c34): a regression guard. */
    @Override
    Map<RingVersion, String> goldenChecksums() {
        Map<RingVersion, String> m = new LinkedHashMap<>();
        m.put(RingVersion.parse("grpc"), "59012a796632a4ad7ec5edb96345994ac91f7f350fdedd991db38c55f41602e4");
        m.put(RingVersion.parse("grpc:64:128"), "0441621bf57a19caa73e4e4ecf1d4c2aad7e8009b24953148618521adc8f2798");
        return m;
    }

    @Override
    RingVersion version(ProjectVectors.Row test) {
        return RingVersion.parse(
                "grpc:" + test.get("minimum_ring_size") + ":" + Math.min(test.integer("maximum_ring_size"), 4096));
    }

    @Override
    List<ProjectVectors.Row> tests() {
        return EnvoyVectors.tests(r -> r.get("hash_function").equals("XX_HASH")
                && r.get("locality_weighted").equals("no")
                && r.integer("minimum_ring_size") <= 4096);
    }

    @Override
    boolean retries() {
        return false;
    }

    @Override
    int expectedPhases() {
        return 9 + 5; // 9 tests; Basic, the bounded-load and the two hostname tests, UnevenHosts: a second phase
    }

    @Override
    int expectedEntries() {
        return 80 - 12;
    }

    @Override
    int expectedLookups() {
        return 60 - 4 - 6 - 9 - 8; // the retry rows and the locality-weighted tests' lookups out
    }

    @Override
    int expectedHistogramRows() {
        return 2; // LargeFractionalScale
    }

    /**
     * A bare {@code grpc} caps the ring at 4,096 entries where Envoy's would be larger: weights 1 and
     * 5,000 at MIN 1,024 scale to 5,001 entries (the lighter host's one entry a whole number).
     */
    @Test
    void theBareNameCapsTheRingAt4096() throws Exception {
        String text = "server 127.0.0.1:90;\nserver 127.0.0.1:91 weight=5000;\n";
        RingVersion grpc = RingVersion.parse("grpc");
        RingVersion envoy = RingVersion.parse("envoy");
        try (RingStore g = build(text, grpc);
                RingStore e = build(text, envoy)) {
            assertEquals(4096, g.ring(java.util.Set.of(), grpc).pointCount());
            assertEquals(5001, e.ring(java.util.Set.of(), envoy).pointCount());
        }
    }

    /**
     * grpc-go's {@code TestPickerRequestHashKey} (vectors/grpc/picker_request_hash.tsv): a hand-built
     * ring of 3 entries at {@code MaxUint64 / 3 · i}, the request hash XXH64 of the header's values
     * joined by {@code ,} (gRFC A76). The ring is not one ringstore builds, so only the hash is
     * ringstore's: this family's key hash, searched ceil-and-wrap over the three entries. The row with
     * no header (a random hash) is not a hash fact and is left out.
     */
    @Test
    void pickerRequestHashKey() {
        long third = Long.divideUnsigned(-1L, 3);
        long[] entries = {0, third, third * 2};
        int checked = 0;
        for (ProjectVectors.Row row : ProjectVectors.rows(
                "grpc/picker_request_hash.tsv", r -> !r.get("header_values").equals("-"))) {
            String values = row.get("header_values").equals("\"\"")
                    ? ""
                    : String.join(",", row.get("header_values").split("\\|"));
            byte[] key = values.getBytes(java.nio.charset.StandardCharsets.UTF_8);
            long h = RingVersion.parse("grpc").keyHash().hash64(key, 0, key.length);
            int entry = 0;
            while (entry < entries.length && Long.compareUnsigned(entries[entry], h) < 0) {
                entry++;
            }
            assertEquals(row.integer("expected_entry"), entry == entries.length ? 0 : entry, row.toString());
            checked++;
        }
        assertEquals(3, checked);
    }
}
