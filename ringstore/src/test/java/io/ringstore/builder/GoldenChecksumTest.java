package io.ringstore.builder;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.family.RingVersion;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Golden checksum in the manner of hash4j: seeded random fleets (sizes, weights, features, IPv4 and
 * IPv6, with and without ports) built as v1 and as v2 with several point multiples, and one SHA-256
 * over every byte of every file produced. Any change to the file bytes or to the points fails here;
 * if a change is intended (a new format version), record the new value and say why in the commit.
 */
class GoldenChecksumTest {
    /** Recorded from the builder before the format package existed (commit bee7fe4) and unchanged by it. */
    private static final String EXPECTED = "f23a7a114948da4e1077dba0e39f198f982596308164fbdea8be0ada98fa5550";

    private static final int[] FLEET_SIZES = {1, 2, 3, 5, 8, 13, 40, 300};
    private static final RingVersion[][] VERSIONS = {
        {RingVersion.V1},
        {RingVersion.v2(1)},
        {RingVersion.V1, RingVersion.v2(3)},
        {RingVersion.v2(16), RingVersion.V1},
        {RingVersion.v2(160)},
        {RingVersion.V1, RingVersion.v2(160)},
        {RingVersion.v2(7), RingVersion.v2(2)},
        {RingVersion.V1, RingVersion.v2(160)}
    };

    @Test
    void everyFileByteIsAsRecorded(@TempDir Path dir) throws Exception {
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        long collisions = 0;
        for (int f = 0; f < FLEET_SIZES.length; f++) {
            SplittableRandom random = new SplittableRandom(0x5EED_0000L + f);
            String text = fleet(random, FLEET_SIZES[f]);
            RingBuilder builder =
                    RingBuilder.of(BackendList.parse("fleet" + f, text)).generation(f + 1);
            for (RingVersion v : VERSIONS[f]) {
                builder.version(v);
            }
            Path file = dir.resolve("fleet" + f + ".ring");
            BuildResult result = builder.build(file);
            sha.update(Files.readAllBytes(file));
            sha.update(ByteBuffer.allocate(16)
                    .putLong(result.points())
                    .putLong(result.collisions())
                    .array());
            collisions += result.collisions();
        }
        assertTrue(collisions > 0, "the fleets include equal hashes from two backends, so tie rules are covered");
        assertEquals(EXPECTED, HexFormat.of().formatHex(sha.digest()));
    }

    /** A backends file of {@code size} distinct backends, up to four features. */
    private static String fleet(SplittableRandom random, int size) {
        List<String> features = List.of("ssd", "eu", "gpu", "canary").subList(0, random.nextInt(5));
        int maxWeight = random.nextBoolean() ? 3 : 12;
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < size; i++) {
            String host = random.nextBoolean()
                    ? "10." + random.nextInt(256) + "." + (i >> 8) + "." + (i & 255)
                    : "[2001:db8::" + Integer.toHexString(random.nextInt(0x10000)) + ":" + Integer.toHexString(i) + "]";
            String port = random.nextInt(3) == 0 ? "" : ":" + (1024 + random.nextInt(60_000));
            text.append("server ").append(host).append(port);
            int weight = 1 + random.nextInt(maxWeight);
            if (weight > 1 || random.nextBoolean()) {
                text.append(" weight=").append(weight);
            }
            List<String> own =
                    features.stream().filter(x -> random.nextBoolean()).toList();
            if (!own.isEmpty()) {
                text.append(" features=").append(String.join(",", own));
            }
            text.append('\n');
        }
        return text.toString();
    }
}
