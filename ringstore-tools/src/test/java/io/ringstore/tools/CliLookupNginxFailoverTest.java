package io.ringstore.tools;

import static io.ringstore.tools.CliRun.build;
import static io.ringstore.tools.CliRun.runWithInput;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code ringstore lookup} skips the servers marked {@code down} as nginx does: for each fleet of
 * {@code io.ringstore.NginxFailoverParityTest}, every recorded key gets nginx's own
 * {@code $upstream_addr}, and a key whose 21 points all belong to down servers (where nginx goes round
 * robin, recorded as {@code round-robin}) gets '-', and stderr counts those keys. The answers under
 * {@code testdata/vectors/nginx-failover} come from nginx 1.22 and are checked against it by that
 * test on every run that has nginx; this one runs without nginx.
 */
class CliLookupNginxFailoverTest {
    private static final Path VECTORS = Path.of(System.getProperty("ringstore.repo", ".."))
            .resolve("testdata")
            .resolve("vectors")
            .resolve("nginx-failover");
    private static final String ROUND_ROBIN_VECTOR = "round-robin";
    /** lookup's address when all 21 points are down. */
    private static final String CLI_GAVE_UP = "-";

    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"someDown", "mostlyDown"})
    void lookupAnswersWhatNginxAnswered(String fleet) throws Exception {
        Path ring = dir.resolve(fleet + ".ring");
        build(VECTORS.resolve(fleet + ".backends"), ring);
        List<String> vectors = Files.readAllLines(VECTORS.resolve(fleet + ".tsv"), StandardCharsets.ISO_8859_1);
        ByteArrayOutputStream keys = new ByteArrayOutputStream();
        for (String v : vectors) {
            keys.writeBytes(v.substring(0, v.indexOf('\t')).getBytes(StandardCharsets.ISO_8859_1));
            keys.write('\n');
        }
        CliRun lookup =
                runWithInput(keys.toByteArray(), "lookup", ring.toString()).assertOk();
        List<String> answers = lookup.outLines();
        assertEquals(vectors.size(), answers.size(), "one answer per key");
        List<String> mismatches = new ArrayList<>();
        int roundRobin = 0;
        for (int i = 0; i < vectors.size(); i++) {
            String fromNginx = vectors.get(i);
            String expected = fromNginx;
            if (fromNginx.endsWith("\t" + ROUND_ROBIN_VECTOR)) {
                roundRobin++;
                expected = fromNginx.substring(0, fromNginx.lastIndexOf('\t') + 1) + CLI_GAVE_UP;
            }
            if (!expected.equals(answers.get(i)) && mismatches.size() < 10) {
                mismatches.add("nginx: " + fromNginx + "  ringstore lookup: " + answers.get(i));
            }
        }
        System.out.printf(
                "ringstore lookup vs nginx [%s]: %,d keys, %,d of them round robin in nginx%n",
                fleet, vectors.size(), roundRobin);
        assertTrue(
                mismatches.isEmpty(),
                () -> "ringstore lookup differs from nginx (first 10):\n  " + String.join("\n  ", mismatches));
        String count = roundRobin + (roundRobin == 1 ? " key" : " keys") + " found only servers marked down";
        assertEquals(
                roundRobin > 0,
                lookup.stderr().contains(count),
                () -> "'" + count + "' expected on stderr: " + lookup.stderr());
    }
}
