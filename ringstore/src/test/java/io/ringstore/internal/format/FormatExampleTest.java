package io.ringstore.internal.format;

import static io.ringstore.internal.format.RingFileDescriptor.*;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.Ring;
import io.ringstore.RingFileLayout;
import io.ringstore.RingStore;
import io.ringstore.builder.BackendList;
import io.ringstore.builder.RingBuilder;
import io.ringstore.family.Families;
import io.ringstore.family.RingVersion;
import io.ringstore.internal.BackendRecord;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The annotated example of FORMAT.md, kept as {@code golden/example.ring} (built from
 * {@code golden/example.conf} as FORMAT.md says): the writer reproduces it byte for byte, FORMAT.md's
 * hexdump shows exactly its bytes, and the reader and {@link RingFileLayout} find every field the
 * annotations name.
 */
class FormatExampleTest {
    private static final Path GOLDEN = Path.of("src/test/resources/golden");
    private static final Path FORMAT_MD =
            Path.of(System.getProperty("ringstore.repo", "..")).resolve("FORMAT.md");

    private static byte[] golden() throws Exception {
        return Files.readAllBytes(GOLDEN.resolve("example.ring"));
    }

    @Test
    void theWriterProducesTheExampleByteForByte(@TempDir Path dir) throws Exception {
        Path built = dir.resolve("tiny.ring");
        RingBuilder.of(BackendList.parse(GOLDEN.resolve("example.conf")))
                .version(RingVersion.v2(1))
                .generation(1)
                .build(built);
        assertArrayEquals(golden(), Files.readAllBytes(built));
    }

    /**
     * Each hexdump line of FORMAT.md's example: its offset, then the bytes it shows (hex groups and
     * quoted ASCII); {@code ...} elides bytes up to the hex groups after it, which end where the next
     * line starts. Lines without {@code ...} must show every byte up to the next line.
     */
    @Test
    void formatMdShowsTheExampleBytes() throws Exception {
        byte[] file = golden();
        String md = Files.readString(FORMAT_MD);
        String example = md.substring(md.indexOf("## Annotated example"));
        assertTrue(example.contains("gives a\n" + file.length + "-byte file"), "FORMAT.md states the example's size");
        Pattern line = Pattern.compile("^([0-9a-f]{8}): (.*)$", Pattern.MULTILINE);
        Pattern token = Pattern.compile("\\G *(\"[^\"]*\"|\\.\\.\\.|[0-9a-f]{2,}(?= |$))");
        List<long[]> starts = new ArrayList<>();
        List<List<byte[]>> shown = new ArrayList<>();
        Matcher m = line.matcher(example);
        while (m.find()) {
            String data = m.group(2);
            List<byte[]> parts = new ArrayList<>(List.of(new byte[0], new byte[0])); // before and after "..."
            boolean elided = false;
            Matcher t = token.matcher(data);
            while (t.find()) {
                String tok = t.group(1);
                if (tok.equals("...")) {
                    elided = true;
                    continue;
                }
                byte[] b = tok.startsWith("\"")
                        ? tok.substring(1, tok.length() - 1).getBytes(StandardCharsets.US_ASCII)
                        : HexFormat.of().parseHex(tok);
                int i = elided ? 1 : 0;
                byte[] joined = new byte[parts.get(i).length + b.length];
                System.arraycopy(parts.get(i), 0, joined, 0, parts.get(i).length);
                System.arraycopy(b, 0, joined, parts.get(i).length, b.length);
                parts.set(i, joined);
            }
            starts.add(new long[] {Long.parseLong(m.group(1), 16), elided ? 1 : 0});
            shown.add(parts);
        }
        assertEquals(0, starts.getFirst()[0]);
        for (int l = 0; l < starts.size(); l++) {
            int start = (int) starts.get(l)[0];
            int end = l + 1 < starts.size() ? (int) starts.get(l + 1)[0] : file.length;
            byte[] head = shown.get(l).get(0);
            byte[] tail = shown.get(l).get(1);
            String where = String.format("FORMAT.md line at %08x", start);
            if (starts.get(l)[1] == 0) {
                assertEquals(end - start, head.length, where + " shows every byte up to the next line");
            }
            assertArrayEquals(java.util.Arrays.copyOfRange(file, start, start + head.length), head, where);
            assertArrayEquals(java.util.Arrays.copyOfRange(file, end - tail.length, end), tail, where + " (after ...)");
        }
    }

    @Test
    void theReaderFindsEveryAnnotatedField() throws Exception {
        byte[] file = golden();
        ParsedRingFile p = RingFileReader.read(GOLDEN.resolve("example.ring"), MemorySegment.ofArray(file));
        assertEquals(1, p.formatVersion());
        assertEquals(128, p.headerLength());
        assertEquals(1, p.generation());
        assertEquals("4fb923a7", HexFormat.of().formatHex(p.inputDigest(), 0, 4));
        assertEquals("e1597482", HexFormat.of().formatHex(p.inputDigest(), 28, 32));
        assertEquals(
                List.of("127.0.0.1:8080", "[::1]:8081"),
                p.backends().stream().map(b -> b.address().text()).toList());
        assertEquals(
                List.of(1L, 2L),
                p.backends().stream().map(BackendRecord::weight).toList());
        assertEquals(
                List.of(1, 0),
                p.backends().stream().map(BackendRecord::featureMask).toList()); // eu; none
        assertEquals(List.of("eu"), p.features());
        assertEquals(List.of(RingVersion.v2(1)), p.versions());
        assertEquals(0xff, p.metadataLength());
        assertEquals(0x0d79d590, p.metadataCrc());
        assertEquals(
                List.of(
                        new ParsedRingFile.Entry(0, RingVersion.v2(1), 320, 18, 3, 0xd14d468e),
                        new ParsedRingFile.Entry(1, RingVersion.v2(1), 384, 6, 1, 0x73791b8c)),
                p.entries());
        assertEquals(2, p.segmentCount());
        assertEquals(Families.PINGORA, p.versions().getFirst().family());
        assertEquals(2, p.versions().getFirst().family().code());
        // The descriptor's offsets land on the annotated values.
        MemorySegment f = MemorySegment.ofArray(file);
        assertEquals(390, f.get(U64, FILE_LENGTH_OFFSET));
        assertEquals(175, f.get(U64, RING_INDEX_OFFSET_OFFSET));
        assertEquals(14, f.get(U16, HEADER_LENGTH + BACKEND_ADDRESS_LENGTH_OFFSET));
        assertEquals(2, f.get(U8, 172 + FEATURE_NAME_LENGTH_OFFSET));
    }

    @Test
    void theLayoutDescribesTheExample(@TempDir Path dir) throws Exception {
        Path copy = Files.write(dir.resolve("tiny.ring"), golden());
        try (RingStore store = RingStore.open(copy)) {
            store.verify();
            RingFileLayout layout = store.layout();
            assertEquals(1, layout.formatVersion());
            assertEquals(128, layout.headerLength());
            assertEquals(0xff, layout.metadataLength());
            assertEquals(0x0d79d590, layout.metadataCrc());
            assertEquals(
                    List.of(
                            new RingFileLayout.Segment(320, 18, 3, 0xd14d468e),
                            new RingFileLayout.Segment(384, 6, 1, 0x73791b8c)),
                    layout.segments());
            Ring all = store.ring(Set.of());
            Ring eu = store.ring(Set.of("eu"));
            assertEquals(0, layout.segmentIndex(all));
            assertEquals(1, layout.segmentIndex(eu));
            assertEquals(384, layout.segmentOf(eu).offset());
            assertEquals(4, layout.distinctPointCount());
            assertEquals(
                    List.of(1109138424L, 1841993031L, 1863849152L),
                    List.of(all.pointHash(0), all.pointHash(1), all.pointHash(2)));
            assertEquals(List.of(1, 0, 1), List.of(all.pointBackend(0), all.pointBackend(1), all.pointBackend(2)));
            assertEquals(1841993031L, eu.pointHash(0));
            assertEquals(0, eu.pointBackend(0));
        }
    }
}
