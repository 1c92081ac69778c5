package io.ringstore;

import static io.ringstore.TestRings.builder;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.ringstore.builder.Views;
import io.ringstore.family.RingVersion;
import io.ringstore.internal.format.RingFileDescriptor;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PrimitiveIterator;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A seeded mutation fuzzer over valid ring files of several shapes. Every mutated file
 * must open or be refused with {@link RingFileException}; what opens must answer lookups with -1 or a
 * valid backend and pass or fail {@link RingStore#verify()} with a {@link RingFileException}; what
 * verifies must really be well formed (checked here point by point). Any other throwable, an
 * allocation of more than {@value #MAX_CASE_ALLOCATION} bytes for one case, or a case that does not
 * finish fails the test naming the seed, the case and its mutations.
 *
 * <p>Structured mutations (fields set to absurd values, sections swapped or overlapped, points
 * reordered) recompute the metadata CRC-32C, and the segment CRC-32C where points change, so that the
 * deeper checks are reached rather than the checksum test alone.
 *
 * <p>System properties: {@code ringstore.fuzz.seed} (default fixed), {@code ringstore.fuzz.cases}
 * (default {@value #DEFAULT_CASES}), {@code ringstore.fuzz.case} (run only that case, to reproduce it). The
 * run is a fixed number of cases whatever the machine's speed, with no time bound (a slow machine takes
 * longer, it does not fail); its progress is printed every {@value #PROGRESS_EVERY} cases. Only a case that
 * makes no progress for {@value #HANG_SECONDS} s fails, as a hang.
 */
@Tag("slow")
class RingFileFuzzTest {
    private static final long DEFAULT_SEED = 0x5EED_F00D_2026L;
    private static final int DEFAULT_CASES = 100_000;
    private static final int PROGRESS_EVERY = 20_000;
    /** A hang detector, not a speed target: one case takes milliseconds. */
    private static final int HANG_SECONDS = 60;

    private static final long MAX_CASE_ALLOCATION = 16 << 20;
    private static final int[] PROBES = {0, 1, -1, 0x7FFF_FFFF, 0x8000_0000, 0x1234_5678};

    /** Backends files and versions of the shapes fuzzed; each builds into one seed file. */
    private static final Object[][] SHAPES = {
        {
            "v1 no features",
            "server 127.0.0.1:8080\nserver 127.0.0.2:8080 weight=2\nserver [::1]:8080\n",
            new RingVersion[] {RingVersion.V1}
        },
        {"v1+v2 two features", """
                    server 127.0.0.1:8080 features=a
                    server 127.0.0.2:8080 features=a,b
                    server [::1]:8080
                    """, new RingVersion[] {RingVersion.V1, RingVersion.v2(4)}},
        {"empty rings", """
                    server 127.0.0.1:81 features=a
                    server 127.0.0.2:82 features=b
                    server 127.0.0.3 features=c
                    """, new RingVersion[] {RingVersion.v2(3), RingVersion.V1}},
        {"v2 addresses", """
                    server [::ffff:127.0.0.1]:9000
                    server [0:0:0:0:0:0:0:1]:9001 weight=3
                    server [::1%7]
                    server 127.255.255.254:65535
                    server 127.0.0.1:0
                    """, new RingVersion[] {RingVersion.v2(5)}},
        {"one backend one point", "server 127.0.0.9:1\n", new RingVersion[] {RingVersion.v2(1)}},
        // Format 2 backend flags: down, named, and health (12 bytes after the address field).
        {"backend flags", """
                    server 127.0.0.1:11 max_fails=2 fail_timeout=1s
                    server 127.0.0.2:11 down max_conns=7
                    server 127.0.0.3:11 weight=2 # ringstore: name=three
                    server 127.0.0.4:11 fail_timeout=0 # ringstore: name=four
                    """, new RingVersion[] {RingVersion.V1}},
        {"four features", """
                    server 127.0.0.1:1 features=w,x
                    server 127.0.0.1:2 features=x,y,z
                    server 127.0.0.1:3 features=w,z
                    server 127.0.0.1:4
                    server 127.0.0.1:5 features=w,x,y,z
                    """, new RingVersion[] {RingVersion.v2(2)}},
        {
            "many versions",
            "server 127.0.0.1:7 features=q\nserver 127.0.0.2:7\n",
            new RingVersion[] {RingVersion.v2(1), RingVersion.v2(2), RingVersion.V1, RingVersion.v2(7)}
        },
        // Format 3: views of a segment kept with ties (the scope twins tie on every v2 point).
        {"views with ties", """
                    server [fe80::1%3]:80 features=a
                    server [fe80::1%4]:80 features=a,b
                    server 127.0.0.1:8080 features=b weight=2
                    server 127.0.0.2:8080
                    """, new RingVersion[] {RingVersion.v2(3), RingVersion.v2(1)}, Views.ALL},
        {"views and points", """
                    server 127.0.0.1:1 features=w,x
                    server 127.0.0.1:2 features=x,y
                    server 127.0.0.1:3 features=w
                    server 127.0.0.1:4 weight=5
                    """, new RingVersion[] {RingVersion.V1, RingVersion.v2(2)}, Views.AUTO},
    };

    @TempDir(factory = MemoryTempDir.class)
    static Path dir;

    private static List<Shape> shapes;

    /** A valid file and where its parts are. */
    private record Shape(
            String name,
            byte[] bytes,
            long metadataEnd,
            int indexAt,
            int ringCount,
            int backendsAt,
            int backendCount,
            int featuresAt,
            int featureCount,
            long[][] segments) {}

    @BeforeAll
    static void buildShapes() throws Exception {
        shapes = new ArrayList<>();
        for (Object[] s : SHAPES) {
            Path file = dir.resolve("seed-" + shapes.size() + ".ring");
            builder((String) s[1], (RingVersion[]) s[2])
                    .views(s.length > 3 ? (Views) s[3] : Views.NONE)
                    .generation(1 + shapes.size())
                    .build(file);
            try (RingStore store = RingStore.open(file)) {
                store.verify(); // the seeds themselves are valid
            }
            shapes.add(describe((String) s[0], Files.readAllBytes(file)));
        }
        assertTrue(
                shapes.stream().anyMatch(s -> s.segments.length == 0 || hasEmptyRing(s)), "a shape with empty rings");
    }

    private static boolean hasEmptyRing(Shape s) {
        ByteBuffer b = le(s.bytes);
        for (int i = 0; i < s.ringCount; i++) {
            if (b.getInt(s.indexAt + i * RingFileDescriptor.ENTRY_LENGTH + RingFileDescriptor.ENTRY_POINT_COUNT_OFFSET)
                    == 0) {
                return true;
            }
        }
        return false;
    }

    /** Reads the layout of a valid file per FORMAT.md. */
    private static Shape describe(String name, byte[] bytes) {
        ByteBuffer b = le(bytes);
        int backendsAt = (int) b.getLong(RingFileDescriptor.BACKEND_TABLE_OFFSET_OFFSET);
        int featuresAt = (int) b.getLong(RingFileDescriptor.FEATURE_TABLE_OFFSET_OFFSET);
        int indexAt = (int) b.getLong(RingFileDescriptor.RING_INDEX_OFFSET_OFFSET);
        long metadataEnd = indexAt + b.getLong(RingFileDescriptor.RING_INDEX_LENGTH_OFFSET);
        int ringCount = b.getInt(RingFileDescriptor.RING_COUNT_OFFSET);
        TreeMap<Long, Long> segments = new TreeMap<>();
        for (int i = 0; i < ringCount; i++) {
            int e = indexAt + i * RingFileDescriptor.ENTRY_LENGTH;
            long length = b.getLong(e + RingFileDescriptor.ENTRY_SEGMENT_LENGTH_OFFSET);
            if (length > 0) {
                segments.put(b.getLong(e + RingFileDescriptor.ENTRY_SEGMENT_OFFSET_OFFSET), length);
            }
        }
        return new Shape(
                name,
                bytes,
                metadataEnd,
                indexAt,
                ringCount,
                backendsAt,
                b.getInt(RingFileDescriptor.BACKEND_COUNT_OFFSET),
                featuresAt,
                Short.toUnsignedInt(b.getShort(RingFileDescriptor.FEATURE_COUNT_OFFSET)),
                segments.entrySet().stream()
                        .map(e -> new long[] {e.getKey(), e.getValue()})
                        .toArray(long[][]::new));
    }

    private static ByteBuffer le(byte[] bytes) {
        return ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
    }

    // ---- the run ----

    @Test
    void mutatedRingFilesOpenOrAreRefusedWithRingFileExceptionOnly() throws Exception {
        long seed = Long.getLong("ringstore.fuzz.seed", DEFAULT_SEED);
        long cases = Long.getLong("ringstore.fuzz.cases", DEFAULT_CASES);
        Long only = Long.getLong("ringstore.fuzz.case");
        Stats stats = new Stats();
        AtomicReference<String> current = new AtomicReference<>("(not started)");
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicLong done = new AtomicLong();
        Thread worker = new Thread(
                () -> {
                    try {
                        Path file = dir.resolve("case.ring");
                        AllocationMeter meter = new AllocationMeter();
                        for (long c = only != null ? only : 0; c < (only != null ? only + 1 : cases); c++) {
                            runCase(seed, c, file, stats, current, meter);
                            done.incrementAndGet();
                        }
                    } catch (Throwable t) {
                        failure.set(t);
                    }
                },
                "ring-file-fuzzer");
        worker.setDaemon(true); // a hung case must not keep the JVM alive
        long start = System.nanoTime();
        worker.start();
        long lastDone = -1;
        long lastProgress = System.nanoTime();
        long lastPrinted = 0;
        while (worker.isAlive()) {
            worker.join(1_000);
            if (done.get() != lastDone) {
                lastDone = done.get();
                lastProgress = System.nanoTime();
                if (lastDone - lastPrinted >= PROGRESS_EVERY && lastDone < cases) {
                    lastPrinted = lastDone - lastDone % PROGRESS_EVERY;
                    System.out.printf(
                            "ring file fuzz: %,d of %,d cases, %d s%n",
                            lastDone, cases, TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start));
                }
            } else if (System.nanoTime() - lastProgress > TimeUnit.SECONDS.toNanos(HANG_SECONDS)) {
                StringBuilder trace = new StringBuilder();
                for (StackTraceElement e : worker.getStackTrace()) {
                    trace.append("\n\tat ").append(e);
                }
                fail("a case made no progress for " + HANG_SECONDS + " s (hang?): " + current.get() + trace);
            }
        }
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        if (failure.get() != null) {
            throw new AssertionError(failure.get().getMessage(), failure.get());
        }
        System.out.printf(
                "ring file fuzz, seed %d: %d mutated files in %d ms; %d opened, %d verified, %d refused at open, %d by verify%n",
                seed,
                done.get(),
                millis,
                stats.opened,
                stats.verified,
                done.get() - stats.opened,
                stats.opened - stats.verified);
        System.out.println("most frequent reasons (digits as #):");
        stats.reasons.entrySet().stream()
                .sorted(Map.Entry.<String, Long>comparingByValue(Comparator.reverseOrder()))
                .limit(Long.getLong("ringstore.fuzz.reasons", 25))
                .forEach(e -> System.out.printf("  %7d  %s%n", e.getValue(), e.getKey()));
        System.out.println("  ... " + stats.reasons.size() + " distinct reasons");
        System.out.println("mutations drawn:");
        MUTATORS.forEach(m -> System.out.printf("  %7d  %s%n", stats.drawn.getOrDefault(m.name(), 0L), m.name()));
        if (only != null) {
            return;
        }
        assertTrue(done.get() == cases, "only " + done.get() + " of " + cases + " cases ran");
        // The mutations must reach far: many files open, some verify, and many different checks refuse the rest.
        assertTrue(stats.opened > done.get() / 10, "too few mutated files opened: " + stats.opened);
        assertTrue(stats.verified > done.get() / 100, "too few mutated files verified: " + stats.verified);
        assertTrue(
                stats.opened - stats.verified > done.get() / 100,
                "too few refused by verify: " + (stats.opened - stats.verified));
        assertTrue(
                stats.reasons.size() >= 50,
                "the structured mutations should reach many checks: " + stats.reasons.keySet());
    }

    private static final class Stats {
        long opened;
        long verified;
        final Map<String, Long> reasons = new HashMap<>();
        final Map<String, Long> drawn = new HashMap<>();
    }

    private static void runCase(
            long seed, long c, Path file, Stats stats, AtomicReference<String> current, AllocationMeter meter)
            throws Exception {
        SplittableRandom random = new SplittableRandom(seed ^ (c * 0x9E37_79B9_7F4A_7C15L));
        Shape shape = shapes.get(random.nextInt(shapes.size()));
        StringBuilder what = new StringBuilder("seed ")
                .append(seed)
                .append(" case ")
                .append(c)
                .append(" (")
                .append(shape.name)
                .append("):");
        byte[] bytes = shape.bytes.clone();
        int mutations = random.nextInt(8) == 0 ? 2 + random.nextInt(3) : 1;
        for (int m = 0; m < mutations; m++) {
            try {
                bytes = mutate(bytes, shape, random, what, stats.drawn);
            } catch (IndexOutOfBoundsException | IllegalArgumentException e) {
                what.append(
                        " (not applicable after the previous mutation)"); // a layout-based mutation on a file already
                // cut short
            }
        }
        String description = what.toString();
        current.set(description);
        Files.write(file, bytes);
        long allocatedBefore = meter.allocated();
        try {
            check(file, bytes.length, stats);
        } catch (AssertionError e) {
            throw new AssertionError(description + ": " + e.getMessage(), e);
        } catch (Throwable t) {
            throw new AssertionError(description + ": threw " + t + " (only RingFileException is allowed)", t);
        }
        long allocated = meter.allocated() - allocatedBefore;
        if (allocated > MAX_CASE_ALLOCATION) {
            throw new AssertionError(
                    description + ": allocated " + allocated + " bytes for a " + bytes.length + "-byte file");
        }
    }

    /** Opens, uses and verifies the file; every RingFileException is checked and counted. */
    private static void check(Path file, long size, Stats stats) {
        RingStore store;
        try {
            store = RingStore.open(file);
        } catch (RingFileException e) {
            checkMessage(e, file, size, stats);
            return;
        }
        try (store) {
            stats.opened++;
            useSafely(store);
            try {
                store.verify();
            } catch (RingFileException e) {
                checkMessage(e, file, size, stats);
                return;
            }
            stats.verified++;
            assertWellFormed(store);
        }
    }

    private static void checkMessage(RingFileException e, Path file, long size, Stats stats) {
        if (!file.equals(e.path()) || !e.getMessage().contains(file.toString())) {
            throw new AssertionError("message must name the file: " + e.getMessage());
        }
        if (e.offset() < -1 || e.offset() > size) {
            throw new AssertionError("offset " + e.offset() + " outside the " + size + "-byte file: " + e.getMessage());
        }
        if (e.reason() == null
                || e.reason().isBlank()
                || e.getMessage().indexOf('\n') >= 0
                || e.getMessage().indexOf('\r') >= 0) {
            throw new AssertionError("a reason on one line expected: " + e.getMessage());
        }
        stats.reasons.merge(kind(e.reason()), 1L, Long::sum);
    }

    /** A reason with its numbers, names and quoted or parenthesized text blanked: which check fired. */
    private static String kind(String reason) {
        String k = reason.replaceAll("0x[0-9a-f]+", "#")
                .replaceAll("[0-9]+", "#")
                .replaceAll("'[^']*'", "'…'")
                .replaceAll("\"[^\"]*\"", "\"…\"")
                .replaceAll("\\([^)]*\\)?", "(…)")
                .replaceAll("ring v#(:#)?( [^:]*)?:", "ring R:")
                .replaceAll("v#(:#)?", "V")
                .replaceAll("(must be written in brackets).*", "$1");
        return k.length() > 90 ? k.substring(0, 90) : k;
    }

    /** What the API promises for any store that opened, damaged segments or not. */
    private static void useSafely(RingStore store) {
        int backends = store.backendCount();
        for (int i = 0; i < backends; i++) {
            Backend b = store.backend(i);
            if (b.weight() < 1 || b.address().isEmpty()) {
                throw new AssertionError("backend " + i + ": " + b);
            }
        }
        for (Ring ring : store.rings()) {
            if (store.ring(ring.features(), ring.version()) != ring) {
                throw new AssertionError("ring(" + ring.features() + ", " + ring.version() + ") is not " + ring);
            }
            for (int probe : PROBES) {
                inRange(ring.lookupHash(probe), backends, ring);
            }
            for (int i = 0; i < ring.pointCount(); i += 1 + ring.pointCount() / 8) {
                inRange(ring.lookupHash(ring.pointHash(i)), backends, ring);
                inRange(ring.pointBackend(i), backends, ring);
            }
            inRange(ring.lookup("/fuzz".getBytes(StandardCharsets.US_ASCII)), backends, ring);
            int count = 0;
            for (PrimitiveIterator.OfInt it = ring.backends("/fuzz".getBytes(StandardCharsets.US_ASCII));
                    it.hasNext();
                    count++) {
                int b = it.nextInt();
                if (b < 0 || b >= backends) {
                    throw new AssertionError("failover order names backend " + b + " of " + backends + " on " + ring);
                }
            }
            if (count > backends) {
                throw new AssertionError("failover order of " + count + " backends, the file has " + backends);
            }
        }
    }

    private static void inRange(int b, int backends, Ring ring) {
        if (b < -1 || b >= backends) {
            throw new AssertionError("answer " + b + " with " + backends + " backends on " + ring);
        }
    }

    /** What verify() vouched for, checked independently: strictly increasing points of existing backends having the ring's features. */
    private static void assertWellFormed(RingStore store) {
        for (Ring ring : store.rings()) {
            long previous = -1;
            for (int i = 0; i < ring.pointCount(); i++) {
                long h = Integer.toUnsignedLong(ring.pointLineHash(i));
                if (h <= previous) {
                    throw new AssertionError(
                            "verified, but " + ring + " point " + i + " is not above the previous one");
                }
                previous = h;
                int b = ring.pointBackend(i);
                if (b < 0 || !store.backend(b).features().containsAll(ring.features())) {
                    throw new AssertionError("verified, but " + ring + " point " + i + " names backend " + b);
                }
            }
        }
    }

    // ---- mutations ----

    private static final long[] INTERESTING = {
        0,
        1,
        2,
        6,
        40,
        127,
        128,
        255,
        256,
        0x7FFF,
        0x8000,
        0xFFFF,
        0x1_0000,
        0x7FFF_FFFFL,
        0x8000_0000L,
        0xFFFF_FFFFL,
        0x1_0000_0000L,
        Long.MAX_VALUE,
        Long.MIN_VALUE,
        -1,
        -6,
        -40
    };

    /** Header fields: offset and width in bytes. */
    private static final int[][] HEADER_FIELDS = {
        {RingFileDescriptor.FORMAT_VERSION_OFFSET, 2},
        {RingFileDescriptor.FLAGS_OFFSET, 2},
        {RingFileDescriptor.HEADER_LENGTH_OFFSET, 4},
        {RingFileDescriptor.GENERATION_OFFSET, 8},
        {RingFileDescriptor.FILE_LENGTH_OFFSET, 8},
        {RingFileDescriptor.BACKEND_COUNT_OFFSET, 4},
        {RingFileDescriptor.FEATURE_COUNT_OFFSET, 2},
        {RingFileDescriptor.VERSION_COUNT_OFFSET, 2},
        {RingFileDescriptor.RING_COUNT_OFFSET, 4},
        {RingFileDescriptor.SEGMENT_COUNT_OFFSET, 4},
        {RingFileDescriptor.BACKEND_TABLE_OFFSET_OFFSET, 8},
        {RingFileDescriptor.BACKEND_TABLE_LENGTH_OFFSET, 8},
        {RingFileDescriptor.FEATURE_TABLE_OFFSET_OFFSET, 8},
        {RingFileDescriptor.FEATURE_TABLE_LENGTH_OFFSET, 8},
        {RingFileDescriptor.RING_INDEX_OFFSET_OFFSET, 8},
        {RingFileDescriptor.RING_INDEX_LENGTH_OFFSET, 8},
    };

    /** Ring index entry fields: offset and width in bytes. */
    private static final int[][] ENTRY_FIELDS = {
        {RingFileDescriptor.ENTRY_FEATURE_MASK_OFFSET, 4},
        {RingFileDescriptor.ENTRY_ALGORITHM_OFFSET, 1},
        {RingFileDescriptor.ENTRY_STORAGE_OFFSET, 1},
        {RingFileDescriptor.ENTRY_RESERVED1_OFFSET, 2},
        {RingFileDescriptor.ENTRY_POINT_MULTIPLE_OFFSET, 4},
        {RingFileDescriptor.ENTRY_POINT_COUNT_OFFSET, 4},
        {RingFileDescriptor.ENTRY_SEGMENT_OFFSET_OFFSET, 8},
        {RingFileDescriptor.ENTRY_SEGMENT_LENGTH_OFFSET, 8},
        {RingFileDescriptor.ENTRY_SEGMENT_CRC_OFFSET, 4},
        {RingFileDescriptor.ENTRY_RING_POINTS_OFFSET, 4},
    };

    private static final String[] ADDRESSES = {
        "127.0.0.1",
        "127.0.0.1:8080",
        "[::1]",
        "[::1%4294967296]",
        "256.0.0.1",
        "127.0.0.1:65536",
        "[::1",
        "::1",
        "[::1]:",
        "[::1]x",
        "localhost",
        "1.2.3",
        "127.0.0.01",
        "[1:2:3:4:5:6:7:8:9]",
        "[::ffff:1.2.3.4]:0",
        "127.0.0.1:-1",
        " ",
        "\u0000",
        "[%]",
        "[::1%]",
        "1.1.1.1:99999999999999999999"
    };

    /**
     * One kind of mutation: changes {@code bytes} in place or returns a new array, appends what it did
     * to {@code what}, and says whether the metadata checksum is recomputed afterwards.
     */
    private interface Mutation {
        Mutated apply(byte[] bytes, Shape shape, SplittableRandom r, StringBuilder what);
    }

    private record Mutated(byte[] bytes, boolean fixMetadataChecksum) {}

    /** A named mutation, drawn with {@code weight} chances in {@link #DRAW}. */
    private record Mutator(String name, int weight, Mutation mutation) {}

    /** The mutations, in the order of {@link #DRAW}. */
    private static final List<Mutator> MUTATORS = List.of(
            new Mutator("bit flips", 1, RingFileFuzzTest::flipBits),
            new Mutator("garbage", 1, RingFileFuzzTest::garbage),
            new Mutator("truncation", 1, RingFileFuzzTest::truncate),
            new Mutator("extension", 1, RingFileFuzzTest::extend),
            new Mutator("header field", 2, RingFileFuzzTest::headerField),
            new Mutator("counts", 1, RingFileFuzzTest::counts),
            new Mutator("entry field", 2, RingFileFuzzTest::entryField),
            new Mutator("entries swapped", 1, RingFileFuzzTest::swapEntries),
            new Mutator("segments overlapped", 1, RingFileFuzzTest::overlapSegments),
            new Mutator("segments swapped", 1, RingFileFuzzTest::swapSegments),
            new Mutator("points", 2, RingFileFuzzTest::changePoints),
            new Mutator("records", 1, RingFileFuzzTest::changeRecord),
            new Mutator("splice", 1, RingFileFuzzTest::splice));

    /** One slot per chance: a case draws {@code r.nextInt(DRAW.length)}, 16 slots. */
    private static final Mutator[] DRAW = MUTATORS.stream()
            .flatMap(m -> Collections.nCopies(m.weight(), m).stream())
            .toArray(Mutator[]::new);

    private static byte[] mutate(
            byte[] bytes, Shape shape, SplittableRandom r, StringBuilder what, Map<String, Long> drawn) {
        Mutator mutator = DRAW[r.nextInt(DRAW.length)];
        drawn.merge(mutator.name(), 1L, Long::sum);
        Mutated mutated = mutator.mutation().apply(bytes, shape, r, what);
        if (mutated.fixMetadataChecksum()) {
            fixMetadataChecksum(mutated.bytes(), shape);
            what.append(" (crc)");
        }
        return mutated.bytes();
    }

    /** Bit flips anywhere. */
    private static Mutated flipBits(byte[] bytes, Shape shape, SplittableRandom r, StringBuilder what) {
        int n = 1 + r.nextInt(4);
        for (int i = 0; i < n && bytes.length > 0; i++) {
            int at = r.nextInt(bytes.length);
            int bit = r.nextInt(8);
            bytes[at] ^= (byte) (1 << bit);
            what.append(" flip[").append(at).append('.').append(bit).append(']');
        }
        return new Mutated(bytes, r.nextBoolean());
    }

    /** A run of garbage. */
    private static Mutated garbage(byte[] bytes, Shape shape, SplittableRandom r, StringBuilder what) {
        if (bytes.length > 0) {
            int at = r.nextInt(bytes.length);
            int length = Math.min(bytes.length - at, 1 + r.nextInt(r.nextBoolean() ? 8 : 256));
            int kind = r.nextInt(3);
            for (int i = 0; i < length; i++) {
                bytes[at + i] = (byte) (kind == 0 ? r.nextInt(256) : kind == 1 ? 0xFF : 0);
            }
            what.append(" garbage[")
                    .append(at)
                    .append(",+")
                    .append(length)
                    .append(kind == 0 ? " random" : kind == 1 ? " 0xff" : " 0")
                    .append(']');
        }
        return new Mutated(bytes, r.nextBoolean());
    }

    /** Truncation, maybe with the header's length adjusted. */
    private static Mutated truncate(byte[] bytes, Shape shape, SplittableRandom r, StringBuilder what) {
        boolean fix = true;
        int length = r.nextInt(4) == 0
                ? (int) Math.max(0, Math.min(bytes.length, shape.metadataEnd + r.nextInt(9) - 4))
                : r.nextInt(bytes.length + 1);
        bytes = Arrays.copyOf(bytes, length);
        what.append(" truncate[").append(length).append(']');
        if (r.nextBoolean() && length >= RingFileDescriptor.FILE_LENGTH_OFFSET + 8) {
            le(bytes).putLong(RingFileDescriptor.FILE_LENGTH_OFFSET, length);
            what.append(" fileLength fixed");
        } else {
            fix = false;
        }
        return new Mutated(bytes, fix);
    }

    /** Extension with zeros or garbage, maybe with the header's length adjusted. */
    private static Mutated extend(byte[] bytes, Shape shape, SplittableRandom r, StringBuilder what) {
        boolean fix = true;
        int extra = 1 + r.nextInt(r.nextBoolean() ? 16 : 8192);
        int old = bytes.length;
        bytes = Arrays.copyOf(bytes, old + extra);
        if (r.nextBoolean()) {
            for (int i = old; i < bytes.length; i++) {
                bytes[i] = (byte) r.nextInt(256);
            }
        }
        what.append(" extend[+").append(extra).append(']');
        if (r.nextBoolean() && bytes.length >= RingFileDescriptor.FILE_LENGTH_OFFSET + 8) {
            le(bytes).putLong(RingFileDescriptor.FILE_LENGTH_OFFSET, bytes.length);
            what.append(" fileLength fixed");
        } else {
            fix = false;
        }
        return new Mutated(bytes, fix);
    }

    /** A header field set to an absurd or borderline value. */
    private static Mutated headerField(byte[] bytes, Shape shape, SplittableRandom r, StringBuilder what) {
        int[] f = HEADER_FIELDS[r.nextInt(HEADER_FIELDS.length)];
        long v = value(r, bytes, f[0], f[1], bytes.length);
        put(bytes, f[0], f[1], v);
        what.append(" header@").append(f[0]).append('=').append(v);
        return new Mutated(bytes, true);
    }

    /** Consistent counts: more features or versions, ring count and index length to match. */
    private static Mutated counts(byte[] bytes, Shape shape, SplittableRandom r, StringBuilder what) {
        ByteBuffer b = le(bytes);
        int features = r.nextInt(4) == 0 ? 17 + r.nextInt(100) : r.nextInt(17);
        int versions = r.nextInt(4) == 0 ? r.nextInt(40) : 1 + r.nextInt(16);
        long rings = (long) versions << Math.min(features, 40);
        b.putShort(RingFileDescriptor.FEATURE_COUNT_OFFSET, (short) features);
        b.putShort(RingFileDescriptor.VERSION_COUNT_OFFSET, (short) versions);
        b.putInt(RingFileDescriptor.RING_COUNT_OFFSET, (int) rings);
        b.putLong(RingFileDescriptor.RING_INDEX_LENGTH_OFFSET, rings * RingFileDescriptor.ENTRY_LENGTH);
        what.append(" counts[features=")
                .append(features)
                .append(" versions=")
                .append(versions)
                .append(']');
        return new Mutated(bytes, true);
    }

    /** An index entry field. */
    private static Mutated entryField(byte[] bytes, Shape shape, SplittableRandom r, StringBuilder what) {
        if (shape.ringCount > 0) {
            int e = shape.indexAt + r.nextInt(shape.ringCount) * RingFileDescriptor.ENTRY_LENGTH;
            int[] f = ENTRY_FIELDS[r.nextInt(ENTRY_FIELDS.length)];
            long v = value(r, bytes, e + f[0], f[1], bytes.length);
            put(bytes, e + f[0], f[1], v);
            what.append(" entry@")
                    .append(e)
                    .append('+')
                    .append(f[0])
                    .append('=')
                    .append(v);
            if (f[0] == RingFileDescriptor.ENTRY_POINT_COUNT_OFFSET && r.nextBoolean()) {
                long points = Integer.toUnsignedLong((int) v);
                le(bytes)
                        .putLong(
                                e + RingFileDescriptor.ENTRY_SEGMENT_LENGTH_OFFSET,
                                points * RingFileDescriptor.POINT_LENGTH);
                what.append(" with its length");
            }
        }
        return new Mutated(bytes, true);
    }

    /** Two index entries swapped, or one entry's segment given to another. */
    private static Mutated swapEntries(byte[] bytes, Shape shape, SplittableRandom r, StringBuilder what) {
        if (shape.ringCount > 1) {
            int i = shape.indexAt + r.nextInt(shape.ringCount) * RingFileDescriptor.ENTRY_LENGTH;
            int j = shape.indexAt + r.nextInt(shape.ringCount) * RingFileDescriptor.ENTRY_LENGTH;
            if (r.nextBoolean()) {
                byte[] tmp = Arrays.copyOfRange(bytes, i, i + RingFileDescriptor.ENTRY_LENGTH);
                System.arraycopy(bytes, j, bytes, i, RingFileDescriptor.ENTRY_LENGTH);
                System.arraycopy(tmp, 0, bytes, j, RingFileDescriptor.ENTRY_LENGTH);
                what.append(" swap entries ").append(i).append(',').append(j);
            } else {
                System.arraycopy(
                        bytes,
                        j + RingFileDescriptor.ENTRY_POINT_COUNT_OFFSET,
                        bytes,
                        i + RingFileDescriptor.ENTRY_POINT_COUNT_OFFSET,
                        24);
                what.append(" entry ")
                        .append(i)
                        .append(" takes the segment of ")
                        .append(j);
            }
        }
        return new Mutated(bytes, true);
    }

    /** Overlapping segments: an entry's segment moved into another's. */
    private static Mutated overlapSegments(byte[] bytes, Shape shape, SplittableRandom r, StringBuilder what) {
        if (shape.ringCount > 0 && shape.segments.length > 0) {
            int e = shape.indexAt + r.nextInt(shape.ringCount) * RingFileDescriptor.ENTRY_LENGTH;
            long[] s = shape.segments[r.nextInt(shape.segments.length)];
            long offset =
                    s[0] + (r.nextBoolean() ? RingFileDescriptor.POINT_LENGTH * r.nextInt(8) : r.nextInt((int) s[1]));
            le(bytes).putLong(e + RingFileDescriptor.ENTRY_SEGMENT_OFFSET_OFFSET, offset);
            what.append(" entry ").append(e).append(" segment at ").append(offset);
        }
        return new Mutated(bytes, true);
    }

    /** Two segments' points swapped (each entry's checksum then belongs to the other). */
    private static Mutated swapSegments(byte[] bytes, Shape shape, SplittableRandom r, StringBuilder what) {
        boolean fix = true;
        if (shape.segments.length > 1) {
            long[] a = shape.segments[r.nextInt(shape.segments.length)];
            long[] b = shape.segments[r.nextInt(shape.segments.length)];
            int n = (int) Math.min(a[1], b[1]);
            byte[] tmp = Arrays.copyOfRange(bytes, (int) a[0], (int) a[0] + n);
            System.arraycopy(bytes, (int) b[0], bytes, (int) a[0], n);
            System.arraycopy(tmp, 0, bytes, (int) b[0], n);
            what.append(" swap segments ")
                    .append(a[0])
                    .append(',')
                    .append(b[0])
                    .append(" +")
                    .append(n);
            fix = r.nextBoolean();
            if (fix) {
                fixSegmentChecksums(bytes, shape);
                what.append(" segment checksums fixed");
            }
        }
        return new Mutated(bytes, fix);
    }

    /** Points changed with the segment checksum recomputed: verify's order and membership checks. */
    private static Mutated changePoints(byte[] bytes, Shape shape, SplittableRandom r, StringBuilder what) {
        if (shape.segments.length > 0) {
            long[] s = shape.segments[r.nextInt(shape.segments.length)];
            int points = (int) (s[1] / RingFileDescriptor.POINT_LENGTH);
            int p = (int) s[0] + r.nextInt(points) * RingFileDescriptor.POINT_LENGTH;
            ByteBuffer b = le(bytes);
            switch (r.nextInt(5)) {
                case 0 -> {
                    int backend = r.nextBoolean() ? shape.backendCount + r.nextInt(3) : r.nextInt(0x10000);
                    b.putShort(p + RingFileDescriptor.POINT_BACKEND_OFFSET, (short) backend);
                    what.append(" point@").append(p).append(" backend=").append(backend);
                }
                case 1 -> {
                    int backend = r.nextInt(shape.backendCount);
                    b.putShort(p + RingFileDescriptor.POINT_BACKEND_OFFSET, (short) backend);
                    what.append(" point@").append(p).append(" backend=").append(backend);
                }
                case 2 -> {
                    int q = (int) s[0] + r.nextInt(points) * RingFileDescriptor.POINT_LENGTH;
                    int hp = b.getInt(p);
                    b.putInt(p, b.getInt(q));
                    b.putInt(q, hp);
                    what.append(" point hashes swapped ").append(p).append(',').append(q);
                }
                case 3 -> {
                    int q = p
                            + (p + RingFileDescriptor.POINT_LENGTH < s[0] + s[1]
                                    ? RingFileDescriptor.POINT_LENGTH
                                    : -RingFileDescriptor.POINT_LENGTH);
                    if (q >= s[0]) {
                        b.putInt(q, b.getInt(p));
                    }
                    what.append(" point hash repeated ").append(p).append("->").append(q);
                }
                default -> {
                    int h = r.nextInt();
                    b.putInt(p, h);
                    what.append(" point@").append(p).append(" hash=").append(Integer.toUnsignedString(h));
                }
            }
            fixSegmentChecksums(bytes, shape);
        }
        return new Mutated(bytes, true);
    }

    /** A backend or feature record changed. */
    private static Mutated changeRecord(byte[] bytes, Shape shape, SplittableRandom r, StringBuilder what) {
        ByteBuffer b = le(bytes);
        if (r.nextInt(3) > 0 || shape.featureCount == 0) {
            int p = shape.backendsAt;
            int index = r.nextInt(shape.backendCount);
            for (int i = 0; i < index; i++) {
                p += RingFileDescriptor.BACKEND_FIXED_LENGTH
                        + Short.toUnsignedInt(b.getShort(p + RingFileDescriptor.BACKEND_ADDRESS_LENGTH_OFFSET));
            }
            int length = Short.toUnsignedInt(b.getShort(p + RingFileDescriptor.BACKEND_ADDRESS_LENGTH_OFFSET));
            switch (r.nextInt(4)) {
                case 0 -> {
                    long v = value(r, bytes, p + RingFileDescriptor.BACKEND_WEIGHT_OFFSET, 4, bytes.length);
                    put(bytes, p + RingFileDescriptor.BACKEND_WEIGHT_OFFSET, 4, v);
                    what.append(" backend ").append(index).append(" weight=").append(v);
                }
                case 1 -> {
                    int mask = r.nextBoolean() ? 1 << r.nextInt(32) : r.nextInt();
                    b.putInt(p + RingFileDescriptor.BACKEND_FEATURES_OFFSET, mask);
                    what.append(" backend ").append(index).append(" mask=").append(Integer.toHexString(mask));
                }
                case 2 -> {
                    long v = value(r, bytes, p + RingFileDescriptor.BACKEND_ADDRESS_LENGTH_OFFSET, 2, bytes.length);
                    put(bytes, p + RingFileDescriptor.BACKEND_ADDRESS_LENGTH_OFFSET, 2, v);
                    what.append(" backend ")
                            .append(index)
                            .append(" addressLength=")
                            .append(v);
                }
                default -> { // same length, other text: a bad or duplicate address
                    String text = ADDRESSES[r.nextInt(ADDRESSES.length)];
                    byte[] t = Arrays.copyOf(text.getBytes(StandardCharsets.ISO_8859_1), length);
                    for (int i = text.length(); i < length; i++) {
                        t[i] = (byte) "0123456789:]%".charAt(r.nextInt(13));
                    }
                    System.arraycopy(t, 0, bytes, p + RingFileDescriptor.BACKEND_ADDRESS_OFFSET, length);
                    what.append(" backend ")
                            .append(index)
                            .append(" address='")
                            .append(new String(t, StandardCharsets.ISO_8859_1).replaceAll("\\p{Cntrl}", "?"))
                            .append('\'');
                }
            }
        } else {
            int p = shape.featuresAt
                    + (r.nextBoolean() ? 0 : 1 + r.nextInt(Math.max(1, (int) (shape.indexAt - shape.featuresAt - 1))));
            int v = r.nextBoolean() ? "a/ .-_\u0000\u00ffx".charAt(r.nextInt(10)) : r.nextInt(256);
            bytes[p] = (byte) v;
            what.append(" feature table byte ").append(p).append('=').append(v);
        }
        return new Mutated(bytes, true);
    }

    /** A chunk of another shape spliced in. */
    private static Mutated splice(byte[] bytes, Shape shape, SplittableRandom r, StringBuilder what) {
        Shape other = shapes.get(r.nextInt(shapes.size()));
        int from = r.nextInt(other.bytes.length);
        int at = r.nextInt(bytes.length);
        int n = Math.min(Math.min(other.bytes.length - from, bytes.length - at), 1 + r.nextInt(512));
        System.arraycopy(other.bytes, from, bytes, at, n);
        what.append(" splice ")
                .append(other.name)
                .append('[')
                .append(from)
                .append(",+")
                .append(n)
                .append("]@")
                .append(at);
        return new Mutated(bytes, r.nextBoolean());
    }

    /** An interesting value for a field of {@code width} bytes at {@code at}: a boundary, a nearby value, or random. */
    private static long value(SplittableRandom r, byte[] bytes, int at, int width, long fileSize) {
        long old = get(bytes, at, width);
        return switch (r.nextInt(6)) {
            case 0, 1 -> INTERESTING[r.nextInt(INTERESTING.length)];
            case 2 -> old + r.nextInt(17) - 8;
            case 3 -> fileSize + r.nextInt(17) - 8;
            case 4 -> old * 2 + r.nextInt(3);
            default -> r.nextLong();
        };
    }

    private static long get(byte[] bytes, int at, int width) {
        if (at < 0 || at + width > bytes.length) {
            return 0;
        }
        ByteBuffer b = le(bytes);
        return switch (width) {
            case 1 -> Byte.toUnsignedLong(bytes[at]);
            case 2 -> Short.toUnsignedLong(b.getShort(at));
            case 4 -> Integer.toUnsignedLong(b.getInt(at));
            default -> b.getLong(at);
        };
    }

    private static void put(byte[] bytes, int at, int width, long v) {
        if (at < 0 || at + width > bytes.length) {
            return;
        }
        ByteBuffer b = le(bytes);
        switch (width) {
            case 1 -> bytes[at] = (byte) v;
            case 2 -> b.putShort(at, (short) v);
            case 4 -> b.putInt(at, (int) v);
            default -> b.putLong(at, v);
        }
    }

    /**
     * Recomputes the metadata CRC-32C over [0, metadataEnd) and stores it at metadataEnd, metadataEnd
     * as the (mutated) header now says when that lies inside the file, else the shape's own.
     */
    private static void fixMetadataChecksum(byte[] bytes, Shape shape) {
        long end = shape.metadataEnd;
        if (bytes.length >= RingFileDescriptor.HEADER_LENGTH) {
            ByteBuffer b = le(bytes);
            long said = b.getLong(RingFileDescriptor.RING_INDEX_OFFSET_OFFSET)
                    + b.getLong(RingFileDescriptor.RING_INDEX_LENGTH_OFFSET);
            if (said >= 0 && said + RingFileDescriptor.METADATA_CRC_LENGTH <= bytes.length) {
                end = said;
            }
        }
        if (end + RingFileDescriptor.METADATA_CRC_LENGTH > bytes.length) {
            return;
        }
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, (int) end);
        le(bytes).putInt((int) end, (int) crc.getValue());
    }

    /** Recomputes every index entry's segment CRC-32C from the points now in the file (entries of the shape's layout). */
    private static void fixSegmentChecksums(byte[] bytes, Shape shape) {
        ByteBuffer b = le(bytes);
        for (int i = 0; i < shape.ringCount; i++) {
            int e = shape.indexAt + i * RingFileDescriptor.ENTRY_LENGTH;
            long offset = b.getLong(e + RingFileDescriptor.ENTRY_SEGMENT_OFFSET_OFFSET);
            long length = b.getLong(e + RingFileDescriptor.ENTRY_SEGMENT_LENGTH_OFFSET);
            if (length > 0 && offset >= 0 && offset + length <= bytes.length) {
                CRC32C crc = new CRC32C();
                crc.update(bytes, (int) offset, (int) length);
                b.putInt(e + RingFileDescriptor.ENTRY_SEGMENT_CRC_OFFSET, (int) crc.getValue());
            }
        }
    }

    /**
     * Bytes allocated by the current thread, from {@code com.sun.management.ThreadMXBean} found
     * reflectively (the test module does not read java.management); 0 when the JDK has no such bean.
     */
    private static final class AllocationMeter {
        private final Object bean;
        private final Method allocated;

        AllocationMeter() {
            Object b = null;
            Method m = null;
            try {
                b = Class.forName("java.lang.management.ManagementFactory")
                        .getMethod("getThreadMXBean")
                        .invoke(null);
                m = Class.forName("com.sun.management.ThreadMXBean").getMethod("getCurrentThreadAllocatedBytes");
                m.invoke(b);
            } catch (ReflectiveOperationException | RuntimeException e) {
                System.out.println("allocation per case not measured: " + e);
                b = null;
            }
            bean = b;
            allocated = m;
        }

        long allocated() throws ReflectiveOperationException {
            return bean == null ? 0 : (long) allocated.invoke(bean);
        }
    }
}
