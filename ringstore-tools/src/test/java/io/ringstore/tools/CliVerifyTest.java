package io.ringstore.tools;

import static io.ringstore.tools.CliRun.backends;
import static io.ringstore.tools.CliRun.build;
import static io.ringstore.tools.CliRun.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.Ring;
import io.ringstore.RingStore;
import io.ringstore.internal.format.RingFileDescriptor;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CliVerifyTest {
    private static final Pattern AT_BYTE = Pattern.compile("at byte (\\d+)");

    @TempDir
    static Path dir;

    private static Path good;
    private static byte[] goodBytes;
    /** [offset, end) of each distinct non-empty segment. */
    private static final List<long[]> segments = new ArrayList<>();
    /** End of the metadata CRC: every byte before it is covered by that checksum. */
    private static long metadataEnd;

    @BeforeAll
    static void buildFile() throws Exception {
        good = dir.resolve("good.ring");
        build(
                backends(dir, "fleet.conf", CliFleet.text(CliFleet.FEATURED)),
                good,
                "--algorithm",
                "v1,v2",
                "--point-multiple",
                "8");
        goodBytes = Files.readAllBytes(good);
        try (RingStore store = RingStore.open(good)) {
            for (Ring r : store.rings()) {
                long[] seg = {
                    store.layout().segmentOf(r).offset(),
                    store.layout().segmentOf(r).offset() + 6L * r.pointCount()
                };
                if (!r.isEmpty() && segments.stream().noneMatch(s -> s[0] == seg[0])) {
                    segments.add(seg);
                }
            }
        }
        ByteBuffer header = ByteBuffer.wrap(goodBytes).order(ByteOrder.LITTLE_ENDIAN);
        metadataEnd = header.getLong(RingFileDescriptor.RING_INDEX_OFFSET_OFFSET)
                + header.getLong(RingFileDescriptor.RING_INDEX_LENGTH_OFFSET)
                + RingFileDescriptor.METADATA_CRC_LENGTH;
    }

    @Test
    void aGoodFilePasses() {
        CliRun r = run("verify", good.toString()).assertOk();
        assertTrue(r.out().startsWith("ok"), r.out());
        assertEquals(1, r.outLines().size(), r.out());
        assertEquals("", r.stderr());
    }

    /** A v2:8 ring relabelled v2:160 or v2:4 (pointMultiple changed, the points left): refused, naming the entry's pointMultiple field. */
    @Test
    void aRelabelledPointMultipleIsRefused() throws Exception {
        Path more = RingPatch.of(good).pointMultiple(1, 160).write(dir.resolve("relabelled-160.ring"));
        String line = run("verify", more.toString()).assertError(Main.FAILED, "verify");
        assertTrue(
                line.contains("points in the segment")
                        && line.contains("v2:160 gives it")
                        && line.contains("is not in the ring")
                        && line.contains("pointMultiple changed"),
                line);
        Path fewer = RingPatch.of(good).pointMultiple(1, 4).write(dir.resolve("relabelled-4.ring"));
        line = run("verify", fewer.toString()).assertError(Main.FAILED, "verify");
        assertTrue(line.contains("more than the") && line.contains("v2:4 gives it"), line);
    }

    /** The generation is a u64: 2^63 and above print as the unsigned numbers they are, never negative. */
    @Test
    void aGenerationOf2To63OrMoreIsPrintedUnsigned() throws Exception {
        Path high = RingPatch.of(good).generation(-2L).write(dir.resolve("high-generation.ring"));
        String max = "18446744073709551614";
        assertTrue(run("verify", high.toString()).assertOk().out().contains(" generation " + max + ","));
        assertTrue(run("dump", high.toString()).assertOk().outLines().contains("generation: " + max));
        assertTrue(run("dump", high.toString(), "--json").assertOk().out().contains("\"generation\":" + max + ","));
        assertTrue(CliRun.runWithInput("/k\n", "lookup", high.toString(), "--watch", "--show-generation")
                .assertOk()
                .out()
                .endsWith("\t" + max + "\n"));
    }

    /** A stored point multiple of 2^32 - 1 is refused as what it is, not read as v2:2147483647. */
    @Test
    void aPointMultipleAboveTheIntRangeIsRefusedAsWritten() throws Exception {
        Path bad = RingPatch.of(good).pointMultiple(1, -1).write(dir.resolve("huge-multiple.ring"));
        String line = run("verify", bad.toString()).assertError(Main.FAILED, "verify");
        assertTrue(line.contains("point multiple 4294967295 is more than 2147483647"), line);
    }

    @Test
    void ringPointsCountEachSharedSegmentOnceAsBuildDoes() throws Exception {
        Path shared = dir.resolve("shared.ring");
        CliRun built = build(backends(dir, "shared.conf", CliFleet.text(CliFleet.FEATURED)), shared)
                .assertOk();
        Matcher b = Pattern.compile("(?m)^points: (\\d+) ").matcher(built.out());
        assertTrue(b.find(), built.out());
        CliRun verified = run("verify", shared.toString()).assertOk();
        Matcher v = Pattern.compile("(\\d+) ring points").matcher(verified.out());
        assertTrue(v.find(), verified.out());
        assertEquals(b.group(1), v.group(1), "verify and build count the file's points alike: " + verified.out());
        try (RingStore store = RingStore.open(shared)) {
            assertTrue(
                    store.segmentCount()
                            < store.rings().stream().filter(r -> !r.isEmpty()).count(),
                    "the fixture shares segments");
        }
    }

    @Test
    void aFlippedByteInASegmentIsReportedWithItsByteOffset() throws Exception {
        Path bad = dir.resolve("flipped.ring");
        for (long[] seg : segments) {
            for (long at : new long[] {seg[0], seg[0] + 4, (seg[0] + seg[1]) / 2, seg[1] - 1}) {
                byte[] bytes = goodBytes.clone();
                bytes[(int) at] ^= 0x10;
                Files.write(bad, bytes);
                String error = run("verify", bad.toString()).assertError(Main.FAILED, "verify");
                assertTrue(error.contains(bad.toString()), error);
                long reported = reportedOffset(error);
                assertTrue(
                        reported >= seg[0] && reported <= at,
                        () -> "byte " + at + " flipped in the segment at " + seg[0] + "; reported: " + error);
            }
        }
    }

    /**
     * Every byte of the metadata and of every segment is covered by a checksum: flipping any one of them
     * must fail verify. Other bytes are alignment padding; flipping those may pass. Either way: exit 0
     * or 1, one line, no stack trace.
     */
    @Tag("slow") // an exhaustive sweep of several seconds: the full lane runs it
    @Test
    void everySingleByteFlipOfMetadataAndPointsFails() throws Exception {
        Path bad = dir.resolve("sweep.ring");
        Files.write(bad, goodBytes);
        try (FileChannel ch = FileChannel.open(bad, StandardOpenOption.WRITE)) {
            for (long at = 0; at < goodBytes.length; at += step(at)) {
                write(ch, at, (byte) (goodBytes[(int) at] ^ 0x01));
                CliRun r = run("verify", bad.toString());
                write(ch, at, goodBytes[(int) at]);
                boolean covered = at < metadataEnd || inSegment(at);
                if (covered || r.exit() != Main.OK) {
                    long flipped = at;
                    String error = r.assertError(Main.FAILED, "verify");
                    // the offset itself: a metadata flip is reported inside the metadata (the field that is wrong,
                    // one that disagrees with it, or the metadata CRC); a point flip inside its segment, at or
                    // before the flipped byte; a failing padding byte somewhere in the file
                    long reported = reportedOffset(error);
                    long[] seg = segments.stream()
                            .filter(s -> flipped >= s[0] && flipped < s[1])
                            .findFirst()
                            .orElse(null);
                    long from = at < metadataEnd ? 0 : seg != null ? seg[0] : 0;
                    long to = at < metadataEnd ? metadataEnd - 1 : seg != null ? at : goodBytes.length - 1;
                    assertTrue(
                            reported >= from && reported <= to,
                            () -> "byte " + flipped + " flipped, expected a byte in [" + from + ", " + to + "]: "
                                    + error);
                }
            }
        }
    }

    @Test
    void truncatedFilesFail() throws Exception {
        Path bad = dir.resolve("truncated.ring");
        for (int length :
                new int[] {0, 1, 8, 127, 128, 129, (int) metadataEnd, goodBytes.length / 2, goodBytes.length - 1}) {
            Files.write(bad, Arrays.copyOf(goodBytes, length));
            String error = run("verify", bad.toString()).assertError(Main.FAILED, "verify");
            assertTrue(error.contains(bad.toString()), () -> length + " bytes: " + error);
        }
        byte[] longer = Arrays.copyOf(goodBytes, goodBytes.length + 1);
        Files.write(bad, longer);
        run("verify", bad.toString()).assertError(Main.FAILED, "verify");
    }

    @Test
    void filesThatAreNotRingFilesFail() throws Exception {
        Path text = Files.writeString(
                dir.resolve("fleet.txt"), CliFleet.text(CliFleet.FEATURED).repeat(40));
        String error = run("verify", text.toString()).assertError(Main.FAILED, "verify");
        assertTrue(error.contains(text.toString()), error);
        Path zeros = Files.write(dir.resolve("zeros.ring"), new byte[goodBytes.length]);
        run("verify", zeros.toString()).assertError(Main.FAILED, "verify");
        Path shortText = Files.writeString(dir.resolve("short.txt"), "hello\n");
        run("verify", shortText.toString()).assertError(Main.FAILED, "verify");
        run("verify", dir.resolve("missing.ring").toString()).assertError(Main.FAILED, "verify");
        run("verify", dir.toString()).assertError(Main.FAILED, "verify");
    }

    /**
     * A file whose metadata checksum matches but whose backend address holds a line break (a buggy or
     * hostile writer) must still be reported in one line. Today RingStore's parser quotes the raw address
     * in its message (RingStore.Parser.parseBackends via ServerAddress.parse), so the error spans two lines;
     * feature names are already escaped with printable().
     */
    @Test
    void aControlCharacterInAnAddressStillGivesOneLine() throws Exception {
        byte[] bytes = goodBytes.clone();
        String text = new String(bytes, StandardCharsets.ISO_8859_1);
        int at = text.indexOf("127.0.0.1:8080");
        assertTrue(at > 0 && at < metadataEnd, "fixture: the first backend's address in the backend table");
        bytes[at + "127.0.0.1".length()] = '\n';
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        int crcAt = (int) metadataEnd - RingFileDescriptor.METADATA_CRC_LENGTH;
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, crcAt);
        b.putInt(crcAt, (int) crc.getValue());
        Path bad = Files.write(dir.resolve("newline.ring"), bytes);
        run("verify", bad.toString()).assertError(Main.FAILED, "verify");
        run("dump", bad.toString()).assertError(Main.FAILED, "dump");
        run("lookup", bad.toString(), "/a").assertError(Main.FAILED, "lookup");
    }

    @Test
    void wrongArguments() {
        run("verify").assertError(Main.USAGE, "verify");
        run("verify", good.toString(), good.toString()).assertError(Main.USAGE, "verify");
        run("verify", good.toString(), "--deep").assertError(Main.USAGE, "verify");
    }

    /** Every byte of the metadata and the segments' edges; a stride inside segments and padding keeps the sweep fast. */
    private static long step(long at) {
        if (at < metadataEnd) {
            return 1;
        }
        for (long[] seg : segments) {
            if (at >= seg[0] - 8 && at < seg[0] + 8 || at >= seg[1] - 8 && at < seg[1] + 8) {
                return 1;
            }
        }
        return 7;
    }

    private static boolean inSegment(long at) {
        return segments.stream().anyMatch(s -> at >= s[0] && at < s[1]);
    }

    private static long reportedOffset(String error) {
        Matcher m = AT_BYTE.matcher(error);
        assertTrue(m.find(), () -> "no 'at byte N' in: " + error);
        return Long.parseLong(m.group(1));
    }

    private static void write(FileChannel ch, long at, byte b) throws IOException {
        ch.write(ByteBuffer.wrap(new byte[] {b}), at);
    }
}
