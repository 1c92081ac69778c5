package io.ringstore.tools;

import static io.ringstore.tools.CliRun.otherFiles;
import static io.ringstore.tools.CliRun.run;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.Backend;
import io.ringstore.RingStore;
import io.ringstore.family.RingVersion;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code build --from twemproxy|libketama|haproxy|nginx}, {@code --pool} and {@code --backend} (docs/from-config.md): the configuration
 * files twemproxy and libketama ship (ringstore/src/test/resources/configs, README.md there), exit codes,
 * and nothing written on an error; {@code analyze --from} too.
 */
class CliFromConfigTest {
    private static final Path CONFIGS =
            Path.of(System.getProperty("ringstore.repo"), "ringstore", "src", "test", "resources", "configs");
    private static final String POOLS =
            "5 pools (alpha, beta, gamma, delta, omega): name the one to build (--pool NAME)";

    /** A copy of twemproxy's conf/nutcracker.yml in {@code dir}. */
    private static Path nutcracker(Path dir) throws Exception {
        return Files.copy(CONFIGS.resolve("twemproxy/nutcracker.yml"), dir.resolve("nutcracker.yml"));
    }

    private static Path ketama(Path dir) throws Exception {
        return Files.copy(CONFIGS.resolve("libketama/ketama.servers"), dir.resolve("ketama.servers"));
    }

    // ---- twemproxy ----

    @Test
    void aPoolBuildsItsOwnVersionWithItsNames(@TempDir Path dir) throws Exception {
        Path yml = nutcracker(dir);
        Path ring = dir.resolve("beta.ring");
        CliRun r = run("build", "--from", "twemproxy", yml.toString(), "--pool", "beta", "-o", ring.toString())
                .assertOk();
        assertEquals("4", r.field("backends"));
        assertEquals("twemproxy:fnv1a_64", r.field("versions"));
        assertEquals(
                "ringstore build: warning: pool 'beta' has hash_tag '{}': nutcracker hashes only the part of a key between the two,"
                        + " ringstore the key it is given (cut keys so before a lookup; docs/from-config.md)\n",
                r.stderr());
        try (RingStore store = RingStore.open(ring)) {
            assertEquals(List.of(RingVersion.parse("twemproxy:fnv1a_64")), store.versions());
            assertEquals(
                    List.of("server1", "server2", "server3", "server4"),
                    store.backends().stream().map(Backend::name).toList());
            assertEquals(
                    List.of("127.0.0.1:6380", "127.0.0.1:6381", "127.0.0.1:6382", "127.0.0.1:6383"),
                    store.backends().stream().map(Backend::address).toList());
        }
        assertEquals(List.of(), otherFiles(dir, yml, ring));
    }

    @Test
    void autoEjectHostsIsSaidNotToBeApplied(@TempDir Path dir) throws Exception {
        Path yml = nutcracker(dir);
        CliRun r = run(
                        "build",
                        "--from=twemproxy",
                        yml.toString(),
                        "--pool=gamma",
                        "-o",
                        dir.resolve("g.ring").toString(),
                        "--quiet")
                .assertOk();
        assertEquals("", r.out());
        assertEquals(
                "ringstore build: warning: pool 'gamma' has auto_eject_hosts: true: nutcracker takes a failing server out of its ring by itself,"
                        + " a ring file does not (rebuild without it; docs/from-config.md)\n",
                r.stderr());
    }

    @Test
    void algorithmAddsVersionsAfterThePoolsOwn(@TempDir Path dir) throws Exception {
        Path yml = nutcracker(dir);
        Path ring = dir.resolve("omega.ring");
        CliRun r = run(
                        "build",
                        "--from",
                        "twemproxy",
                        yml.toString(),
                        "--pool",
                        "omega",
                        "-o",
                        ring.toString(),
                        "--algorithm",
                        "twemproxy:hsieh,twemproxy:md5,v2:64")
                .assertOk();
        assertEquals("twemproxy:hsieh, twemproxy:md5, v2:64", r.field("versions"));
        run(
                        "build",
                        "--from",
                        "twemproxy",
                        yml.toString(),
                        "--pool",
                        "alpha",
                        "-o",
                        dir.resolve("a.ring").toString(),
                        "--algorithm",
                        "twemproxy")
                .assertOk(); // bare twemproxy: fnv1a_64, alpha's
    }

    @Test
    void algorithmMustStartWithThePoolsVersion(@TempDir Path dir) throws Exception {
        Path yml = nutcracker(dir);
        Path ring = dir.resolve("x.ring");
        String error = run(
                        "build",
                        "--from",
                        "twemproxy",
                        yml.toString(),
                        "--pool",
                        "omega",
                        "-o",
                        ring.toString(),
                        "--algorithm",
                        "twemproxy:md5,twemproxy:hsieh")
                .assertError(Main.USAGE, "build");
        assertEquals(
                "--algorithm 'twemproxy:md5,twemproxy:hsieh' starts with twemproxy:md5, but pool 'omega' of " + yml
                        + " hashes with hsieh: the first version must be the pool's, twemproxy:hsieh (others may follow it)",
                error);
        error = run(
                        "build",
                        "--from",
                        "twemproxy",
                        yml.toString(),
                        "--pool",
                        "alpha",
                        "-o",
                        ring.toString(),
                        "--algorithm",
                        "v1")
                .assertError(Main.USAGE, "build");
        assertEquals(
                "--algorithm 'v1' starts with v1, but pool 'alpha' of " + yml
                        + " hashes with fnv1a_64: the first version must be the pool's, twemproxy:fnv1a_64 (others may follow it)",
                error);
        assertEquals(List.of(), otherFiles(dir, yml), "nothing written");
    }

    @Test
    void severalPoolsNeedPoolAndAnUnknownPoolIsNamed(@TempDir Path dir) throws Exception {
        Path yml = nutcracker(dir);
        Path ring = dir.resolve("x.ring");
        assertEquals(
                yml + ": " + POOLS,
                run("build", "--from", "twemproxy", yml.toString(), "-o", ring.toString())
                        .assertError(Main.FAILED, "build"));
        assertEquals(
                yml + ": no pool 'zeta' (the file's pools: alpha, beta, gamma, delta, omega)",
                run("build", "--from", "twemproxy", yml.toString(), "--pool", "zeta", "-o", ring.toString())
                        .assertError(Main.FAILED, "build"));
        assertEquals(List.of(), otherFiles(dir, yml), "nothing written");
    }

    @Test
    void aBadConfigIsRefusedWithItsLineAndTheTargetIsLeftAsItWas(@TempDir Path dir) throws Exception {
        Path yml = Files.writeString(
                dir.resolve("n.yml"),
                "p:\n  listen: 127.0.0.1:22121\n  distribution: modula\n  servers:\n  - 10.0.0.1:11211:1\n");
        Path ring = Files.writeString(dir.resolve("keep.ring"), "not replaced");
        String error = run("build", "--from", "twemproxy", yml.toString(), "-o", ring.toString())
                .assertError(Main.FAILED, "build");
        assertEquals(
                yml
                        + ":3: distribution 'modula': ringstore builds ketama rings only (nutcracker's modula is not consistent hashing:"
                        + " keys do not stay put when a server is added)",
                error);
        assertEquals("not replaced", Files.readString(ring));
        assertEquals(List.of(), otherFiles(dir, yml, ring));
    }

    // ---- libketama ----

    @Test
    void aLibketamaFileBuildsALibketamaRing(@TempDir Path dir) throws Exception {
        Path servers = Files.writeString(
                dir.resolve("servers"), "127.0.0.1:11211\t600\n127.0.0.1:11212\t400\n"); // python_ketama/tests.py
        Path ring = dir.resolve("k.ring");
        CliRun r = run("build", "--from", "libketama", servers.toString(), "-o", ring.toString())
                .assertOk();
        assertEquals("libketama", r.field("versions"));
        assertEquals("2", r.field("backends"));
        assertTrue(r.field("points").startsWith("320 "), r.field("points"));
        assertEquals("", r.stderr());
        // python_ketama/tests.py: get_server("test") is 127.0.0.1:11211
        assertEquals(
                List.of("test\t127.0.0.1:11211"),
                run("lookup", ring.toString(), "test").assertOk().outLines());

        CliRun both = run(
                        "build",
                        "--from",
                        "libketama",
                        ketama(dir).toString(),
                        "-o",
                        dir.resolve("k2.ring").toString(),
                        "--algorithm",
                        "libketama,libmemcached")
                .assertOk();
        assertEquals("libketama, libmemcached", both.field("versions"));
        assertEquals("8", both.field("backends"));
    }

    @Test
    void aBadLibketamaLineIsRefusedWithItsLine(@TempDir Path dir) throws Exception {
        Path servers = Files.writeString(dir.resolve("servers"), "# fleet\n10.0.1.1:11211\t600\n10.0.1.2:11211\t100");
        String error = run(
                        "build",
                        "--from",
                        "libketama",
                        servers.toString(),
                        "-o",
                        dir.resolve("k.ring").toString())
                .assertError(Main.FAILED, "build");
        assertEquals(
                servers
                        + ":3: the last line has no line end: libketama takes the memory's last character for it and would read 100 as 10;"
                        + " end the file with a newline",
                error);
        assertEquals(List.of(), otherFiles(dir, servers), "nothing written");
    }

    // ---- haproxy ----

    /** Two backends and a frontend, as an operator writes them. */
    private static final String HAPROXY_CFG = """
            global
                maxconn 100
            defaults
                mode http
                timeout connect 1s
                timeout client 5s
                timeout server 5s
            frontend fe
                bind 127.0.0.1:8080
                default_backend web
            backend web
                balance uri
                hash-type consistent djb2 avalanche
                server a 10.0.0.1:80 id 5 weight 2 check
                server b 10.0.0.2:80
                server c 10.0.0.3:80 backup
                server d 10.0.0.4:80 disabled
                server e 10.0.0.5:80 weight 0
                server f [::1]:8081
            backend api
                balance roundrobin
                server x 10.0.1.1:80
            """;

    @Test
    void aBackendBuildsItsOwnVersionWithHaproxysIds(@TempDir Path dir) throws Exception {
        Path cfg = Files.writeString(dir.resolve("haproxy.cfg"), HAPROXY_CFG);
        Path ring = dir.resolve("web.ring");
        CliRun r = run("build", "--from", "haproxy", cfg.toString(), "--backend", "web", "-o", ring.toString())
                .assertOk();
        assertEquals("haproxy:djb2-avalanche", r.field("versions"));
        assertEquals("5", r.field("backends"));
        assertEquals(
                "ringstore build: note: backend 'web' has 1 backup server(s), left out: HAProxy looks up its backups"
                        + " only when no active server is up (docs/from-config.md)\n"
                        + "ringstore build: note: backend 'web' hashes 'balance uri': look up the bytes HAProxy hashes"
                        + " (balance uri: the request target up to the first '?'; docs/from-config.md)\n",
                r.stderr());
        try (RingStore store = RingStore.open(ring)) {
            // a has id 5; b takes 2 (the counter is 2 after a), c (backup) 3, d 4, e 6 (5 is a's), f 7
            assertEquals(
                    List.of("5", "2", "4", "6", "7"),
                    store.backends().stream().map(Backend::name).toList());
            assertEquals(
                    List.of(false, false, true, true, false),
                    store.backends().stream().map(Backend::down).toList());
            assertEquals(32 + 16 + 16, store.ring(java.util.Set.of()).pointCount(), "16 nodes a unit of weight");
        }
        assertTrue(run("lookup", ring.toString(), "/x")
                .assertOk()
                .out()
                .matches("/x\t(10\\.0\\.0\\.[12]:80|\\[::1\\]:8081)\n"));
        assertEquals(
                dir.resolve("haproxy.cfg")
                        + ":20: backend 'api' has no 'hash-type consistent' (HAProxy's default is map-based, which is no ring)",
                run("build", "--from", "haproxy", cfg.toString(), "--backend", "api", "-o", ring.toString())
                        .assertError(Main.FAILED, "build"));
    }

    @Test
    void aBackendWithoutConsistentHashingOrOneOfSeveralUnnamedIsRefused(@TempDir Path dir) throws Exception {
        Path cfg = Files.writeString(dir.resolve("haproxy.cfg"), HAPROXY_CFG);
        Path ring = dir.resolve("x.ring");
        assertEquals(
                cfg + ": 2 backends (web, api): name the one to build (--backend NAME)",
                run("build", "--from", "haproxy", cfg.toString(), "-o", ring.toString())
                        .assertError(Main.FAILED, "build"));
        assertEquals(
                cfg + ": no backend 'db' (the file's backends: web, api)",
                run("build", "--from", "haproxy", cfg.toString(), "--backend", "db", "-o", ring.toString())
                        .assertError(Main.FAILED, "build"));
        Path mapBased = Files.writeString(
                dir.resolve("map.cfg"),
                "backend m\n    balance uri\n    hash-type map-based\n    server a 10.0.0.1:80\n");
        assertEquals(
                mapBased + ":3: 'hash-type map-based': only 'hash-type consistent' builds a ring (map-based is a table"
                        + " of servers, not a ring)",
                run("build", "--from", "haproxy", mapBased.toString(), "-o", ring.toString())
                        .assertError(Main.FAILED, "build"));
        Path none =
                Files.writeString(dir.resolve("none.cfg"), "backend n\n    balance uri\n    server a 10.0.0.1:80\n");
        assertEquals(
                none
                        + ":1: backend 'n' has no 'hash-type consistent' (HAProxy's default is map-based, which is no ring)",
                run("build", "--from", "haproxy", none.toString(), "-o", ring.toString())
                        .assertError(Main.FAILED, "build"));
        Path host = Files.writeString(
                dir.resolve("host.cfg"),
                "backend h\n    balance uri\n    hash-type consistent\n    server a web1.example:80\n");
        assertTrue(run("build", "--from", "haproxy", host.toString(), "-o", ring.toString())
                .assertError(Main.FAILED, "build")
                .startsWith(host + ":4: server address 'web1.example:80': "));
        assertEquals(List.of(), otherFiles(dir, cfg, mapBased, none, host), "nothing written");
        assertEquals(
                "--backend names a backend of an HAProxy configuration: it goes with --from haproxy",
                run("build", cfg.toString(), "--backend", "web", "-o", ring.toString())
                        .assertError(Main.USAGE, "build"));
    }

    @Test
    void aBareConsistentHashIsSdbmWithAvalancheAndDefaultsApply(@TempDir Path dir) throws Exception {
        Path cfg = Files.writeString(dir.resolve("haproxy.cfg"), """
                defaults
                    balance hdr(X-Key)
                    hash-type consistent
                listen one
                    bind 127.0.0.1:8080
                    server a 10.0.0.1:80 # a comment
                    server b "10.0.0.2:80" weight 3
                """);
        CliRun r = run(
                        "build",
                        "--from",
                        "haproxy",
                        cfg.toString(),
                        "-o",
                        dir.resolve("r").toString())
                .assertOk();
        assertEquals("haproxy:sdbm-avalanche", r.field("versions"));
        assertEquals("2", r.field("backends"));
        assertTrue(r.field("points").startsWith("64 "), r.field("points"));
    }

    // ---- nginx, and the options ----

    @Test
    void fromNginxIsTheDefault(@TempDir Path dir) throws Exception {
        Path backends = Files.writeString(
                dir.resolve("b.conf"), "upstream u {\n    server 10.0.0.1:80 weight=2;\n    server 10.0.0.2:80;\n}\n");
        Path a = dir.resolve("a.ring");
        Path b = dir.resolve("b.ring");
        run("build", backends.toString(), "-o", a.toString(), "--quiet").assertOk();
        run("build", "--from", "nginx", backends.toString(), "-o", b.toString(), "--quiet")
                .assertOk();
        assertArrayEquals(Files.readAllBytes(a), Files.readAllBytes(b));
        // a nutcracker file is not a backends file
        String error = run(
                        "build",
                        nutcracker(dir).toString(),
                        "-o",
                        dir.resolve("c.ring").toString())
                .assertError(Main.FAILED, "build");
        assertTrue(error.startsWith(dir.resolve("nutcracker.yml") + ":1: "), error);
    }

    @Test
    void fromAndPoolAreCheckedAsArguments(@TempDir Path dir) throws Exception {
        Path yml = nutcracker(dir);
        String ring = dir.resolve("x.ring").toString();
        assertEquals(
                "--from 'yaml': expected nginx, twemproxy, libketama or haproxy",
                run("build", "--from", "yaml", yml.toString(), "-o", ring).assertError(Main.USAGE, "build"));
        assertEquals(
                "--pool names a pool of a twemproxy configuration: it goes with --from twemproxy",
                run("build", yml.toString(), "--pool", "alpha", "-o", ring).assertError(Main.USAGE, "build"));
        assertEquals(
                "--pool names a pool of a twemproxy configuration: it goes with --from twemproxy",
                run("build", "--from", "libketama", yml.toString(), "--pool", "alpha", "-o", ring)
                        .assertError(Main.USAGE, "build"));
        assertEquals(
                "option --from given twice",
                run("build", "--from", "twemproxy", "--from", "nginx", yml.toString(), "-o", ring)
                        .assertError(Main.USAGE, "build"));
        assertEquals(List.of(), otherFiles(dir, yml), "nothing written");
    }

    @Test
    void helpShowsFromAndPool() {
        String help = run("build", "--help").assertOk().out();
        assertTrue(
                help.startsWith(
                        "usage: ringstore build BACKENDS -o RINGFILE [--from nginx|twemproxy|libketama|haproxy [--pool NAME | --backend NAME]] "),
                help);
        assertTrue(help.contains("  --from FORMAT  "), help);
        assertTrue(help.contains("  --pool NAME  "), help);
    }

    // ---- analyze ----

    @Test
    void analyzeReadsTheSameInputs(@TempDir Path dir) throws Exception {
        Path yml = nutcracker(dir);
        CliRun r = run("analyze", yml.toString(), "--from", "twemproxy", "--pool", "delta")
                .assertOk();
        assertTrue(
                r.out().startsWith("file: " + yml + ": 10 backends, features: (none), versions: twemproxy:fnv1a_64\n"),
                r.out());
        CliRun k = run("analyze", ketama(dir).toString(), "--from", "libketama").assertOk();
        assertTrue(
                k.out()
                        .startsWith("file: " + dir.resolve("ketama.servers")
                                + ": 8 backends, features: (none), versions: libketama\n"),
                k.out());
        assertEquals(
                yml + ": " + POOLS,
                run("analyze", yml.toString(), "--from", "twemproxy").assertError(Main.FAILED, "analyze"));
        assertEquals(
                "--from says what a BACKENDS_FILE is; a --backends sweep reads none",
                run("analyze", "--backends", "10", "--points", "1..2", "--from", "twemproxy")
                        .assertError(Main.USAGE, "analyze"));
        assertFalse(Files.exists(dir.resolve("x.ring")));
    }
}
