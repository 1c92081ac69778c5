package io.ringstore;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.ringstore.family.Families;
import io.ringstore.family.RingFamily;
import io.ringstore.family.RingVersion;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * libketama ({@code libketama}) against the family contract and RJ/ketama's own vectors
 * ({@code vectors/libketama/}, README.md there): {@code test.sh}'s MD5 over a million lookups and
 * {@code python_ketama/tests.py}.
 */
class LibketamaFamilyTest extends RingFamilyContract {
    static final RingVersion VERSION = RingVersion.parse("libketama");

    @Override
    RingFamily family() {
        return Families.LIBKETAMA;
    }

    @Override
    String expectedName() {
        return "libketama";
    }

    @Override
    int expectedCode() {
        return 3;
    }

    /** Recorded by {@link SeededFleets#checksum} when this test was added (branch h/contract on 95f3c34): a regression guard. */
    @Override
    Map<RingVersion, String> goldenChecksums() {
        return Map.of(VERSION, "774943c0639eb130c3db9e556bf1db34ceac0ecae0d1019e8ad11aa6d1c8cf8c");
    }

    /** The share rule K: every count is the backend's share of all the weights. */
    @Override
    boolean monotone() {
        return false;
    }

    /** glibc's stable qsort keeps equal points in generation order and the lookup takes the first: the first listed. */
    @Override
    Comparator<Backend> tieOrder() {
        return Comparator.comparingInt(Backend::index);
    }

    /** A servers file ({@code addr}, {@code memory} columns) as a backends file, the address exactly as written. */
    static String servers(String path) {
        StringBuilder text = new StringBuilder();
        for (ProjectVectors.Row row : ProjectVectors.rows(path)) {
            text.append("server ")
                    .append(row.get("addr"))
                    .append(" weight=")
                    .append(row.get("memory"))
                    .append(";\n");
        }
        return text.toString();
    }

    /**
     * {@code test.sh}: {@code ketama_test ../ketama.servers | md5sum} must be
     * {@code 5672b131391f5aa2b280936aec1eea74}. The output is an empty line ({@code ketama_error()} after
     * a good roll), then {@code "%u %u %s\n"} for the keys "0" to "999999": the key's hash, the point it
     * lands on, the server as written in the file. Catches any change to the point text, the MD5 word
     * order, rule K's rounding, the tie rule or the lookup (e.g. {@code addr + "_" + k}, or rule L in
     * place of K).
     */
    @Test
    void ketamaTestPrintsTheOutputWhoseMd5TestShExpects() throws Exception {
        ProjectVectors.Row row = ProjectVectors.rows("libketama/test_sh.tsv").getFirst();
        try (RingStore store = build(servers("libketama/" + row.get("server_file")), VERSION)) {
            Ring ring = store.ring(Set.of(), VERSION);
            MessageDigest md5 = MessageDigest.getInstance("MD5");
            md5.update((byte) '\n');
            StringBuilder line = new StringBuilder();
            for (int i = Integer.parseInt(row.get("first_key")); i <= Integer.parseInt(row.get("last_key")); i++) {
                byte[] key = Integer.toString(i).getBytes(StandardCharsets.US_ASCII);
                int h = ring.keyHash().hash(key);
                int b = ring.lookup(key);
                assertEquals(ring.pointBackend(ring.pointIndex(h)), b, "key " + i);
                line.setLength(0);
                line.append(Integer.toUnsignedString(h))
                        .append(' ')
                        .append(ring.pointHash(ring.pointIndex(h)))
                        .append(' ')
                        .append(store.backend(b).address())
                        .append('\n');
                md5.update(line.toString().getBytes(StandardCharsets.US_ASCII));
            }
            assertEquals(row.get("expected_md5"), HexFormat.of().formatHex(md5.digest()));
        }
    }

    /**
     * {@code python_ketama/tests.py}: {@code hashi("test") == 3446378249}; over 127.0.0.1:11211 (600) and
     * 127.0.0.1:11212 (400), {@code get_server("test") == (3454255383, '127.0.0.1:11211')} and 160 * 2
     * points. Catches a change to the key hash (a word other than MD5's first) and to the counts (a
     * fixed 160 a server would give the same total but another point for "test").
     */
    @Test
    void pythonKetamaTests() throws Exception {
        try (RingStore store = build(servers("libketama/python_servers.tsv"), VERSION)) {
            Ring ring = store.ring(Set.of(), VERSION);
            int checked = 0;
            for (ProjectVectors.Row row : ProjectVectors.rows("libketama/python_tests.tsv")) {
                byte[] key = row.bytes("key");
                switch (row.get("call")) {
                    case "hashi" ->
                        assertEquals(
                                row.unsigned("expected"), VERSION.keyHash().hash64(key, 0, key.length), row.toString());
                    case "get_server" -> {
                        String[] expected = row.get("expected").split(" ");
                        int h = ring.keyHash().hash(key);
                        assertEquals(Long.parseLong(expected[0]), ring.pointHash(ring.pointIndex(h)), row.toString());
                        assertEquals(
                                expected[1], store.backend(ring.lookup(key)).address(), row.toString());
                    }
                    case "len(get_points())" ->
                        assertEquals(row.integer("expected"), ring.pointCount(), row.toString());
                    default -> throw new AssertionError(row + ": unknown call " + row.get("call"));
                }
                checked++;
            }
            assertEquals(3, checked);
        }
    }

    /**
     * Rule K's rounding where libmemcached's rule L differs (rings.md §13; derived, gcc x86-64 and a
     * numpy model agree, not published by libketama): 25 equal servers get 40 digests, 160 points (L:
     * 39); 61 get 39, 156 points; of 21 servers weighing 1,624 in all, one of 638 gets 330 digests
     * (L: 329). The fixture of {@code test.sh} cannot tell K from L (both give its 1,264 points): this
     * catches rule L in place of K.
     */
    @Test
    void ruleKWhereRuleLDiffers() throws Exception {
        assertEquals(
                List.of(160L),
                pointsPerBackend(equalServers(25), VERSION).stream().distinct().toList());
        assertEquals(
                List.of(156L),
                pointsPerBackend(equalServers(61), VERSION).stream().distinct().toList());
        StringBuilder text = new StringBuilder("server 10.0.3.1:11211 weight=638;\n");
        for (int i = 0; i < 20; i++) {
            text.append("server 10.0.3.")
                    .append(2 + i)
                    .append(":11211 weight=")
                    .append(i < 14 ? 49 : 50)
                    .append(";\n");
        }
        assertEquals(330L * 4, pointsPerBackend(text.toString(), VERSION).getFirst());
    }
}
