package io.ringstore.tools;

import static io.ringstore.tools.CliRun.run;
import static io.ringstore.tools.CliRun.runWithInput;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.Backend;
import io.ringstore.Ring;
import io.ringstore.RingFileLayout;
import io.ringstore.RingStore;
import io.ringstore.balance.BoundedLoad;
import io.ringstore.builder.BackendList;
import io.ringstore.family.Failover;
import io.ringstore.family.Families;
import io.ringstore.family.RingFamily;
import io.ringstore.family.RingVersion;
import io.ringstore.internal.BackendAccess;
import io.ringstore.live.PolicyFileWatcher;
import io.ringstore.live.RingRouter;
import io.ringstore.migration.RolloutPolicy;
import io.ringstore.state.HostState;
import io.ringstore.state.SharedLoad;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.PrimitiveIterator;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.function.IntPredicate;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every version of every ring family through everything ringstore does with a ring file (issue 19):
 * build (plain, {@code --views all|auto}, two versions in one file), lookup by the CLI and by the
 * library, dump, verify (and a corrupted copy), diff, analyze, failover (servers marked down, a
 * drained backend in the state file, {@link Ring#select} refusing the primary), bounded load, and the
 * router rolling out to another version. One 12-server fleet with two features, weights, one server
 * marked {@code down}, names on some servers, ports written and left out, and IPv6 servers where the
 * family takes them.
 *
 * <p>Expected answers come from the test's own description of the fleet (an address printed as
 * {@code ip:port}, the family's default port for a server written without one) and from oracles
 * written here over the ring's points: a sorted map searched by the family's key hash (the next point,
 * or for HAProxy the nearer of the two around the hash), the walk over
 * the points or the rehash sequence for failover, the share of sampled keys that change backend.
 */
class FamilyEverywhereTest {
    /** Keys looked up in each check: ASCII paths and a few non-ASCII ones (UTF-8 bytes). */
    private static final int KEYS = 1000;
    /** Keys sampled to measure the share that changes backend between two rings (diff's moved_fraction). */
    private static final int DIFF_KEYS = 20_000;
    /** Three standard deviations of a sampled fraction from {@value #DIFF_KEYS} keys, and some. */
    private static final double DIFF_TOLERANCE = 0.015;

    private static final List<Set<String>> FEATURE_SETS =
            List.of(Set.of(), Set.of("a"), Set.of("b"), orderedSet("a", "b"));

    /**
     * One server of the test's fleet: host as written ({@code [::1]} for IPv6), port (0: none written),
     * weight, features (in the {@code # ringstore:} comment, with the name), name, down.
     */
    private record Server(String host, int port, int weight, List<String> features, String name, boolean down) {
        String address() {
            return port == 0 ? host : host + ":" + port;
        }

        String line() {
            String comment = (features.isEmpty() ? "" : " features=" + String.join(",", features))
                    + (name == null ? "" : " name=" + name);
            return "    server " + address() + (weight != 1 ? " weight=" + weight : "") + (down ? " down" : "") + ";"
                    + (comment.isEmpty() ? "" : "  # ringstore:" + comment);
        }

        /** How the family prints this server as an answer: {@code ip:port}, the family's default port when none is written. */
        String answer(RingFamily family) {
            return host + ":" + (port == 0 ? family.addresses().defaultPort() : port);
        }

        boolean ipv6() {
            return host.startsWith("[");
        }
    }

    /** The fleet: 12 servers, two features, weights 1 to 4, one down, two named, one without a port, two IPv6. */
    private static final List<Server> FLEET = List.of(
            new Server("127.0.0.1", 11211, 2, List.of("a"), null, false),
            new Server("127.0.0.2", 11211, 1, List.of("a", "b"), "n2", false),
            new Server("127.0.0.3", 11212, 3, List.of("b"), null, false),
            new Server("127.0.0.4", 0, 1, List.of("a"), null, false),
            new Server("127.0.0.5", 11211, 1, List.of("a", "b"), null, true),
            new Server("[::1]", 11213, 1, List.of("a"), "n6", false),
            new Server("127.0.0.7", 11215, 2, List.of("b"), null, false),
            new Server("[::1]", 11214, 2, List.of("a", "b"), null, false),
            new Server("127.0.0.9", 11211, 1, List.of(), "n9", false),
            new Server("127.0.0.10", 11216, 1, List.of("a"), null, false),
            new Server("127.0.0.11", 11211, 4, List.of(), null, false),
            new Server("127.0.0.12", 11217, 1, List.of("b"), null, false));
    /** The server the "one server removed" fleet lacks. */
    private static final int REMOVED = 10;

    /** One version of each parameterized family other than its default: the families' written parameters at work. */
    private static final List<String> PARAMETERIZED = List.of(
            "v2:64",
            "twemproxy:md5",
            "twemproxy:murmur",
            "spymemcached:100",
            "dubbo:40",
            "envoy:256:2048",
            "envoy-murmur2:512",
            "grpc:256:1024",
            "libmemcached-consistent:murmur3",
            "libmemcached-consistent:jenkins",
            "libmemcached-spy-unweighted:md5",
            "haproxy:wt6",
            "grpc-java:256:8192");

    @TempDir
    static Path dir;

    private static final Map<RingVersion, Fixture> FIXTURES = new HashMap<>();
    private static final byte[][] KEY_BYTES = keys(KEYS, 1);

    /** Every family's default version, then the parameterized ones. */
    static Stream<RingVersion> versions() {
        return Stream.concat(
                Families.all().stream().map(f -> RingVersion.parse(f.name())),
                PARAMETERIZED.stream().map(RingVersion::parse));
    }

    @AfterAll
    static void forgetFixtures() {
        FIXTURES.clear();
    }

    /** The families the list covers: each once by its default version, and each with written parameters once more. */
    @Test
    void everyFamilyAndEachFamilysParametersAreCovered() {
        for (RingFamily f : Families.all()) {
            long parameterized = PARAMETERIZED.stream()
                    .map(RingVersion::parse)
                    .filter(v -> v.family() == f)
                    .count();
            assertEquals(
                    f.parameters().written() > 0,
                    parameterized > 0,
                    () -> f
                            + ": a family with written parameters needs a parameterized version in PARAMETERIZED, one without none");
            assertFalse(
                    PARAMETERIZED.contains(RingVersion.parse(f.name()).name()),
                    () -> f + ": the default version is listed already");
        }
    }

    // ---- the fixture: one directory per version ----

    /** The files of one version: the fleet as the family takes it, the ring files the checks read. */
    private record Fixture(
            RingVersion version,
            List<Server> fleet,
            Path conf,
            Path ring,
            Path viewsAll,
            Path viewsAuto,
            Path twoVersions,
            RingVersion other,
            Path otherRing,
            Path minusConf,
            Path minusRing) {}

    /** The version keys migrate to: v2:64, or v1 for v2:64 itself. */
    private static RingVersion other(RingVersion v) {
        RingVersion v264 = RingVersion.v2(64);
        return v.equals(v264) ? RingVersion.V1 : v264;
    }

    private static Fixture fixture(RingVersion v) throws Exception {
        Fixture f = FIXTURES.get(v);
        if (f == null) {
            f = newFixture(v);
            FIXTURES.put(v, f);
        }
        return f;
    }

    private static Fixture newFixture(RingVersion v) throws Exception {
        Path d = Files.createDirectories(dir.resolve(v.name().replace(':', '_')));
        List<Server> fleet = fleetFor(v.family());
        Path conf = Files.writeString(d.resolve("fleet.conf"), text(fleet));
        List<Server> minus = new ArrayList<>(fleet);
        minus.remove(REMOVED);
        Path minusConf = Files.writeString(d.resolve("minus.conf"), text(minus));
        RingVersion other = other(v);
        Path ring = d.resolve("fleet.ring");
        CliRun built = run("build", conf.toString(), "-o", ring.toString(), "--algorithm", v.name(), "--quiet")
                .assertOk();
        assertEquals("", built.out());
        Path viewsAll = build(conf, d.resolve("views-all.ring"), v.name(), "--views", "all");
        Path viewsAuto = build(conf, d.resolve("views-auto.ring"), v.name(), "--views", "auto");
        Path two = build(conf, d.resolve("two.ring"), v.name() + "," + other.name());
        Path otherRing = build(conf, d.resolve("other.ring"), other.name());
        Path minusRing = build(minusConf, d.resolve("minus.ring"), v.name());
        return new Fixture(v, fleet, conf, ring, viewsAll, viewsAuto, two, other, otherRing, minusConf, minusRing);
    }

    private static Path build(Path conf, Path ring, String algorithm, String... more) {
        List<String> args = new ArrayList<>(
                List.of("build", conf.toString(), "-o", ring.toString(), "--algorithm", algorithm, "--quiet"));
        args.addAll(List.of(more));
        run(args.toArray(String[]::new)).assertOk();
        return ring;
    }

    /**
     * The fleet as {@code family} takes it: an IPv6 server the family refuses ({@link io.ringstore.family.Addresses#problem})
     * becomes an IPv4 one on the same port; nothing else may be refused.
     */
    private static List<Server> fleetFor(RingFamily family) throws Exception {
        BackendList parsed = BackendList.parse("fleet.conf", text(FLEET));
        List<Server> fleet = new ArrayList<>();
        for (int i = 0; i < FLEET.size(); i++) {
            Server s = FLEET.get(i);
            String problem = family.addresses().problem(BackendAccess.record(parsed.backend(i)));
            Server numbered =
                    new Server(s.host(), s.port(), s.weight(), s.features(), Integer.toString(i + 1), s.down());
            if (problem != null && s.name() != null && accepts(family, numbered)) {
                fleet.add(numbered); // HAProxy's servers are named by their ids: the server's number in the fleet
            } else if (problem != null) {
                assertTrue(s.ipv6(), () -> family + " refuses " + s.address() + ": " + problem);
                fleet.add(new Server("127.0.1." + i, s.port(), s.weight(), s.features(), s.name(), s.down()));
            } else {
                fleet.add(s);
            }
        }
        return fleet;
    }

    /** Whether {@code family} takes {@code server} alone. */
    private static boolean accepts(RingFamily family, Server server) throws Exception {
        BackendList one = BackendList.parse("server", text(List.of(server)));
        return family.addresses().problem(BackendAccess.record(one.backend(0))) == null;
    }

    private static String text(List<Server> fleet) {
        StringBuilder sb =
                new StringBuilder("# the family test's fleet\nupstream pool {\n    hash $request_uri consistent;\n");
        fleet.forEach(s -> sb.append(s.line()).append('\n'));
        return sb.append("}\n").toString();
    }

    private static byte[][] keys(int n, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        byte[][] keys = new byte[n][];
        for (int i = 0; i < n; i++) {
            String k = i % 50 == 7
                    ? "/caf\u00e9/" + i + "/\u30ad\u30fc"
                    : "/item/" + i + "?v=" + Long.toHexString(random.nextLong());
            keys[i] = k.getBytes(StandardCharsets.UTF_8);
        }
        return keys;
    }

    private static String stdin(byte[][] keys) {
        StringBuilder sb = new StringBuilder();
        for (byte[] k : keys) {
            sb.append(new String(k, StandardCharsets.UTF_8)).append('\n');
        }
        return sb.toString();
    }

    private static Set<String> orderedSet(String... items) {
        return new LinkedHashSet<>(List.of(items));
    }

    /** The CLI's answers, one a key: the address after the tab of each output line, the key checked. */
    private static List<String> cliAnswers(CliRun r, byte[][] keys) {
        List<String> lines = r.outLines();
        assertEquals(keys.length, lines.size(), () -> "one answer a key:\n" + r.out());
        List<String> answers = new ArrayList<>();
        for (int i = 0; i < keys.length; i++) {
            String line = lines.get(i);
            int tab = line.lastIndexOf('\t');
            assertEquals(new String(keys[i], StandardCharsets.UTF_8), line.substring(0, tab), "the key echoed");
            answers.add(line.substring(tab + 1));
        }
        return answers;
    }

    /** Asserts two lists of answers (one a key of {@link #KEY_BYTES}) are equal, naming the first key they differ at and how many do. */
    private static void assertAnswers(List<String> expected, List<String> actual, String what) {
        assertEquals(expected.size(), actual.size(), what);
        int first = -1;
        int differ = 0;
        for (int i = 0; i < expected.size(); i++) {
            if (!expected.get(i).equals(actual.get(i))) {
                first = first < 0 ? i : first;
                differ++;
            }
        }
        if (differ > 0) {
            throw new AssertionError(what + ": " + differ + " of " + expected.size() + " keys differ; the first, "
                    + new String(KEY_BYTES[first], StandardCharsets.UTF_8) + ": expected " + expected.get(first)
                    + ", got " + actual.get(first));
        }
    }

    /** The answer text of every server the fleet has, as the family prints it, by backend index. */
    private static List<String> expectedAnswers(Fixture f) {
        return f.fleet().stream().map(s -> s.answer(f.version().family())).toList();
    }

    // ---- build ----

    @ParameterizedTest(name = "{0}")
    @MethodSource("versions")
    void buildWritesTheVersionWithViewsAndASecondVersion(RingVersion v) throws Exception {
        Fixture f = fixture(v);
        CliRun summary = run(
                        "build",
                        f.conf().toString(),
                        "-o",
                        f.conf().resolveSibling("summary.ring").toString(),
                        "--algorithm",
                        v.name())
                .assertOk();
        assertEquals(v.name(), summary.field("versions"));
        assertEquals(String.valueOf(FLEET.size()), summary.field("backends"));
        try (RingStore built = RingStore.open(f.conf().resolveSibling("summary.ring"))) {
            Ring all = built.ring(Set.of());
            List<String> samples = summary.outLines().stream()
                    .filter(l -> l.startsWith("sample: "))
                    .toList();
            assertEquals(3, samples.size(), summary.out());
            for (String sample : samples) {
                String[] parts = sample.substring("sample: ".length()).split("\t");
                int b = all.lookup(parts[0].getBytes(StandardCharsets.UTF_8));
                assertEquals(
                        expectedAnswers(f).get(b),
                        parts[1],
                        () -> "the build summary's sample answers the lookup: " + sample);
                assertEquals("ring " + all, parts[2]);
            }
        }
        try (RingStore plain = RingStore.open(f.ring());
                RingStore all = RingStore.open(f.viewsAll());
                RingStore auto = RingStore.open(f.viewsAuto());
                RingStore two = RingStore.open(f.twoVersions())) {
            assertEquals(List.of(v), plain.versions());
            assertEquals(List.of(v, f.other()), two.versions());
            assertEquals(List.of("a", "b"), plain.features());
            int views = 0;
            for (Set<String> features : FEATURE_SETS) {
                Ring p = plain.ring(features);
                assertEquals(v, p.version());
                assertEquals(v.keyHash().name(), p.keyHash().name(), "a ring hashes keys by its version's key hash");
                assertEquals(v.family().pointBits() == 64, p.isWide());
                Ring a = all.ring(features);
                if (all.layout().storage(a) == RingFileLayout.Storage.VIEW) {
                    views++;
                }
                assertSameAnswers(p, a, "--views all");
                assertSameAnswers(p, auto.ring(features), "--views auto");
                assertSameAnswers(p, two.ring(features, v), "the first of two versions");
                for (Ring r : List.of(a, auto.ring(features))) {
                    if (!v.family().viewable()) {
                        assertNotEquals(
                                RingFileLayout.Storage.VIEW,
                                r.store().layout().storage(r),
                                () -> v + " is not viewable: its feature rings are stored as points");
                    }
                }
            }
            assertEquals(
                    v.family().viewable() ? FEATURE_SETS.size() - 1 : 0,
                    views,
                    "feature rings stored as views with --views all");
            try (RingStore other = RingStore.open(f.otherRing())) {
                for (Set<String> features : FEATURE_SETS) {
                    assertSameAnswers(
                            other.ring(features), two.ring(features, f.other()), "the second of two versions");
                }
            }
        }
    }

    /**
     * An IPv6 server with a scope id: built where the family can place it ({@link io.ringstore.family.Addresses#problem}
     * says nothing) and answered with its scope, refused in one line naming the file's line otherwise.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("versions")
    void aScopedAddressIsBuiltOrRefusedAsTheFamilySays(RingVersion v) throws Exception {
        Fixture f = fixture(v);
        List<Server> fleet = new ArrayList<>(f.fleet());
        fleet.add(new Server("[::1%1]", 11218, 1, List.of(), null, false));
        Path conf = Files.writeString(f.conf().resolveSibling("scoped.conf"), text(fleet));
        String problem = v.family()
                .addresses()
                .problem(BackendAccess.record(BackendList.parse(conf).backend(fleet.size() - 1)));
        Path ring = f.conf().resolveSibling("scoped.ring");
        CliRun r = run("build", conf.toString(), "-o", ring.toString(), "--algorithm", v.name(), "--quiet");
        if (problem == null) {
            r.assertOk();
            String answers = runWithInput(stdin(KEY_BYTES), "lookup", ring.toString())
                    .assertOk()
                    .out();
            assertTrue(answers.contains("\t[::1%1]:11218\n"), "the scoped server answers some keys, with its scope");
        } else {
            String error = r.assertError(Main.FAILED, "build");
            assertTrue(
                    error.startsWith(conf + ":" + (fleet.size() + 3) + ": ") && error.contains("[::1%1]:11218"), error);
            assertFalse(Files.exists(ring), "nothing published");
        }
    }

    /** Lookups and the family's failover answer alike in two rings (a stored one and a view, say). */
    private static void assertSameAnswers(Ring expected, Ring actual, String what) {
        IntPredicate up = b -> !expected.store().backend(b).down();
        for (byte[] k : KEY_BYTES) {
            assertEquals(
                    expected.lookup(k),
                    actual.lookup(k),
                    () -> what + ": lookup of " + new String(k, StandardCharsets.UTF_8) + " in " + actual);
            assertEquals(
                    expected.select(k, 0, k.length, Ring.NGINX_MAX_POINTS, up),
                    actual.select(k, 0, k.length, Ring.NGINX_MAX_POINTS, up),
                    () -> what + ": failover of " + new String(k, StandardCharsets.UTF_8) + " in " + actual);
        }
    }

    // ---- lookup ----

    /**
     * The library's lookup is the ring's points searched by the family's key hash (a sorted map of the
     * points, built here); the CLI prints that backend as {@code ip:port} for every feature ring, and
     * picks a version of a two-version file by {@code --algorithm}.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("versions")
    void cliAndLibraryLookupsAgreeByTheFamilysKeyHash(RingVersion v) throws Exception {
        Fixture f = fixture(v);
        List<String> expectedText = expectedAnswers(f);
        String input = stdin(KEY_BYTES);
        try (RingStore store = RingStore.open(f.ring());
                RingStore two = RingStore.open(f.twoVersions())) {
            for (int i = 0; i < store.backendCount(); i++) {
                assertEquals(expectedText.get(i), store.backend(i).answer(v.family()), "the family prints ip:port");
            }
            for (Set<String> features : FEATURE_SETS) {
                Ring ring = store.ring(features);
                Oracle oracle = new Oracle(ring);
                List<String> library = new ArrayList<>();
                for (byte[] k : KEY_BYTES) {
                    int b = ring.lookup(k);
                    oracle.check(k, b);
                    assertTrue(b >= 0 && store.backend(b).features().containsAll(features), "a member of the ring");
                    library.add(expectedText.get(b));
                }
                assertTrue(oracle.checked > KEYS * 0.99, () -> "keys the oracle could decide: " + oracle.checked);
                List<String> cli = cliAnswers(
                        runWithInput(
                                        input,
                                        "lookup",
                                        f.ring().toString(),
                                        "--features",
                                        String.join(",", features),
                                        "--no-failover")
                                .assertOk(),
                        KEY_BYTES);
                assertAnswers(library, cli, v + " ring " + features + ": the CLI answers the library's lookup");
                List<String> second = cliAnswers(
                        runWithInput(
                                        input,
                                        "lookup",
                                        f.twoVersions().toString(),
                                        "--features",
                                        String.join(",", features),
                                        "--no-failover",
                                        "--algorithm",
                                        v.name())
                                .assertOk(),
                        KEY_BYTES);
                assertAnswers(library, second, "--algorithm picks the version of a two-version file");
            }
            // The other version of the two-version file, by name.
            Ring other = two.ring(Set.of(), f.other());
            List<String> otherAnswers = new ArrayList<>();
            for (byte[] k : KEY_BYTES) {
                otherAnswers.add(two.backend(other.lookup(k)).answer(f.other().family()));
            }
            assertAnswers(
                    otherAnswers,
                    cliAnswers(
                            runWithInput(
                                            input,
                                            "lookup",
                                            f.twoVersions().toString(),
                                            "--no-failover",
                                            "--algorithm",
                                            f.other().name())
                                    .assertOk(),
                            KEY_BYTES),
                    "--algorithm " + f.other());
        }
        // --watch answers through the router as the plain lookup does, on either version of a two-version file.
        String first = String.join(
                "\n",
                cliAnswers(runWithInput(input, "lookup", f.ring().toString()).assertOk(), KEY_BYTES));
        assertEquals(
                first,
                String.join(
                        "\n",
                        cliAnswers(
                                runWithInput(input, "lookup", f.ring().toString(), "--watch")
                                        .assertOk(),
                                KEY_BYTES)),
                "lookup --watch");
        for (RingVersion version : List.of(v, f.other())) {
            CliRun plain = runWithInput(input, "lookup", f.twoVersions().toString(), "--algorithm", version.name())
                    .assertOk();
            CliRun watched = runWithInput(
                            input, "lookup", f.twoVersions().toString(), "--algorithm", version.name(), "--watch")
                    .assertOk();
            assertAnswers(
                    cliAnswers(plain, KEY_BYTES),
                    cliAnswers(watched, KEY_BYTES),
                    "lookup --watch --algorithm " + version);
        }
        // Keys as arguments answer as stdin's do.
        CliRun args = run(
                        "lookup",
                        f.ring().toString(),
                        "--no-failover",
                        new String(KEY_BYTES[0], StandardCharsets.UTF_8),
                        new String(KEY_BYTES[7], StandardCharsets.UTF_8))
                .assertOk();
        List<String> fromStdin = cliAnswers(
                runWithInput(input, "lookup", f.ring().toString(), "--no-failover")
                        .assertOk(),
                KEY_BYTES);
        assertEquals(
                List.of(fromStdin.get(0), fromStdin.get(7)),
                cliAnswers(args, new byte[][] {KEY_BYTES[0], KEY_BYTES[7]}));
    }

    /**
     * The ring's points in a sorted map, searched by the version's key hash with wrap-around (or, for
     * grpc-java, staying on the last point): what a lookup must answer. A 64-bit ring's map holds the points' high words, so a key whose high word
     * equals one (about points / 2^32 of keys) cannot be decided from it and is skipped.
     */
    private static final class Oracle {
        private final Ring ring;
        private final TreeMap<Long, Integer> points = new TreeMap<>();
        int checked;

        Oracle(Ring ring) {
            this.ring = ring;
            for (int p = 0; p < ring.pointCount(); p++) {
                points.putIfAbsent(Integer.toUnsignedLong(ring.pointLineHash(p)), ring.pointBackend(p));
            }
        }

        void check(byte[] key, int answer) {
            long h = ring.isWide()
                    ? ring.keyHash().hash64(key, 0, key.length) >>> 32
                    : Integer.toUnsignedLong(ring.keyHash().hash(key, 0, key.length));
            Map.Entry<Long, Integer> e = points.ceilingEntry(h);
            if (ring.isWide() && e != null && e.getKey() == h) {
                return;
            }
            if (e == null) {
                e = ring.wraps() ? points.firstEntry() : points.lastEntry(); // grpc-java: no wrap
            }
            if (ring.version().family().landing().nearest()) { // HAProxy: the nearer, the one before at a tie
                Map.Entry<Long, Integer> before = points.lowerEntry(e.getKey());
                Map.Entry<Long, Integer> prev = before != null ? before : points.lastEntry();
                long dp = (h - prev.getKey()) & 0xFFFF_FFFFL;
                long dn = (e.getKey() - h) & 0xFFFF_FFFFL;
                e = dp <= dn ? prev : e;
            }
            int expected = e.getValue();
            assertEquals(
                    expected, answer, () -> ring + ": " + new String(key, StandardCharsets.UTF_8) + " hashes to " + h);
            checked++;
        }
    }

    // ---- dump and verify ----

    @ParameterizedTest(name = "{0}")
    @MethodSource("versions")
    void dumpShowsTheVersionAndVerifyFindsAFlippedPointByte(RingVersion v) throws Exception {
        Fixture f = fixture(v);
        CliRun dump = run("dump", f.ring().toString()).assertOk();
        assertEquals(v.name(), dump.field("versions"));
        for (Set<String> features : FEATURE_SETS) {
            String ring =
                    "ring " + v.name() + (features.isEmpty() ? " (all)" : " " + String.join("+", features)) + ": ";
            assertTrue(
                    dump.outLines().stream().anyMatch(l -> l.startsWith(ring)),
                    () -> "'" + ring + "' in:\n" + dump.out());
        }
        assertEquals(
                v.name() + ", " + f.other().name(),
                run("dump", f.twoVersions().toString()).assertOk().field("versions"));
        Map<String, Object> json = CliJson.object(CliJson.parse(
                run("dump", f.ring().toString(), "--json").assertOk().out()));
        assertEquals(List.of(v.name()), CliJson.array(json.get("versions")));
        List<Object> rings = CliJson.array(json.get("rings"));
        assertEquals(FEATURE_SETS.size(), rings.size());
        for (Object r : rings) {
            Map<String, Object> ring = CliJson.object(r);
            assertEquals(v.name(), ring.get("version"));
            assertTrue(ring.get("problem") == null, () -> "dump computed the shares: " + ring.get("problem"));
            // The shares are the members' that hold points: the down server only where the family keeps its points.
            Set<String> features = new LinkedHashSet<>(CliJson.array(ring.get("features")).stream()
                    .map(CliJson::string)
                    .toList());
            List<Integer> members = new ArrayList<>();
            for (int i = 0; i < f.fleet().size(); i++) {
                Server s = f.fleet().get(i);
                if (s.features().containsAll(features)
                        && !(s.down() && v.family().downLeavesRing())) {
                    members.add(i);
                }
            }
            List<Map<String, Object>> shares = CliJson.array(ring.get("backends")).stream()
                    .map(CliJson::object)
                    .toList();
            assertEquals(
                    members,
                    shares.stream()
                            .map(b -> CliJson.number(b.get("index")).intValue())
                            .toList(),
                    () -> v + " " + features + ": the ring's members");
            double weights = 0;
            for (Map<String, Object> b : shares) {
                assertTrue(
                        CliJson.number(b.get("line_share")).doubleValue() > 0,
                        () -> "a member holds some of the line: " + b);
                weights += CliJson.number(b.get("weight_share")).doubleValue();
            }
            assertEquals(1.0, weights, 1e-9, "the members' weight shares");
        }
        assertEquals(FLEET.size(), CliJson.array(json.get("backends")).size());

        for (Path good : List.of(f.ring(), f.viewsAll(), f.twoVersions())) {
            CliRun verified = run("verify", good.toString()).assertOk();
            assertTrue(verified.out().startsWith("ok"), verified.out());
        }
        long at;
        try (RingStore store = RingStore.open(f.ring())) {
            RingFileLayout.Segment segment = store.layout().segmentOf(store.ring(Set.of()));
            at = segment.offset() + segment.length() / 2;
        }
        byte[] bytes = Files.readAllBytes(f.ring());
        bytes[(int) at] ^= 0x01;
        Path bad = Files.write(f.ring().resolveSibling("flipped.ring"), bytes);
        String error = run("verify", bad.toString()).assertError(Main.FAILED, "verify");
        assertTrue(error.contains(bad.toString()), error);
    }

    // ---- diff ----

    /**
     * diff's moved fraction is the share of keys whose backend changes, measured here on sampled keys:
     * against the v2:64 ring of the same fleet (another family, maybe another key hash) and against
     * the family's ring of the fleet less one server.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("versions")
    void diffMovedFractionIsTheShareOfKeysThatMove(RingVersion v) throws Exception {
        Fixture f = fixture(v);
        byte[][] keys = keys(DIFF_KEYS, 2);
        try (RingStore a = RingStore.open(f.ring());
                RingStore other = RingStore.open(f.otherRing());
                RingStore minus = RingStore.open(f.minusRing())) {
            double toOther = movedFraction(a.ring(Set.of()), other.ring(Set.of()), keys);
            double printed = printedMovedFraction(
                    run("diff", f.ring().toString(), f.otherRing().toString()).assertOk());
            assertEquals(
                    toOther,
                    printed,
                    DIFF_TOLERANCE,
                    () -> v + " to " + f.other() + ": diff prints " + printed + ", keys moved " + toOther);
            CliRun json = run("diff", f.ring().toString(), f.otherRing().toString(), "--json")
                    .assertOk();
            assertEquals(
                    printed,
                    CliJson.number(CliJson.object(CliJson.parse(json.out())).get("moved_fraction"))
                            .doubleValue(),
                    1e-9);

            double removed = movedFraction(a.ring(Set.of()), minus.ring(Set.of()), keys);
            CliRun diff =
                    run("diff", f.ring().toString(), f.minusRing().toString()).assertOk();
            double printedRemoved = printedMovedFraction(diff);
            assertTrue(removed > 0 && removed < 0.6, () -> "one server of 12 removed moves some keys: " + removed);
            assertEquals(
                    removed,
                    printedRemoved,
                    DIFF_TOLERANCE,
                    () -> v + " less one server: diff prints " + printedRemoved + ", keys moved " + removed);
            assertTrue(diff.out().contains("1 removed"), diff.out());

            double versions = movedFraction(a.ring(Set.of()), other.ring(Set.of()), keys);
            double printedVersions = printedMovedFraction(run(
                            "diff",
                            f.twoVersions().toString(),
                            f.twoVersions().toString(),
                            "--algorithm-a",
                            v.name(),
                            "--algorithm-b",
                            f.other().name())
                    .assertOk());
            assertEquals(versions, printedVersions, DIFF_TOLERANCE, "the two versions of one file");
        }
    }

    private static final Pattern MOVED = Pattern.compile("(?m)^moved_fraction: ([0-9.]+) ");

    private static double printedMovedFraction(CliRun r) {
        Matcher m = MOVED.matcher(r.out());
        assertTrue(m.find(), r.out());
        return Double.parseDouble(m.group(1));
    }

    /** The share of {@code keys} whose backend (by address) differs between the two rings. */
    private static double movedFraction(Ring a, Ring b, byte[][] keys) {
        int moved = 0;
        for (byte[] k : keys) {
            if (!a.store()
                    .backend(a.lookup(k))
                    .socketAddress()
                    .equals(b.store().backend(b.lookup(k)).socketAddress())) {
                moved++;
            }
        }
        return (double) moved / keys.length;
    }

    // ---- analyze and recommend ----

    @ParameterizedTest(name = "{0}")
    @MethodSource("versions")
    void analyzeBuildsTheFamilysRings(RingVersion v) throws Exception {
        Fixture f = fixture(v);
        for (String algorithm : List.of(v.name(), v.name() + "," + f.other().name())) {
            CliRun r = run("analyze", f.conf().toString(), "--algorithm", algorithm)
                    .assertOk();
            assertTrue(
                    r.out()
                            .lines()
                            .anyMatch(l ->
                                    l.startsWith("file: ") && l.endsWith("versions: " + algorithm.replace(",", ", "))),
                    r.out());
            for (Set<String> features : FEATURE_SETS) {
                String ring = v.name() + (features.isEmpty() ? " (all)" : " " + String.join("+", features)) + " ";
                assertTrue(
                        r.out().lines().anyMatch(l -> l.startsWith(ring)),
                        () -> "a row for '" + ring + "':\n" + r.out());
            }
        }
    }

    /** The sweep simulates k CRC-32 points a backend: v1 and v2 only; any other family is refused in one line, pointing to a backends file. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("versions")
    void analyzeSweepTakesTheCrcFamiliesAndRefusesTheOthers(RingVersion v) {
        if (v.family().parameters().written() > 0
                && !v.equals(RingVersion.parse(v.family().name()))) {
            return; // the sweep takes a family's bare name: once a family
        }
        String[] args = {
            "analyze",
            "--backends",
            "4",
            "--points",
            "8..16",
            "--seeds",
            "1",
            "--algorithm",
            v.family().name(),
            "--quiet"
        };
        if (v.family().crcChain()) {
            run(args).assertOk();
        } else {
            String error = run(args).assertError(Main.USAGE, "analyze");
            assertTrue(error.contains("analyze FILE --algorithm " + v.family().name()), error);
        }
    }

    /** recommend takes no algorithm (it answers a v2 point multiple): it reads the fleet with its names, IPv6 and down server. */
    @Test
    void recommendReadsTheFleet() throws Exception {
        Path conf = Files.writeString(
                Files.createDirectories(dir.resolve("recommend")).resolve("fleet.conf"), text(FLEET));
        CliRun r = run("recommend", conf.toString(), "--target-cv", "10%").assertOk();
        assertTrue(r.field("for").endsWith("12 backends, 4 rings (4 distinct backend sets), v2"), r.out());
        assertTrue(Integer.parseInt(r.field("point_multiple")) > 0, r.out());
    }

    // ---- failover, the state file, bounded load ----

    /**
     * The family's failover, as the test computes it: a walk over the points from the key's (at most
     * {@link Ring#NGINX_MAX_POINTS}), or for a rehashing family the backends of its rehash sequence.
     *
     * @return the first backend {@code ok} accepts, or {@link Ring#GAVE_UP}
     */
    private static int failover(Ring ring, byte[] key, IntPredicate ok) {
        Failover failover = ring.version().family().failover();
        if (failover.rehashesKey()) {
            int h = ring.keyHash().hash(key, 0, key.length);
            for (int attempt = 0; attempt < failover.lookups(ring.store().backendCount()); attempt++) {
                if (attempt > 0) {
                    h = failover.rehash(h, key, 0, key.length, attempt);
                }
                int b = ring.lookupHash(h);
                if (ok.test(b)) {
                    return b;
                }
            }
            return Ring.GAVE_UP;
        }
        PrimitiveIterator.OfInt points = ring.points(key);
        for (int walked = 0; walked < Ring.NGINX_MAX_POINTS && points.hasNext(); walked++) {
            int b = points.nextInt();
            if (ok.test(b)) {
                return b;
            }
        }
        return Ring.GAVE_UP;
    }

    /**
     * {@code lookup} skips the server marked down as the family fails over, and a backend drained in
     * the state file ({@code ringstore state FILE drain ADDR}) too; {@link Ring#select} refusing each
     * key's primary answers another backend, the one the family's failover reaches.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("versions")
    void failoverFollowsTheFamilyInTheCliAndTheLibrary(RingVersion v) throws Exception {
        Fixture f = fixture(v);
        Path ringFile = Files.copy(f.ring(), f.ring().resolveSibling("failover.ring"));
        List<String> text = expectedAnswers(f);
        String input = stdin(KEY_BYTES);
        try (RingStore store = RingStore.open(ringFile)) {
            int down = -1;
            for (int i = 0; i < store.backendCount(); i++) {
                if (store.backend(i).down()) {
                    down = i;
                }
            }
            assertEquals(4, down, "the fleet's down server");
            int downServer = down;
            IntPredicate up = b -> b != downServer;
            for (Set<String> features : FEATURE_SETS) {
                Ring ring = store.ring(features);
                List<String> expected = new ArrayList<>();
                int primaryDown = 0;
                for (byte[] k : KEY_BYTES) {
                    int b = failover(ring, k, up);
                    assertEquals(b, ring.select(k, 0, k.length, Ring.NGINX_MAX_POINTS, up), "the library's failover");
                    PrimitiveIterator.OfInt order = ring.backends(k);
                    assertEquals(ring.lookup(k), order.nextInt(), "failover order starts at the key's backend");
                    if (b >= 0 && b != ring.lookup(k)) {
                        int next = order.nextInt();
                        while (!up.test(next)) {
                            next = order.nextInt();
                        }
                        assertEquals(b, next, () -> v + ": Ring.backends gives the failover order");
                    }
                    expected.add(b < 0 ? "-" : text.get(b));
                    primaryDown += ring.lookup(k) == down ? 1 : 0;
                    int primary = ring.lookup(k);
                    int other = ring.select(k, 0, k.length, Ring.NGINX_MAX_POINTS, b2 -> b2 != primary);
                    assertNotEquals(primary, other, "select refusing the primary");
                    assertEquals(failover(ring, k, b2 -> b2 != primary), other);
                    Backend chosen =
                            ring.selectBackend(k, 0, k.length, Ring.NGINX_MAX_POINTS, b2 -> b2.index() != primary);
                    assertEquals(other, chosen == null ? Ring.GAVE_UP : chosen.index(), "selectBackend");
                }
                boolean inRing = store.backend(down).features().containsAll(features);
                int owned = primaryDown;
                assertEquals(
                        inRing && !v.family().downLeavesRing(),
                        owned > 0,
                        () ->
                                "keys whose own backend is the down server (it keeps its points unless the family ejects it): "
                                        + owned);
                List<String> cli = cliAnswers(
                        runWithInput(input, "lookup", ringFile.toString(), "--features", String.join(",", features))
                                .assertOk(),
                        KEY_BYTES);
                assertAnswers(expected, cli, v + " ring " + features + ": lookup fails over as the family does");
            }

            // Drain the backend of the first key that is not the down server's, in the state file: lookup skips it too.
            Ring all = store.ring(Set.of());
            int drained = Stream.of(KEY_BYTES)
                    .mapToInt(all::lookup)
                    .filter(up)
                    .findFirst()
                    .orElseThrow();
            String endpoint = store.backend(drained).socketAddress();
            CliRun drain = run("state", ringFile.toString(), "drain", endpoint).assertOk();
            assertEquals("drained " + endpoint + ": every router skips it from its next lookup\n", drain.out());
            CliRun shown = run("state", ringFile.toString(), "--json").assertOk();
            List<Object> backends =
                    CliJson.array(CliJson.object(CliJson.parse(shown.out())).get("backends"));
            assertTrue(
                    backends.stream()
                            .map(CliJson::object)
                            .anyMatch(b -> endpoint.equals(b.get("endpoint")) && Boolean.TRUE.equals(b.get("drained"))),
                    shown.out());
            List<String> expected = new ArrayList<>();
            int moved = 0;
            for (byte[] k : KEY_BYTES) {
                int b = failover(all, k, b2 -> b2 != downServer && b2 != drained);
                expected.add(b < 0 ? "-" : text.get(b));
                moved += all.lookup(k) == drained ? 1 : 0;
            }
            assertTrue(moved > 0);
            assertAnswers(
                    expected,
                    cliAnswers(
                            runWithInput(input, "lookup", ringFile.toString()).assertOk(), KEY_BYTES),
                    v + ": lookup skips the backend drained in the state file");
            List<String> ignoring = cliAnswers(
                    runWithInput(input, "lookup", ringFile.toString(), "--no-state")
                            .assertOk(),
                    KEY_BYTES);
            assertTrue(
                    ignoring.contains(text.get(drained)), () -> v + " --no-state: the drained backend answers again");
            assertEquals(
                    "undrained " + endpoint + "\n",
                    run("state", ringFile.toString(), "undrain", endpoint)
                            .assertOk()
                            .out());
        }
    }

    /**
     * {@link RingRouter.Route#choose} with a {@link SharedLoad}: without a bound it is the family's
     * failover past the down server; with {@link BoundedLoad} it answers a member of the ring that is
     * not down, and the ring's own answer while nothing is in flight.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("versions")
    void boundedLoadAnswersAMember(RingVersion v) throws Exception {
        Fixture f = fixture(v);
        Path ringFile = Files.copy(f.ring(), f.ring().resolveSibling("bounded.ring"));
        HostState.Options options = HostState.Options.DEFAULTS.withCapacity(64, 4);
        try (RingRouter router = RingRouter.builder(ringFile)
                        .jmx(false)
                        .pollMillis(0)
                        .graceMillis(0)
                        .open();
                HostState state = HostState.open(ringFile, options)) {
            SharedLoad bounded = SharedLoad.open(state, router::current, BoundedLoad.of(1.25));
            SharedLoad unbounded = SharedLoad.open(state, router::current, null);
            for (Set<String> features : FEATURE_SETS) {
                try (RingRouter.Route route = router.route(features)) {
                    Ring ring = route.oldRing();
                    List<Integer> held = new ArrayList<>();
                    for (byte[] k :
                            Arrays.copyOf(KEY_BYTES, 400)) { // a router's calls through shared memory: fewer keys
                        int plain = ring.lookup(k);
                        int expected =
                                failover(ring, k, b -> !ring.store().backend(b).down());
                        Backend free = route.choose(k, unbounded);
                        assertNotNull(free);
                        assertEquals(
                                expected,
                                free.index(),
                                () -> v + " " + features + ": choose without a bound is the family's failover");
                        assertEquals(free, route.choose(ByteBuffer.wrap(k), unbounded), "a buffer's key");
                        assertEquals(free, route.choose(MemorySegment.ofArray(k), unbounded), "a segment's key");
                        Predicate<Backend> notDown = c -> !c.down();
                        assertEquals(free, route.select(k, Ring.NGINX_MAX_POINTS, notDown), "the router's select");
                        assertEquals(
                                free,
                                route.select(ByteBuffer.wrap(k), Ring.NGINX_MAX_POINTS, notDown),
                                "the router's select, a buffer");
                        assertEquals(
                                free,
                                route.select(MemorySegment.ofArray(k), Ring.NGINX_MAX_POINTS, notDown),
                                "the router's select, a segment");
                        Backend b = route.choose(k, bounded);
                        assertNotNull(b);
                        assertTrue(
                                b.features().containsAll(features) && !b.down(),
                                () -> "a member that is not down: " + b);
                        if (held.isEmpty() && !ring.store().backend(plain).down()) {
                            assertEquals(plain, b.index(), "nothing in flight: the ring's own answer");
                        }
                        if (held.size() < 200) { // load some backends: the bound then moves keys, still to members
                            held.add(bounded.acquire(b));
                        }
                    }
                    held.forEach(bounded::release);
                }
            }
        }
    }

    // ---- the router ----

    /**
     * A router over the two-version file rolling out 50 % from the family's version to the other (by
     * a policy file): each key's backend is the chosen version's lookup, and about half the keys take
     * each version.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("versions")
    void routerRollsOutHalfTheKeysToTheOtherVersion(RingVersion v) throws Exception {
        Fixture f = fixture(v);
        Path policyFile =
                Files.writeString(f.twoVersions().resolveSibling("rollout.policy"), "percent = 50\nscope = all\n");
        RolloutPolicy half = RolloutPolicy.everywhere(50);
        byte[][] keys = keys(1000, 3);
        try (RingRouter router = RingRouter.builder(f.twoVersions())
                        .versions(v, f.other())
                        .jmx(false)
                        .pollMillis(0)
                        .open();
                PolicyFileWatcher watcher = PolicyFileWatcher.watch(policyFile, router, "", 0);
                RingStore store = RingStore.open(f.twoVersions())) {
            assertEquals(half, router.policy(), () -> "the policy file: " + watcher.lastError());
            for (Set<String> features : List.of(Set.<String>of(), Set.of("a"))) {
                try (RingRouter.Route route = router.route(features)) {
                    router.resetCounters();
                    int migrated = 0;
                    for (byte[] k : keys) {
                        boolean toNew = half.migrates(k, 0, k.length);
                        migrated += toNew ? 1 : 0;
                        Ring ring = store.ring(features, toNew ? f.other() : v);
                        Backend b = route.backend(k);
                        assertNotNull(b);
                        assertEquals(
                                ring.lookup(k),
                                b.index(),
                                () -> v + " " + features + ": " + new String(k, StandardCharsets.UTF_8) + " on "
                                        + (toNew ? f.other() : v));
                    }
                    assertTrue(migrated > 400 && migrated < 600, "about half the keys migrate: " + migrated);
                    assertEquals(migrated, router.newLookups());
                    assertEquals(keys.length - migrated, router.oldLookups());
                }
            }
        }
    }
}
