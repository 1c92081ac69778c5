package io.ringstore;

import io.ringstore.builder.BackendList;
import io.ringstore.builder.RingBuilder;
import io.ringstore.family.RingVersion;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Seeded random fleets (IPv4 and IPv6, with and without ports, weights, features) and the golden
 * checksum of a family's rings over them: every point (hash, the low word too in a 64-bit ring, and
 * the answer printed for its backend) of every feature ring, then the answers for seeded keys looked
 * up by the ring's own key hash ({@link Ring#lookup(byte[])}: 64 bits in a 64-bit ring). For a 32-bit
 * ring that is exactly what the code before {@code RingFamily} computed (commit cc7d7f8, only
 * builder, store and ring), so nginx's and pingora's recorded values are asserted unchanged since.
 */
final class SeededFleets {
    static final int[] SIZES = {1, 2, 3, 7, 40, 300};
    static final int KEYS = 2_000;

    private SeededFleets() {}

    /** A backends file of {@code size} distinct backends, up to two features; no scope ids (v1 refuses them). */
    static String fleet(SplittableRandom random, int size) {
        return fleet(random, size, address -> true);
    }

    /**
     * {@link #fleet(SplittableRandom, int)} of addresses {@code accepts} takes (a family that cannot
     * place some addresses: libketama's 21 characters); drawn as the same stream when it takes all.
     */
    static String fleet(SplittableRandom random, int size, Predicate<String> accepts) {
        List<String> features = List.of("ssd", "eu").subList(0, random.nextInt(3));
        StringBuilder text = new StringBuilder();
        java.util.Set<String> seen = new java.util.HashSet<>();
        while (seen.size() < size) {
            String host = random.nextBoolean()
                    ? (1 + random.nextInt(223)) + "." + random.nextInt(256) + "." + random.nextInt(256) + "."
                            + random.nextInt(256)
                    : "[2001:db8::" + Integer.toHexString(random.nextInt(1 << 16)) + ":"
                            + Integer.toHexString(random.nextInt(1 << 16)) + "]";
            String address =
                    random.nextInt(4) == 0 && host.charAt(0) != '[' ? host : host + ":" + (1 + random.nextInt(65535));
            if (!accepts.test(address) || !seen.add(address)) {
                continue;
            }
            text.append("server ").append(address);
            int weight = 1 + random.nextInt(5);
            if (weight > 1) {
                text.append(" weight=").append(weight);
            }
            text.append(';');
            StringBuilder own = new StringBuilder();
            for (String f : features) {
                if (random.nextBoolean()) {
                    own.append(own.isEmpty() ? "" : ",").append(f);
                }
            }
            if (!own.isEmpty()) {
                text.append("  # ringstore: features=").append(own);
            }
            text.append('\n');
        }
        return text.toString();
    }

    /**
     * The SHA-256, hex, of the rings of {@code version} over the seeded fleets.
     *
     * @param answer  how the family prints a backend
     * @param accepts the addresses the family can place ({@link #fleet(SplittableRandom, int, Predicate)})
     */
    static String checksum(Path dir, RingVersion version, Function<Backend, String> answer, Predicate<String> accepts)
            throws Exception {
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        for (int f = 0; f < SIZES.length; f++) {
            SplittableRandom random = new SplittableRandom(0xFA_0000L + f);
            String text = fleet(random, SIZES[f], accepts);
            Path file = dir.resolve("golden-" + version.toString().replace(':', '-') + "-" + f + ".ring");
            RingBuilder.of(BackendList.parse("fleet" + f, text))
                    .version(version)
                    .generation(1)
                    .build(file);
            try (RingStore store = RingStore.open(file)) {
                for (Ring ring : store.rings()) {
                    sha.update(ByteBuffer.allocate(4).putInt(ring.pointCount()).array());
                    for (int p = 0; p < ring.pointCount(); p++) {
                        sha.update(ByteBuffer.allocate(4)
                                .putInt(ring.pointLineHash(p))
                                .array());
                        if (ring.isWide()) {
                            sha.update(ByteBuffer.allocate(4)
                                    .putInt((int) ring.pointHash(p))
                                    .array());
                        }
                        sha.update(answer.apply(store.backend(ring.pointBackend(p)))
                                .getBytes(StandardCharsets.US_ASCII));
                    }
                    SplittableRandom keys = new SplittableRandom(0xCE_0000L + f);
                    for (int k = 0; k < KEYS; k++) {
                        byte[] key = ("key-" + keys.nextLong()).getBytes(StandardCharsets.US_ASCII);
                        int b = ring.lookup(key);
                        sha.update((b < 0 ? "-" : answer.apply(store.backend(b))).getBytes(StandardCharsets.US_ASCII));
                    }
                }
            }
        }
        return HexFormat.of().formatHex(sha.digest());
    }
}
