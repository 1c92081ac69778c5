package io.ringstore;

import io.ringstore.family.Families;
import io.ringstore.family.RingFamily;
import io.ringstore.family.RingVersion;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/** nginx {@code hash … consistent} (v1) against the family contract. */
class NginxFamilyTest extends RingFamilyContract {
    @Override
    RingFamily family() {
        return Families.NGINX;
    }

    @Override
    String expectedName() {
        return "nginx";
    }

    @Override
    String expectedWrittenName() {
        return "v1";
    }

    @Override
    int expectedCode() {
        return 1;
    }

    /** Recorded by {@link SeededFleets#checksum} on commit cc7d7f8, before {@code RingFamily}. */
    @Override
    Map<RingVersion, String> goldenChecksums() {
        return Map.of(RingVersion.V1, "7db529a9e9986d1b703b4ea48449e179b684145ab1c41ebfcc6d8d9891381e6f");
    }

    /** A backend's points are its own CRC-32 chain, 160 (K) a weight unit: they do not depend on the others. */
    @Override
    boolean monotone() {
        return true;
    }

    /** nginx: the backend listed first keeps the point (ngx_http_upstream_hash_module drops later duplicates). */
    @Override
    Comparator<Backend> tieOrder() {
        return Comparator.comparingInt(Backend::index);
    }

    /** pingora's v1 is nginx's for IPv4 (sets a and b; e has IPv6, where pingora hashes the bare address). */
    @Override
    List<Vector> ringVectors() {
        return List.of(new Vector("a", RingVersion.V1), new Vector("b", RingVersion.V1));
    }

    @Override
    List<Vector> lookupVectors() {
        return List.of(
                new Vector("a", RingVersion.V1), new Vector("b", RingVersion.V1), new Vector("d", RingVersion.V1));
    }

    @Override
    boolean vectorSurvivorsAreExact() {
        return false;
    }

    /** Set b: 100 backends whose v1 chains share hashes (its collisions file lists them). */
    @Override
    List<String> fleetsWithTies() throws Exception {
        Path vectors = VectorFiles.directory("pingora");
        return List.of(VectorFiles.backendsText(vectors.resolve("buckets_b.txt")));
    }
}
