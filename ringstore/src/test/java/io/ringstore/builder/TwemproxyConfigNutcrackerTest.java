package io.ringstore.builder;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.testing.Twemproxy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link TwemproxyConfig} against nutcracker itself ({@code nutcracker -t}, which checks a configuration
 * and exits): every file ringstore takes, nutcracker takes; every file ringstore refuses as outside
 * nutcracker's YAML or its checks, nutcracker refuses; and the files nutcracker takes but ringstore
 * refuses are exactly the listed ones, each for a reason of ringstore's own (a ring of IP endpoints, a
 * consistent ring, one value a line, names a ring file can store).
 *
 * <p>Needs Debian's nutcracker (and memcached, as the other process tests): skipped without them,
 * unless {@code -Dringstore.requireMemcached=true}.
 */
@Tag("process")
@EnabledIf(value = Twemproxy.TESTS_RUN, disabledReason = Twemproxy.MISSING)
class TwemproxyConfigNutcrackerTest {
    private static final String HEAD = "p:\n  listen: 127.0.0.1:22121\n  servers:\n";
    private static final String TAIL = "  servers:\n  - 10.0.0.1:11211:1\n";

    @TempDir
    static Path dir;

    @BeforeAll
    static void nutcrackerIsThere() {
        Twemproxy.requireInstalled("the nutcracker config test");
    }

    /**
     * What each side does with a file: both take it, both refuse it, only ringstore refuses it (for a
     * reason the case names), or ringstore takes it as twemproxy's source (60aaf85) does while the
     * nutcracker here, 0.5.0, is older and refuses it.
     */
    private enum Verdict {
        BOTH_TAKE,
        BOTH_REFUSE,
        RINGSTORE_REFUSES,
        NEWER_THAN_0_5_0
    }

    private record Case(String name, Verdict verdict, String text) {}

    private static final List<Case> CASES = List.of(
            // both take
            new Case("compact list", Verdict.BOTH_TAKE, HEAD + "  - 10.0.0.1:11211:1\n"),
            new Case("list indented past the keys", Verdict.BOTH_TAKE, HEAD + "   - 10.0.0.1:11211:1\n"),
            new Case("IPv6 without brackets", Verdict.BOTH_TAKE, HEAD + "  - ::1:11211:1\n"),
            new Case("escapes", Verdict.BOTH_TAKE, HEAD + "  - \"10.0.0.2:11212:2 b\\x2d\\u0032\"\n"),
            new Case(
                    "'' in single quotes",
                    Verdict.BOTH_TAKE,
                    "p:\n  listen: 127.0.0.1:22121\n  redis: true\n  redis_auth: 'it''s # x'\n" + TAIL),
            new Case(
                    "BOM, CRLF, quotes, comments",
                    Verdict.BOTH_TAKE,
                    "\uFEFF# c\r\n'qp':  # c\r\n    \"listen\": \"0.0.0.0:22121\"\r\n"
                            + "    hash: 'md5'   # t\r\n    servers:\r\n    -   '10.0.0.3:11212:3'\r\n"),
            new Case(
                    "blank before a key's colon",
                    Verdict.BOTH_TAKE,
                    "p:\n  listen : 127.0.0.1:22121\n  \"hash\" : md5\n" + TAIL),
            new Case(
                    "lone CR line ends",
                    Verdict.BOTH_TAKE,
                    "p:\r  listen: 127.0.0.1:22121\r  servers:\r  - 10.0.0.1:11211:1\r"),
            new Case(
                    "every key",
                    Verdict.BOTH_TAKE,
                    "p:\n  listen: 127.0.0.1:22121\n  hash: crc32a\n  hash_tag: \"[]\"\n  distribution: ketama\n"
                            + "  timeout: 400\n  backlog: 1024\n  client_connections: 0\n  redis: true\n  tcpkeepalive: true\n"
                            + "  redis_auth: secret\n  redis_db: 3\n  preconnect: true\n  auto_eject_hosts: true\n  server_connections: 2\n"
                            + "  server_retry_timeout: 30000\n  server_failure_limit: 3\n" + TAIL),
            // reuseport came with git master after 0.5.0 (3c9cec1, merged in 60aaf85): ringstore reads the source's
            // keys
            new Case(
                    "reuseport", Verdict.NEWER_THAN_0_5_0, "p:\n  listen: 127.0.0.1:22121\n  reuseport: true\n" + TAIL),
            // both refuse: the servers
            new Case("no weight", Verdict.BOTH_REFUSE, HEAD + "  - 10.0.0.1:11211\n"),
            new Case("no weight, a name", Verdict.BOTH_REFUSE, HEAD + "  - 10.0.0.1:11211 cache-a\n"),
            new Case("weight 0", Verdict.BOTH_REFUSE, HEAD + "  - 10.0.0.1:11211:0\n"),
            new Case("a name with a space", Verdict.BOTH_REFUSE, HEAD + "  - 10.0.0.1:11211:1 my cache\n"),
            new Case("weight above int", Verdict.BOTH_REFUSE, HEAD + "  - 10.0.0.1:11211:2147483648\n"),
            new Case("same default name", Verdict.BOTH_REFUSE, HEAD + "  - 10.0.0.1:11212:1\n  - 10.0.0.1:11212:2\n"),
            new Case("same name", Verdict.BOTH_REFUSE, HEAD + "  - 10.0.0.1:11212:1 a\n  - 10.0.0.2:11212:1 a\n"),
            new Case(
                    "a name equal to a default name",
                    Verdict.BOTH_REFUSE,
                    HEAD + "  - 10.0.0.1:11211:1\n  - 10.0.0.2:11211:1 10.0.0.1\n"),
            new Case("port 0", Verdict.BOTH_REFUSE, HEAD + "  - 10.0.0.1:0:1\n"),
            new Case("port 65536", Verdict.BOTH_REFUSE, HEAD + "  - 10.0.0.1:65536:1\n"),
            new Case("port not a number", Verdict.BOTH_REFUSE, HEAD + "  - 10.0.0.1:x:1\n"),
            new Case("brackets unquoted", Verdict.BOTH_REFUSE, HEAD + "  - [::1]:11211:1\n"),
            // both refuse: the keys
            new Case("unknown hash", Verdict.BOTH_REFUSE, "p:\n  listen: 127.0.0.1:22121\n  hash: fnv1a64\n" + TAIL),
            new Case("hash in capitals", Verdict.BOTH_REFUSE, "p:\n  listen: 127.0.0.1:22121\n  hash: MD5\n" + TAIL),
            new Case(
                    "unknown distribution",
                    Verdict.BOTH_REFUSE,
                    "p:\n  listen: 127.0.0.1:22121\n  distribution: consistent\n" + TAIL),
            new Case("unknown key", Verdict.BOTH_REFUSE, HEAD + "  - 10.0.0.1:11211:1\n  hahs: md5\n"),
            new Case("not a number", Verdict.BOTH_REFUSE, "p:\n  listen: 127.0.0.1:22121\n  timeout: 4s\n" + TAIL),
            new Case("yes for true", Verdict.BOTH_REFUSE, "p:\n  listen: 127.0.0.1:22121\n  redis: yes\n" + TAIL),
            new Case(
                    "True for true", Verdict.BOTH_REFUSE, "p:\n  listen: 127.0.0.1:22121\n  preconnect: True\n" + TAIL),
            new Case(
                    "hash_tag of one character",
                    Verdict.BOTH_REFUSE,
                    "p:\n  listen: 127.0.0.1:22121\n  hash_tag: \"{\"\n" + TAIL),
            new Case(
                    "server_connections 0",
                    Verdict.BOTH_REFUSE,
                    "p:\n  listen: 127.0.0.1:22121\n  server_connections: 0\n" + TAIL),
            new Case(
                    "redis_auth without redis",
                    Verdict.BOTH_REFUSE,
                    "p:\n  listen: 127.0.0.1:22121\n  redis_auth: pw\n" + TAIL),
            new Case("listen without port", Verdict.BOTH_REFUSE, "p:\n  listen: 22121\n" + TAIL),
            new Case("listen on port 0", Verdict.BOTH_REFUSE, "p:\n  listen: 127.0.0.1:0\n" + TAIL),
            // issue 31, item 6: files ringstore built from, which nutcracker refuses
            new Case("listen host with a colon", Verdict.BOTH_REFUSE, "p:\n  listen: 12:7.0.0.1:22121\n" + TAIL),
            new Case("listen host in brackets", Verdict.BOTH_REFUSE, "p:\n  listen: [::1]:22121\n" + TAIL),
            new Case(
                    "U+FEFF inside the listen address",
                    Verdict.BOTH_REFUSE,
                    "p:\n  listen: 127.0.0.1\uFEFF:22121\n" + TAIL),
            new Case("NUL in a pool name", Verdict.BOTH_REFUSE, "p\u0000q:\n  listen: 127.0.0.1:22121\n" + TAIL),
            new Case(
                    "control character in a pool name",
                    Verdict.BOTH_REFUSE,
                    "p\u0001q:\n  listen: 127.0.0.1:22121\n" + TAIL),
            new Case(
                    "DEL in a value",
                    Verdict.BOTH_REFUSE,
                    "p:\n  listen: 127.0.0.1:22121\n  hash_tag: \"{\u007f\"\n" + TAIL),
            new Case("listen on localhost", Verdict.BOTH_TAKE, "p:\n  listen: localhost:22121\n" + TAIL),
            new Case("listen on 127.1", Verdict.BOTH_TAKE, "p:\n  listen: 127.1:22121\n" + TAIL),
            new Case("listen on ::1", Verdict.BOTH_TAKE, "p:\n  listen: ::1:22121\n" + TAIL),
            new Case("tab in a pool name", Verdict.BOTH_TAKE, "p\tq:\n  listen: 127.0.0.1:22121\n" + TAIL),
            new Case("no listen", Verdict.BOTH_REFUSE, "p:\n  hash: md5\n" + TAIL),
            // both refuse: the YAML
            new Case("key indented more", Verdict.BOTH_REFUSE, "p:\n  listen: 127.0.0.1:22121\n   hash: md5\n" + TAIL),
            new Case(
                    "items less indented than keys",
                    Verdict.BOTH_REFUSE,
                    "p:\n    listen: 127.0.0.1:22121\n    servers:\n  - 10.0.0.1:11211:1\n"),
            new Case(
                    "items at two indentations",
                    Verdict.BOTH_REFUSE,
                    HEAD + "    - 10.0.0.1:11211:1\n   - 10.0.0.2:11211:1\n"),
            new Case("tab indentation", Verdict.BOTH_REFUSE, "p:\n  listen: 127.0.0.1:22121\n\thash: md5\n" + TAIL),
            new Case("top-level key: value", Verdict.BOTH_REFUSE, "listen: 127.0.0.1:22121\n"),
            new Case(
                    "pool twice",
                    Verdict.BOTH_REFUSE,
                    HEAD + "  - 10.0.0.1:11211:1\np:\n  listen: 127.0.0.1:1\n" + TAIL),
            new Case(
                    "key twice",
                    Verdict.BOTH_REFUSE,
                    "p:\n  listen: 127.0.0.1:22121\n  listen: 127.0.0.1:22122\n" + TAIL),
            new Case(
                    "servers twice",
                    Verdict.BOTH_REFUSE,
                    HEAD + "  - 10.0.0.1:11211:1\n  servers:\n  - 10.0.0.2:11211:1\n"),
            new Case("empty value", Verdict.BOTH_REFUSE, "p:\n  listen:\n" + TAIL),
            new Case(
                    "servers with a value",
                    Verdict.BOTH_REFUSE,
                    "p:\n  listen: 127.0.0.1:22121\n  servers: 10.0.0.1:11211:1\n"),
            new Case(
                    "servers empty, a key after",
                    Verdict.BOTH_REFUSE,
                    "p:\n  listen: 127.0.0.1:22121\n  servers:\n  timeout: 4\n"),
            new Case("servers empty at the end", Verdict.BOTH_REFUSE, "p:\n  listen: 127.0.0.1:22121\n  servers:\n"),
            new Case("no servers", Verdict.BOTH_REFUSE, "p:\n  listen: 127.0.0.1:22121\n"),
            new Case("pool without keys", Verdict.BOTH_REFUSE, "p:\nq:\n  listen: 127.0.0.1:22121\n" + TAIL),
            new Case(
                    "list outside servers",
                    Verdict.BOTH_REFUSE,
                    "p:\n  listen: 127.0.0.1:22121\n  - 10.0.0.1:11211:1\n"),
            new Case("empty item", Verdict.BOTH_REFUSE, HEAD + "  -\n"),
            new Case("only a comment", Verdict.BOTH_REFUSE, "# nothing\n\n"),
            new Case("empty file", Verdict.BOTH_REFUSE, ""),
            new Case("document start", Verdict.BOTH_REFUSE, "---\n" + HEAD + "  - 10.0.0.1:11211:1\n"),
            new Case("directive", Verdict.BOTH_REFUSE, "%YAML 1.1\n---\n" + HEAD + "  - 10.0.0.1:11211:1\n"),
            new Case("no colon", Verdict.BOTH_REFUSE, "p:\n  listen 127.0.0.1:22121\n" + TAIL),
            new Case(
                    "no blank after the colon",
                    Verdict.BOTH_REFUSE,
                    "p:\n  hash:md5\n  listen: 127.0.0.1:22121\n" + TAIL),
            new Case("flow sequence", Verdict.BOTH_REFUSE, "p:\n  listen: [127.0.0.1:22121]\n" + TAIL),
            new Case("flow mapping", Verdict.BOTH_REFUSE, "p:\n  listen: 127.0.0.1:22121\n  hash_tag: {}\n" + TAIL),
            new Case("anchor", Verdict.BOTH_REFUSE, "p:\n  listen: &a 127.0.0.1:22121\n" + TAIL),
            new Case("tag", Verdict.BOTH_REFUSE, "p:\n  listen: !!str 127.0.0.1:22121\n" + TAIL),
            new Case("block scalar", Verdict.BOTH_REFUSE, "p:\n  listen: |\n    127.0.0.1:22121\n" + TAIL),
            new Case("nested list", Verdict.BOTH_REFUSE, "p:\n  listen: - a\n" + TAIL),
            new Case("nested mapping", Verdict.BOTH_REFUSE, "p:\n  listen: a: b\n" + TAIL),
            new Case("item ending in a colon", Verdict.BOTH_REFUSE, HEAD + "  - 10.0.0.1:11211:1 a:\n"),
            new Case("unterminated quote", Verdict.BOTH_REFUSE, "p:\n  listen: \"127.0.0.1:22121\n" + TAIL),
            new Case("text after a quote", Verdict.BOTH_REFUSE, "p:\n  listen: '127.0.0.1:22121' x\n" + TAIL),
            new Case("unknown escape", Verdict.BOTH_REFUSE, "p:\n  listen: \"127.0.0.1:\\q\"\n" + TAIL),
            new Case("text after a quoted key", Verdict.BOTH_REFUSE, "p:\n  \"listen\"x: y\n" + TAIL),
            // nutcracker takes them, ringstore does not, for reasons of its own
            new Case(
                    "a value continued on the next line",
                    Verdict.RINGSTORE_REFUSES,
                    HEAD + "  - 10.0.0.1:11211:1\n    cache-a\n"),
            new Case(
                    "'#' right after a closing quote",
                    Verdict.RINGSTORE_REFUSES,
                    "p:\n  listen: '127.0.0.1:22121'# x\n" + TAIL),
            new Case(
                    "distribution modula",
                    Verdict.RINGSTORE_REFUSES,
                    "p:\n  listen: 127.0.0.1:22121\n  distribution: modula\n" + TAIL),
            new Case(
                    "distribution random",
                    Verdict.RINGSTORE_REFUSES,
                    "p:\n  listen: 127.0.0.1:22121\n  distribution: random\n" + TAIL),
            new Case("host name", Verdict.RINGSTORE_REFUSES, HEAD + "  - cache1.example.com:11211:1 cache1\n"),
            new Case("unix socket", Verdict.RINGSTORE_REFUSES, HEAD + "  - /var/run/memcached.sock:1 local\n"),
            new Case("brackets quoted", Verdict.RINGSTORE_REFUSES, HEAD + "  - '[::1]:11211:1'\n"),
            new Case("leading zero in the address", Verdict.RINGSTORE_REFUSES, HEAD + "  - 010.0.0.1:11211:1\n"),
            new Case("leading zero in the port", Verdict.RINGSTORE_REFUSES, HEAD + "  - 10.0.0.1:011212:1\n"),
            new Case("no host", Verdict.RINGSTORE_REFUSES, HEAD + "  - :11211:1\n"),
            new Case(
                    "same address, two names",
                    Verdict.RINGSTORE_REFUSES,
                    HEAD + "  - 10.0.0.1:11212:1 a\n  - 10.0.0.1:11212:1 b\n"),
            new Case("a name with a comma", Verdict.RINGSTORE_REFUSES, HEAD + "  - 10.0.0.1:11212:1 a,b\n"),
            new Case("a name with '#'", Verdict.RINGSTORE_REFUSES, HEAD + "  - 10.0.0.1:11212:1 a#1\n"),
            new Case("a space and no name", Verdict.RINGSTORE_REFUSES, HEAD + "  - '10.0.0.1:11212:1 '\n"));

    @Test
    void ringstoreAndNutcrackerAgreeExceptWhereListed() throws Exception {
        List<String> wrong = new ArrayList<>();
        for (int i = 0; i < CASES.size(); i++) {
            Case c = CASES.get(i);
            Path file = Files.writeString(dir.resolve("case-" + i + ".yml"), c.text(), StandardCharsets.UTF_8);
            boolean nutcracker = Twemproxy.acceptsConfig(file);
            String ringstore;
            try {
                TwemproxyConfig.parse(file, null);
                ringstore = null;
            } catch (BackendsFileException e) {
                ringstore = e.getMessage();
            }
            boolean expectNutcracker = c.verdict() == Verdict.BOTH_TAKE || c.verdict() == Verdict.RINGSTORE_REFUSES;
            boolean expectRingstore = c.verdict() == Verdict.BOTH_TAKE || c.verdict() == Verdict.NEWER_THAN_0_5_0;
            if (nutcracker != expectNutcracker || (ringstore == null) != expectRingstore) {
                wrong.add(c.name() + " (" + c.verdict() + "): nutcracker " + (nutcracker ? "takes it" : "refuses it")
                        + ", ringstore " + (ringstore == null ? "takes it" : "refuses it: " + ringstore));
            }
        }
        assertEquals(List.of(), wrong, () -> String.join("\n", wrong));
    }

    /** twemproxy's own sample configurations: nutcracker takes them, and so does ringstore, every pool. */
    @Test
    void bothTakeTwemproxysSamples() throws Exception {
        for (String sample : List.of("nutcracker.yml", "nutcracker.root.yml", "nutcracker.leaf.yml")) {
            Path file = Files.copy(TwemproxyConfigTest.CONF.resolve(sample), dir.resolve(sample));
            assertTrue(Twemproxy.acceptsConfig(file), sample);
        }
        for (String pool : List.of("alpha", "beta", "gamma", "delta", "omega")) {
            assertEquals(
                    pool,
                    TwemproxyConfig.parse(dir.resolve("nutcracker.yml"), pool).pool());
        }
    }
}
