package io.ringstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.ringstore.builder.BackendList;
import io.ringstore.builder.BackendsFileException;
import io.ringstore.builder.RingBuilder;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One backends file, both ways: real {@code nginx -t} (Debian's nginx-light 1.22) accepts the file
 * ringstore builds from. The example fleet and a pasted block with the upstream-level directives are
 * checked whole; then a table of single directives gets the same verdict from both, except the
 * differences listed (each on the safe side but two, which the README names). Skipped without nginx,
 * unless {@code -Dringstore.requireNginx=true}.
 */
@Tag("nginx")
class NginxConfigTest {
    private static final Path EXAMPLE =
            Path.of(System.getProperty("ringstore.repo", ".."), "examples", "backends.conf");

    @TempDir
    Path dir;

    @BeforeAll
    static void nginxInstalled() {
        if (!NginxServer.installed()) {
            String why = NginxServer.BINARY + " is missing (install Debian's nginx-light)";
            if (Boolean.parseBoolean(System.getProperty("ringstore.requireNginx", "false"))) {
                fail(why + ", and ringstore.requireNginx=true requires the nginx tests to run");
            }
            assumeTrue(false, why + ": nginx -t test skipped");
        }
    }

    /** nginx -t on {@code http}, requiring success without a warning. */
    private void nginxAccepts(String http) throws IOException, InterruptedException {
        NginxServer.ConfigTest t = NginxServer.test(dir.resolve("nginx-" + Math.abs(http.hashCode())), http);
        assertEquals(0, t.status(), () -> "nginx -t refused:\n" + http + "\n" + t.output());
        assertFalse(t.output().contains("[warn]"), () -> "nginx -t warned:\n" + http + "\n" + t.output());
    }

    private boolean nginxTakes(String http) throws IOException, InterruptedException {
        NginxServer.ConfigTest t = NginxServer.test(dir.resolve("nginx-" + Math.abs(http.hashCode())), http);
        return t.status() == 0;
    }

    private static boolean ringstoreTakes(String text) {
        try {
            BackendList.parse("test", text);
            return true;
        } catch (BackendsFileException e) {
            return false;
        }
    }

    private void builds(BackendList list) throws Exception {
        Path ring = dir.resolve("built.ring");
        RingBuilder.of(list).build(ring);
        try (RingStore store = RingStore.open(ring)) {
            assertEquals(list.size(), store.backends().size());
        }
    }

    @Test
    void theExampleFleetIsAnUpstreamBlockNginxAcceptsAndRingstoreBuilds() throws Exception {
        nginxAccepts("include " + EXAMPLE.toAbsolutePath() + ";");
        BackendList fleet = BackendList.parse(EXAMPLE);
        assertEquals(24, fleet.size());
        assertEquals(List.of("eu", "ssd", "cache-reserve", "us", "apac"), fleet.features());
        assertEquals(Set.of("eu", "ssd", "cache-reserve"), fleet.backend(0).features());
        builds(fleet);
    }

    @Test
    void serverLinesIncludedInAnUpstreamBlock() throws Exception {
        Path servers = dir.resolve("servers.conf");
        Files.writeString(servers, """
                server 10.0.0.1:8080 weight=3;  # ringstore: features=eu
                server 10.0.0.2:8080; server 10.0.0.3:8080 down;
                keepalive 16;
                """);
        nginxAccepts("upstream pool {\n    hash $request_uri consistent;\n    include " + servers + ";\n}");
        BackendList list = BackendList.parse(servers);
        assertEquals(3, list.size());
        builds(list);
    }

    @Test
    void aPastedUpstreamBlockWithZoneKeepaliveAndSeveralServersToALine() throws Exception {
        String block = """
                upstream api_backends {
                    zone api_backends 256k;
                    hash $request_uri consistent;
                    keepalive 64; keepalive_requests 1000;
                    keepalive_time 1h; keepalive_timeout 75s;

                    server 10.0.1.1:8080 weight=3 max_fails=3 fail_timeout=30s;  # ringstore: features=eu,ssd
                    server 10.0.1.2:8080 max_conns=200; server 10.0.1.3:8080 down;
                    server [2001:db8::1]:8080 weight=2 max_fails=0 fail_timeout=1m30s;   # ringstore: features=us
                    server 10.0.1.4;# the default port, 80
                }
                """;
        nginxAccepts(block);
        BackendList list = BackendList.parse("pasted", block);
        assertEquals(5, list.size());
        Backend first = list.backend(0);
        assertEquals(3, first.weight());
        assertEquals(3, first.maxFails());
        assertEquals(30, first.failTimeoutSeconds());
        assertEquals(Set.of("eu", "ssd"), first.features());
        assertEquals(200, list.backend(1).maxConns());
        assertTrue(list.backend(2).down());
        assertEquals(8, list.backend(2).line());
        assertEquals(0, list.backend(3).maxFails());
        assertEquals(90, list.backend(3).failTimeoutSeconds());
        assertEquals(Set.of("us"), list.backend(3).features());
        assertEquals(List.of("eu", "ssd", "us"), list.features());
        builds(list);
    }

    /** Directives that nginx and ringstore both take, or both refuse, inside a hash upstream with one server. */
    private static final String[] SAME_VERDICT = {
        "zone z 64k;",
        "zone z 32K;",
        "zone z 1m; keepalive 1;",
        "zone z 16k;",
        "zone z 1g;",
        "zone z 64k 1;",
        "zone;",
        "keepalive 32;",
        "keepalive 0;",
        "keepalive 1 2;",
        "keepalive 3; keepalive 4;",
        "keepalive_requests 0;",
        "keepalive_requests -1;",
        "keepalive_time 1h;",
        "keepalive_time 1M;",
        "keepalive_timeout 500ms;",
        "keepalive_timeout 1s500ms;",
        "keepalive_timeout 1y;",
        "keepalive_timeout 9223372036854776s;",
        "server 10.0.0.2 fail_timeout=10s5;",
        "server 10.0.0.2 fail_timeout=10ms;",
        "server 10.0.0.2; server 10.0.0.3 weight=2;",
        "server 10.0.0.2;# comment",
        "server 10.0.0.2 weight=3#x;",
        "server 10.0.0.2;;",
        "server 10.0.0.2 }",
        "server 10.0.0.2 {",
        "server 10.0.0.2 weight=0;",
        "server 10.0.0.2 max_fails=-1;",
        "server 10.0.0.2 max_conns=x;",
        "server 10.0.0.2 backup;",
        "server 10.0.0.2 slow_start=10s;",
        "server 10.0.0.2 resolve;",
        "server 10.0.0.2:65536;",
        "sticky cookie srv;",
        "ntlm;",
        "queue 10;",
        "resolver 192.0.2.1;",
        "server 10.0.0.2 weight=2 max_fails=2 fail_timeout=1m max_conns=5 down;",
    };

    /**
     * nginx takes these, ringstore refuses them, each with a message saying why: another balancing
     * method (nginx warns and uses it), a directive over two lines, quotes, a host name, a parameter
     * twice (nginx keeps the last). Refusing is the safe side: what ringstore reads, nginx reads alike.
     */
    private static final String[] RINGSTORE_STRICTER = {
        "least_conn;",
        "ip_hash;",
        "random;",
        "hash $request_uri;",
        "server 10.0.0.2\n weight=2;",
        "server \"10.0.0.2\";",
        "server localhost:8080;",
        "server 10.0.0.2 down down;",
        "server 10.0.0.2 weight=2 weight=3;",
    };

    /** ringstore takes these, nginx refuses them (the README says so): the old features= and a zone sized elsewhere. */
    private static final String[] NGINX_STRICTER = {"server 10.0.0.2 features=eu;", "zone z;"};

    private static String upstream(String directives) {
        return "upstream u {\n    hash $request_uri consistent;\n    server 10.0.0.1;\n    " + directives + "\n}\n";
    }

    @Test
    void singleDirectivesGetNginxsVerdict() throws Exception {
        List<String> differ = new ArrayList<>();
        int accepted = 0;
        for (String d : SAME_VERDICT) {
            boolean nginx = nginxTakes(upstream(d));
            accepted += nginx ? 1 : 0;
            if (nginx != ringstoreTakes(upstream(d))) {
                differ.add((nginx ? "nginx takes, ringstore refuses: " : "nginx refuses, ringstore takes: ") + d);
            }
        }
        for (String d : RINGSTORE_STRICTER) {
            if (!nginxTakes(upstream(d)) || ringstoreTakes(upstream(d))) {
                differ.add("expected nginx to take and ringstore to refuse: " + d);
            }
        }
        for (String d : NGINX_STRICTER) {
            if (nginxTakes(upstream(d)) || !ringstoreTakes(upstream(d))) {
                differ.add("expected nginx to refuse and ringstore to take: " + d);
            }
        }
        assertEquals(List.of(), differ);
        assertTrue(
                accepted >= 10 && accepted <= SAME_VERDICT.length - 10,
                "the table has both verdicts: " + accepted + " accepted");
    }
}
