package io.ringstore.builder;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.Backend;
import io.ringstore.Ring;
import io.ringstore.RingStore;
import io.ringstore.family.KeyHash;
import io.ringstore.family.RingVersion;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link LibketamaServers}: libketama's own server files (configs/README.md), its test's one-million-key MD5
 * over a ring built from the file as parsed, and every refusal with its exact message and line.
 */
class LibketamaServersTest {
    /** RJ/ketama's ketama.servers and ketama.two.servers, byte for byte (configs/README.md). */
    static final Path CONF = Path.of("src/test/resources/configs/libketama");

    private static final RingVersion LIBKETAMA = RingVersion.parse("libketama");

    private static BackendList parse(String text) throws BackendsFileException {
        return LibketamaServers.parse("s.txt", text.getBytes(StandardCharsets.ISO_8859_1));
    }

    private static void fails(String text, int line, String reason) {
        BackendsFileException e = assertThrows(BackendsFileException.class, () -> parse(text), text);
        assertEquals(reason, e.reason(), text);
        assertEquals(line, e.line(), () -> "line of: " + e.getMessage());
        assertEquals("s.txt" + (line > 0 ? ":" + line : "") + ": " + reason, e.getMessage());
    }

    private static List<String> addresses(BackendList list) {
        return list.backends().stream().map(Backend::address).toList();
    }

    private static List<Long> weights(BackendList list) {
        return list.backends().stream().map(Backend::weight).toList();
    }

    // ---- libketama's own files ----

    @Test
    void theFixtureIsReadAsLibketamaReadsIt() throws Exception {
        BackendList list = LibketamaServers.parse(CONF.resolve("ketama.servers"));
        assertEquals(
                List.of(
                        "10.0.1.1:11211",
                        "10.0.1.2:11211",
                        "10.0.1.3:11211",
                        "10.0.1.4:11211",
                        "10.0.1.5:11211",
                        "10.0.1.6:11211",
                        "10.0.1.7:11211",
                        "10.0.1.8:11211"),
                addresses(list));
        assertEquals(List.of(600L, 300L, 200L, 350L, 1000L, 800L, 950L, 100L), weights(list));
        assertEquals(
                List.of(3, 4, 5, 6, 7, 8, 9, 10),
                list.backends().stream().map(Backend::line).toList());
        assertEquals(CONF.resolve("ketama.servers").toString(), list.source());

        BackendList two = LibketamaServers.parse(CONF.resolve("ketama.two.servers"));
        assertEquals(List.of("10.0.1.1:11211", "10.0.1.2:11211", "10.0.1.7:11211", "10.0.1.8:11211"), addresses(two));
        assertEquals(List.of(60L, 30L, 50L, 10L), weights(two));
        assertEquals(
                List.of(4, 5, 6, 7), two.backends().stream().map(Backend::line).toList());
    }

    /**
     * libketama's test.sh: {@code ketama_test ../ketama.servers | md5sum} must be
     * {@code 5672b131391f5aa2b280936aec1eea74} (vectors/libketama/test_sh.tsv and README.md: one empty
     * line, then {@code "%u %u %s\n"} = key hash, chosen point, address for the keys "0".."999999"), here
     * with the ring built from ketama.servers as {@link LibketamaServers} reads it.
     */
    @Test
    @Tag("slow") // a million lookups, about 5 s: the full lane runs it
    void aRingBuiltFromTheParsedFixtureReproducesLibketamasTestMd5(@TempDir Path dir) throws Exception {
        Path ringFile = dir.resolve("ketama.ring");
        RingBuilder.of(LibketamaServers.parse(CONF.resolve("ketama.servers")))
                .version(LIBKETAMA)
                .build(ringFile);
        MessageDigest md5 = MessageDigest.getInstance("MD5");
        try (RingStore store = RingStore.open(ringFile)) {
            Ring ring = store.ring(Set.of(), LIBKETAMA);
            assertEquals(1264, ring.pointCount());
            KeyHash hash = ring.keyHash();
            md5.update((byte) '\n');
            StringBuilder lines = new StringBuilder();
            for (int i = 0; i < 1_000_000; i++) {
                byte[] key = Integer.toString(i).getBytes(StandardCharsets.US_ASCII);
                int h = hash.hash(key, 0, key.length);
                int position = ring.pointIndex(h);
                lines.append(Integer.toUnsignedString(h))
                        .append(' ')
                        .append(ring.pointHash(position))
                        .append(' ')
                        .append(store.backend(ring.pointBackend(position)).address())
                        .append('\n');
                if (lines.length() > 1 << 16) {
                    md5.update(lines.toString().getBytes(StandardCharsets.US_ASCII));
                    lines.setLength(0);
                }
            }
            md5.update(lines.toString().getBytes(StandardCharsets.US_ASCII));
        }
        assertEquals("5672b131391f5aa2b280936aec1eea74", HexFormat.of().formatHex(md5.digest()));
    }

    /** python_ketama/tests.py: its server file, {@code get_server("test") == (3454255383, '127.0.0.1:11211')}, 320 points. */
    @Test
    void thePythonBindingsTestFile(@TempDir Path dir) throws Exception {
        Path servers = Files.writeString(dir.resolve("servers"), "127.0.0.1:11211\t600\n127.0.0.1:11212\t400\n");
        Path ringFile = dir.resolve("py.ring");
        RingBuilder.of(LibketamaServers.parse(servers)).version(LIBKETAMA).build(ringFile);
        try (RingStore store = RingStore.open(ringFile)) {
            Ring ring = store.ring(Set.of(), LIBKETAMA);
            assertEquals(320, ring.pointCount());
            byte[] key = "test".getBytes(StandardCharsets.US_ASCII);
            int h = ring.keyHash().hash(key, 0, key.length);
            assertEquals(3446378249L, Integer.toUnsignedLong(h));
            assertEquals(3454255383L, ring.pointHash(ring.pointIndex(h)));
            assertEquals("127.0.0.1:11211", store.backend(ring.lookup(key)).address());
        }
    }

    // ---- what is read ----

    @Test
    void addressesAreKeptAsWrittenAndBlanksSeparate() throws Exception {
        BackendList list = parse("# servers\n"
                + "10.0.1.1\t600\n" // no port: libketama hashes "10.0.1.1-0"
                + "010.000.001.002:11211 300\n" // a space separates too; the text as written
                + "  \t[::1]:11211\t\t 200\r\n" // leading blanks, several blanks, a CRLF line end
                + "\n"
                + "10.0.1.4:11212\t1\n");
        assertEquals(List.of("10.0.1.1", "010.000.001.002:11211", "[::1]:11211", "10.0.1.4:11212"), addresses(list));
        assertEquals(List.of(600L, 300L, 200L, 1L), weights(list));
        assertEquals(
                List.of(2, 3, 4, 6), list.backends().stream().map(Backend::line).toList());
        assertTrue(list.features().isEmpty());
        assertEquals(
                1,
                parse("10.0.1.1:11211\t600\r").size(),
                "a last line ending in \\r: libketama's dropped character is the \\r");
        assertEquals(
                1,
                parse("10.0.1.1:11211\t600\n# a last comment without line end").size());
    }

    // ---- refused ----

    @Test
    void aLineThatIsNotAddressTabMemoryIsRefused() {
        fails(
                "10.0.1.1:11211\t600\n10.0.1.2:11211\n",
                2,
                "server '10.0.1.2:11211' without a memory: libketama's lines are ADDRESS<TAB>MEMORY");
        fails(
                "10.0.1.1:11211\tlots\n",
                1,
                "memory 'lots' is not a whole number (libketama's lines are ADDRESS<TAB>MEMORY)");
        fails(
                "10.0.1.1:11211\t-5\n",
                1,
                "memory '-5' is not a whole number (libketama's lines are ADDRESS<TAB>MEMORY)");
        fails(
                "10.0.1.1:11211\t600MB\n",
                1,
                "memory '600MB' is not a whole number (libketama's lines are ADDRESS<TAB>MEMORY)");
        fails("10.0.1.1:11211\t0\n", 1, "memory 0: libketama refuses a server without memory");
        fails("10.0.1.1:11211\t2147483648\n", 1, "memory 2147483648 is too large for a weight (at most 2147483647)");
    }

    @Test
    void textAfterTheMemoryIsRefusedBecauseLibketamaWouldMisreadIt() {
        fails(
                "10.0.1.1:11211\t600 # big one\n",
                1,
                "text after the memory 600: libketama takes the memory's last character"
                        + " for the line end and would read 60; end the line after the number");
        fails(
                "10.0.1.1:11211\t600 \n",
                1,
                "text after the memory 600: libketama takes the memory's last character"
                        + " for the line end and would read 60; end the line after the number");
        fails(
                "10.0.1.1:11211\t600\t300\n",
                1,
                "text after the memory 600: libketama takes the memory's last character"
                        + " for the line end and would read 60; end the line after the number");
    }

    @Test
    void aServerOnALastLineWithoutLineEndIsRefused() {
        fails(
                "10.0.1.1:11211\t600\n10.0.1.2:11211\t100",
                2,
                "the last line has no line end: libketama takes the memory's last character"
                        + " for it and would read 100 as 10; end the file with a newline");
        fails(
                "10.0.1.2:11211\t7",
                1,
                "the last line has no line end: libketama takes the memory's last character"
                        + " for it and would read 7 as 0; end the file with a newline");
    }

    @Test
    void blankLinesThatAreNotEmptyAndIndentedCommentsAreRefused() {
        fails(
                "10.0.1.1:11211\t600\n  \n",
                2,
                "a line of blanks: libketama skips only empty lines, and takes this one for a server without memory");
        fails(
                "10.0.1.1:11211\t600\r\n\r\n",
                2,
                "a blank line ending in \\r (a CRLF file?): libketama skips only empty lines, and takes this one for a server without memory");
        fails(
                "  # servers\n",
                1,
                "a comment after blanks: libketama reads a comment only with '#' in the first column");
    }

    @Test
    void longLinesAndByteOrderMarksAreRefused() {
        fails(
                "#" + "-".repeat(125) + "\n10.0.1.1:11211\t600\n",
                1,
                "line of 126 bytes: libketama reads 126 bytes at a time,"
                        + " the line end one of them (fgets(sline, 127, fi)), and would take the rest for another line");
        assertEquals(1, assertDoesNotFail("#" + "-".repeat(124) + "\n10.0.1.1:11211\t600\n"));
        fails(
                "\u00ef\u00bb\u00bf10.0.1.1:11211\t600\n",
                1,
                "the file starts with a byte order mark, which libketama reads as part of the first line: remove it");
    }

    private static int assertDoesNotFail(String text) {
        try {
            return parse(text).size();
        } catch (BackendsFileException e) {
            throw new AssertionError(e.getMessage(), e);
        }
    }

    @Test
    void addressesThatAreNoIpEndpointAreRefused() {
        fails(
                "cache1.example.com:11211\t600\n",
                1,
                "bad address 'cache1.example.com:11211': host names are not supported, write an IP address");
        fails(
                "unix:/var/run/memcached.sock\t600\n",
                1,
                "bad address 'unix:/var/run/memcached.sock': unix sockets are not supported, a ring needs IP endpoints");
        fails(
                "10.0.1.1:11211\t600\n10.0.1.1:11211\t300\n",
                2,
                "duplicate backend '10.0.1.1:11211': same address and port as line 1 ('10.0.1.1:11211')");
    }

    @Test
    void aFileWithoutServersIsRefused() {
        fails("# only comments\n\n", 0, "no servers: a ring needs at least one (a line is ADDRESS<TAB>MEMORY)");
        fails("", 0, "no servers: a ring needs at least one (a line is ADDRESS<TAB>MEMORY)");
    }

    @Test
    void anAddressLibketamaCannotHoldIsRefusedWithItsLineWhenALibketamaRingIsBuilt(@TempDir Path dir) throws Exception {
        BackendList list = parse("10.0.1.1:11211\t600\n[2001:db8::1234]:11211\t600\n");
        BackendsFileException e = assertThrows(
                BackendsFileException.class,
                () -> RingBuilder.of(list).version(LIBKETAMA).build(dir.resolve("x.ring")));
        assertEquals(2, e.line(), e.getMessage());
        assertTrue(e.reason().contains("21"), e.getMessage());
    }
}
