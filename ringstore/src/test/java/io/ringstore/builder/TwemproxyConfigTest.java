package io.ringstore.builder;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.Backend;
import io.ringstore.family.KeyHash;
import io.ringstore.family.RingVersion;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.FieldSource;

/**
 * {@link TwemproxyConfig}: twemproxy's own sample configurations (configs/README.md), the YAML that
 * nutcracker reads, and every refusal with its exact message and line.
 */
class TwemproxyConfigTest {
    /** twitter/twemproxy conf/, byte for byte (configs/README.md gives commit and blob ids). */
    static final Path CONF = Path.of("src/test/resources/configs/twemproxy");

    private static TwemproxyConfig parse(String text) throws BackendsFileException {
        return TwemproxyConfig.parse("t.yml", text, null);
    }

    /** A pool around {@code body} (the lines after {@code servers:}, or more keys). */
    private static String pool(String servers) {
        return "p:\n  listen: 127.0.0.1:22121\n  servers:\n" + servers;
    }

    /** Asserts that {@code text} is refused at {@code line} with exactly {@code reason}. */
    private static void fails(String text, String pool, int line, String reason) {
        BackendsFileException e =
                assertThrows(BackendsFileException.class, () -> TwemproxyConfig.parse("t.yml", text, pool), text);
        assertEquals(reason, e.reason(), text);
        assertEquals(line, e.line(), () -> "line of: " + e.getMessage());
        assertEquals("t.yml", e.source());
        assertEquals("t.yml" + (line > 0 ? ":" + line : "") + ": " + reason, e.getMessage());
    }

    private static void fails(String text, int line, String reason) {
        fails(text, null, line, reason);
    }

    private static List<String> addresses(TwemproxyConfig c) {
        return c.backends().backends().stream().map(Backend::address).toList();
    }

    private static List<Long> weights(TwemproxyConfig c) {
        return c.backends().backends().stream().map(Backend::weight).toList();
    }

    private static List<String> names(TwemproxyConfig c) {
        return c.backends().backends().stream().map(Backend::name).toList();
    }

    // ---- twemproxy's own conf/nutcracker.yml ----

    @Test
    void theSampleHasFivePoolsAndNeedsOneNamed() {
        BackendsFileException e = assertThrows(
                BackendsFileException.class, () -> TwemproxyConfig.parse(CONF.resolve("nutcracker.yml"), null));
        assertEquals(
                CONF.resolve("nutcracker.yml")
                        + ": 5 pools (alpha, beta, gamma, delta, omega): name the one to build (--pool NAME)",
                e.getMessage());
        assertEquals(0, e.line());
        BackendsFileException unknown = assertThrows(
                BackendsFileException.class, () -> TwemproxyConfig.parse(CONF.resolve("nutcracker.yml"), "zeta"));
        assertEquals("no pool 'zeta' (the file's pools: alpha, beta, gamma, delta, omega)", unknown.reason());
    }

    @Test
    void theSamplesPoolsAreReadAsWritten() throws Exception {
        Path file = CONF.resolve("nutcracker.yml");
        TwemproxyConfig alpha = TwemproxyConfig.parse(file, "alpha");
        assertEquals("alpha", alpha.pool());
        assertEquals(List.of("127.0.0.1:6379"), addresses(alpha));
        assertEquals(List.of(1L), weights(alpha));
        assertEquals(java.util.Arrays.asList((String) null), names(alpha));
        assertEquals("fnv1a_64", alpha.hash());
        assertEquals(RingVersion.parse("twemproxy:fnv1a_64"), alpha.version());
        assertTrue(alpha.autoEjectHosts());
        assertNull(alpha.hashTag());
        assertEquals(
                List.of(10),
                alpha.backends().backends().stream().map(Backend::line).toList());
        assertEquals(file.toString(), alpha.backends().source());

        TwemproxyConfig beta = TwemproxyConfig.parse(file, "beta");
        assertEquals(List.of("127.0.0.1:6380", "127.0.0.1:6381", "127.0.0.1:6382", "127.0.0.1:6383"), addresses(beta));
        assertEquals(List.of("server1", "server2", "server3", "server4"), names(beta));
        assertEquals(
                List.of(21, 22, 23, 24),
                beta.backends().backends().stream().map(Backend::line).toList());
        assertEquals("{}", beta.hashTag());
        assertFalse(beta.autoEjectHosts());

        TwemproxyConfig gamma = TwemproxyConfig.parse(file, "gamma");
        assertEquals(List.of("127.0.0.1:11212", "127.0.0.1:11213"), addresses(gamma));
        assertTrue(gamma.autoEjectHosts());

        TwemproxyConfig delta = TwemproxyConfig.parse(file, "delta");
        assertEquals(
                IntStream.rangeClosed(11214, 11223)
                        .mapToObj(p -> "127.0.0.1:" + p)
                        .toList(),
                addresses(delta));
        assertEquals(List.of(1L, 1L, 1L, 1L, 1L, 1L, 1L, 1L, 1L, 1L), weights(delta));

        TwemproxyConfig omega = TwemproxyConfig.parse(file, "omega");
        assertEquals(List.of("127.0.0.1:11214", "127.0.0.1:11215"), addresses(omega));
        assertEquals(List.of(100000L, 1L), weights(omega));
        assertEquals("hsieh", omega.hash());
        assertEquals(RingVersion.parse("twemproxy:hsieh"), omega.version());
        assertFalse(omega.autoEjectHosts());
    }

    @Test
    void aFileWithOnePoolNeedsNoName() throws Exception {
        TwemproxyConfig root = TwemproxyConfig.parse(CONF.resolve("nutcracker.root.yml"), null);
        assertEquals("root", root.pool());
        assertEquals(List.of("127.0.0.1:22121"), addresses(root));
        TwemproxyConfig leaf = TwemproxyConfig.parse(CONF.resolve("nutcracker.leaf.yml"), null);
        assertEquals("leaf", leaf.pool());
        assertEquals(List.of("127.0.0.1:11212", "127.0.0.1:11213"), addresses(leaf));
        assertEquals(
                "leaf",
                TwemproxyConfig.parse(CONF.resolve("nutcracker.leaf.yml"), "leaf")
                        .pool());
    }

    // ---- what is read ----

    @Test
    void defaultsAreNutcrackersFnv1a64AndKetama() throws Exception {
        TwemproxyConfig c = parse(pool("   - 10.0.0.1:11211:1\n"));
        assertEquals(TwemproxyConfig.DEFAULT_HASH, c.hash());
        assertEquals("fnv1a_64", c.hash());
        assertEquals(RingVersion.parse("twemproxy"), c.version());
        assertFalse(c.autoEjectHosts());
        assertNull(c.hashTag());
    }

    static final List<String> HASHES = KeyHash.TWEMPROXY_HASHES;

    @ParameterizedTest
    @FieldSource("HASHES")
    void everyOneOfTheTwelveHashesChoosesItsVersion(String hash) throws Exception {
        TwemproxyConfig c = parse("p:\n  listen: 127.0.0.1:22121\n  hash: " + hash
                + "\n  distribution: ketama\n  servers:\n   - 10.0.0.1:11212:1\n");
        assertEquals(hash, c.hash());
        assertEquals("twemproxy:" + hash, c.version().name());
        assertEquals(
                KeyHash.twemproxy(hash).name(),
                c.version().keyHash().name()); // the pool hash: the same hash, an empty key 0
    }

    @Test
    void nutcrackersTwelveHashesAreTheOnesItsConfigNames() {
        // nc_hashkit.h HASH_CODEC, in its order (twitter/twemproxy 60aaf85)
        assertEquals(
                List.of(
                        "one_at_a_time",
                        "md5",
                        "crc16",
                        "crc32",
                        "crc32a",
                        "fnv1_64",
                        "fnv1a_64",
                        "fnv1_32",
                        "fnv1a_32",
                        "hsieh",
                        "murmur",
                        "jenkins"),
                KeyHash.TWEMPROXY_HASHES);
    }

    @Test
    void serversNamesWeightsAndAddressesAsWritten() throws Exception {
        TwemproxyConfig c = parse(pool("""
                   - 10.0.0.1:11211:1
                   - 10.0.0.2:11212:3 cache-b
                   - ::1:11213:2
                   - 2001:db8::7:11211:5 v6-named
                """));
        assertEquals(List.of("10.0.0.1:11211", "10.0.0.2:11212", "[::1]:11213", "[2001:db8::7]:11211"), addresses(c));
        assertEquals(List.of(1L, 3L, 2L, 5L), weights(c));
        assertEquals(java.util.Arrays.asList(null, "cache-b", null, "v6-named"), names(c));
        assertEquals(
                List.of(4, 5, 6, 7),
                c.backends().backends().stream().map(Backend::line).toList());
        assertTrue(c.backends().features().isEmpty());
    }

    @Test
    void yamlAsNutcrackerReadsIt() throws Exception {
        String text = "\uFEFF# a comment first\r\n"
                + "\r\n"
                + "'quoted pool':   # a comment after the pool\r\n"
                + "    # a comment among the keys, at another indentation\r\n"
                + "    \"listen\": \"0.0.0.0:22121\"\r\n"
                + "    hash: 'md5'   # trailing comment\r\n"
                + "    hash_tag: \"{}\"\r\n"
                + "    distribution: ketama\r\n"
                + "    timeout: 400\r\n"
                + "    redis: true\r\n"
                + "    redis_auth: 'it''s # not a comment'\r\n"
                + "    servers:\r\n"
                + "    - 10.0.0.1:11212:1 a#1\r\n" // the compact list, at the keys' indentation; '#' inside a word
                + "    - \"10.0.0.2:11212:2 b\\x2d\\u0032\"\r\n" // escapes: b-2
                + "    -   '10.0.0.3:11212:3'\r\n"
                + "\r\n"
                + "other:\r\n"
                + " listen: 127.0.0.1:22122\r\n"
                + " servers:\r\n"
                + "      - 10.0.0.9:11211:1\r\n";
        BackendsFileException hash =
                assertThrows(BackendsFileException.class, () -> TwemproxyConfig.parse("t.yml", text, "quoted pool"));
        assertEquals(13, hash.line(), hash.getMessage()); // '#' is not in the names ringstore stores
        TwemproxyConfig c = TwemproxyConfig.parse("t.yml", text.replace("a#1", "a1"), "quoted pool");
        assertEquals("quoted pool", c.pool());
        assertEquals("md5", c.hash());
        assertEquals("{}", c.hashTag());
        assertEquals(List.of("10.0.0.1:11212", "10.0.0.2:11212", "10.0.0.3:11212"), addresses(c));
        assertEquals(java.util.Arrays.asList("a1", "b-2", null), names(c));
        assertEquals(
                List.of(13, 14, 15),
                c.backends().backends().stream().map(Backend::line).toList());
        assertEquals(
                List.of("10.0.0.9:11211"),
                addresses(TwemproxyConfig.parse("t.yml", text.replace("a#1", "a1"), "other")));
    }

    @Test
    void everyKeyNutcrackerKnowsIsAcceptedAndIgnored() throws Exception {
        TwemproxyConfig c = parse("""
                full:
                  listen: /var/run/nutcracker.sock 0666
                  hash: crc32a
                  hash_tag: "[]"
                  distribution: ketama
                  timeout: 400
                  backlog: 1024
                  client_connections: 0
                  redis: true
                  tcpkeepalive: true
                  reuseport: false
                  redis_auth: secret
                  redis_db: 3
                  preconnect: true
                  auto_eject_hosts: true
                  server_connections: 2
                  server_retry_timeout: 30000
                  server_failure_limit: 3
                  servers:
                   - 10.0.0.1:11212:1
                """);
        assertEquals("crc32a", c.hash());
        assertEquals("[]", c.hashTag());
        assertTrue(c.autoEjectHosts());
        assertEquals(1, c.backends().size());
    }

    @Test
    void theFileIsReadFromDiskAsUtf8(@TempDir Path dir) throws Exception {
        Path file =
                Files.writeString(dir.resolve("n.yml"), pool("  - 10.0.0.1:11212:1 caché\n"), StandardCharsets.UTF_8);
        BackendsFileException e = assertThrows(BackendsFileException.class, () -> TwemproxyConfig.parse(file, null));
        assertEquals(
                file
                        + ":4: bad name 'caché' (1 to 255 printable ASCII characters without blanks, ',', ';', '#', quotes or '\\')",
                e.getMessage());
        Files.write(file, new byte[] {'#', '\n', 'p', ':', (byte) 0xff, '\n'});
        assertEquals(
                file + ":2: not UTF-8 text: byte 0xff at byte 4",
                assertThrows(BackendsFileException.class, () -> TwemproxyConfig.parse(file, null))
                        .getMessage());
        BackendsFileException missing =
                assertThrows(BackendsFileException.class, () -> TwemproxyConfig.parse(dir.resolve("none.yml"), null));
        assertEquals(0, missing.line());
        assertTrue(missing.reason().startsWith("cannot read: "), missing.getMessage());
    }

    // ---- servers refused ----

    @Test
    void aServerWithoutWeightIsRefused() {
        fails(
                pool("  - 10.0.0.1:11211\n"),
                4,
                "server '10.0.0.1:11211' has no weight: nutcracker's servers are host:port:weight [name], the weight mandatory");
        fails(
                pool("  - 10.0.0.1:11211 cache-a\n"),
                4,
                "server '10.0.0.1:11211 cache-a' has no weight: nutcracker's servers are host:port:weight [name], the weight mandatory");
        fails(pool("  - 10.0.0.1\n"), 4, "server '10.0.0.1' is not host:port:weight [name]");
    }

    @Test
    void weightZeroOrNotANumberIsRefused() {
        fails(
                pool("  - 10.0.0.1:11211:1\n  - 10.0.0.2:11211:0\n"),
                5,
                "weight 0 of server '10.0.0.2:11211:0': nutcracker's weights are above 0");
        fails(
                pool("  - 10.0.0.1:11211:1 my cache\n"),
                4,
                "weight '1 my' of server '10.0.0.1:11211:1 my cache' is not a number (host:port:weight [name], one space before the name, none in it)");
        fails(
                pool("  - 10.0.0.1:11211:-1\n"),
                4,
                "weight '-1' of server '10.0.0.1:11211:-1' is not a number (host:port:weight [name], one space before the name, none in it)");
        fails(pool("  - 10.0.0.1:11211:2147483648\n"), 4, "weight '2147483648' is too large (at most 2147483647)");
    }

    @Test
    void duplicateServersAreRefused() {
        fails(
                pool("  - 10.0.0.1:11212:1\n  - 10.0.0.1:11212:2\n"),
                5,
                "server name '10.0.0.1:11212' again: the server on line 4 has it already"
                        + " (nutcracker names a server without a name host:port, or host on port 11211; nutcracker refuses servers with the same name)");
        fails(
                pool("  - 10.0.0.1:11212:1 a\n  - 10.0.0.2:11212:1 a\n"),
                5,
                "server name 'a' again: the server on line 4 has it already (nutcracker refuses servers with the same name)");
        fails(
                pool("  - 10.0.0.1:11211:1\n  - 10.0.0.2:11211:1 10.0.0.1\n"),
                5,
                "server name '10.0.0.1' again: the server on line 4 has it already (nutcracker refuses servers with the same name)");
        fails(
                pool("  - 10.0.0.1:11212:1 a\n  - 10.0.0.1:11212:1 b\n"),
                5,
                "duplicate backend '10.0.0.1:11212': same address and port as line 4 ('10.0.0.1:11212')");
    }

    @Test
    void hostNamesAndUnixSocketsAreRefused() {
        fails(
                pool("  - cache1.example.com:11211:1 cache1\n"),
                4,
                "bad address 'cache1.example.com:11211': host names are not supported, write an IP address");
        fails(
                pool("  - /var/run/memcached.sock:1 local\n"),
                4,
                "unix socket '/var/run/memcached.sock:1 local': not supported, a ring needs IP endpoints");
        fails(
                pool("  - [::1]:11211:1\n"),
                4,
                "'[' starts a flow collection, which nutcracker refuses: write a plain or quoted value");
        fails(
                pool("  - '[::1]:11211:1'\n"),
                4,
                "host '[::1]': nutcracker gives the host to getaddrinfo, which takes no brackets (write an IPv6 server as ::1:11211:1)");
        fails(
                pool("  - 010.0.0.1:11211:1\n"),
                4,
                "host '010.0.0.1' has a part with a leading zero, which nutcracker's getaddrinfo reads as octal: write the address without leading zeros");
        fails(pool("  - :11211:1\n"), 4, "a server without a host before ':11211'");
    }

    @Test
    void badPortsAreRefused() {
        fails(pool("  - 10.0.0.1:0:1\n"), 4, "port '0' of server '10.0.0.1:0:1' is not a number from 1 to 65535");
        fails(
                pool("  - 10.0.0.1:65536:1\n"),
                4,
                "port '65536' of server '10.0.0.1:65536:1' is not a number from 1 to 65535");
        fails(pool("  - 10.0.0.1:x:1\n"), 4, "port 'x' of server '10.0.0.1:x:1' is not a number from 1 to 65535");
        fails(
                pool("  - 10.0.0.1:011212:1\n"),
                4,
                "port '011212' has a leading zero: nutcracker hashes the port as written, write it without one");
    }

    @Test
    void badNamesAreRefused() {
        fails(
                pool("  - 10.0.0.1:11212:1 a,b\n"),
                4,
                "bad name 'a,b' (1 to 255 printable ASCII characters without blanks, ',', ';', '#', quotes or '\\')");
        fails(
                pool("  - '10.0.0.1:11212:1 '\n"),
                4,
                "server '10.0.0.1:11212:1 ' ends with a space and no name after it");
    }

    // ---- keys refused ----

    @Test
    void unknownHashListsTheTwelve() {
        fails(
                "p:\n  listen: 127.0.0.1:22121\n  hash: fnv1a64\n  servers:\n  - 10.0.0.1:11211:1\n",
                3,
                "unknown hash 'fnv1a64' (nutcracker's twelve:"
                        + " one_at_a_time, md5, crc16, crc32, crc32a, fnv1_64, fnv1a_64, fnv1_32, fnv1a_32, hsieh, murmur, jenkins)");
        fails(
                "p:\n  listen: 127.0.0.1:22121\n  hash: MD5\n  servers:\n  - 10.0.0.1:11211:1\n",
                3,
                "unknown hash 'MD5' (nutcracker's twelve:"
                        + " one_at_a_time, md5, crc16, crc32, crc32a, fnv1_64, fnv1a_64, fnv1_32, fnv1a_32, hsieh, murmur, jenkins)");
    }

    @Test
    void distributionsOtherThanKetamaAreRefused() {
        fails(
                "p:\n  listen: 127.0.0.1:22121\n  distribution: modula\n  servers:\n  - 10.0.0.1:11211:1\n",
                3,
                "distribution 'modula':"
                        + " ringstore builds ketama rings only (nutcracker's modula is not consistent hashing: keys do not stay put when a server is added)");
        fails(
                "p:\n  listen: 127.0.0.1:22121\n  distribution: random\n  servers:\n  - 10.0.0.1:11211:1\n",
                3,
                "distribution 'random':"
                        + " ringstore builds ketama rings only (nutcracker's random is not consistent hashing: keys do not stay put when a server is added)");
        fails(
                "p:\n  listen: 127.0.0.1:22121\n  distribution: consistent\n  servers:\n  - 10.0.0.1:11211:1\n",
                3,
                "unknown distribution 'consistent' (nutcracker's: ketama, modula, random)");
    }

    @Test
    void unknownKeysAreRefusedInEveryPool() {
        String known =
                "listen, hash, hash_tag, distribution, timeout, backlog, client_connections, redis, tcpkeepalive, reuseport,"
                        + " redis_auth, redis_db, preconnect, auto_eject_hosts, server_connections, server_retry_timeout, server_failure_limit, servers";
        fails(
                pool("  - 10.0.0.1:11211:1\n  hahs: md5\n"),
                5,
                "unknown key 'hahs' in pool 'p' (nutcracker's: " + known + ")");
        fails(
                pool("  - 10.0.0.1:11211:1\n")
                        + "q:\n  listen: 127.0.0.1:1\n  dist: ketama\n  servers:\n  - 10.0.0.1:11211:1\n",
                "p",
                7,
                "unknown key 'dist' in pool 'q' (nutcracker's: " + known + ")");
    }

    @Test
    void ignoredKeysAreCheckedAsNutcrackerChecksThem() {
        String servers = "  servers:\n  - 10.0.0.1:11211:1\n";
        fails(
                "p:\n  listen: 127.0.0.1:22121\n  timeout: 4s\n" + servers,
                3,
                "'timeout: 4s': not a number (nutcracker's are digits, at most 2147483647)");
        fails(
                "p:\n  listen: 127.0.0.1:22121\n  redis: yes\n" + servers,
                3,
                "'redis: yes': nutcracker takes true or false (lower case) only");
        fails(
                "p:\n  listen: 127.0.0.1:22121\n  preconnect: True\n" + servers,
                3,
                "'preconnect: True': nutcracker takes true or false (lower case) only");
        fails(
                "p:\n  listen: 127.0.0.1:22121\n  hash_tag: \"{\"\n" + servers,
                3,
                "hash_tag '{': nutcracker takes two characters, as \"{}\"");
        fails(
                "p:\n  listen: 127.0.0.1:22121\n  server_connections: 0\n" + servers,
                3,
                "'server_connections: 0': nutcracker refuses 0");
        fails(
                "p:\n  listen: 127.0.0.1:22121\n  redis_auth: pw\n" + servers,
                3,
                "'redis_auth:' without 'redis: true' (nutcracker takes it only for a redis pool)");
        fails(
                "p:\n  listen: 22121\n" + servers,
                2,
                "listen '22121': nutcracker takes host:port (port 1-65535) or /path/to/socket");
        fails(
                "p:\n  listen: 127.0.0.1:0\n" + servers,
                2,
                "listen '127.0.0.1:0': nutcracker takes host:port (port 1-65535) or /path/to/socket");
        fails(
                "p:\n  hash: md5\n" + servers,
                1,
                "pool 'p' has no 'listen:', which nutcracker requires (is this nutcracker's configuration?)");
    }

    @Test
    void theChosenPoolsValuesAreCheckedTheOthersKeysOnly() throws Exception {
        String other =
                "other:\n  listen: 127.0.0.1:22122\n  hash: nonsense\n  servers:\n  - cache.example.com:11211:1\n";
        assertEquals(
                1,
                TwemproxyConfig.parse("t.yml", pool("  - 10.0.0.1:11211:1\n") + other, "p")
                        .backends()
                        .size());
        fails(
                pool("  - 10.0.0.1:11211:1\n") + other,
                "other",
                7,
                "unknown hash 'nonsense' (nutcracker's twelve:"
                        + " one_at_a_time, md5, crc16, crc32, crc32a, fnv1_64, fnv1a_64, fnv1_32, fnv1a_32, hsieh, murmur, jenkins)");
    }

    // ---- YAML refused ----

    @Test
    void wrongIndentationIsRefused() {
        fails(
                "p:\n  listen: 127.0.0.1:22121\n   hash: md5\n  servers:\n  - 10.0.0.1:11211:1\n",
                3,
                "wrong indentation: the keys of pool 'p' are indented by 2 spaces (line 2), this line by 3 (a value continued here? ringstore reads each value on one line)");
        fails(
                pool("    - 10.0.0.1:11211:1\n   - 10.0.0.2:11211:1\n"),
                5,
                "wrong indentation: the servers of pool 'p' are indented by 4 spaces (line 4), this line by 3 (a value continued here? ringstore reads each value on one line)");
        fails(
                "p:\n    listen: 127.0.0.1:22121\n    servers:\n  - 10.0.0.1:11211:1\n",
                4,
                "wrong indentation: the keys of pool 'p' are indented by 4 spaces (line 2), this line by 2 (a value continued here? ringstore reads each value on one line)");
        fails(
                "p:\n  listen: 127.0.0.1:22121\n  servers:\n  - 10.0.0.1:11211:1\n    cache-a\n",
                5,
                "wrong indentation: the keys of pool 'p' are indented by 2 spaces (line 2), this line by 4 (a value continued here? ringstore reads each value on one line)");
        fails(
                "p:\n  listen: 127.0.0.1:22121\n\thash: md5\n",
                3,
                "a tab in the indentation: YAML indents with spaces only");
        fails(
                "  listen: 127.0.0.1:22121\n",
                1,
                "an indented line before the first pool: a nutcracker configuration starts with a pool's 'NAME:' in the first column");
    }

    @Test
    void structureOutsideNutcrackersIsRefused() {
        fails(
                "listen: 127.0.0.1:22121\n",
                1,
                "a 'key: value' in the first column ('listen'): nutcracker's top level holds pools,"
                        + " each 'NAME:' with its keys indented on the lines below");
        fails(
                "p:\n  listen: 127.0.0.1:22121\n  servers:\n  - 10.0.0.1:11211:1\np:\n  listen: 127.0.0.1:1\n  servers:\n  - 10.0.0.1:11211:1\n",
                5,
                "pool 'p' again: line 1 names it already (nutcracker refuses pools with the same name)");
        fails(
                "p:\n  listen: 127.0.0.1:22121\n  listen: 127.0.0.1:22122\n  servers:\n  - 10.0.0.1:11211:1\n",
                3,
                "'listen' again in pool 'p': line 2 gives it already (nutcracker refuses a key given twice)");
        fails(
                pool("  - 10.0.0.1:11211:1\n  servers:\n  - 10.0.0.2:11211:1\n"),
                5,
                "'servers' again in pool 'p': line 3 gives it already (nutcracker refuses a key given twice)");
        fails(
                "p:\n  listen:\n  servers:\n  - 10.0.0.1:11211:1\n",
                2,
                "'listen:' has no value (nutcracker refuses an empty one; a nested mapping is not nutcracker's YAML)");
        fails(
                "p:\n  listen: 127.0.0.1:22121\n  servers: 10.0.0.1:11211:1\n",
                3,
                "'servers:' holds a list on the lines below it, each '- host:port:weight [name]', not a value on its own line");
        fails(
                "p:\n  listen: 127.0.0.1:22121\n  servers:\n  timeout: 4\n",
                3,
                "'servers:' of pool 'p' has no items: list them on the lines below it, each '- host:port:weight [name]'");
        fails(
                "p:\n  listen: 127.0.0.1:22121\n  servers:\n",
                3,
                "'servers:' of pool 'p' has no items: list them on the lines below it, each '- host:port:weight [name]'");
        fails(
                "p:\n  listen: 127.0.0.1:22121\n",
                1,
                "pool 'p' has no 'servers:' list (nutcracker needs one in every pool)");
        fails(
                "p:\nq:\n",
                1,
                "pool 'p' has no keys: a pool's 'key: value' lines and its 'servers:' list follow it, indented");
        fails(
                "p:\n  listen: 127.0.0.1:22121\n  - 10.0.0.1:11211:1\n",
                3,
                "a list item outside 'servers:': in a nutcracker pool only 'servers:' holds a list");
        fails(pool("  -\n"), 4, "an empty list item: each server is '- host:port:weight [name]' on one line");
        fails(
                "# nothing but a comment\n\n",
                0,
                "no pools: a nutcracker configuration is 'NAME:' in the first column,"
                        + " followed by the pool's indented 'key: value' lines and its 'servers:' list");
        fails(
                "",
                0,
                "no pools: a nutcracker configuration is 'NAME:' in the first column,"
                        + " followed by the pool's indented 'key: value' lines and its 'servers:' list");
        fails(
                "---\n" + pool("  - 10.0.0.1:11211:1\n"),
                1,
                "document marker '---': nutcracker reads one YAML document, without '---' or '...' (it refuses them)");
        fails("%YAML 1.1\n", 1, "a YAML directive '%YAML 1.1': nutcracker refuses directives");
        fails(
                "p:\n  listen 127.0.0.1:22121\n",
                2,
                "expected 'key: value', 'key:' or a list item '- value', not 'listen 127.0.0.1:22121'");
        fails("p:\n  hash:md5\n", 2, "expected 'key: value', 'key:' or a list item '- value', not 'hash:md5'");
    }

    @Test
    void valuesOutsideTheSubsetAreRefused() {
        fails(
                "p:\n  listen: [127.0.0.1:22121]\n",
                2,
                "'[' starts a flow collection, which nutcracker refuses: write a plain or quoted value");
        fails(
                "p:\n  hash_tag: {}\n",
                2,
                "'{' starts a flow collection, which nutcracker refuses: write a plain or quoted value");
        fails(
                "p:\n  listen: &a 127.0.0.1:22121\n",
                2,
                "'&' starts an anchor, which nutcracker refuses: write a plain or quoted value");
        fails("p:\n  listen: *a\n", 2, "'*' starts an alias, which nutcracker refuses: write a plain or quoted value");
        fails(
                "p:\n  listen: !!str 127.0.0.1:22121\n",
                2,
                "'!' starts a tag, which nutcracker refuses: write a plain or quoted value");
        fails(
                "p:\n  listen: |\n",
                2,
                "'|' starts a block scalar, which ringstore does not read: write a plain or quoted value");
        fails(
                "p:\n  listen: - a\n",
                2,
                "'-' starts a nested list, which nutcracker's pools do not have: write a plain or quoted value");
        fails(
                "p:\n  listen: a: b\n",
                2,
                "the value 'a: b' holds ': ' or ends with ':', which makes it a nested mapping"
                        + " (nutcracker's pools hold 'key: value' only): quote it if it is one value");
        fails(
                pool("  - 10.0.0.1:11211:1 a:\n"),
                4,
                "the value '10.0.0.1:11211:1 a:' holds ': ' or ends with ':', which makes it a nested mapping"
                        + " (nutcracker's pools hold 'key: value' only): quote it if it is one value");
        fails(
                "p:\n  listen: \"127.0.0.1:22121\n",
                2,
                "the quoted value '\"127.0.0.1:22121' has no closing \" on its line (ringstore reads each value on one line)");
        fails("p:\n  listen: '127.0.0.1:22121' x\n", 2, "text after the closing quote: 'x'");
        fails("p:\n  listen: '127.0.0.1:22121'# x\n", 2, "text after the closing quote: '# x'");
        fails(
                "p:\n  listen: \"127.0.0.1:\\q\"\n",
                2,
                "escape '\\q' in a double-quoted value, which ringstore does not read"
                        + " (it reads \\\\ \\\" \\/ \\t \\n \\r \\0 \\xNN \\uNNNN)");
        fails("p:\n  listen: \"\\x4\"\n", 2, "escape '\\x' needs 2 hex digits");
        fails("p:\n  \"listen\"x: y\n", 2, "expected ':' after the key 'listen'");
    }

    @Test
    void aVeryLongLineIsRefused() {
        String line = "#" + "x".repeat(BackendList.MAX_LINE_CHARS);
        fails(
                pool("  - 10.0.0.1:11211:1\n") + line + "\n",
                5,
                "line of 65537 characters, longer than ringstore reads (65536)");
    }
}
