package io.ringstore.bench;

import io.ringstore.RingFileException;
import io.ringstore.RingStore;
import io.ringstore.builder.BackendList;
import io.ringstore.builder.BackendsFileException;
import io.ringstore.builder.RingBuilder;
import io.ringstore.family.RingVersion;
import java.io.IOException;
import java.nio.file.Path;
import java.util.SplittableRandom;

/**
 * The rings and keys of {@link FamilyLookupBenchmark} and {@link FamilyReport}: one ring of one
 * family's version over {@code servers} backends {@code 127.1.x.y} (no port: each family's default)
 * with weights 1 to 10 from a seeded generator (the same weights for every family), and
 * {@value #KEY_COUNT} URL-like keys of 20 to 60 bytes.
 */
final class FamilyRings {
    static final int KEY_COUNT = 4096;
    static final int MIN_KEY_LENGTH = 20;
    static final int MAX_KEY_LENGTH = 60;
    /** Seed of the backends' weights. */
    static final long WEIGHT_SEED = 0x3E16_47L;

    private FamilyRings() {}

    /** {@return the backends file: {@code servers} backends, weights 1 to 10} */
    static String backendsText(int servers) {
        SplittableRandom random = new SplittableRandom(WEIGHT_SEED);
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < servers; i++) {
            sb.append("server 127.1.")
                    .append(i >> 8)
                    .append('.')
                    .append(i & 0xFF)
                    .append(" weight=")
                    .append(1 + random.nextInt(10))
                    .append('\n');
        }
        return sb.toString();
    }

    /** Builds the ring of {@code version} over {@code servers} backends at {@code file} and opens it. */
    static RingStore build(RingVersion version, int servers, Path file)
            throws IOException, RingFileException, BackendsFileException {
        RingBuilder.of(BackendList.parse(servers + " servers", backendsText(servers)))
                .version(version)
                .generation(1)
                .build(file);
        return RingStore.open(file);
    }

    /** {@return the keys every family is looked up by} */
    static byte[][] keys() {
        return BenchRings.urlKeys(KEY_COUNT, BenchRings.KEY_SEED, MIN_KEY_LENGTH, MAX_KEY_LENGTH);
    }
}
