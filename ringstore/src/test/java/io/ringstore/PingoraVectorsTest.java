package io.ringstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.ringstore.VectorFiles.Candidate;
import io.ringstore.VectorFiles.Collision;
import io.ringstore.builder.BackendList;
import io.ringstore.builder.BackendsFileException;
import io.ringstore.builder.BuildResult;
import io.ringstore.builder.RingBuilder;
import io.ringstore.builder.Views;
import io.ringstore.family.Families;
import io.ringstore.family.RingVersion;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.PrimitiveIterator;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * Parity with pingora-ketama on every file of {@code shared/vectors/pingora} (see its README.md):
 * lookups and {@code node_iter} order, the whole sorted ring, and who keeps a colliding hash.
 *
 * <p>v2 must match pingora on every row. v1 follows nginx where pingora's v1 has no fixed rule: on a
 * hash that two backends produce, ringstore keeps the backend listed first, pingora whichever its
 * unstable sort left first. Those rows are held to the nginx rule, and the ones where pingora chose
 * differently are counted. pingora's v1 also hashes IPv6 backends as the bare address where nginx
 * hashes the bracketed text, so for sets with IPv6 backends only the IPv4 backends are compared in v1.
 */
@Tag("slow") // every vector set through stored rings and views; the quick lane keeps the families' vector checks
class PingoraVectorsTest {
    private static final String VERSION = "(v1|v2-\\d+)";
    private static final Pattern LOOKUP = Pattern.compile("lookup_([a-z])_" + VERSION + "(_collkeys)?\\.tsv\\.gz");
    private static final Pattern RING = Pattern.compile("ring_([a-z])_" + VERSION + "\\.tsv\\.gz");
    private static final Pattern COLLISIONS = Pattern.compile("collisions_([a-z])_" + VERSION + "\\.tsv");
    private static final Pattern INPUT =
            Pattern.compile("README\\.md|buckets_[a-z]\\.txt|(coll)?keys_[a-z]\\.txt\\.gz");
    private static final List<String> SETS = List.of("a", "b", "c", "d", "e");
    /** Columns after key and address in the lookup files of sets a, b and e. */
    private static final int NODE_ITER_COLUMNS = 8;
    /** Backends listed before a set's own when its ring is read as a view. */
    private static final int OTHERS = 200;

    private static final int MISMATCHES_SHOWN = 10;

    @TempDir
    static Path ringFiles;

    private static final List<RingStore> opened = new CopyOnWriteArrayList<>();

    @AfterAll
    static void closeStores() {
        opened.forEach(RingStore::close);
    }

    @Test
    void everyVectorFileIsChecked() throws IOException {
        try (Stream<Path> files = Files.list(VectorFiles.directory("pingora"))) {
            List<String> unknown = files.map(f -> f.getFileName().toString())
                    .filter(n -> Stream.of(LOOKUP, RING, COLLISIONS, INPUT)
                            .noneMatch(p -> p.matcher(n).matches()))
                    .toList();
            assertEquals(List.of(), unknown, "files this test does not know how to check");
        }
    }

    /** One container per (set, version), one test per vector file, plus the dropped-point count. */
    @TestFactory
    Stream<DynamicNode> pingoraVectors() throws IOException {
        Path dir = VectorFiles.directory("pingora");
        Map<String, List<Path>> filesByCase = new TreeMap<>();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.sorted().toList()) {
                for (Pattern p : List.of(LOOKUP, RING, COLLISIONS)) {
                    Matcher m = p.matcher(f.getFileName().toString());
                    if (m.matches()) {
                        filesByCase
                                .computeIfAbsent(m.group(1) + " " + m.group(2), k -> new ArrayList<>())
                                .add(f);
                    }
                }
            }
        }
        List<String> sets = filesByCase.keySet().stream()
                .map(k -> k.split(" ")[0])
                .distinct()
                .toList();
        assertEquals(SETS, sets, "backend sets with vectors in " + dir);

        return filesByCase.entrySet().stream()
                .flatMap(e -> Stream.of(false, true).map(asView -> {
                    String[] setAndVersion = e.getKey().split(" ");
                    Case c = new Case(dir, setAndVersion[0], setAndVersion[1], asView);
                    if (c.v1 && c.hasScope()) {
                        // pingora's v1 takes scope ids; ringstore's v1 is nginx's, which refuses them (issue 10).
                        return DynamicTest.dynamicTest(
                                "set " + c.set + " " + c.version + ": refused, as nginx refuses scope ids",
                                c::checkScopeRefused);
                    }
                    List<DynamicNode> tests = new ArrayList<>();
                    for (Path f : e.getValue()) {
                        String name = f.getFileName().toString();
                        if (LOOKUP.matcher(name).matches()) {
                            tests.add(DynamicTest.dynamicTest(name, () -> c.checkLookups(f)));
                        } else if (RING.matcher(name).matches()) {
                            tests.add(DynamicTest.dynamicTest(name, () -> c.checkRing(f)));
                        } else {
                            tests.add(DynamicTest.dynamicTest(name, () -> c.checkCollisions(f)));
                        }
                    }
                    if (!asView) {
                        tests.add(DynamicTest.dynamicTest(
                                "set " + c.set + " " + c.version + ": dropped points = BuildResult.collisions()",
                                c::checkDroppedPoints));
                    }
                    return DynamicContainer.dynamicContainer(
                            "set " + c.set + ", " + c.version + (asView ? ", as a view" : ""), tests);
                }));
    }

    /** One backend set built as one version, shared by the tests of its files. */
    private static final class Case {
        final Path dir;
        final String set;
        final String versionName;
        final RingVersion version;
        final boolean v1;
        BackendList backends;
        BuildResult built;
        RingStore store;
        Ring ring;
        Map<Integer, Collision> collisions;
        boolean hasIpv6;

        /**
         * Whether the set's ring is read as a view (format 3): the set's backends get feature
         * {@code vec} in a file that lists {@link #OTHERS} other backends first, without it, whose
         * points tie with the set's now and then; the ring of {@code vec} must still be the vectors'.
         */
        final boolean asView;

        Case(Path dir, String set, String versionName, boolean asView) {
            this.asView = asView;
            this.dir = dir;
            this.set = set;
            this.versionName = versionName;
            this.version = versionName.equals("v1")
                    ? RingVersion.V1
                    : RingVersion.v2(Integer.parseInt(versionName.substring("v2-".length())));
            this.v1 = version.family() == Families.NGINX;
        }

        synchronized void build() throws Exception {
            if (ring != null) {
                return;
            }
            Path buckets = dir.resolve("buckets_" + set + ".txt");
            String text = VectorFiles.backendsText(buckets);
            if (asView) {
                StringBuilder withOthers = new StringBuilder();
                for (int i = 0; i < OTHERS; i++) {
                    withOthers
                            .append("server 198.51.100.")
                            .append(i + 1)
                            .append(":7000 weight=")
                            .append(1 + i % 13)
                            .append(";\n");
                }
                for (String line : text.lines().toList()) {
                    withOthers
                            .append(line)
                            .append(line.strip().startsWith("server") ? " # ringstore: features=vec\n" : "\n");
                }
                text = withOthers.toString();
            }
            backends = BackendList.parse(buckets.getFileName().toString(), text);
            Path file = ringFiles.resolve(set + "_" + versionName + (asView ? "_view" : "") + ".ring");
            built = RingBuilder.of(backends)
                    .version(version)
                    .views(asView ? Views.ALL : Views.NONE)
                    .build(file);
            store = RingStore.open(file);
            opened.add(store);
            ring = store.ring(asView ? Set.of("vec") : Set.of(), version);
            if (asView) {
                store.verify();
                assertEquals(RingFileLayout.Storage.VIEW, store.layout().storage(ring));
            }
            hasIpv6 =
                    backends.backends().stream().anyMatch(b -> b.socketAddress().startsWith("["));
            collisions = VectorFiles.collisions(dir.resolve("collisions_" + set + "_" + versionName + ".tsv"));
        }

        boolean hasScope() {
            try {
                return VectorFiles.backendsText(dir.resolve("buckets_" + set + ".txt"))
                        .contains("%");
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }

        void checkScopeRefused() throws Exception {
            Path buckets = dir.resolve("buckets_" + set + ".txt");
            BackendList list = BackendList.parse(buckets.getFileName().toString(), VectorFiles.backendsText(buckets));
            BackendsFileException e = assertThrows(
                    BackendsFileException.class,
                    () -> RingBuilder.of(list)
                            .version(version)
                            .build(ringFiles.resolve(set + "_" + versionName + ".ring")));
            assertTrue(e.reason().contains("has a scope id"), e.getMessage());
        }

        /** v1 with IPv6 backends: pingora and nginx hash those differently, so only IPv4 backends compare. */
        boolean ipv4Only() {
            return v1 && hasIpv6;
        }

        String address(int backend) {
            return backend < 0
                    ? "<no backend: " + backend + ">"
                    : store.backend(backend).socketAddress();
        }

        /**
         * The backend the nginx rule keeps at a hash pingora saw collide: the candidate listed first among
         * those both hash alike (IPv4); null when there is none.
         */
        static String nginxSurvivor(Collision c) {
            return c.candidates().stream()
                    .filter(Candidate::isIpv4)
                    .min(Comparator.comparingInt(Candidate::index))
                    .map(Candidate::address)
                    .orElse(null);
        }

        /** What ringstore must answer at a point with {@code hash} where pingora answered {@code pingora}. */
        String expected(int hash, String pingora) {
            Collision c = v1 ? collisions.get(hash) : null;
            return c == null ? pingora : nginxSurvivor(c);
        }

        void checkLookups(Path file) throws Exception {
            build();
            assumeFalse(
                    ipv4Only(),
                    "v1 lookups with IPv6 backends are not comparable: pingora hashes the bare address, nginx the bracketed text");
            String name = file.getFileName().toString();
            Path keysFile = dir.resolve((name.endsWith("_collkeys.tsv.gz") ? "collkeys_" : "keys_") + set + ".txt.gz");
            Mismatches mismatches = new Mismatches(name);
            int rows = 0;
            long iterCells = 0;
            int onV1Collision = 0;
            int differFromPingora = 0;
            try (BufferedReader lookups = VectorFiles.open(file);
                    BufferedReader keys = VectorFiles.open(keysFile)) {
                for (String line; (line = lookups.readLine()) != null; ) {
                    rows++;
                    String[] f = line.split("\t", -1);
                    String key = keys.readLine();
                    if (!f[0].equals(key)) {
                        fail(name + " row " + rows + ": key '" + f[0] + "' but " + keysFile.getFileName() + " has '"
                                + key + "'");
                    }
                    if (f.length != 2 && f.length != 2 + NODE_ITER_COLUMNS) {
                        fail(name + " row " + rows + ": expected 2 or " + (2 + NODE_ITER_COLUMNS) + " columns: "
                                + line);
                    }
                    byte[] k = VectorFiles.bytes(key);
                    int start = ring.pointIndex(ring.hash(k));
                    int landedHash = (int) ring.pointHash(start);
                    String want = expected(landedHash, f[1]);
                    if (v1 && collisions.containsKey(landedHash)) {
                        onV1Collision++;
                        if (!want.equals(f[1])) {
                            differFromPingora++;
                        }
                    }
                    mismatches.check(rows, key, "lookup", want, address(ring.lookup(k)));
                    if (f.length == 2) {
                        continue;
                    }
                    // node_iter cycles for ever; Ring.points yields one lap, so the columns past it restart it.
                    PrimitiveIterator.OfInt points = ring.points(k);
                    for (int j = 0; j < NODE_ITER_COLUMNS; j++) {
                        if (j > 0 && j % ring.pointCount() == 0) {
                            if (points.hasNext()) {
                                fail(name + " row " + rows + ": Ring.points gave more than pointCount="
                                        + ring.pointCount() + " values");
                            }
                            points = ring.points(k);
                        }
                        int p = (start + j) % ring.pointCount();
                        mismatches.check(
                                rows,
                                key,
                                "node_iter[" + j + "]",
                                expected((int) ring.pointHash(p), f[2 + j]),
                                points.hasNext() ? address(points.nextInt()) : "<Ring.points ended>");
                        iterCells++;
                    }
                }
                assertNull(keys.readLine(), name + ": fewer rows than " + keysFile.getFileName() + " has keys");
            }
            System.out.printf(
                    "%s: %d rows, %d node_iter cells%s%n",
                    name,
                    rows,
                    iterCells,
                    v1
                            ? ", " + onV1Collision + " rows on a colliding hash, " + differFromPingora
                                    + " of them answered differently by pingora (nginx rule: listed first keeps it)"
                            : "");
            mismatches.assertNone();
            assertTrue(rows > 0, name + " is empty");
        }

        void checkRing(Path file) throws Exception {
            build();
            String name = file.getFileName().toString();
            Mismatches mismatches = new Mismatches(name);
            int n = ring.pointCount();
            // Our points in order, only the IPv4 ones when only those compare.
            List<Integer> ours = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                if (!ipv4Only() || !address(ring.pointBackend(i)).startsWith("[")) {
                    ours.add(i);
                }
            }
            int rows = 0;
            int compared = 0;
            int differFromPingora = 0;
            int ipv6Rows = 0;
            int ipv6Reproduced = 0;
            try (BufferedReader r = VectorFiles.open(file)) {
                for (String line; (line = r.readLine()) != null; ) {
                    String[] f = line.split("\t", -1);
                    if (f.length != 3 || !f[0].equals(Integer.toString(rows))) {
                        fail(name + " row " + rows + ": expected '" + rows + "<TAB>hash<TAB>address': " + line);
                    }
                    rows++;
                    int hash = (int) Long.parseLong(f[1]);
                    if (ipv4Only() && f[2].startsWith("[")) {
                        ipv6Rows++;
                        int p = ring.pointIndex(hash);
                        if (ring.pointHash(p) == Integer.toUnsignedLong(hash)
                                && address(ring.pointBackend(p)).equals(f[2])) {
                            ipv6Reproduced++;
                        }
                        continue;
                    }
                    String want = expected(hash, f[2]);
                    if (!want.equals(f[2])) {
                        differFromPingora++;
                    }
                    if (compared < ours.size()) {
                        int p = ours.get(compared);
                        mismatches.check(rows, "#" + p, "hash", f[1], Long.toString(ring.pointHash(p)));
                        mismatches.check(rows, "#" + p, "address", want, address(ring.pointBackend(p)));
                    }
                    compared++;
                }
            }
            System.out.printf(
                    "%s: %d points, %d compared%s%n",
                    name,
                    rows,
                    compared,
                    (v1 ? ", " + differFromPingora + " kept by a different backend than pingora's (nginx rule)" : "")
                            + (ipv4Only()
                                    ? ", " + ipv6Rows + " IPv6 points not comparable (" + ipv6Reproduced
                                            + " reproduced)"
                                    : ""));
            mismatches.assertNone();
            assertEquals(compared, ours.size(), name + ": number of " + (ipv4Only() ? "IPv4 " : "") + "points");
            if (ipv4Only()) {
                // The reason IPv6 is left out: nginx hashes "[addr]" where pingora's v1 hashes "addr".
                assertEquals(0, ipv6Reproduced, name + ": IPv6 points that ringstore v1 hashes like pingora v1");
            } else {
                assertEquals(rows, n, name + ": number of points");
            }
        }

        void checkCollisions(Path file) throws Exception {
            build();
            String name = file.getFileName().toString();
            Mismatches mismatches = new Mismatches(name);
            List<Collision> rows = collisions.values().stream()
                    .sorted(Comparator.comparingInt(Collision::line))
                    .toList();
            int notComparable = 0;
            int differFromPingora = 0;
            for (Collision c : rows) {
                String hash = Integer.toUnsignedString(c.hash());
                if (!c.candidates().contains(c.survivor())) {
                    fail(name + " row " + c.line() + ": survivor " + c.survivor() + " is not a candidate");
                }
                for (Candidate cand : c.candidates()) {
                    int index = cand.index() + (asView ? OTHERS : 0); // a view's file lists the others first
                    String ours = index < store.backendCount() ? address(index) : "<no backend " + cand.index() + ">";
                    mismatches.check(c.line(), hash, "candidate #" + cand.index(), cand.address(), ours);
                }
                String want = v1 ? nginxSurvivor(c) : c.survivor().address();
                if (want == null) {
                    notComparable++;
                    continue;
                }
                if (!want.equals(c.survivor().address())) {
                    differFromPingora++;
                }
                int p = ring.pointIndex(c.hash());
                String actual = ring.pointHash(p) == Integer.toUnsignedLong(c.hash())
                        ? address(ring.pointBackend(p))
                        : "<no point with this hash>";
                mismatches.check(c.line(), hash, "survivor", want, actual);
            }
            System.out.printf(
                    "%s: %d colliding hashes%s%n",
                    name,
                    rows.size(),
                    v1
                            ? ", " + differFromPingora
                                    + " kept by a different backend than pingora's (nginx rule: listed first)"
                                    + (ipv4Only()
                                            ? ", " + notComparable + " with only IPv6 candidates not comparable"
                                            : "")
                            : "");
            mismatches.assertNone();
            assertFalse(rows.isEmpty(), name + " is empty");
        }

        /**
         * BuildResult.collisions() counts dropped points: per colliding hash, its candidates but one. A
         * missing collisions file means no hash collided (the README: it lists every such hash).
         */
        void checkDroppedPoints() throws Exception {
            build();
            assumeFalse(
                    ipv4Only(), "pingora's v1 hashes IPv6 backends differently, so its collisions are not ringstore's");
            long dropped =
                    collisions.values().stream().mapToLong(Collision::dropped).sum();
            long generated = backends.backends().stream()
                    .mapToLong(b -> b.weight() * version.pointMultiple())
                    .sum();
            System.out.printf(
                    "set %s %s: %d points generated, %d dropped on %d colliding hashes%n",
                    set, version, generated, dropped, collisions.size());
            assertEquals(dropped, built.collisions(), "set " + set + " " + version + ": BuildResult.collisions()");
            assertEquals(generated - dropped, built.points(), "set " + set + " " + version + ": BuildResult.points()");
            assertEquals(generated - dropped, ring.pointCount(), "set " + set + " " + version + ": Ring.pointCount()");
        }
    }

    /** Counts mismatches of one file and keeps the first few for the failure message. */
    private static final class Mismatches {
        private final String file;
        private final List<String> shown = new ArrayList<>();
        private int count;

        Mismatches(String file) {
            this.file = file;
        }

        void check(int row, String key, String what, String expected, String actual) {
            if (!expected.equals(actual) && count++ < MISMATCHES_SHOWN) {
                shown.add("  row " + row + " (" + key + ") " + what + ": expected " + expected + ", actual " + actual);
            }
        }

        void assertNone() {
            assertEquals(
                    0,
                    count,
                    () -> file + ": " + count + " mismatches, first " + shown.size() + ":\n"
                            + String.join("\n", shown));
        }
    }
}
