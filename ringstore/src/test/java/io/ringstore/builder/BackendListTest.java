package io.ringstore.builder;

import static io.ringstore.TestRings.parse;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.Backend;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BackendListTest {

    /** Parses {@code text}, expects a failure at {@code line} whose message contains every one of {@code words}. */
    private static BackendsFileException fails(String text, int line, String... words) {
        BackendsFileException e = assertThrows(BackendsFileException.class, () -> parse(text), text);
        assertEquals(line, e.line(), () -> "line of: " + e.getMessage());
        assertEquals("test", e.source());
        String prefix = line > 0 ? "test:" + line + ": " : "test: ";
        assertTrue(
                e.getMessage().startsWith(prefix), () -> "'" + e.getMessage() + "' should start with '" + prefix + "'");
        for (String w : words) {
            assertTrue(e.reason().contains(w), () -> "'" + e.reason() + "' should mention '" + w + "'");
        }
        return e;
    }

    // ---- addresses ----

    /** The parser's line splitter against the regular expression it replaced, on texts of \r, \n, \r\n and letters. */
    @Test
    void linesAreWhatSplittingOnOptionalCrThenLfGives() {
        java.util.SplittableRandom random = new java.util.SplittableRandom(7);
        char[] alphabet = {'\r', '\n', 'a', ' ', '#'};
        for (int round = 0; round < 20_000; round++) {
            StringBuilder text = new StringBuilder();
            int length = round < 100 ? round % 7 : random.nextInt(40);
            for (int k = 0; k < length; k++) {
                text.append(alphabet[random.nextInt(alphabet.length)]);
            }
            String t = text.toString();
            assertEquals(
                    List.of(t.split("\r?\n", -1)),
                    NginxBackendsParser.lines(t),
                    () -> "text " + t.replace("\r", "\\r").replace("\n", "\\n"));
        }
    }

    @Test
    void badIpv4IsRefusedAtItsLine() {
        fails("server 127.0.0.1\nserver 127.0.0.256:80\n", 2, "127.0.0.256:80", "IPv4");
        fails("server 1.2.3:80", 1, "1.2.3:80", "IPv4");
        fails("server 1.2.3.4.5", 1, "IPv4");
        fails("server 1..3.4", 1, "IPv4");
        fails("server 1.2.3.-4", 1, "IPv4");
    }

    @Test
    void badPortIsRefused() {
        fails("server 127.0.0.1:65536", 1, "65536", "65535");
        fails("server 127.0.0.1:", 1, "port");
        fails("server 127.0.0.1:8o", 1, "port");
        fails("server [::1]:99999", 1, "99999");
    }

    @Test
    void badIpv6IsRefusedAtItsLine() {
        fails("# one\n\nserver [::1::2]:80", 3, "[::1::2]:80", "IPv6");
        fails("server [12345::1]", 1, "IPv6");
        fails("server [::g]", 1, "IPv6");
        fails("server [1:2:3:4:5:6:7]", 1, "IPv6");
        fails("server [1:2:3:4:5:6:7:8:9]", 1, "IPv6");
        fails("server [1:2:3:4::5:6:7:8]", 1, "IPv6");
        fails("server [::1", 1, "']'");
        fails("server [::1]80", 1, "':port'");
        fails("server [fe80::1%x]", 1, "scope");
    }

    @Test
    void unbracketedIpv6IsRefused() {
        fails("server ::1", 1, "brackets", "[::1]");
        fails("server fe80::1:80", 1, "brackets");
    }

    @Test
    void hostNamesAreRefused() {
        fails("server 127.0.0.1\nserver localhost:80", 2, "localhost", "host names");
        fails("server backend.example:8080", 1, "host names");
    }

    // ---- parameters ----

    @Test
    void weightMustBeAPositiveWholeNumberThatFits() {
        fails("server 127.0.0.1 weight=0", 1, "at least 1");
        fails("server 127.0.0.1 weight=00", 1, "at least 1");
        fails("server 127.0.0.1\n\nserver 127.0.0.2 weight=abc", 3, "'abc'", "not a positive whole number");
        fails("server 127.0.0.1 weight=-1", 1, "not a positive whole number");
        fails("server 127.0.0.1 weight=1.5", 1, "not a positive whole number");
        fails("server 127.0.0.1 weight=", 1, "not a positive whole number");
        fails(
                "server 127.0.0.1 weight=" + (BackendList.MAX_WEIGHT + 1),
                1,
                "too large",
                String.valueOf(BackendList.MAX_WEIGHT));
        fails("server 127.0.0.1 weight=99999999999999999999999", 1, "too large");
        fails("server 127.0.0.1 weight=2 weight=3", 1, "twice");
    }

    @Test
    void largestWeightIsAccepted() throws Exception {
        BackendList list = parse("server 127.0.0.1 weight=" + BackendList.MAX_WEIGHT + "\nserver 127.0.0.2 weight=007");
        assertEquals(BackendList.MAX_WEIGHT, list.backend(0).weight());
        assertEquals(7, list.backend(1).weight());
    }

    @Test
    void unknownParameterIsNamed() {
        fails("server 127.0.0.1 slow_start=3", 1, "unknown parameter", "slow_start=");
        fails(
                "server 127.0.0.1:80\nserver 127.0.0.2:80 backup",
                2,
                "balancing method does not support parameter",
                "\"backup\"");
        fails("server 127.0.0.1 Weight=2", 1, "unknown parameter", "Weight=");
    }

    @Test
    void unknownDirectiveIsNamed() {
        fails("server 127.0.0.1\nservr 127.0.0.2", 2, "unknown directive", "'servr'");
        fails(
                "upstream u {\n  keepalive 16;\n  sticky cookie srv;\n  server 127.0.0.1\n}",
                3,
                "unknown directive",
                "'sticky'");
        fails(
                "upstream u {\n  server 127.0.0.1\n    weight=2;\n}",
                3,
                "unknown directive",
                "'weight=2'",
                "on one line");
        fails("hash $request_uri;\nserver 127.0.0.1", 1, "consistent");
        fails("server", 1, "needs an address");
    }

    @Test
    void badFeatureListsAreRefused() {
        fails("server 127.0.0.1 features=", 1, "at least one");
        fails("server 127.0.0.1 features=a,,b", 1, "bad feature name ''");
        fails("server 127.0.0.1 features=a/b", 1, "bad feature name 'a/b'");
        fails("server 127.0.0.1 features=a,b,a", 1, "'a' listed twice");
        fails("server 127.0.0.1 features=a features=b", 1, "twice");
    }

    @Test
    void moreThanSixteenFeaturesAreRefusedWhereTheSeventeenthAppears() throws Exception {
        String sixteen = IntStream.range(0, 16).mapToObj(i -> "f" + i).collect(Collectors.joining(","));
        BackendList ok = parse("server 127.0.0.1 features=" + sixteen + "\nserver 127.0.0.2 features=f3,f0");
        assertEquals(16, ok.features().size());
        assertEquals("f15", ok.features().get(15));

        fails(
                "server 127.0.0.1 features=" + sixteen + "\n# more\nserver 127.0.0.2 features=f1,f16",
                3,
                "'f16'",
                "17",
                "16");
        fails("server 127.0.0.1 features=" + sixteen + ",extra", 1, "'extra'", "16");
    }

    // ---- counts and duplicates ----

    @Test
    void duplicateBackendsAreRefusedNamingTheFirst() {
        fails("server 127.0.0.1\nserver 127.0.0.2\nserver 127.0.0.1", 3, "duplicate", "line 1");
        // Written differently, the same endpoint: port 80 is the default, leading zeros are allowed.
        fails("server 127.0.0.1\nserver 127.0.0.1:80", 2, "duplicate", "'127.0.0.1:80'", "line 1", "'127.0.0.1'");
        fails("server 127.0.0.1:8080\nserver 127.000.000.001:8080", 2, "duplicate", "line 1");
        fails("server [::1]\nserver [0:0:0:0:0:0:0:1]:80", 2, "duplicate", "line 1");
        fails("server [::ffff:7f00:1]:80\nserver [::ffff:127.0.0.1]", 2, "duplicate", "line 1");
    }

    @Test
    void differentPortsOrScopesAreDifferentBackends() throws Exception {
        BackendList list = parse(
                "server 127.0.0.1\nserver 127.0.0.1:81\nserver [fe80::1]\nserver [fe80::1%2]\nserver [::ffff:127.0.0.1]");
        assertEquals(5, list.size());
    }

    @Test
    void moreThan65535BackendsAreRefusedAtTheFirstOneTooMany() throws Exception {
        StringBuilder sb = new StringBuilder("upstream big {\n");
        for (int i = 0; i <= BackendList.MAX_BACKENDS; i++) {
            sb.append("server 127.0.")
                    .append(i >> 8)
                    .append('.')
                    .append(i & 0xFF)
                    .append(":8080\n");
        }
        sb.append("}\n");
        String tooMany = sb.toString();
        // Line 1 is 'upstream', backend i is on line i + 2: the 65,536th (i = 65,535) is on line 65,537.
        fails(tooMany, BackendList.MAX_BACKENDS + 2, "more than 65535 backends");

        String justEnough = tooMany.replace("server 127.0.255.255:8080\n", "");
        BackendList list = parse(justEnough);
        assertEquals(BackendList.MAX_BACKENDS, list.size());
        assertEquals(
                "127.0.255.254:8080", list.backend(BackendList.MAX_BACKENDS - 1).address());
        assertEquals(
                BackendList.MAX_BACKENDS + 1,
                list.backend(BackendList.MAX_BACKENDS - 1).line());
    }

    // ---- structure ----

    @Test
    void unclosedUpstreamIsReportedAtItsOpeningLine() {
        fails("# header\nupstream pool {\n  server 127.0.0.1;\n", 2, "never closed");
    }

    @Test
    void textAfterTheClosingBraceIsRefused() {
        fails("upstream pool {\n  server 127.0.0.1;\n}\n\nserver 127.0.0.2;\n", 5, "after the closing");
        fails("upstream pool {\n  server 127.0.0.1;\n}\n}\n", 4, "after the closing");
    }

    @Test
    void misplacedUpstreamAndBracesAreRefused() {
        fails("server 127.0.0.1\nupstream pool {\nserver 127.0.0.2\n}", 2, "'upstream'");
        fails("upstream a {\nupstream b {\n}", 2, "'upstream'");
        fails("upstream pool\nserver 127.0.0.1", 1, "upstream NAME {");
        fails("server 127.0.0.1\n}", 2, "'}'");
    }

    @Test
    void semicolonsAreCheckedAndOptional() {
        fails("server 127.0.0.1;;", 1, "';'");
        fails(";", 1, "unexpected ';'");
        fails("server 127.0.0.1 }", 1, "unexpected '}'", "needs its ';'");
        fails("server 127.0.0.1 {", 1, "unexpected '{'");
    }

    // ---- nginx's grammar: directives split at ';', the upstream-level directives, the features comment ----

    @Test
    void severalDirectivesOnALineAsNginxSplitsThem() throws BackendsFileException {
        BackendList list = parse(
                "upstream u { hash $request_uri consistent; server 10.0.0.1 weight=2; server 10.0.0.2;server 10.0.0.3; }\n");
        assertEquals(
                List.of("10.0.0.1", "10.0.0.2", "10.0.0.3"),
                list.backends().stream().map(Backend::address).toList());
        assertEquals(2, list.backend(0).weight());
        assertEquals(
                List.of(1, 1, 1), list.backends().stream().map(Backend::line).toList());
        fails("server 10.0.0.1; server 10.0.0.2 weight=x;", 1, "weight", "'x'");
        fails("server 10.0.0.1; server 10.0.0.1:80", 1, "duplicate backend");
    }

    @Test
    void ignoredDirectivesAreCheckedAsNginxChecksThem() throws BackendsFileException {
        String server = "server 10.0.0.1;\n";
        for (String ok : new String[] {
            "zone z 64k;",
            "zone z 32K;",
            "zone z 1m;",
            "zone shared;",
            "keepalive 32;",
            "keepalive_requests 0;",
            "keepalive_time 1h;",
            "keepalive_timeout 75;",
            "keepalive_timeout 500ms;",
            "keepalive_timeout 1s500ms;",
            "zone a 64k; zone b 64k;",
            "keepalive 8; keepalive_requests 100; keepalive_time 1h; keepalive_timeout 60s;"
        }) {
            assertEquals(1, parse(server + ok).size(), ok);
        }
        fails(server + "zone;", 2, "invalid number of arguments", "'zone'");
        fails(server + "zone z 64k 1;", 2, "invalid number of arguments");
        fails(server + "zone z 16k;", 2, "zone 'z' is too small");
        fails(server + "zone z 1g;", 2, "invalid zone size", "'1g'");
        fails(server + "keepalive 0;", 2, "invalid value '0'", "'keepalive'");
        fails(server + "keepalive 1 2;", 2, "invalid number of arguments");
        fails(server + "keepalive 3;\nkeepalive 4;", 3, "'keepalive' directive is duplicate");
        fails(server + "keepalive_requests -1;", 2, "invalid value '-1'");
        fails(server + "keepalive_timeout 1y;", 2, "invalid value '1y'", "milliseconds");
        fails(server + "keepalive_time 1M;", 2, "invalid value '1M'");
        for (String method : new String[] {"least_conn", "ip_hash", "random"}) {
            fails(server + method + ";", 2, "load balancing method '" + method + "'", "consistent-hash");
        }
    }

    @Test
    void nameCommentGivesTheServersHashedIdentity() throws BackendsFileException {
        BackendList named = parse("""
                upstream u {
                    server 10.0.0.1:11211 weight=2;  # ringstore: name=cache-a
                    server 10.0.0.2;                 # ringstore: features=eu name=cache-b.example:1
                    server 10.0.0.3;                 # ringstore: name=c features=us
                    server 10.0.0.4;
                }
                """);
        assertEquals(
                java.util.Arrays.asList("cache-a", "cache-b.example:1", "c", null),
                named.backends().stream().map(io.ringstore.Backend::name).toList());
        assertEquals(java.util.Set.of("eu"), named.backend(1).features());
        assertEquals(java.util.Set.of("us"), named.backend(2).features());
    }

    @Test
    void featuresCommentGivesTheFeaturesOfTheServerOnItsLine() throws BackendsFileException {
        BackendList commented = parse("""
                upstream u {
                    server 10.0.0.1:80 weight=2;  # ringstore: features=eu,ssd
                    server 10.0.0.2:80 down       #ringstore:features=us
                    server 10.0.0.3:80;           # Ringstore: features=x  (not ringstore's: only "ringstore:" is)
                    server 10.0.0.4:80;           # a comment saying ringstore: features=x is not one either
                }
                """);
        BackendList parameters = parse("""
                upstream u {
                    server 10.0.0.1:80 weight=2 features=eu,ssd;
                    server 10.0.0.2:80 down features=us
                    server 10.0.0.3:80;
                    server 10.0.0.4:80;
                }
                """);
        assertEquals(parameters.backends().toString(), commented.backends().toString());
        assertEquals(List.of("eu", "ssd", "us"), commented.features());
        assertEquals(Set.of("eu", "ssd"), commented.backend(0).features());
        assertTrue(commented.backend(2).features().isEmpty());

        fails("server 10.0.0.1;\n# ringstore: features=eu\n", 2, "has none");
        fails("upstream u { # ringstore: features=eu\nserver 10.0.0.1;\n}", 1, "has none");
        fails("server 10.0.0.1; server 10.0.0.2;  # ringstore: features=eu", 1, "2 servers", "own line");
        fails(
                "server 10.0.0.1;  # ringstore: weight=3",
                1,
                "'features=a,b' and 'name=NAME', each at most once",
                "'weight=3'");
        fails("server 10.0.0.1;  # ringstore: features=a extra", 1, "each at most once", "'features=a extra'");
        fails("server 10.0.0.1;  # ringstore:", 1, "each at most once");
        fails("server 10.0.0.1;  # ringstore: features=", 1, "needs at least one name");
        fails("server 10.0.0.1;  # ringstore: name=a name=b", 1, "each at most once");
        fails("server 10.0.0.1;  # ringstore: name=", 1, "bad name ''");
        fails("server 10.0.0.1;  # ringstore: name=a;b", 1, "bad name");
        fails("server 10.0.0.1;  # ringstore: features=a,a", 1, "listed twice");
        fails("server 10.0.0.1 features=a;  # ringstore: features=b", 1, "features given twice");
        fails(
                "server 10.0.0.1 weight=4#ringstore: features=x",
                1,
                "weight",
                "'4#ringstore:'"); // '#' inside a word is no comment
    }

    @Test
    void quotedWordsAreRefused() {
        fails("server \"10.0.0.1:80\";", 1, "quoted word", "without quotes");
        fails("server 10.0.0.1 'weight=2';", 1, "quoted word");
    }

    @Test
    void nginxTimesSizesAndNumbers() {
        assertEquals(500, NginxBackendsParser.nginxTime("500ms", false));
        assertEquals(1500, NginxBackendsParser.nginxTime("1s500ms", false));
        assertEquals(60_000, NginxBackendsParser.nginxTime("60", false));
        assertEquals(5500, NginxBackendsParser.nginxTime("500ms5", false));
        assertEquals(90 * 60_000, NginxBackendsParser.nginxTime("1h30m", false));
        assertEquals(9_223_372_036_854_775_000L, NginxBackendsParser.nginxTime("9223372036854775s", false));
        assertEquals(365L * 86400, NginxBackendsParser.nginxTime("1y", true));
        for (String bad : new String[] {"1y", "1M", "ms", "", "1ms1s", "1s1s", "9223372036854776s", "1x", "-1"}) {
            assertEquals(-1, NginxBackendsParser.nginxTime(bad, false), bad);
        }
        assertEquals(-1, NginxBackendsParser.nginxTime("10ms", true));
        assertEquals(64 << 10, NginxBackendsParser.nginxSize("64k"));
        assertEquals(2 << 20, NginxBackendsParser.nginxSize("2M"));
        assertEquals(100, NginxBackendsParser.nginxSize("100"));
        for (String bad : new String[] {"", "k", "1g", "-1", "1.5m", "99999999999999999m"}) {
            assertEquals(-1, NginxBackendsParser.nginxSize(bad), bad);
        }
        assertEquals(Long.MAX_VALUE, NginxBackendsParser.nginxNumber("9223372036854775807"));
        assertEquals(-1, NginxBackendsParser.nginxNumber("9223372036854775808"));
        assertEquals(7, NginxBackendsParser.nginxNumber("007"));
        assertEquals(-1, NginxBackendsParser.nginxNumber("+7"));
    }

    @Test
    void emptyFilesAreRefusedForTheWholeFile() {
        fails("", 0, "no 'server' lines");
        fails("\n\n", 0, "no 'server' lines");
        fails("# only a comment\r\n   # and another\r\n", 0, "no 'server' lines");
        fails("upstream pool {\n  hash $request_uri consistent;\n}\n", 0, "no 'server' lines");
    }

    // ---- accepted syntax ----

    @Test
    void fullNginxSyntaxIsAccepted() throws Exception {
        String text = """
                # The pool of caches.
                upstream cache_pool {
                    hash $request_uri consistent;   # what ringstore builds anyway

                    server 127.0.0.1:8080 weight=2 features=ssd,eu;
                    server 127.000.000.002:8080;     # leading zeros, as nginx allows
                \tserver [::1]:9001 features=eu
                    server 127.0.0.3 features=gpu,ssd;
                    server [fe80::1%3]:80 weight=10
                }
                # trailing comment
                """;
        BackendList list = parse(text);
        assertEquals("test", list.source());
        assertEquals(
                List.of("127.0.0.1:8080", "127.000.000.002:8080", "[::1]:9001", "127.0.0.3", "[fe80::1%3]:80"),
                list.backends().stream().map(Backend::address).toList());
        assertEquals(
                List.of(2L, 1L, 1L, 1L, 10L),
                list.backends().stream().map(Backend::weight).toList());
        assertEquals(
                List.of(5, 6, 7, 8, 9),
                list.backends().stream().map(Backend::line).toList());
        assertEquals(
                List.of(0, 1, 2, 3, 4),
                list.backends().stream().map(Backend::index).toList());
        assertEquals(List.of("ssd", "eu", "gpu"), list.features(), "order of first appearance");
        assertEquals(List.of("ssd", "eu"), List.copyOf(list.backend(0).features()));
        assertEquals(Set.of(), list.backend(1).features());
        assertEquals(Set.of("gpu", "ssd"), list.backend(3).features());
        assertEquals("127.0.0.2:8080", list.backend(1).upstreamAddress());
        assertEquals("127.0.0.3:80", list.backend(3).upstreamAddress());
        assertEquals("[fe80::1%3]:80", list.backend(4).socketAddress());
    }

    @Test
    void upstreamBraceMayTouchTheName() throws Exception {
        assertEquals(1, parse("upstream pool{\nserver 127.0.0.1\n}").size());
    }

    @Test
    void crlfLineEndingsAreAccepted() throws Exception {
        BackendList list = parse(
                "# dos file\r\nupstream p {\r\n\r\nserver 127.0.0.1:80 weight=3;\r\nserver [::1] features=x\r\n}\r\n");
        assertEquals(
                List.of("127.0.0.1:80", "[::1]"),
                list.backends().stream().map(Backend::address).toList());
        assertEquals(3, list.backend(0).weight());
        assertEquals(List.of("x"), list.features());
        assertEquals(4, list.backend(0).line());
        assertEquals(5, list.backend(1).line());
        assertFalse(list.backend(1).features().stream().anyMatch(f -> f.contains("\r")));
    }

    @Test
    void missingFinalNewlineAndTrailingSpacesAreAccepted() throws Exception {
        BackendList list = parse("server 127.0.0.1   ;   \n   server 127.0.0.2");
        assertEquals(2, list.size());
        assertEquals("127.0.0.1", list.backend(0).address());
    }

    // ---- files ----

    @Test
    void fileErrorsNameTheFile(@TempDir Path dir) throws IOException {
        Path missing = dir.resolve("missing.conf");
        BackendsFileException e = assertThrows(BackendsFileException.class, () -> BackendList.parse(missing));
        assertEquals(0, e.line());
        assertTrue(e.getMessage().contains(missing.toString()), e.getMessage());
        assertTrue(e.reason().contains("no such file"), e.reason());

        Path latin1 = dir.resolve("latin1.conf");
        Files.write(latin1, "# caf\u00e9\nserver 127.0.0.1\n".getBytes(StandardCharsets.ISO_8859_1));
        e = assertThrows(BackendsFileException.class, () -> BackendList.parse(latin1));
        assertTrue(e.reason().contains("UTF-8"), e.reason());

        Path bad = dir.resolve("bad.conf");
        Files.writeString(bad, "server 127.0.0.1\nserver nope\n");
        e = assertThrows(BackendsFileException.class, () -> BackendList.parse(bad));
        assertEquals(2, e.line());
        assertTrue(e.getMessage().startsWith(bad + ":2: "), e.getMessage());
    }

    @Test
    void fileIsReadAsUtf8(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("ok.conf");
        Files.writeString(file, "# caf\u00e9 \u2615\nserver 127.0.0.1 features=a\n", StandardCharsets.UTF_8);
        BackendList list = BackendList.parse(file);
        assertEquals(file.toString(), list.source());
        assertEquals(1, list.size());
        assertEquals(2, list.backend(0).line());
    }

    // ---- issue 10: hostile input ----

    @Test
    void leadingZerosAreAcceptedInWeightsPortsAndScopesAsNginxDoes() throws Exception {
        Backend b = parse("server 10.0.0.1:00080 weight=00000000001\n").backend(0);
        assertEquals(1, b.weight());
        assertEquals("10.0.0.1:80", b.socketAddress());
        assertEquals(
                2147483647,
                parse("server 10.0.0.1 weight=000000000000002147483647")
                        .backend(0)
                        .weight());
        assertEquals(
                "[fe80::1%3]:80",
                parse("server [fe80::1%0000000000003]:80").backend(0).socketAddress());
        fails("server 10.0.0.1 weight=0000000000", 1, "at least 1");
        fails("server 10.0.0.1 weight=0002147483648", 1, "too large", "2147483647");
        fails("server 10.0.0.1:000065536", 1, "outside 0-65535");
    }

    @Test
    void aLeadingByteOrderMarkIsSkipped(@TempDir Path dir) throws Exception {
        assertEquals(1, parse("\uFEFFserver 10.0.0.1\n").size());
        Path file = dir.resolve("bom.conf");
        Files.write(file, "\uFEFFupstream u {\nserver 10.0.0.1\n}\n".getBytes(StandardCharsets.UTF_8));
        assertEquals(1, BackendList.parse(file).size());
        fails("server 10.0.0.1\n\uFEFFserver 10.0.0.2", 2, "unknown directive"); // only at the start of the file
    }

    @Test
    void quotedInputIsCutSoThatAMessageStaysShort() {
        String token = "x".repeat(10_000);
        for (String text : List.of(
                token,
                "server " + token,
                "server 10.0.0.1 " + token + "=1",
                "server 10.0.0.1 features=" + token,
                "server 10.0.0.1 weight=" + token,
                "server 10.0.0.1:" + "9".repeat(10_000),
                "server [" + token + "]")) {
            BackendsFileException e = fails(text, 1);
            assertTrue(
                    e.getMessage().length() < 600,
                    () -> e.getMessage().length() + " characters: "
                            + e.getMessage().substring(0, 300));
            assertTrue(e.reason().contains("(cut: "), e.reason());
        }
    }

    @Test
    void aLineOrAFileOverItsLimitIsRefusedWithTheLimit() {
        String longLine = "server 10.0.0.1 # " + "c".repeat(BackendList.MAX_LINE_CHARS);
        fails(
                "server 10.0.0.2\n" + longLine,
                2,
                "longer than a backends-file line may be",
                String.valueOf(BackendList.MAX_LINE_CHARS));
        // the defect's input: an address of 70,000 leading zeros would not fit the address length's u16
        fails("server " + "0".repeat(70_000) + "10.0.0.1:80", 1, "longer than a backends-file line");
        fails("#".repeat(BackendList.MAX_FILE_BYTES + 1), 0, "too large", String.valueOf(BackendList.MAX_FILE_BYTES));
    }

    @Test
    void aNonRegularFileIsRefusedWithoutReadingIt(@TempDir Path dir) throws Exception {
        for (Path p : List.of(Path.of("/dev/zero"), dir)) {
            BackendsFileException e = assertThrows(BackendsFileException.class, () -> BackendList.parse(p));
            assertEquals(0, e.line());
            assertTrue(e.reason().contains(p.equals(dir) ? "is a directory" : "not a regular file"), e.reason());
        }
        Path fifo = dir.resolve("fifo");
        if (new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor() == 0) {
            BackendsFileException e =
                    assertThrows(BackendsFileException.class, () -> BackendList.parse(fifo)); // must not block
            assertTrue(e.reason().contains("not a regular file"), e.reason());
        }
    }

    @Test
    void aFileTooLargeIsRefusedBeforeItIsRead(@TempDir Path dir) throws Exception {
        Path big = dir.resolve("big.conf");
        try (java.io.RandomAccessFile f = new java.io.RandomAccessFile(big.toFile(), "rw")) {
            f.setLength(BackendList.MAX_FILE_BYTES + 1L); // sparse
        }
        BackendsFileException e = assertThrows(BackendsFileException.class, () -> BackendList.parse(big));
        assertTrue(
                e.reason().contains("too large for a backends file: " + (BackendList.MAX_FILE_BYTES + 1) + " bytes"),
                e.reason());
    }

    @Test
    void anUnreadableFileSaysWhy(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("m0.conf"), "server 10.0.0.1\n");
        Files.setPosixFilePermissions(file, Set.of());
        org.junit.jupiter.api.Assumptions.assumeFalse(Files.isReadable(file), "root reads a file of mode 000");
        BackendsFileException e = assertThrows(BackendsFileException.class, () -> BackendList.parse(file));
        assertEquals("cannot read: permission denied", e.reason());
    }

    @Test
    void unixSocketsAreRefusedAsSuch() {
        fails("server unix:/x.sock", 1, "unix sockets are not supported", "IP endpoints");
    }
}
