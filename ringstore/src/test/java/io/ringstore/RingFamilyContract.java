package io.ringstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.ringstore.builder.BackendList;
import io.ringstore.builder.RingBuilder;
import io.ringstore.family.Families;
import io.ringstore.family.RingFamily;
import io.ringstore.family.RingVersion;
import io.ringstore.internal.BackendAccess;
import io.ringstore.internal.BackendRecord;
import java.io.BufferedReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What every {@link RingFamily} must pass, in the manner of hash4j's one suite for all
 * implementations: its identity in the registry and the version grammar; reference vectors produced
 * by the original implementation (the pingora sets here, a subclass's own project vectors as its own
 * tests); a golden checksum over seeded fleets; and properties: keys move only to an added backend
 * (the families whose points depend on the backend alone), or between old backends only through
 * recounted points (the share rules); an added backend takes exactly its share of the hash line, and
 * few keys move in all; every point owned by a member of its ring; every point regenerated from the
 * family's point hashes and weight rule, a hash several backends produce kept by the family's tie
 * rule as the subclass restates it independently. Adding a family is one subclass of this plus its
 * vectors.
 */
abstract class RingFamilyContract {
    @TempDir
    Path dir;

    /** The family under test. */
    abstract RingFamily family();

    /** Its command-line name and ring index code, as documented (FORMAT.md). */
    abstract String expectedName();

    /** The name its versions are written with, which names it too: its name but for nginx ({@code v1}) and pingora ({@code v2}). */
    String expectedWrittenName() {
        return expectedName();
    }

    abstract int expectedCode();

    /**
     * The versions the contract builds, each with the golden checksum of {@link SeededFleets#checksum}.
     * A golden checksum is a regression guard recorded from ringstore's own code (the subclass says at
     * which commit), not external truth: the reference vectors are that.
     */
    abstract Map<RingVersion, String> goldenChecksums();

    /**
     * Whether a backend's points depend on that backend alone (a fixed or per-weight count): then a key
     * moves only to an added backend. False for the share rules (a count is the backend's share of the
     * members' weights, so every count changes with the members) and Envoy's scaling.
     */
    abstract boolean monotone();

    /**
     * The tie rule restated without the family: of two backends producing one hash, the smaller keeps
     * it. Null for a family whose tie depends on the hash (xmemcached), which restates its rule in
     * {@link #tieKeeper} instead.
     */
    abstract Comparator<Backend> tieOrder();

    /**
     * Which backend keeps {@code hash}: {@code producers} are the backends whose points have it, in the
     * order the original generates points (file order, a backend once per point of that hash). By
     * default the smallest in {@link #tieOrder()}, the first generated of equals.
     */
    Backend tieKeeper(long hash, List<Backend> producers) {
        Backend keeper = producers.getFirst();
        for (Backend candidate : producers) {
            if (tieOrder().compare(candidate, keeper) < 0) {
                keeper = candidate;
            }
        }
        return keeper;
    }

    /** Reference rings ({@code ring_<set>_<version>.tsv.gz} of the pingora vectors): set and version; none unless the family has such. */
    List<Vector> ringVectors() {
        return List.of();
    }

    /** Reference lookups ({@code lookup_<set>_<version>.tsv.gz} of the pingora vectors); none unless the family has such. */
    List<Vector> lookupVectors() {
        return List.of();
    }

    /**
     * Whether a pingora vector's survivor of a hash several backends produce is the family's (else such
     * points are compared by hash only: pingora's v1 sorts unstably, so its survivor there is not
     * nginx's rule). Only read when there are pingora vectors.
     */
    boolean vectorSurvivorsAreExact() {
        return true;
    }

    /**
     * Backends files in which this family's rings certainly have hashes several backends produce, so
     * that the tie property is not vacuous. By default, for a 32-bit family: two backends whose points
     * share a hash (found by {@link #collidingPair()}), listed in both orders, so that a rule that
     * goes by list position and one that does not are told apart. None for a 64-bit family: a 64-bit
     * collision is never found (about points² / 2^65).
     */
    List<String> fleetsWithTies() throws Exception {
        if (family().pointBits() == 64) {
            return List.of();
        }
        String[] pair = collidingPair();
        return List.of(pair[0] + pair[1], pair[1] + pair[0]);
    }

    /**
     * Whether the family can place {@code address} (the seeded fleets keep only those): its own
     * address check ({@link io.ringstore.family.Addresses#problem}) on the address alone.
     */
    final boolean accepts(String address) {
        try {
            return family().addresses()
                            .problem(BackendAccess.record(BackendList.parse("address", "server " + address + ";\n")
                                    .backends()
                                    .getFirst()))
                    == null;
        } catch (Exception e) {
            throw new IllegalStateException(address, e);
        }
    }

    /** A seeded fleet of addresses the family can place ({@link SeededFleets#fleet(SplittableRandom, int, java.util.function.Predicate)}). */
    final String fleet(SplittableRandom random, int size) {
        return SeededFleets.fleet(random, size, this::accepts);
    }

    /** A reference vector: backend set and version, as in the file names ({@code v2-16}). */
    record Vector(String set, RingVersion version) {
        String fileVersion() {
            return version.name().replace(':', '-');
        }
    }

    @Test
    void isRegisteredByNameAndCode() {
        RingFamily f = family();
        assertEquals(expectedName(), f.name());
        assertEquals(expectedCode(), f.code());
        assertSame(f, Families.forName(expectedName()));
        assertEquals(expectedWrittenName(), f.toString());
        assertSame(f, Families.forName(expectedWrittenName()));
        assertSame(f, Families.forCode(expectedCode()).orElseThrow());
        assertTrue(Families.all().contains(f));
        for (RingVersion v : goldenChecksums().keySet()) {
            assertSame(f, v.family());
            assertEquals(v, RingVersion.parse(v.name()), "the name reads back: " + v.name());
            assertTrue(RingVersion.Name.parse(f.name()).matches(v), "the bare name selects " + v);
            assertTrue(RingVersion.Name.parse(expectedWrittenName()).matches(v), "the bare written name selects " + v);
            assertTrue(
                    v.name().startsWith(expectedWrittenName()),
                    "a version is written with the family's written name: " + v);
            assertEquals(f.parameters().count(), v.parameters().length);
        }
    }

    @Test
    void reproducesTheReferenceRings() throws Exception {
        for (Vector vector : ringVectors()) {
            Path vectors = VectorFiles.directory("pingora");
            try (RingStore store = build(
                            VectorFiles.backendsText(vectors.resolve("buckets_" + vector.set() + ".txt")),
                            vector.version());
                    BufferedReader rows = VectorFiles.open(
                            vectors.resolve("ring_" + vector.set() + "_" + vector.fileVersion() + ".tsv.gz"))) {
                Ring ring = store.ring(Set.of(), vector.version());
                Set<Integer> shared = sharedHashes(vector);
                int n = 0;
                for (String line; (line = rows.readLine()) != null; n++) {
                    String[] f = line.split("\t");
                    String where = vector + " point " + n;
                    assertEquals(Long.parseLong(f[1]), ring.pointHash(n), where);
                    if (vectorSurvivorsAreExact() || !shared.contains((int) ring.pointHash(n))) {
                        assertEquals(f[2], store.backend(ring.pointBackend(n)).answer(family()), where);
                    }
                }
                assertEquals(n, ring.pointCount(), vector + " point count");
            }
        }
    }

    @Test
    void answersTheReferenceLookups() throws Exception {
        for (Vector vector : lookupVectors()) {
            Path vectors = VectorFiles.directory("pingora");
            try (RingStore store = build(
                            VectorFiles.backendsText(vectors.resolve("buckets_" + vector.set() + ".txt")),
                            vector.version());
                    BufferedReader rows = VectorFiles.open(
                            vectors.resolve("lookup_" + vector.set() + "_" + vector.fileVersion() + ".tsv.gz"))) {
                Ring ring = store.ring(Set.of(), vector.version());
                Set<Integer> shared = sharedHashes(vector);
                int compared = 0;
                for (String line; (line = rows.readLine()) != null; ) {
                    int tab = line.indexOf('\t');
                    byte[] key = VectorFiles.bytes(line.substring(0, tab));
                    String expected = line.substring(tab + 1).split("\t")[0];
                    int h = vector.version().keyHash().hash(key);
                    int p = ring.pointIndex(h);
                    if (!vectorSurvivorsAreExact() && shared.contains((int) ring.pointHash(p))) {
                        continue;
                    }
                    assertEquals(
                            expected,
                            store.backend(ring.lookupHash(h)).answer(family()),
                            vector + " key " + line.substring(0, tab));
                    compared++;
                }
                assertTrue(compared > 9_000, vector + ": " + compared + " keys compared");
            }
        }
    }

    /** The hashes the vector lists as produced by several backends ({@code collisions_<set>_<version>.tsv}), if any. */
    private static Set<Integer> sharedHashes(Vector vector) throws Exception {
        Path file = VectorFiles.directory("pingora")
                .resolve("collisions_" + vector.set() + "_" + vector.fileVersion() + ".tsv");
        Set<Integer> hashes = new HashSet<>();
        if (Files.exists(file)) {
            for (String line : Files.readAllLines(file, StandardCharsets.ISO_8859_1)) {
                hashes.add(Integer.parseUnsignedInt(line.substring(0, line.indexOf('\t'))));
            }
        }
        return hashes;
    }

    @Test
    void goldenChecksumOverSeededFleets() throws Exception {
        for (Map.Entry<RingVersion, String> e : goldenChecksums().entrySet()) {
            assertEquals(
                    e.getValue(),
                    SeededFleets.checksum(dir, e.getKey(), b -> b.answer(family()), this::accepts),
                    e.getKey().name());
        }
    }

    /**
     * A family that says it is {@link #monotone()}: every key that moves when a backend is added moves
     * to that backend. One that says it is not (a share rule recounts every backend) must show it, some
     * key moving between two old backends over these weighted fleets, and each such move must come from
     * a recount: the point (hash and owner) the key lands on in one ring is not a point of the other.
     * That holds when a backend's points are the first of its own sequence (its count alone depends on
     * the others), as in every family here.
     */
    @Test
    void keysMoveOnlyToAnAddedBackend() throws Exception {
        SplittableRandom random = new SplittableRandom(0xADD);
        for (RingVersion v : goldenChecksums().keySet()) {
            long elsewhere = 0;
            for (int round = 0; round < 4; round++) {
                List<String> lines = stripFeatures(fleet(random, 3 + random.nextInt(60)))
                        .lines()
                        .toList();
                String fleet = String.join("\n", lines.subList(0, lines.size() - 1)) + "\n";
                try (RingStore before = build(fleet, v);
                        RingStore after = build(fleet + lines.getLast() + "\n", v)) {
                    Ring a = before.ring(Set.of(), v);
                    Ring b = after.ring(Set.of(), v);
                    int newcomer = after.backendCount() - 1;
                    int toNewcomer = 0;
                    for (int k = 0; k < 20_000; k++) {
                        byte[] key = ("key-" + random.nextLong()).getBytes(StandardCharsets.US_ASCII);
                        int was = a.lookup(key);
                        int is = b.lookup(key);
                        if (is == was) {
                            continue;
                        }
                        if (is == newcomer) {
                            toNewcomer++;
                        } else if (monotone()) {
                            fail(v + ": a key left backend " + was + " for " + is + ", not for the added backend");
                        } else {
                            long h = a.hash(key);
                            assertTrue(
                                    !hasPoint(b, pointOf(a, h)) || !hasPoint(a, pointOf(b, h)),
                                    v + ": a key moved from backend " + was + " to " + is
                                            + " though both its points are in both rings");
                            elsewhere++;
                        }
                    }
                    assertTrue(toNewcomer > 0, v + ": the added backend took no key of 20,000");
                }
            }
            assertTrue(
                    monotone() || elsewhere > 0,
                    v + " is declared not monotone, but no key moved between old backends");
        }
    }

    /** A ring point: its whole hash and its backend. */
    record Point(long hash, int backend) {}

    /** The point a key of (whole) hash {@code h} lands on: the first at or above it, wrapping (grpc-java's: past the last, the last). */
    static Point pointOf(Ring ring, long h) {
        int lo = 0;
        int hi = ring.pointCount();
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (Long.compareUnsigned(ring.pointHash(mid), h) < 0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        int p = lo < ring.pointCount() ? lo : ring.wraps() ? 0 : lo - 1;
        return new Point(ring.pointHash(p), ring.pointBackend(p));
    }

    /** Whether {@code ring} has {@code point}: that hash, owned by that backend. */
    static boolean hasPoint(Ring ring, Point point) {
        return pointOf(ring, point.hash()).equals(point);
    }

    /**
     * With equal weights, an added backend takes exactly the keys of its arcs: the keys that go to it
     * are its share of the hash line ({@link Ring#lineShares()}) within 5 standard deviations of the
     * sampled count, in every family. And few keys move in all: at most {@code 2/(n+1)} of them, n+1
     * backends after, plus slack, where the ring has at least 64 points a backend. A monotone family
     * moves the newcomer's share alone. A share rule also recounts the old backends, at equal weights
     * only where its float rounding crosses a whole digest (rule L's 39 digests at n = 25, 47, …, K's
     * at 61, …: 4 of 160 points each, 2.5% of the keys; measured up to 2.7%), hence a slack of 3% plus
     * 4 standard deviations. Envoy's scaling gives each host {@code ceil(MIN/n)} entries, so a host
     * added removes about 1/(n+1) of every old host's entries and their keys go to the next entry
     * (measured: 9% more keys at n = 5, MIN 1,024). Below 64 entries a host the removed share grows
     * past any such bound (measured: {@code grpc:64:128}, 200 hosts and one added, moves 59% of the
     * keys, the added host taking none): that is the family's nature, not checked against a bound.
     */
    @Test
    void anAddedBackendMovesAboutItsShare() throws Exception {
        SplittableRandom random = new SplittableRandom(0x5A4E);
        int keys = 20_000;
        for (RingVersion v : goldenChecksums().keySet()) {
            for (int n : new int[] {2, 5, 24, 25, 60, 200}) {
                String all = stripWeights(stripFeatures(fleet(random, n + 1)));
                String fleet = String.join("\n", all.lines().toList().subList(0, n)) + "\n";
                try (RingStore before = build(fleet, v);
                        RingStore after = build(all, v)) {
                    Ring a = before.ring(Set.of(), v);
                    Ring b = after.ring(Set.of(), v);
                    int toNewcomer = 0;
                    int moved = 0;
                    for (int k = 0; k < keys; k++) {
                        byte[] key = ("key-" + random.nextLong()).getBytes(StandardCharsets.US_ASCII);
                        int was = a.lookup(key);
                        int is = b.lookup(key);
                        toNewcomer += is == n ? 1 : 0;
                        moved += is != was ? 1 : 0;
                    }
                    String where = v + " with " + n + " backends, one added";
                    double share = b.lineShares()[n];
                    assertEquals(
                            share * keys,
                            toNewcomer,
                            5 * Math.sqrt(keys * share * (1 - share)) + 1,
                            where + ": the keys the newcomer took");
                    if (b.pointCount() >= 64L * (n + 1)) {
                        double bound = 2.0 / (n + 1) + 0.03 + 4 * Math.sqrt(2.0 / (n + 1) / keys);
                        assertTrue(
                                (double) moved / keys <= bound,
                                where + ": " + moved + " of " + keys + " keys moved, more than " + bound);
                    }
                }
            }
        }
    }

    @Test
    void everyPointIsOwnedByAMemberOfItsRing() throws Exception {
        SplittableRandom random = new SplittableRandom(0x0B);
        for (RingVersion v : goldenChecksums().keySet()) {
            for (int size : new int[] {1, 5, 50}) {
                try (RingStore store = build(fleet(random, size), v)) {
                    for (Ring ring : store.rings()) {
                        for (int p = 0; p < ring.pointCount(); p++) {
                            Backend owner = store.backend(ring.pointBackend(p));
                            assertTrue(
                                    owner.features().containsAll(ring.features()),
                                    ring + " point " + p + " is " + owner.address() + ", which lacks "
                                            + ring.features());
                        }
                    }
                }
            }
        }
    }

    @Test
    void sharedHashesGoByTheFamilysTieRule() throws Exception {
        List<String> withTies = fleetsWithTies();
        List<String> fleets = new ArrayList<>(withTies);
        SplittableRandom random = new SplittableRandom(0x71E);
        for (int size : SeededFleets.SIZES) {
            fleets.add(stripFeatures(fleet(random, size)));
        }
        long ties = 0;
        for (RingVersion v : goldenChecksums().keySet()) {
            for (String fleet : fleets) {
                try (RingStore store = build(fleet, v)) {
                    ties += checkTies(store, store.ring(Set.of(), v));
                }
            }
        }
        assertTrue(ties > 0 || withTies.isEmpty(), "some fleet has a hash several backends produce");
    }

    /**
     * Every point of every backend, regenerated by the family's point source
     * ({@link io.ringstore.family.PointSource#hashes}) and weight rule
     * ({@link io.ringstore.family.WeightRule#memberPoints}), is one point
     * of the ring (on all 64 bits in a 64-bit ring), owned by its {@link #tieKeeper} among its
     * producers; returns the number of hashes produced by several backends.
     */
    private long checkTies(RingStore store, Ring ring) {
        List<Backend> backends = store.backends();
        List<BackendRecord> records =
                backends.stream().map(BackendAccess::record).toList();
        long[] counts = family().weights().memberPoints(records, ring.version());
        int total = Math.toIntExact(Arrays.stream(counts).sum());
        long[] hashes = new long[total];
        int[] owners = new int[total];
        int n = 0;
        for (Backend b : backends) {
            int c = Math.toIntExact(counts[b.index()]);
            long[] out = new long[c];
            ring.version().points().hashes(records, b.index(), c, out); // HAProxy's ids depend on the list
            for (long h : out) {
                hashes[n] = family().pointBits() == 64 ? h : h & 0xFFFF_FFFFL;
                owners[n++] = b.index();
            }
        }
        Integer[] order = new Integer[n];
        Arrays.setAll(order, i -> i);
        Arrays.sort(
                order, (x, y) -> Long.compareUnsigned(hashes[x], hashes[y])); // stable: generation order among equals
        long shared = 0;
        int position = 0;
        for (int i = 0; i < n; ) {
            long hash = hashes[order[i]];
            List<Backend> producers = new ArrayList<>();
            int j = i;
            for (; j < n && hashes[order[j]] == hash; j++) {
                producers.add(backends.get(owners[order[j]]));
            }
            String where = ring + " point " + position + " (hash " + Long.toUnsignedString(hash) + ")";
            assertEquals(hash, ring.pointHash(position), where);
            Backend keeper = tieKeeper(hash, producers);
            assertEquals(
                    keeper.index(),
                    ring.pointBackend(position),
                    where + ", produced by "
                            + producers.stream().map(Backend::address).toList());
            if (producers.stream().distinct().count() > 1) {
                shared++;
            }
            position++;
            i = j;
        }
        assertEquals(position, ring.pointCount(), ring + ": one point per distinct hash");
        return shared;
    }

    /**
     * Two backends-file lines whose backends' points share a hash in a ring of the two: the first
     * colliding pair among 2,048 seeded IPv4 addresses on port 11211, found by the family's own point
     * hashes (about 12 pairs are expected among those 327,680 points at 160 a backend).
     */
    String[] collidingPair() throws Exception {
        RingVersion v = goldenChecksums().keySet().iterator().next();
        int candidates = 2_048;
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < candidates; i++) {
            text.append("server 10.")
                    .append(1 + (i >> 8))
                    .append('.')
                    .append(i & 0xFF)
                    .append(".7:11211;\n");
        }
        List<Backend> backends =
                BackendList.parse("candidates", text.toString()).backends();
        int count = Math.toIntExact(family().weights().points(new long[] {1, 1}, v)[0]);
        long[] all = new long[candidates * count];
        long[] out = new long[count];
        for (Backend b : backends) {
            v.points().hashes(BackendAccess.record(b), count, out);
            for (int j = 0; j < count; j++) {
                all[b.index() * count + j] = (out[j] & 0xFFFF_FFFFL) << 32 | b.index();
            }
        }
        Arrays.sort(all);
        for (int i = 1; i < all.length; i++) {
            if (all[i] >>> 32 == all[i - 1] >>> 32 && (int) all[i] != (int) all[i - 1]) {
                String[] lines = text.toString().split("\n");
                return new String[] {lines[(int) all[i - 1]] + "\n", lines[(int) all[i]] + "\n"};
            }
        }
        throw new AssertionError(family() + ": no two of " + candidates + " candidate backends share a point");
    }

    RingStore build(String backendsText, RingVersion version) throws Exception {
        Path file = Files.createTempFile(dir, "contract", ".ring");
        RingBuilder.of(BackendList.parse("contract", backendsText))
                .version(version)
                .generation(1)
                .build(file);
        return RingStore.open(file);
    }

    /** Each backend's number of points in {@code version}'s ring of all the backends of {@code backendsText}, in file order. */
    List<Long> pointsPerBackend(String backendsText, RingVersion version) throws Exception {
        try (RingStore store = build(backendsText, version)) {
            Ring ring = store.ring(Set.of(), version);
            long[] count = new long[store.backendCount()];
            for (int p = 0; p < ring.pointCount(); p++) {
                count[ring.pointBackend(p)]++;
            }
            return Arrays.stream(count).boxed().toList();
        }
    }

    /** A backends file of {@code n} servers of weight 1, 10.0.2.1:11211 onwards. */
    static String equalServers(int n) {
        StringBuilder text = new StringBuilder();
        for (int i = 1; i <= n; i++) {
            text.append("server 10.0.2.").append(i).append(":11211;\n");
        }
        return text.toString();
    }

    /** The fleet without its features (one ring of all backends). */
    static String stripFeatures(String fleet) {
        return fleet.replaceAll("  # ringstore: features=[^\n]*", "");
    }

    /** The fleet with every weight 1. */
    static String stripWeights(String fleet) {
        return fleet.replaceAll(" weight=\\d+", "");
    }

    @Test
    void addressCheckAndAnswerAreTheFamilys() throws Exception {
        try (RingStore store = build(
                "server 10.0.0.1:80;\nserver [2001:db8::1]:443;\n",
                goldenChecksums().keySet().iterator().next())) {
            for (Backend b : store.backends()) {
                assertEquals(null, family().addresses().problem(BackendAccess.record(b)), b.address());
                assertNotEquals("", b.answer(family()));
            }
        }
    }
}
