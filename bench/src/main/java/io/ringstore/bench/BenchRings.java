package io.ringstore.bench;

import static io.ringstore.internal.format.RingFileDescriptor.POINT_LENGTH;

import io.ringstore.Backend;
import io.ringstore.Ring;
import io.ringstore.RingFileException;
import io.ringstore.RingStore;
import io.ringstore.builder.BackendList;
import io.ringstore.builder.BackendsFileException;
import io.ringstore.builder.BuildResult;
import io.ringstore.builder.RingBuilder;
import io.ringstore.family.RingVersion;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import java.util.zip.CRC32;

/**
 * The rings every benchmark uses, by size name, and the keys looked up in them.
 *
 * <p>A size name is {@code BACKENDSxPOINTS[xPOINTS…]}: the backend count, then the points per backend as
 * a product. Rings are v1 (nginx), 160 points per weight unit, so the points per backend must be a
 * multiple of 160: {@code 100x160} is 100 backends of weight 1, {@code 2048x10x160} 2,048 of weight 10
 * (3,276,800 points), {@code 2048x100000} 2,048 of weight 625 (204,800,000 points). Backend addresses
 * are loopback ({@code 127.1.x.y:8080}); nothing ever connects to them.
 *
 * <p>Each ring file is built once into a cache directory (system property {@code ringstore.bench.data},
 * default {@code ringstore-bench-data} in {@code java.io.tmpdir}) and reused while its backends, weights and
 * versions are the ones the size name asks for.
 */
final class BenchRings {
    static final String SMALL = "100x160";
    static final String MEDIUM = "2048x10x160";
    static final String LARGE = "2048x100000";

    /** Seed of the keys every benchmark looks up. */
    static final long KEY_SEED = 0x5EED_2024L;

    private BenchRings() {}

    /** Backends of equal weight: what a size name describes. */
    record Shape(String name, int backends, int weight) {
        static Shape of(String name) {
            String[] parts = name.split("x");
            if (parts.length < 2) {
                throw new IllegalArgumentException("size must be BACKENDSxPOINTS[xPOINTS...]: size=" + name);
            }
            int backends = Integer.parseInt(parts[0]);
            long pointsPerBackend = 1;
            for (int i = 1; i < parts.length; i++) {
                pointsPerBackend *= Long.parseLong(parts[i]);
            }
            if (pointsPerBackend % RingVersion.V1.pointMultiple() != 0) {
                throw new IllegalArgumentException("v1 makes " + RingVersion.V1.pointMultiple()
                        + " points per weight unit; points per backend must be a multiple: size=" + name);
            }
            return new Shape(name, backends, Math.toIntExact(pointsPerBackend / RingVersion.V1.pointMultiple()));
        }

        long points() {
            return (long) backends * weight * RingVersion.V1.pointMultiple();
        }

        String address(int i) {
            return "127.1." + (i >> 8) + "." + (i & 0xFF) + ":8080";
        }

        String backendsText() {
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < backends; i++) {
                sb.append("server ")
                        .append(address(i))
                        .append(" weight=")
                        .append(weight)
                        .append('\n');
            }
            return sb.toString();
        }

        BackendList backendList() throws BackendsFileException {
            return BackendList.parse(name, backendsText());
        }
    }

    static Path dataDir() {
        return Path.of(System.getProperty(
                "ringstore.bench.data", System.getProperty("java.io.tmpdir") + "/ringstore-bench-data"));
    }

    static Path ringFile(Shape shape) {
        return dataDir().resolve("v1-" + shape.name() + ".ring");
    }

    /** Opens the cached ring file of {@code size}, building it first if it is missing or was built from other input. */
    static RingStore open(String size) throws IOException, RingFileException, BackendsFileException {
        Shape shape = Shape.of(size);
        Path file = ringFile(shape);
        if (Files.exists(file)) {
            RingStore store = RingStore.open(file);
            if (sameInput(store, shape)) {
                return store;
            }
            store.close();
            System.err.println("bench: " + file + " was built from other backends; rebuilding");
        }
        build(shape, file);
        return RingStore.open(file);
    }

    /** Builds the ring file of {@code shape} at {@code file} (replacing it) and reports what was written. */
    static BuildResult build(Shape shape, Path file) throws IOException, RingFileException, BackendsFileException {
        return build(shape, file, s -> {});
    }

    /** {@link #build(Shape, Path)}, passing the builder's progress lines to {@code progress}. */
    static BuildResult build(Shape shape, Path file, Consumer<String> progress)
            throws IOException, RingFileException, BackendsFileException {
        Files.createDirectories(file.toAbsolutePath().getParent());
        System.err.println("bench: building " + file + " (" + shape.points() + " points)");
        return RingBuilder.of(shape.backendList())
                .version(RingVersion.V1)
                .generation(1)
                .progress(progress)
                .build(file);
    }

    /**
     * The points of {@code ring} mapped on their own, read-only: the segment the library searches, for
     * its search called directly ({@link io.ringstore.internal.format.PointSearch}).
     */
    static MemorySegment mapPoints(Ring ring, Arena arena) throws IOException {
        try (FileChannel ch = FileChannel.open(ring.store().path(), StandardOpenOption.READ)) {
            return ch.map(
                    FileChannel.MapMode.READ_ONLY,
                    ring.store().layout().segmentOf(ring).offset(),
                    (long) ring.pointCount() * POINT_LENGTH,
                    arena);
        }
    }

    private static boolean sameInput(RingStore store, Shape shape) {
        if (!store.versions().equals(List.of(RingVersion.V1))
                || !store.features().isEmpty()
                || store.backendCount() != shape.backends()) {
            return false;
        }
        for (int i = 0; i < shape.backends(); i++) {
            Backend b = store.backend(i);
            if (!b.address().equals(shape.address(i)) || b.weight() != shape.weight()) {
                return false;
            }
        }
        return true;
    }

    /**
     * URL-like keys, 20 to 120 bytes of ASCII, from a seeded generator: the same keys in every run and
     * every benchmark.
     */
    static byte[][] urlKeys(int count, long seed) {
        return urlKeys(count, seed, 20, 120);
    }

    /** URL-like keys as {@link #urlKeys(int, long)} makes them, {@code minLength} to {@code maxLength} bytes. */
    static byte[][] urlKeys(int count, long seed, int minLength, int maxLength) {
        if (count <= 0 || Integer.bitCount(count) != 1) {
            throw new IllegalArgumentException(
                    "key count must be a power of two (keys are cycled with a mask): keyCount=" + count);
        }
        String[] prefixes = {
            "/api/v1/users/",
            "/static/img/",
            "/cart?item=",
            "/search?q=",
            "/video/segment/",
            "https://cdn.example.com/assets/",
            "/u/"
        };
        String alphabet = "abcdefghijklmnopqrstuvwxyz0123456789-_/.";
        SplittableRandom random = new SplittableRandom(seed);
        byte[][] keys = new byte[count][];
        for (int k = 0; k < count; k++) {
            int length = random.nextInt(minLength, maxLength + 1);
            StringBuilder sb = new StringBuilder(length).append(prefixes[random.nextInt(prefixes.length)]);
            while (sb.length() < length) {
                sb.append(alphabet.charAt(random.nextInt(alphabet.length())));
            }
            sb.setLength(length);
            keys[k] = sb.toString().getBytes(StandardCharsets.US_ASCII);
        }
        return keys;
    }

    /** CRC-32 (java.util.zip) of each key: the hash every ring here is looked up by. */
    static int[] hashes(byte[][] keys) {
        int[] hashes = new int[keys.length];
        for (int i = 0; i < keys.length; i++) {
            hashes[i] = crc32(keys[i]);
        }
        return hashes;
    }

    static int crc32(byte[] key) {
        CRC32 crc = new CRC32(); // scalar-replaced by the JIT
        crc.update(key, 0, key.length);
        return (int) crc.getValue();
    }
}
