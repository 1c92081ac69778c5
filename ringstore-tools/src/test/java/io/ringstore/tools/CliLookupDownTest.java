package io.ringstore.tools;

import static io.ringstore.tools.CliRun.backends;
import static io.ringstore.tools.CliRun.build;
import static io.ringstore.tools.CliRun.run;
import static io.ringstore.tools.CliRun.runWithInput;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.Ring;
import io.ringstore.RingStore;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code ringstore lookup} skips servers marked down as nginx does; {@code --no-failover} shows the ring's own answer. */
class CliLookupDownTest {
    @TempDir
    Path dir;

    private static final String FLEET = """
            server 127.0.0.1:8001;
            server 127.0.0.1:8002 down;
            server 127.0.0.1:8003 weight=2;
            server 127.0.0.1:8004 down;
            """;

    @Test
    void downServersAreSkippedUnlessNoFailover() throws Exception {
        Path ring = dir.resolve("down.ring");
        build(backends(dir, "down.conf", FLEET), ring);
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 400; i++) {
            keys.add("/item/" + i);
        }
        String input = String.join("\n", keys) + "\n";
        List<String> failover =
                runWithInput(input, "lookup", ring.toString()).assertOk().outLines();
        List<String> own = runWithInput(input, "lookup", ring.toString(), "--no-failover")
                .assertOk()
                .outLines();
        int moved = 0;
        try (RingStore store = RingStore.open(ring)) {
            Ring r = store.ring(Set.of());
            for (int i = 0; i < keys.size(); i++) {
                byte[] key = keys.get(i).getBytes(StandardCharsets.US_ASCII);
                int ringAnswer = r.lookup(key);
                int chosen = r.select(
                        r.hash(key),
                        Ring.NGINX_MAX_POINTS,
                        b -> !store.backend(b).down());
                assertEquals(keys.get(i) + "\t" + store.backend(ringAnswer).upstreamAddress(), own.get(i));
                assertEquals(keys.get(i) + "\t" + store.backend(chosen).upstreamAddress(), failover.get(i));
                assertTrue(!store.backend(chosen).down());
                if (store.backend(ringAnswer).down()) {
                    moved++;
                }
            }
        }
        assertTrue(moved > 100, "about half the keys land on a down server: " + moved);
    }

    @Test
    void allDownPrintsDashAndSaysSo() throws Exception {
        Path ring = dir.resolve("alldown.ring");
        build(backends(dir, "alldown.conf", "server 127.0.0.1:8001 down;\nserver 127.0.0.1:8002 down;\n"), ring);
        CliRun r = run("lookup", ring.toString(), "/a", "/b");
        r.assertOk();
        assertEquals(List.of("/a\t-", "/b\t-"), r.outLines());
        assertTrue(
                r.stderr().contains("2 keys found only servers marked down in the 21 points nginx tries"), r.stderr());
        assertTrue(r.stderr().contains("round robin"), r.stderr());

        CliRun own = run("lookup", ring.toString(), "--no-failover", "/a");
        own.assertOk();
        assertTrue(own.outLines().getFirst().matches("/a\t127\\.0\\.0\\.1:800[12]"), own.out());
        assertEquals("", own.stderr());
    }

    /**
     * The note says what the family's client does, not nginx's round robin: spymemcached keeps a down
     * node's points and tries its rehash sequence; pingora keeps them and walks on.
     */
    @Test
    void theAllDownNoteIsTheFamilys() throws Exception {
        Path conf = backends(dir, "alldown-spy.conf", "server 127.0.0.1:8001 down;\nserver 127.0.0.1:8002 down;\n");
        Path spy = dir.resolve("alldown-spy.ring");
        build(conf, spy, "--algorithm", "spymemcached");
        CliRun r = run("lookup", spy.toString(), "/a");
        r.assertOk();
        assertEquals(List.of("/a\t-"), r.outLines());
        assertTrue(
                r.stderr()
                        .contains("1 key found only servers marked down in the 7 tries of spymemcached's rehash"
                                + " sequence, printed '-' (spymemcached keeps a down server's points and fails over past it"
                                + " by its rehash sequence"),
                r.stderr());
        assertTrue(!r.stderr().contains("round robin"), r.stderr());
        Path v2 = dir.resolve("alldown-v2.ring");
        build(conf, v2, "--algorithm", "v2");
        CliRun w = run("lookup", v2.toString(), "/a");
        assertTrue(
                w.stderr()
                        .contains("in the 21 points tried, printed '-' (v2 keeps a down server's points and"
                                + " fails over past it to the next points"),
                w.stderr());
    }
}
