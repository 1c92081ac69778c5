package io.ringstore.tools;

import static io.ringstore.internal.format.RingFileDescriptor.BACKEND_ADDRESS_LENGTH_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.BACKEND_ADDRESS_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.BACKEND_COUNT_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.BACKEND_FEATURES_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.BACKEND_FIXED_LENGTH;
import static io.ringstore.internal.format.RingFileDescriptor.BACKEND_TABLE_LENGTH_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.BACKEND_TABLE_OFFSET_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.BACKEND_WEIGHT_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.ENTRY_ALGORITHM_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.ENTRY_FEATURE_MASK_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.ENTRY_LENGTH;
import static io.ringstore.internal.format.RingFileDescriptor.ENTRY_POINT_COUNT_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.ENTRY_POINT_MULTIPLE_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.ENTRY_RING_POINTS_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.ENTRY_SEGMENT_CRC_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.ENTRY_SEGMENT_LENGTH_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.ENTRY_SEGMENT_OFFSET_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.ENTRY_STORAGE_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.FEATURE_COUNT_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.FEATURE_NAME_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.FEATURE_TABLE_OFFSET_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.FILE_LENGTH_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.FLAGS_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.FORMAT_VERSION_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.HEADER_LENGTH_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.POINT_BACKEND_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.POINT_HASH_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.POINT_LENGTH;
import static io.ringstore.internal.format.RingFileDescriptor.RING_COUNT_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.RING_INDEX_LENGTH_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.RING_INDEX_OFFSET_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.SEGMENT_COUNT_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.VERSION_COUNT_OFFSET;
import static io.ringstore.tools.CliRun.backends;
import static io.ringstore.tools.CliRun.build;
import static io.ringstore.tools.CliRun.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The messages FORMAT.md quotes for the checks a reader makes ("Checks a reader makes": on open and
 * {@code verify}) are the ones the CLI prints: each check is provoked on a file forged from a valid one,
 * and {@code ringstore verify}'s message must match one of the texts the check's item in FORMAT.md
 * quotes, its placeholders ({@code N}, {@code i}, {@code 0x…}, {@code …}) standing for any value. The
 * quotes are read from FORMAT.md itself, so the document and the code cannot drift apart.
 */
class FormatMessagesTest {
    /** A placeholder in a quoted message: a lone capital, {@code i} or {@code j}, {@code 0x…} or {@code …}. */
    private static final Pattern PLACEHOLDER =
            Pattern.compile("0x…|…|(?<![\\p{Alnum}_])(?:[A-Z]|i|j)(?![\\p{Alnum}_])");

    private static final Pattern ITEM = Pattern.compile("^(\\d+[a-z]?)\\. (.*)$");

    @TempDir
    static Path dir;

    /** Check number to its item's text (lines joined), for the checks on open and those of verify. */
    private static Map<String, String> openChecks;

    private static Map<String, String> verifyChecks;
    private static final TreeSet<String> covered = new TreeSet<>(FormatMessagesTest::byNumber);

    /** v1 and v2:8, one feature: rings v1 (all), v1 eu, v2:8 (all), v2:8 eu; format version 1. */
    private static Path featured;
    /** libmemcached, two backends; format version 1. */
    private static Path memcached;
    /** libmemcached, both backends down: one empty ring, no segment; format version 2. */
    private static Path allDown;
    /** libmemcached, backend 0 named {@code alpha}; format version 2. */
    private static Path named;
    /** envoy then libmemcached; format version 4. */
    private static Path wide;
    /** v2:8 with views: ring 0 stored with ties and feature bits, ring 1 a view; format version 3. */
    private static Path views;
    /** v1, backend 0 with max_fails=3 (flag health); format version 2. */
    private static Path health;

    @BeforeAll
    static void setUp() throws IOException {
        Path doc = Path.of(System.getProperty("ringstore.repo", "..")).resolve("FORMAT.md");
        assertTrue(Files.isRegularFile(doc), () -> "FORMAT.md not found at " + doc.toAbsolutePath());
        List<String> lines = Files.readAllLines(doc);
        int from = lines.indexOf("## Checks a reader makes");
        int verifyAt = -1;
        int to = -1;
        for (int i = from + 1; i < lines.size(); i++) {
            if (verifyAt < 0 && lines.get(i).startsWith("**`verify`**")) {
                verifyAt = i;
            }
            if (lines.get(i).startsWith("## ")) {
                to = i;
                break;
            }
        }
        assertTrue(from >= 0 && verifyAt > from && to > verifyAt, "FORMAT.md's check lists not found");
        openChecks = items(lines.subList(from + 1, verifyAt));
        verifyChecks = items(lines.subList(verifyAt + 1, to));
        assertTrue(
                openChecks.keySet().containsAll(List.of("1", "24a", "41")),
                () -> "open checks: " + openChecks.keySet());
        assertTrue(
                verifyChecks.keySet().containsAll(List.of("1", "12")), () -> "verify checks: " + verifyChecks.keySet());

        featured = dir.resolve("featured.ring");
        build(
                backends(dir, "featured.conf", "server 10.0.0.1:8080 features=eu\nserver 10.0.0.2:8080\n"),
                featured,
                "--algorithm",
                "v1,v2:8");
        Path two = backends(dir, "two.conf", "server 10.0.0.1:11211\nserver 10.0.0.2:11211\n");
        memcached = dir.resolve("memcached.ring");
        build(two, memcached, "--algorithm", "libmemcached");
        wide = dir.resolve("wide.ring");
        build(two, wide, "--algorithm", "envoy,libmemcached");
        allDown = dir.resolve("down.ring");
        build(
                backends(dir, "down.conf", "server 10.0.0.1:11211 down\nserver 10.0.0.2:11211 down\n"),
                allDown,
                "--algorithm",
                "libmemcached");
        named = dir.resolve("named.ring");
        build(
                backends(dir, "named.conf", "server 10.0.0.1:11211 # ringstore: name=alpha\nserver 10.0.0.2:11211\n"),
                named,
                "--algorithm",
                "libmemcached");
        views = dir.resolve("views.ring");
        build(
                backends(
                        dir,
                        "views.conf",
                        "server 10.0.0.1:80 features=eu\nserver 10.0.0.2:80\nserver 10.0.0.3:80 features=eu\n"),
                views,
                "--algorithm",
                "v2:8",
                "--views",
                "all");
        health = dir.resolve("health.ring");
        build(
                backends(dir, "health.conf", "server 10.0.0.1:80 max_fails=3\nserver 10.0.0.2:80\n"),
                health,
                "--algorithm",
                "v1");
        for (Path p : List.of(featured, memcached, wide, allDown, named, views, health)) {
            run("verify", p.toString()).assertOk();
        }
        assertEquals(1, header(featured).getShort(FORMAT_VERSION_OFFSET));
        assertEquals(2, header(allDown).getShort(FORMAT_VERSION_OFFSET));
        assertEquals(2, header(named).getShort(FORMAT_VERSION_OFFSET));
        assertEquals(3, header(views).getShort(FORMAT_VERSION_OFFSET));
        assertEquals(4, header(wide).getShort(FORMAT_VERSION_OFFSET));
        assertEquals(2, header(health).getShort(FORMAT_VERSION_OFFSET));
    }

    @AfterAll
    static void report() {
        System.out.println("FormatMessagesTest: checks whose quoted messages the CLI printed: " + covered);
    }

    // ---- on open: the header ----

    @Test
    void pathAndSize() throws IOException {
        open("1", dir, null);
        open("2", Files.write(dir.resolve("short.ring"), new byte[10]), null);
    }

    @Test
    void headerFields() throws IOException {
        open("3", forge(featured, "magic", b -> b.put(0, "NOTARING".getBytes())).raw(), null);
        open(
                "4",
                forge(featured, "version", b -> b.putShort(FORMAT_VERSION_OFFSET, (short) 5))
                        .raw(),
                "1 to 4");
        open(
                "5",
                forge(featured, "flags", b -> b.putShort(FLAGS_OFFSET, (short) 1))
                        .raw(),
                "1 to 4");
        open(
                "6",
                forge(featured, "hl", b -> b.putInt(HEADER_LENGTH_OFFSET, 129)).raw(),
                null);
        byte[] bytes = Files.readAllBytes(featured);
        open("7", Files.write(dir.resolve("cut.ring"), Arrays.copyOf(bytes, bytes.length - 1)), "(truncated?)");
        open("8", forge(featured, "bc", b -> b.putInt(BACKEND_COUNT_OFFSET, 0)).raw(), null);
        open(
                "9",
                forge(featured, "fc", b -> b.putShort(FEATURE_COUNT_OFFSET, (short) 17))
                        .raw(),
                null);
        open(
                "10",
                forge(featured, "vc", b -> b.putShort(VERSION_COUNT_OFFSET, (short) 0))
                        .raw(),
                null);
        open("11", forge(featured, "rc", b -> b.putInt(RING_COUNT_OFFSET, 3)).raw(), null);
        open("12", forge(featured, "sc", b -> b.putInt(SEGMENT_COUNT_OFFSET, 5)).raw(), null);
        open(
                "13",
                forge(featured, "btl", b -> b.putLong(BACKEND_TABLE_LENGTH_OFFSET, 1L << 40))
                        .raw(),
                null);
        open(
                "14",
                forge(featured, "bto", b -> b.putLong(BACKEND_TABLE_OFFSET_OFFSET, 129))
                        .raw(),
                null);
        long metadataEnd = header(featured).getLong(RING_INDEX_OFFSET_OFFSET)
                + header(featured).getLong(RING_INDEX_LENGTH_OFFSET);
        byte[] cut = Arrays.copyOf(bytes, (int) metadataEnd + 2);
        ByteBuffer.wrap(cut).order(ByteOrder.LITTLE_ENDIAN).putLong(FILE_LENGTH_OFFSET, cut.length);
        open("15", Files.write(dir.resolve("metadata-cut.ring"), cut), null);
        open(
                "16",
                forge(featured, "crc", b -> b.put(130, (byte) (b.get(130) ^ 1))).raw(),
                null);
    }

    // ---- on open: features and backends ----

    @Test
    void featuresAndBackends() throws IOException {
        open(
                "18",
                forge(featured, "fname", b -> b.put(featureAt(b) + FEATURE_NAME_OFFSET + 1, (byte) '!'))
                        .write(),
                null);
        open("17", forge(featured, "fname0", b -> b.put(featureAt(b), (byte) 0)).write(), "name length 0");
        open("17", withoutFeatureTable(featured), "runs past the end");
        open(
                "19",
                insertByte(featured, "feature-extra", FEATURE_TABLE_OFFSET_OFFSET + 8, RING_INDEX_OFFSET_OFFSET),
                null);
        open(
                "20",
                forge(featured, "bc5", b -> b.putInt(BACKEND_COUNT_OFFSET, 5)).write(),
                "cannot hold");
        open(
                "20",
                forge(featured, "bc3", b -> b.putInt(BACKEND_COUNT_OFFSET, 3)).write(),
                "runs past");
        open(
                "26",
                insertByte(
                        featured,
                        "backend-extra",
                        BACKEND_TABLE_LENGTH_OFFSET,
                        FEATURE_TABLE_OFFSET_OFFSET,
                        RING_INDEX_OFFSET_OFFSET),
                null);
        open(
                "21",
                forge(featured, "w0", b -> b.putInt(backend(b, 0) + BACKEND_WEIGHT_OFFSET, 0))
                        .write(),
                null);
        open("22", forge(allDown, "flag20", b -> orMask(b, 0, 1 << 20)).write(), "have bits");
        open(
                "22",
                forge(featured, "mask2", b -> b.putInt(backend(b, 1) + BACKEND_FEATURES_OFFSET, 2))
                        .write(),
                "beyond");
        open(
                "23",
                forge(featured, "len0", b -> b.putShort(backend(b, 0) + BACKEND_ADDRESS_LENGTH_OFFSET, (short) 0))
                        .write(),
                null);
        open("23a", forge(allDown, "health-past", b -> orMask(b, 1, 1 << 18)).write(), null);
        open(
                "23b",
                forge(health, "max-fails", b -> b.putInt(backend(b, 1) - 12, 0x8000_0000))
                        .write(),
                "max_fails");
        open(
                "24a",
                forge(named, "no-zero", b -> b.put(backend(b, 0) + BACKEND_ADDRESS_OFFSET + 14, (byte) 'x'))
                        .write(),
                null);
        open(
                "24",
                forge(featured, "bad-address", b -> b.put(backend(b, 0) + BACKEND_ADDRESS_OFFSET, (byte) 'x'))
                        .write(),
                null);
        open(
                "25",
                forge(featured, "duplicate", b -> b.put(backend(b, 1) + BACKEND_ADDRESS_OFFSET + 7, (byte) '1'))
                        .write(),
                null);
    }

    // ---- on open: the ring index ----

    @Test
    void ringIndex() throws IOException {
        open(
                "27",
                forge(featured, "mask", b -> b.putInt(entry(b, 1) + ENTRY_FEATURE_MASK_OFFSET, 0))
                        .write(),
                null);
        open(
                "28",
                forge(featured, "alg", b -> b.put(entry(b, 0) + ENTRY_ALGORITHM_OFFSET, (byte) 99))
                        .write(),
                null);
        open(
                "29",
                forge(featured, "reserved", b -> b.put(entry(b, 0) + ENTRY_STORAGE_OFFSET, (byte) 1))
                        .write(),
                "reserved");
        open(
                "29",
                forge(wide, "storage5", b -> b.put(entry(b, 0) + ENTRY_STORAGE_OFFSET, (byte) 5))
                        .write(),
                "unknown");
        open(
                "29",
                forge(wide, "no-ties", b -> b.put(entry(b, 1) + ENTRY_STORAGE_OFFSET, (byte) 1))
                        .write(),
                "depend on");
        open(
                "29",
                forge(memcached, "needs-v4", b -> b.put(entry(b, 0) + ENTRY_ALGORITHM_OFFSET, (byte) 13))
                        .write(),
                "needs format version 4");
        open(
                "29",
                forge(wide, "wide-ties", b -> b.put(entry(b, 0) + ENTRY_STORAGE_OFFSET, (byte) 1))
                        .write(),
                "64-bit ring");
        open(
                "29",
                forge(wide, "second", b -> b.putInt(entry(b, 0) + ENTRY_RING_POINTS_OFFSET, 0x8000_0000))
                        .write(),
                "second parameter");
        open(
                "30",
                forge(featured, "pm-max", b -> b.putInt(entry(b, 0) + ENTRY_POINT_MULTIPLE_OFFSET, -1))
                        .write(),
                "more than");
        open("30", forge(featured, "pm0", b -> pointMultiple(b, 2, 2, 0)).write(), "at least 1");
        open("30", forge(featured, "v1-8", b -> pointMultiple(b, 0, 2, 8)).write(), "v1 always");
        open("30", forge(memcached, "lm-3", b -> pointMultiple(b, 0, 1, 3)).write(), "libmemcached has 160");
        open(
                "30",
                forge(memcached, "spy-3", b -> {
                            b.put(entry(b, 0) + ENTRY_ALGORITHM_OFFSET, (byte) 7);
                            pointMultiple(b, 0, 1, 3);
                        })
                        .write(),
                "node repetitions");
        open(
                "30",
                forge(memcached, "twem-13", b -> {
                            b.put(entry(b, 0) + ENTRY_ALGORITHM_OFFSET, (byte) 6);
                            pointMultiple(b, 0, 1, 13);
                        })
                        .write(),
                "its hash");
        open(
                "30",
                forge(wide, "envoy-5-4", b -> {
                            pointMultiple(b, 0, 1, 5);
                            b.putInt(entry(b, 0) + ENTRY_RING_POINTS_OFFSET, 4);
                        })
                        .write(),
                "two parameters");
        open(
                "31",
                forge(featured, "repeat", b -> {
                            pointMultiple(b, 2, 2, 160);
                            b.put(entry(b, 2) + ENTRY_ALGORITHM_OFFSET, (byte) 1);
                            b.put(entry(b, 3) + ENTRY_ALGORITHM_OFFSET, (byte) 1);
                        })
                        .write(),
                "repeats");
        open(
                "31",
                forge(featured, "block", b -> {
                            b.put(entry(b, 1) + ENTRY_ALGORITHM_OFFSET, (byte) 2);
                            b.putInt(entry(b, 1) + ENTRY_POINT_MULTIPLE_OFFSET, 8);
                        })
                        .write(),
                "version block");
        open(
                "32",
                forge(featured, "pc", b -> b.putInt(entry(b, 0) + ENTRY_POINT_COUNT_OFFSET, 0x7FFF_FFFF))
                        .write(),
                null);
        open(
                "33",
                forge(featured, "len6", b -> addLong(b, entry(b, 0) + ENTRY_SEGMENT_LENGTH_OFFSET, 6))
                        .write(),
                "× 6)");
        open(
                "33",
                forge(wide, "len10", b -> addLong(b, entry(b, 0) + ENTRY_SEGMENT_LENGTH_OFFSET, 10))
                        .write(),
                "× 10)");
        open(
                "33",
                forge(views, "len-bits", b -> addLong(b, entry(b, 0) + ENTRY_SEGMENT_LENGTH_OFFSET, 8))
                        .write(),
                "features)");
        open(
                "33",
                forge(wide, "rp-points", b -> b.putInt(entry(b, 1) + ENTRY_RING_POINTS_OFFSET, 5))
                        .write(),
                "stored as its points");
        open(
                "33",
                forge(views, "rp-0", b -> b.putInt(entry(b, 0) + ENTRY_RING_POINTS_OFFSET, 0))
                        .write(),
                "is stored in");
        open(
                "33",
                forge(views, "view-0", b -> b.put(entry(b, 0) + ENTRY_STORAGE_OFFSET, (byte) 2))
                        .write(),
                "mask-0 ring, which");
        open(
                "33",
                forge(views, "view-offset", b -> addLong(b, entry(b, 1) + ENTRY_SEGMENT_OFFSET_OFFSET, 64))
                        .write(),
                "stored with ties");
        open(
                "34",
                forge(allDown, "empty-offset", b -> b.putLong(entry(b, 0) + ENTRY_SEGMENT_OFFSET_OFFSET, 64))
                        .write(),
                null);
        open(
                "34",
                forge(allDown, "empty-crc", b -> b.putInt(entry(b, 0) + ENTRY_SEGMENT_CRC_OFFSET, 1))
                        .write(),
                null);
        open(
                "35",
                forge(featured, "outside", b -> b.putLong(entry(b, 0) + ENTRY_SEGMENT_OFFSET_OFFSET, 200))
                        .write(),
                null);
        open(
                "36",
                forge(
                                featured,
                                "share",
                                b -> b.putLong(
                                        entry(b, 1) + ENTRY_SEGMENT_OFFSET_OFFSET,
                                        b.getLong(entry(b, 0) + ENTRY_SEGMENT_OFFSET_OFFSET)))
                        .write(),
                null);
        open(
                "37",
                forge(
                                featured,
                                "overlap",
                                b -> b.putLong(
                                        entry(b, 1) + ENTRY_SEGMENT_OFFSET_OFFSET,
                                        b.getLong(entry(b, 0) + ENTRY_SEGMENT_OFFSET_OFFSET) + 6))
                        .write(),
                null);
        open("38", forge(featured, "tail", null).extend(7), "last segment");
        open("38", forge(allDown, "tail-empty", null).extend(7), "metadata checksum");
        open(
                "39",
                forge(featured, "segments", b -> b.putInt(SEGMENT_COUNT_OFFSET, 3))
                        .write(),
                null);
        open(
                "40",
                forge(featured, "heavy", b -> b.putInt(backend(b, 0) + BACKEND_WEIGHT_OFFSET, Integer.MAX_VALUE))
                        .write(),
                null);
        open(
                "41",
                forge(featured, "no-member", b -> b.putInt(backend(b, 0) + BACKEND_FEATURES_OFFSET, 0))
                        .write(),
                null);
    }

    // ---- verify ----

    @Test
    void verifyChecks() throws IOException {
        verify("1", forge(featured, "seg-crc", b -> flipPoint(b, 0)).raw(), null);
        verify(
                "2",
                forge(featured, "order", b -> b.putInt(point(b, 0, 1) + POINT_HASH_OFFSET, b.getInt(point(b, 0, 0))))
                        .write(),
                null);
        verify(
                "3",
                forge(featured, "backend7", b -> b.putShort(point(b, 0, 0) + POINT_BACKEND_OFFSET, (short) 7))
                        .write(),
                null);
        verify(
                "4",
                forge(featured, "other-version", b -> {
                            for (int field : new int[] {
                                ENTRY_POINT_COUNT_OFFSET, ENTRY_SEGMENT_OFFSET_OFFSET, ENTRY_SEGMENT_LENGTH_OFFSET
                            }) {
                                int width = field == ENTRY_POINT_COUNT_OFFSET ? 4 : 8;
                                for (int k = 0; k < width; k++) {
                                    b.put(entry(b, 2) + field + k, b.get(entry(b, 0) + field + k));
                                }
                            }
                            b.putInt(SEGMENT_COUNT_OFFSET, 3);
                        })
                        .write(),
                null);
        verify(
                "5",
                forge(featured, "non-member", b -> b.putShort(point(b, 1, 0) + POINT_BACKEND_OFFSET, (short) 1))
                        .write(),
                null);
        verify(
                "6",
                forge(memcached, "spy", b -> b.put(entry(b, 0) + ENTRY_ALGORITHM_OFFSET, (byte) 5))
                        .write(),
                null);
        verify(
                "7",
                forge(allDown, "up", b -> {
                            orMask(b, 0, 0);
                            b.putInt(backend(b, 0) + BACKEND_FEATURES_OFFSET, 0);
                            b.putInt(backend(b, 1) + BACKEND_FEATURES_OFFSET, 0);
                        })
                        .write(),
                "has no points");
        verify(
                "9",
                forge(views, "tie-order", b -> {
                            b.putInt(point(b, 0, 1) + POINT_HASH_OFFSET, b.getInt(point(b, 0, 0) + POINT_HASH_OFFSET));
                            b.putShort(
                                    point(b, 0, 1) + POINT_BACKEND_OFFSET,
                                    b.getShort(point(b, 0, 0) + POINT_BACKEND_OFFSET));
                        })
                        .write(),
                "tie order");
        verify(
                "9",
                forge(views, "distinct", b -> addInt(b, entry(b, 0) + ENTRY_RING_POINTS_OFFSET, -1))
                        .write(),
                "distinct hashes, the ring index");
        verify(
                "10",
                forge(views, "view-points", b -> addInt(b, entry(b, 1) + ENTRY_RING_POINTS_OFFSET, -1))
                        .write(),
                null);
        verify("11", forge(featured, "v2-16", b -> pointMultiple(b, 2, 2, 16)).write(), "is not in the ring");
        verify("11", forge(featured, "v2-4", b -> pointMultiple(b, 2, 2, 4)).write(), "more than the");
        verify(
                "12",
                forge(views, "bits", b -> {
                            int at = (int) b.getLong(entry(b, 0) + ENTRY_SEGMENT_OFFSET_OFFSET)
                                    + b.getInt(entry(b, 0) + ENTRY_POINT_COUNT_OFFSET) * POINT_LENGTH;
                            b.put(at, (byte) (b.get(at) ^ 1));
                        })
                        .write(),
                null);
    }

    // ---- the checks ----

    private static void open(String check, Path file, String mustContain) {
        expect("on open", openChecks, check, file, mustContain);
    }

    private static void verify(String check, Path file, String mustContain) {
        expect("verify", verifyChecks, check, file, mustContain);
    }

    /**
     * Runs {@code ringstore verify FILE}; its message must match a text quoted by the check's item in
     * FORMAT.md (and contain {@code mustContain}, to tell which of an item's messages was meant).
     */
    private static void expect(String list, Map<String, String> checks, String check, Path file, String mustContain) {
        String item = checks.get(check);
        assertNotNull(item, () -> "FORMAT.md lists no check " + check + " " + list);
        CliRun r = run("verify", file.toString());
        String line = r.assertError(Main.FAILED, "verify");
        String prefix = file + ": ";
        assertTrue(line.startsWith(prefix), () -> "message names the file: " + line);
        String message = line.substring(prefix.length()).replaceFirst("^at byte -?\\d+: ", "");
        if (mustContain != null) {
            assertTrue(
                    message.contains(mustContain),
                    () -> "check " + check + " " + list + ": '" + mustContain + "' expected in the message, got: "
                            + message);
        }
        List<String> quotes = quotes(item);
        assertTrue(
                quotes.stream().anyMatch(q -> template(q).matcher(message).matches()),
                () -> "check " + check + " " + list + ": the CLI says\n  " + message
                        + "\nwhich no text FORMAT.md quotes for it matches:\n  " + item);
        covered.add((list.equals("verify") ? "verify " : "") + check);
    }

    /** Every text between two of the item's double quotes (any two: a message may quote a value). */
    private static List<String> quotes(String item) {
        List<Integer> at = new ArrayList<>();
        for (int i = item.indexOf('"'); i >= 0; i = item.indexOf('"', i + 1)) {
            at.add(i);
        }
        List<String> out = new ArrayList<>();
        for (int a = 0; a < at.size(); a++) {
            for (int b = a + 1; b < at.size(); b++) {
                out.add(item.substring(at.get(a) + 1, at.get(b)));
            }
        }
        return out;
    }

    /** A quoted message as a pattern: its placeholders match any text, the rest itself. */
    private static Pattern template(String quoted) {
        StringBuilder regex = new StringBuilder();
        Matcher m = PLACEHOLDER.matcher(quoted);
        int last = 0;
        while (m.find()) {
            regex.append(Pattern.quote(quoted.substring(last, m.start())));
            regex.append(
                    switch (m.group()) {
                        case "…" -> ".*";
                        case "0x…" -> "0x[0-9a-f]+";
                        default -> ".+?";
                    });
            last = m.end();
        }
        regex.append(Pattern.quote(quoted.substring(last)));
        return Pattern.compile(regex.toString(), Pattern.DOTALL);
    }

    /** The numbered items of a list, each item's lines joined by one space. */
    private static Map<String, String> items(List<String> lines) {
        Map<String, String> items = new LinkedHashMap<>();
        String key = null;
        StringBuilder text = new StringBuilder();
        for (String raw : lines) {
            String line = raw.strip();
            Matcher m = ITEM.matcher(line);
            if (m.matches() || line.isEmpty()) {
                if (key != null) {
                    items.put(key, text.toString());
                }
                key = m.matches() ? m.group(1) : null;
                text.setLength(0);
                if (key != null) {
                    text.append(m.group(2));
                }
            } else if (key != null) {
                text.append(' ').append(line);
            }
        }
        if (key != null) {
            items.put(key, text.toString());
        }
        return items;
    }

    private static int byNumber(String a, String b) {
        boolean va = a.startsWith("verify ");
        boolean vb = b.startsWith("verify ");
        if (va != vb) {
            return va ? 1 : -1;
        }
        String x = a.replace("verify ", "");
        String y = b.replace("verify ", "");
        int nx = Integer.parseInt(x.replaceAll("[a-z]", ""));
        int ny = Integer.parseInt(y.replaceAll("[a-z]", ""));
        return nx != ny ? Integer.compare(nx, ny) : x.compareTo(y);
    }

    // ---- forging ----

    private static ByteBuffer header(Path file) throws IOException {
        return ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
    }

    private static Forged forge(Path base, String name, Consumer<ByteBuffer> edit) throws IOException {
        byte[] bytes = Files.readAllBytes(base);
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        if (edit != null) {
            edit.accept(b);
        }
        return new Forged(bytes, b, dir.resolve(name + ".ring"));
    }

    /** A forged file's bytes, written as they are or with its checksums made to match. */
    private record Forged(byte[] bytes, ByteBuffer b, Path target) {
        /** Writes the bytes as edited: checksums not recomputed. */
        Path raw() throws IOException {
            return Files.write(target, bytes);
        }

        /** Writes the bytes with every non-empty ring's segment CRC, then the metadata CRC, recomputed. */
        Path write() throws IOException {
            int index = (int) b.getLong(RING_INDEX_OFFSET_OFFSET);
            int rings = b.getInt(RING_COUNT_OFFSET);
            for (int r = 0; r < rings && index + (r + 1) * ENTRY_LENGTH <= bytes.length; r++) {
                int e = index + r * ENTRY_LENGTH;
                long offset = b.getLong(e + ENTRY_SEGMENT_OFFSET_OFFSET);
                long length = b.getLong(e + ENTRY_SEGMENT_LENGTH_OFFSET);
                if (offset > 0 && length > 0 && offset + length <= bytes.length) {
                    CRC32C crc = new CRC32C();
                    crc.update(bytes, (int) offset, (int) length);
                    b.putInt(e + ENTRY_SEGMENT_CRC_OFFSET, (int) crc.getValue());
                }
            }
            return metadataCrc();
        }

        /** Appends {@code extra} zero bytes, with fileLength and the metadata CRC made to match. */
        Path extend(int extra) throws IOException {
            byte[] longer = Arrays.copyOf(bytes, bytes.length + extra);
            ByteBuffer l = ByteBuffer.wrap(longer).order(ByteOrder.LITTLE_ENDIAN);
            l.putLong(FILE_LENGTH_OFFSET, longer.length);
            return new Forged(longer, l, target).metadataCrc();
        }

        private Path metadataCrc() throws IOException {
            int end = (int) (b.getLong(RING_INDEX_OFFSET_OFFSET) + b.getLong(RING_INDEX_LENGTH_OFFSET));
            CRC32C crc = new CRC32C();
            crc.update(bytes, 0, end);
            b.putInt(end, (int) crc.getValue());
            return Files.write(target, bytes);
        }
    }

    /**
     * {@code base} with one zero byte more at the end of the table whose header length field is
     * {@code lengthField} (the fields in {@code shifted} moved on by one), and one byte of the padding
     * before the first segment fewer, so that every segment stays where it was.
     */
    private static Path insertByte(Path base, String name, int lengthField, int... shifted) throws IOException {
        byte[] src = Files.readAllBytes(base);
        ByteBuffer s = ByteBuffer.wrap(src).order(ByteOrder.LITTLE_ENDIAN);
        int tableEnd = lengthField == BACKEND_TABLE_LENGTH_OFFSET
                ? (int) (s.getLong(BACKEND_TABLE_OFFSET_OFFSET) + s.getLong(BACKEND_TABLE_LENGTH_OFFSET))
                : (int) s.getLong(RING_INDEX_OFFSET_OFFSET);
        int padding = (int) (s.getLong(RING_INDEX_OFFSET_OFFSET) + s.getLong(RING_INDEX_LENGTH_OFFSET)) + 4;
        assertEquals(0, src[padding], "a padding byte after the metadata checksum");
        byte[] out = new byte[src.length];
        System.arraycopy(src, 0, out, 0, tableEnd);
        System.arraycopy(src, tableEnd, out, tableEnd + 1, padding - tableEnd);
        System.arraycopy(src, padding + 1, out, padding + 1, src.length - padding - 1);
        ByteBuffer b = ByteBuffer.wrap(out).order(ByteOrder.LITTLE_ENDIAN);
        addLong(b, lengthField, 1);
        for (int field : shifted) {
            addLong(b, field, 1);
        }
        return new Forged(out, b, dir.resolve(name + ".ring")).metadataCrc();
    }

    /**
     * {@code base} without its feature table's bytes (featureCount kept, featureTableLength 0), the
     * padding before the first segment as many bytes longer, so that every segment stays where it was.
     */
    private static Path withoutFeatureTable(Path base) throws IOException {
        byte[] src = Files.readAllBytes(base);
        ByteBuffer s = ByteBuffer.wrap(src).order(ByteOrder.LITTLE_ENDIAN);
        int at = (int) s.getLong(FEATURE_TABLE_OFFSET_OFFSET);
        int length = (int) s.getLong(FEATURE_TABLE_OFFSET_OFFSET + 8);
        int padding = (int) (s.getLong(RING_INDEX_OFFSET_OFFSET) + s.getLong(RING_INDEX_LENGTH_OFFSET)) + 4;
        byte[] out = new byte[src.length];
        System.arraycopy(src, 0, out, 0, at);
        System.arraycopy(src, at + length, out, at, padding - at - length);
        System.arraycopy(src, padding, out, padding, src.length - padding);
        ByteBuffer b = ByteBuffer.wrap(out).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(FEATURE_TABLE_OFFSET_OFFSET + 8, 0);
        addLong(b, RING_INDEX_OFFSET_OFFSET, -length);
        return new Forged(out, b, dir.resolve("no-features.ring")).metadataCrc();
    }

    /** Where backend {@code index}'s record starts (no backend before it has flag health). */
    private static int backend(ByteBuffer b, int index) {
        int p = (int) b.getLong(BACKEND_TABLE_OFFSET_OFFSET);
        for (int i = 0; i < index; i++) {
            int health = (b.getInt(p + BACKEND_FEATURES_OFFSET) & (1 << 18)) != 0 ? 12 : 0;
            p += BACKEND_FIXED_LENGTH + Short.toUnsignedInt(b.getShort(p + BACKEND_ADDRESS_LENGTH_OFFSET)) + health;
        }
        return p;
    }

    /** ORs {@code bits} into backend {@code index}'s feature-and-flag word; 0 clears its flag down. */
    private static void orMask(ByteBuffer b, int index, int bits) {
        int at = backend(b, index) + BACKEND_FEATURES_OFFSET;
        b.putInt(at, bits == 0 ? b.getInt(at) & ~(1 << 16) : b.getInt(at) | bits);
    }

    private static int featureAt(ByteBuffer b) {
        return (int) b.getLong(FEATURE_TABLE_OFFSET_OFFSET);
    }

    private static int entry(ByteBuffer b, int ring) {
        return (int) b.getLong(RING_INDEX_OFFSET_OFFSET) + ring * ENTRY_LENGTH;
    }

    private static int point(ByteBuffer b, int ring, int point) {
        return (int) b.getLong(entry(b, ring) + ENTRY_SEGMENT_OFFSET_OFFSET) + point * POINT_LENGTH;
    }

    private static void flipPoint(ByteBuffer b, int ring) {
        int at = point(b, ring, 0) + POINT_HASH_OFFSET;
        b.put(at, (byte) (b.get(at) ^ 1));
    }

    /** Sets the point multiple of {@code count} entries from {@code first}. */
    private static void pointMultiple(ByteBuffer b, int first, int count, int value) {
        for (int r = first; r < first + count; r++) {
            b.putInt(entry(b, r) + ENTRY_POINT_MULTIPLE_OFFSET, value);
        }
    }

    private static void addLong(ByteBuffer b, int at, long delta) {
        b.putLong(at, b.getLong(at) + delta);
    }

    private static void addInt(ByteBuffer b, int at, int delta) {
        b.putInt(at, b.getInt(at) + delta);
    }

    @Test
    void everyQuotedCheckHasQuotes() {
        // A check whose item quotes nothing could not be read back: every check on open quotes its message.
        for (Map.Entry<String, String> e : openChecks.entrySet()) {
            assertFalse(quotes(e.getValue()).isEmpty(), () -> "check " + e.getKey() + " quotes no message");
        }
        assertNotEquals(0, verifyChecks.size());
    }
}
