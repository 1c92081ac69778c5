package io.ringstore.tools;

import static io.ringstore.tools.CliRun.backends;
import static io.ringstore.tools.CliRun.build;
import static io.ringstore.tools.CliRun.run;
import static io.ringstore.tools.CliRun.runWithInput;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.Backend;
import io.ringstore.Ring;
import io.ringstore.RingStore;
import io.ringstore.family.Families;
import io.ringstore.family.RingVersion;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CliLookupTest {
    /**
     * Addresses whose printed forms are fixed by the contract: a port-less IPv4 ({@code 127.0.0.3:80}),
     * IPv6 written in full ({@code [::1]:9002}) and port-less ({@code [::2]:80}). (A scope id is
     * refused by a build that includes v1, as nginx refuses it: issue 10.)
     */
    private static final String ADDRESSES = """
            server 127.0.0.2:8080
            server 127.0.0.3
            server [::1]:9001 weight=2
            server [0:0:0:0:0:0:0:1]:9002
            server [::2]
            """;

    private static final Set<String> NGINX_FORMS =
            Set.of("127.0.0.2:8080", "127.0.0.3:80", "[::1]:9001", "[::1]:9002", "[::2]:80");
    private static final Set<String> RUST_FORMS =
            Set.of("127.0.0.2:8080", "127.0.0.3:80", "[::1]:9001", "[::1]:9002", "[::2]:80");

    @TempDir
    static Path dir;

    private static Path featured; // FEATURED, v1 only
    private static Path addresses; // ADDRESSES, v1 then v2
    private static Path v2First; // ADDRESSES, v2 then v1

    @BeforeAll
    static void buildFiles() throws Exception {
        featured = dir.resolve("featured.ring");
        build(backends(dir, "featured.conf", CliFleet.text(CliFleet.FEATURED)), featured);
        Path input = backends(dir, "addresses.conf", ADDRESSES);
        addresses = dir.resolve("addresses.ring");
        build(input, addresses, "--algorithm", "v1,v2");
        v2First = dir.resolve("v2first.ring");
        build(input, v2First, "--algorithm", "v2,v1");
    }

    // ---- answers ----

    /**
     * An endless stdin to a stdout that fails (a full disk here; a closed pipe ends the same way, with
     * exit 0): lookup stops at the first failed write instead of reading forever.
     */
    @Test
    void anEndlessStdinStopsWhenTheOutputFails() throws Exception {
        java.io.InputStream endless = new java.io.InputStream() {
            private final byte[] line = "/k\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
            private long read;

            @Override
            public int read() {
                return line[(int) (read++ % line.length)];
            }

            @Override
            public int read(byte[] b, int off, int len) {
                for (int i = 0; i < len; i++) {
                    b[off + i] = line[(int) (read++ % line.length)];
                }
                return len;
            }
        };
        java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
        java.io.PrintStream broken = new java.io.PrintStream(
                new java.io.OutputStream() {
                    @Override
                    public void write(int b) throws java.io.IOException {
                        throw new java.io.IOException("No space left on device");
                    }
                },
                true,
                java.nio.charset.StandardCharsets.UTF_8);
        int exit = org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(
                java.time.Duration.ofSeconds(30), // a hang detector
                () -> Main.run(
                        new String[] {"lookup", featured.toString()},
                        endless,
                        broken,
                        new java.io.PrintStream(err, true, java.nio.charset.StandardCharsets.UTF_8)));
        assertEquals(Main.FAILED, exit);
        assertTrue(
                err.toString(java.nio.charset.StandardCharsets.UTF_8).contains("cannot write the answers"),
                err.toString());
    }

    @Test
    void keysFromArgumentsAndFromStdinGetTheLibraryAnswers() throws Exception {
        List<String> keys = List.of(
                "/index.html", "/images/logo.png", "/api/v1/users?id=42", "a", "b", "key with spaces", "/x/y/z");
        byte[] expected = expected(featured, Set.of(), null, utf8(keys));

        assertArrayEquals(
                expected,
                run(args("lookup", featured.toString(), keys)).assertOk().stdout(),
                "keys as arguments");
        assertArrayEquals(
                expected,
                runWithInput(String.join("\n", keys) + "\n", "lookup", featured.toString())
                        .assertOk()
                        .stdout(),
                "keys on stdin");
        assertArrayEquals(
                expected,
                runWithInput(String.join("\r\n", keys) + "\r\n", "lookup", featured.toString())
                        .assertOk()
                        .stdout(),
                "CRLF line ends are not part of the key");
        assertArrayEquals(
                expected,
                runWithInput(String.join("\n", keys), "lookup", featured.toString())
                        .assertOk()
                        .stdout(),
                "last line without a line end");
        assertArrayEquals(
                expected,
                runWithInput(String.join("\r\n", keys), "lookup", featured.toString())
                        .assertOk()
                        .stdout(),
                "CRLF, last line without a line end");
    }

    @Test
    void manyRandomKeysAgreeWithTheLibraryForEveryRingOfEveryVersion() throws Exception {
        SplittableRandom random = new SplittableRandom(20240611);
        List<byte[]> keys = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            keys.add(("/" + Long.toHexString(random.nextLong()) + "/" + i).getBytes(StandardCharsets.US_ASCII));
        }
        byte[] stdin = lines(keys, "\n");
        for (Path file : List.of(featured, addresses)) {
            try (RingStore store = RingStore.open(file)) {
                for (Ring ring : store.rings()) {
                    List<String> args = new ArrayList<>(List.of(
                            "lookup",
                            file.toString(),
                            "--algorithm",
                            ring.version().toString()));
                    if (!ring.features().isEmpty()) {
                        args.add("--features");
                        args.add(String.join(",", ring.features()));
                    }
                    CliRun r = runWithInput(stdin, args.toArray(String[]::new)).assertOk();
                    assertArrayEquals(
                            expected(file, ring.features(), ring.version(), keys), r.stdout(), () -> "ring " + ring);
                }
            }
        }
    }

    @Test
    void anEmptyLineIsTheEmptyKey() throws Exception {
        byte[] expected = expected(featured, Set.of(), null, utf8(List.of("a", "", "b", "")));
        assertArrayEquals(
                expected,
                runWithInput("a\n\nb\n\n", "lookup", featured.toString())
                        .assertOk()
                        .stdout());
        assertArrayEquals(
                expected,
                runWithInput("a\r\n\r\nb\r\n\r\n", "lookup", featured.toString())
                        .assertOk()
                        .stdout());
        assertArrayEquals(
                expected(featured, Set.of(), null, utf8(List.of(""))),
                run("lookup", featured.toString(), "").assertOk().stdout(),
                "an empty argument is a key too");
    }

    @Test
    void emptyStdinGivesNoOutput() {
        assertEquals(
                0, runWithInput("", "lookup", featured.toString()).assertOk().stdout().length);
    }

    @Test
    void keyBytesPassThroughUnchanged() throws Exception {
        List<byte[]> keys = List.of(
                "/café/ü".getBytes(StandardCharsets.UTF_8),
                "/ключ/日本".getBytes(StandardCharsets.UTF_8),
                "/emoji/\uD83D\uDE00".getBytes(StandardCharsets.UTF_8),
                new byte[] {'/', (byte) 0xE9, 't', (byte) 0xE9}, // ISO-8859-1, not UTF-8
                new byte[] {'/', (byte) 0xC3, '(', (byte) 0xFF, (byte) 0x80}, // malformed UTF-8
                "tab\there".getBytes(StandardCharsets.UTF_8));
        byte[] expected = expected(featured, Set.of(), null, keys);
        assertArrayEquals(
                expected,
                runWithInput(lines(keys, "\n"), "lookup", featured.toString())
                        .assertOk()
                        .stdout());
        assertArrayEquals(
                expected,
                runWithInput(lines(keys, "\r\n"), "lookup", featured.toString())
                        .assertOk()
                        .stdout());

        List<String> utf8Keys = List.of("/café/ü", "/ключ/日本", "/emoji/\uD83D\uDE00");
        assertArrayEquals(
                expected(featured, Set.of(), null, utf8(utf8Keys)),
                run(args("lookup", featured.toString(), utf8Keys)).assertOk().stdout(),
                "UTF-8 keys as arguments");
    }

    @Test
    void keysAfterDoubleDashMayStartWithADash() throws Exception {
        List<String> keys = List.of("-x", "--features", "-");
        assertArrayEquals(
                expected(featured, Set.of(), null, utf8(keys)),
                run(args(
                                "lookup",
                                featured.toString(),
                                Stream.concat(Stream.of("--"), keys.stream()).toList()))
                        .assertOk()
                        .stdout());
    }

    // ---- features ----

    @Test
    void featuresSelectTheRingOfBackendsHavingThemAll() throws Exception {
        List<String> keys = randomKeys(500);
        for (String list : List.of("ssd", "gpu", "hdd", "ssd,gpu", "gpu,ssd")) {
            Set<String> wanted = Set.of(list.split(","));
            CliRun r = runWithInput(String.join("\n", keys), "lookup", featured.toString(), "--features", list)
                    .assertOk();
            assertArrayEquals(expected(featured, wanted, null, utf8(keys)), r.stdout(), list);

            Set<String> allowed = new TreeSet<>();
            for (int i : CliFleet.members(CliFleet.FEATURED, wanted)) {
                allowed.add(upstreamForm(CliFleet.FEATURED.get(i).address()));
            }
            Set<String> answered = answers(r);
            assertEquals(keys.size(), r.outLines().size());
            assertTrue(
                    allowed.containsAll(answered),
                    () -> list + ": answers " + answered + " must all have the features; allowed " + allowed);
            if (allowed.size() > 1) {
                assertTrue(
                        answered.size() > 1, () -> list + ": 500 keys should reach more than one backend: " + answered);
            }
        }
    }

    @Test
    void aRingWithNoBackendAnswersDash() {
        List<String> keys = List.of("/a", "/b", "");
        for (String list : List.of("ssd,hdd", "gpu,hdd", "hdd,gpu,ssd")) {
            CliRun r = run(args(
                            "lookup",
                            featured.toString(),
                            Stream.concat(Stream.of("--features", list), keys.stream())
                                    .toList()))
                    .assertOk();
            assertEquals(keys.stream().map(k -> k + "\t-").toList(), r.outLines(), list);
        }
    }

    @Test
    void unknownOrMalformedFeaturesAreWrongArguments() {
        String error = run("lookup", featured.toString(), "--features", "ssd,fast", "/a")
                .assertError(Main.USAGE, "lookup");
        assertTrue(error.contains("fast"), error);
        for (String list : List.of("ssd,,gpu", "ssd,ssd", ",")) {
            run("lookup", featured.toString(), "--features", list, "/a").assertError(Main.USAGE, "lookup");
        }
    }

    // ---- address forms and versions ----

    @Test
    void v1AnswersAreWrittenAsNginxWritesUpstreamAddr() throws Exception {
        List<String> keys = randomKeys(3000);
        CliRun r = runWithInput(String.join("\n", keys), "lookup", addresses.toString(), "--algorithm", "v1")
                .assertOk();
        assertArrayEquals(expected(addresses, Set.of(), RingVersion.V1, utf8(keys)), r.stdout());
        assertEquals(NGINX_FORMS, answers(r), "every backend answers some key, in nginx's form");
        // The file's default is its first version, v1 here.
        assertArrayEquals(
                r.stdout(),
                runWithInput(String.join("\n", keys), "lookup", addresses.toString())
                        .assertOk()
                        .stdout());
    }

    @Test
    void v2AnswersAreWrittenAsPingoraWritesSocketAddr() throws Exception {
        List<String> keys = randomKeys(3000);
        RingVersion v2 = RingVersion.v2(RingVersion.V1.pointMultiple());
        byte[] expected = expected(addresses, Set.of(), v2, utf8(keys));
        for (String algorithm : List.of("v2", "v2:160")) {
            CliRun r = runWithInput(String.join("\n", keys), "lookup", addresses.toString(), "--algorithm", algorithm)
                    .assertOk();
            assertArrayEquals(expected, r.stdout(), algorithm);
            assertEquals(RUST_FORMS, answers(r), "every backend answers some key, in Rust's form");
        }
        CliRun r = runWithInput(String.join("\n", keys), "lookup", v2First.toString())
                .assertOk();
        assertArrayEquals(
                expected(v2First, Set.of(), v2, utf8(keys)), r.stdout(), "the default is the file's first version, v2");
        assertEquals(RUST_FORMS, answers(r));
    }

    @Test
    void aVersionTheFileDoesNotHaveIsAWrongArgument() {
        String error =
                run("lookup", featured.toString(), "--algorithm", "v2", "/a").assertError(Main.USAGE, "lookup");
        assertTrue(
                error.contains("v2") && error.contains("v1") && error.contains(featured.toString()),
                () -> "must name what was asked, what the file has, and the file: " + error);
        run("lookup", addresses.toString(), "--algorithm", "v2:40", "/a").assertError(Main.USAGE, "lookup");
        run("lookup", addresses.toString(), "--algorithm", "v3", "/a").assertError(Main.USAGE, "lookup");
        run("lookup", addresses.toString(), "--algorithm", "v2:x", "/a").assertError(Main.USAGE, "lookup");
        run("lookup", addresses.toString(), "--point-multiple", "40", "/a").assertError(Main.USAGE, "lookup");
        // Issue 13: --point-multiple K alone selects v2:K, as its help says ("which v2 ring"); it was refused before.
        assertEquals(
                run("lookup", addresses.toString(), "--algorithm", "v2:160", "/a")
                        .assertOk()
                        .out(),
                run("lookup", addresses.toString(), "--point-multiple", "160", "/a")
                        .assertOk()
                        .out());
    }

    @Test
    void missingOrBadRingFiles() throws Exception {
        run("lookup").assertError(Main.USAGE, "lookup");
        run("lookup", dir.resolve("missing.ring").toString(), "/a").assertError(Main.FAILED, "lookup");
        Path text = Files.writeString(dir.resolve("text.ring"), "server 127.0.0.1\n".repeat(100));
        run("lookup", text.toString(), "/a").assertError(Main.FAILED, "lookup");
        run("lookup", dir.toString(), "/a").assertError(Main.FAILED, "lookup");
    }

    @Test
    void aFailingStdoutIsAFailure() {
        CliRun.runWithBrokenStdout("lookup", featured.toString(), "/a").assertError(Main.FAILED, "lookup");
    }

    @Test
    void answersEachStdinLineWhileStdinStaysOpen() throws Exception {
        // Without --watch, answers used to wait in a 64 KiB buffer until stdin ended: a pipe held open got none.
        java.io.PipedOutputStream keys = new java.io.PipedOutputStream();
        java.io.PipedInputStream stdin = new java.io.PipedInputStream(keys);
        java.io.ByteArrayOutputStream answers = new java.io.ByteArrayOutputStream();
        java.io.PrintStream stdout = new java.io.PrintStream(answers, true, StandardCharsets.UTF_8);
        java.io.PrintStream stderr =
                new java.io.PrintStream(new java.io.ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        int[] exit = {-1};
        Thread command = new Thread(() ->
                exit[0] = Main.run(new String[] {"lookup", featured.toString()}, stdin, stdout, stderr));
        command.start();
        String expected =
                run("lookup", featured.toString(), "/first").assertOk().out();
        keys.write("/first\n".getBytes(StandardCharsets.UTF_8));
        keys.flush();
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (answers.size() < expected.length() && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertEquals(expected, answers.toString(StandardCharsets.UTF_8), "the answer, while stdin is still open");
        keys.close();
        command.join(20_000);
        assertEquals(Main.OK, exit[0]);
    }

    // ---- smoke ----

    @Test
    void streamsTwoHundredThousandKeysFromStdin() throws Exception {
        int n = 200_000;
        ByteArrayOutputStream in = new ByteArrayOutputStream(n * 16);
        for (int i = 0; i < n; i++) {
            in.writeBytes(("/objects/" + i + (i % 3 == 0 ? "\r\n" : "\n")).getBytes(StandardCharsets.US_ASCII));
        }
        CliRun r = runWithInput(in.toByteArray(), "lookup", featured.toString()).assertOk();
        List<String> lines = r.outLines();
        assertEquals(n, lines.size());
        try (RingStore store = RingStore.open(featured)) {
            Ring ring = store.ring(Set.of());
            for (int i = 0; i < n; i += 997) {
                String key = "/objects/" + i;
                String answer = store.backend(ring.lookup(key.getBytes(StandardCharsets.US_ASCII)))
                        .upstreamAddress();
                assertEquals(key + "\t" + answer, lines.get(i));
            }
            assertEquals(
                    "/objects/" + (n - 1) + "\t"
                            + store.backend(ring.lookup(("/objects/" + (n - 1)).getBytes(StandardCharsets.US_ASCII)))
                                    .upstreamAddress(),
                    lines.getLast());
        }
    }

    // ---- helpers ----

    /** What lookup must print for {@code keys}: the library's answer in the version's address form, '-' for none. */
    private static byte[] expected(Path file, Set<String> features, RingVersion version, List<byte[]> keys)
            throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (RingStore store = RingStore.open(file)) {
            Ring ring = version == null ? store.ring(features) : store.ring(features, version);
            for (byte[] key : keys) {
                int b = ring.lookup(key);
                String answer = b < 0 ? "-" : form(store.backend(b), ring.version());
                out.writeBytes(key);
                out.write('\t');
                out.writeBytes(answer.getBytes(StandardCharsets.US_ASCII));
                out.write('\n');
            }
        }
        return out.toByteArray();
    }

    private static String form(Backend b, RingVersion v) {
        return v.family() == Families.NGINX ? b.upstreamAddress() : b.socketAddress();
    }

    /** nginx's $upstream_addr for the IPv4 and plain IPv6 addresses of {@link CliFleet#FEATURED}. */
    private static String upstreamForm(String address) {
        return address.endsWith("]") || !address.contains(":") ? address + ":80" : address;
    }

    private static Set<String> answers(CliRun r) {
        Set<String> set = new TreeSet<>();
        for (String line : r.outLines()) {
            set.add(line.substring(line.lastIndexOf('\t') + 1));
        }
        return set;
    }

    private static List<String> randomKeys(int n) {
        SplittableRandom random = new SplittableRandom(n);
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            keys.add("/k/" + Integer.toHexString(random.nextInt()));
        }
        return keys;
    }

    private static List<byte[]> utf8(List<String> keys) {
        return keys.stream().map(k -> k.getBytes(StandardCharsets.UTF_8)).toList();
    }

    private static byte[] lines(List<byte[]> keys, String end) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] k : keys) {
            out.writeBytes(k);
            out.writeBytes(end.getBytes(StandardCharsets.US_ASCII));
        }
        return out.toByteArray();
    }

    private static String[] args(String command, String file, List<String> rest) {
        return Stream.concat(Stream.of(command, file), rest.stream()).toArray(String[]::new);
    }
}
