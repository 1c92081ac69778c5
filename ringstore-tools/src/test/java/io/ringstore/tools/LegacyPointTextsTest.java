package io.ringstore.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A file built before issue 30 fixed the IPv6 point texts of {@code dubbo} and {@code couchbase}
 * ({@code [v6]:port}, the JDK's uncompressed text): it still verifies, and answers exactly as it did,
 * while a build of the same backends today makes the clients' points. The file
 * ({@code golden/dubbo-couchbase-ipv6-before-issue30.ring}: dubbo:160, dubbo:40 and couchbase over two
 * IPv6 servers, one IPv4 and one {@code [::1]}) and the digests of its answers were made by the CLI at
 * 35b85ee, before the fix.
 */
class LegacyPointTextsTest {
    /** SHA-256 of {@code lookup --no-state --algorithm V} of key-1 to key-300, recorded at 35b85ee. */
    private static final Map<String, String> ANSWERS = Map.of(
            "dubbo:160", "d1e89cefedd28fb0ebd52c46788df60fcf6907b8a56f42d32ff9afd8152cc87b",
            "dubbo:40", "9f258f80066ee74f207fa799946169003250231b5088cf9c7b6de57fe8b6f9b8",
            "couchbase", "3d9e8851980ce06eac229da015b752a77344f92abd4af8dec816bcb88c97e62d");

    @TempDir
    Path dir;

    @Test
    void aFileBuiltBeforeTheFixVerifiesAndAnswersAsBefore() throws Exception {
        Path old = resource("dubbo-couchbase-ipv6-before-issue30.ring");
        Path backends = resource("dubbo-couchbase-ipv6.conf");
        String keys =
                IntStream.rangeClosed(1, 300).mapToObj(i -> "key-" + i + "\n").collect(Collectors.joining());

        CliRun.run("verify", old.toString()).assertOk();
        for (Map.Entry<String, String> v : ANSWERS.entrySet()) {
            CliRun lookup =
                    CliRun.runWithInput(keys, "lookup", old.toString(), "--no-state", "--algorithm", v.getKey());
            lookup.assertOk();
            assertEquals(
                    v.getValue(), GoldenResources.sha256(lookup.stdout()), v.getKey() + ": the old file's answers");
        }

        Path rebuilt = dir.resolve("rebuilt.ring");
        CliRun.build(backends, rebuilt, "--algorithm", "dubbo,dubbo:40,couchbase")
                .assertOk();
        CliRun.run("verify", rebuilt.toString()).assertOk();
        assertFalse(
                Arrays.equals(Files.readAllBytes(old), Files.readAllBytes(rebuilt)),
                "a build today makes the clients' IPv6 points, not the old ones");
        for (String v : ANSWERS.keySet()) {
            CliRun lookup = CliRun.runWithInput(keys, "lookup", rebuilt.toString(), "--no-state", "--algorithm", v);
            lookup.assertOk();
            assertFalse(
                    ANSWERS.get(v).equals(GoldenResources.sha256(lookup.stdout())),
                    v + ": the rebuilt file answers as the clients");
        }
    }

    private Path resource(String name) throws Exception {
        return GoldenResources.copy(name, dir);
    }
}
