package io.ringstore;

import io.ringstore.build.BackendList;
import io.ringstore.build.RingBuilder;
import io.ringstore.internal.Crc32;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What every {@link RingFamily} must pass, in the manner of hash4j's one suite for all
 * implementations: its identity in the registry and the version grammar; reference vectors produced
 * by the original implementation; a golden checksum over seeded fleets (recorded from the code before
 * the families existed); and properties: monotone under an added backend (keys move only to it), every
 * point owned by a member of its ring, and ties decided by the family's rule as the subclass restates
 * it independently. Adding a family is one subclass of this plus its vectors.
 */
abstract class RingFamilyContract {
    @TempDir
    Path dir;

    /** The family under test. */
    abstract RingFamily family();

    /** Its command-line name and ring index code, as documented (FORMAT.md). */
    abstract String expectedName();

    abstract int expectedCode();

    /** The versions the contract builds, each with the golden checksum of {@link SeededFleets#checksum}. */
    abstract Map<RingVersion, String> goldenChecksums();

    /** The tie rule restated without the family: of two backends producing one hash, the smaller keeps it. */
    abstract Comparator<Backend> tieOrder();

    /** Reference rings ({@code ring_<set>_<version>.tsv.gz} of the pingora vectors): set and version. */
    abstract List<Vector> ringVectors();

    /** Reference lookups ({@code lookup_<set>_<version>.tsv.gz}). */
    abstract List<Vector> lookupVectors();

    /**
     * Whether a vector's survivor of a hash several backends produce is the family's (else such points
     * are compared by hash only: pingora's v1 sorts unstably, so its survivor there is not nginx's rule).
     */
    abstract boolean vectorSurvivorsAreExact();

    /** Backends files in which this family's rings certainly have shared hashes, so that the tie property is not vacuous. */
    abstract List<String> fleetsWithTies() throws Exception;

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
        assertSame(f, RingFamily.forName(expectedName()));
        assertSame(f, RingFamily.forCode(expectedCode()).orElseThrow());
        assertTrue(RingFamily.all().contains(f));
        for (RingVersion v : goldenChecksums().keySet()) {
            assertSame(f, v.family());
            assertEquals(v, RingVersion.parse(v.name()), "the name reads back: " + v.name());
            assertTrue(RingVersion.Name.parse(f.name()).matches(v), "the bare name selects " + v);
            assertEquals(f.parameterCount(), v.parameters().length);
        }
    }

    @Test
    void reproducesTheReferenceRings() throws Exception {
        for (Vector vector : ringVectors()) {
            Path vectors = VectorFiles.directory("pingora");
            try (RingStore store = build(VectorFiles.backendsText(vectors.resolve("buckets_" + vector.set() + ".txt")), vector.version());
                 BufferedReader rows = VectorFiles.open(vectors.resolve("ring_" + vector.set() + "_" + vector.fileVersion() + ".tsv.gz"))) {
                Ring ring = store.ring(Set.of(), vector.version());
                Set<Integer> shared = sharedHashes(vector);
                int n = 0;
                for (String line; (line = rows.readLine()) != null; n++) {
                    String[] f = line.split("\t");
                    String where = vector + " point " + n;
                    assertEquals(Integer.parseUnsignedInt(f[1]), ring.pointHash(n), where);
                    if (vectorSurvivorsAreExact() || !shared.contains(ring.pointHash(n))) {
                        assertEquals(f[2], family().answer(store.backend(ring.pointBackend(n))), where);
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
            try (RingStore store = build(VectorFiles.backendsText(vectors.resolve("buckets_" + vector.set() + ".txt")), vector.version());
                 BufferedReader rows = VectorFiles.open(vectors.resolve("lookup_" + vector.set() + "_" + vector.fileVersion() + ".tsv.gz"))) {
                Ring ring = store.ring(Set.of(), vector.version());
                Set<Integer> shared = sharedHashes(vector);
                int compared = 0;
                for (String line; (line = rows.readLine()) != null; ) {
                    int tab = line.indexOf('\t');
                    byte[] key = VectorFiles.bytes(line.substring(0, tab));
                    String expected = line.substring(tab + 1).split("\t")[0];
                    int h = family().keyHash().hash(key);
                    int p = ring.pointIndex(h);
                    if (!vectorSurvivorsAreExact() && shared.contains(ring.pointHash(p))) {
                        continue;
                    }
                    assertEquals(expected, family().answer(store.backend(ring.lookupHash(h))), vector + " key " + line.substring(0, tab));
                    compared++;
                }
                assertTrue(compared > 9_000, vector + ": " + compared + " keys compared");
            }
        }
    }

    /** The hashes the vector lists as produced by several backends ({@code collisions_<set>_<version>.tsv}), if any. */
    private static Set<Integer> sharedHashes(Vector vector) throws Exception {
        Path file = VectorFiles.directory("pingora").resolve("collisions_" + vector.set() + "_" + vector.fileVersion() + ".tsv");
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
            KeyHash keyHash = family().keyHash();
            assertEquals(e.getValue(), SeededFleets.checksum(dir, e.getKey(), family()::answer, keyHash::hash), e.getKey().name());
        }
    }

    @Test
    void keysMoveOnlyToAnAddedBackend() throws Exception {
        SplittableRandom random = new SplittableRandom(0xADD);
        for (RingVersion v : goldenChecksums().keySet()) {
            for (int round = 0; round < 4; round++) {
                List<String> lines = stripFeatures(SeededFleets.fleet(random, 3 + random.nextInt(60))).lines().toList();
                String fleet = String.join("\n", lines.subList(0, lines.size() - 1)) + "\n";
                try (RingStore before = build(fleet, v); RingStore after = build(fleet + lines.getLast() + "\n", v)) {
                    Ring a = before.ring(Set.of(), v);
                    Ring b = after.ring(Set.of(), v);
                    int newcomer = after.backendCount() - 1;
                    int moved = 0;
                    for (int k = 0; k < 20_000; k++) {
                        int h = family().keyHash().hash(("key-" + random.nextLong()).getBytes(StandardCharsets.US_ASCII));
                        int was = a.lookupHash(h);
                        int is = b.lookupHash(h);
                        if (is != was) {
                            assertEquals(newcomer, is, v + ": a key left backend " + was + " for " + is + ", not for the added backend");
                            moved++;
                        }
                    }
                    assertTrue(moved > 0, v + ": the added backend took no key of 20,000");
                }
            }
        }
    }

    @Test
    void everyPointIsOwnedByAMemberOfItsRing() throws Exception {
        SplittableRandom random = new SplittableRandom(0x0B);
        for (RingVersion v : goldenChecksums().keySet()) {
            for (int size : new int[] {1, 5, 50}) {
                try (RingStore store = build(SeededFleets.fleet(random, size), v)) {
                    for (Ring ring : store.rings()) {
                        for (int p = 0; p < ring.pointCount(); p++) {
                            Backend owner = store.backend(ring.pointBackend(p));
                            assertTrue(owner.features().containsAll(ring.features()), ring + " point " + p + " is " + owner.address()
                                    + ", which lacks " + ring.features());
                        }
                    }
                }
            }
        }
    }

    @Test
    void sharedHashesGoByTheFamilysTieRule() throws Exception {
        List<String> fleets = new ArrayList<>(fleetsWithTies());
        SplittableRandom random = new SplittableRandom(0x71E);
        for (int size : SeededFleets.SIZES) {
            fleets.add(stripFeatures(SeededFleets.fleet(random, size)));
        }
        long ties = 0;
        for (RingVersion v : goldenChecksums().keySet()) {
            for (String fleet : fleets) {
                try (RingStore store = build(fleet, v)) {
                    ties += checkTies(store, store.ring(Set.of(), v));
                }
            }
        }
        assertTrue(ties > 0, "some fleet has a hash several backends produce");
    }

    /**
     * Every hash of every backend's point chain, regenerated, is one point of the ring, owned by the
     * smallest of its producers in {@link #tieOrder()}; returns the number of hashes with several producers.
     */
    private long checkTies(RingStore store, Ring ring) {
        List<Backend> backends = store.backends();
        long[] points = family().points(backends.stream().mapToLong(Backend::weight).toArray(), ring.version());
        long total = Arrays.stream(points).sum();
        long[] all = new long[Math.toIntExact(total)];
        int n = 0;
        for (Backend b : backends) {
            int base = family().chainBase(b);
            int h = 0;
            for (long j = 0; j < points[b.index()]; j++) {
                h = Crc32.nextPoint(base, h);
                all[n++] = (Integer.toUnsignedLong(h) << 16) | b.index();
            }
        }
        Arrays.sort(all);
        long shared = 0;
        int position = 0;
        for (int i = 0; i < n; ) {
            int j = i;
            Backend keeper = backends.get((int) (all[i] & 0xFFFF));
            while (j < n && all[j] >>> 16 == all[i] >>> 16) {
                Backend candidate = backends.get((int) (all[j] & 0xFFFF));
                if (tieOrder().compare(candidate, keeper) < 0) {
                    keeper = candidate;
                }
                j++;
            }
            int hash = (int) (all[i] >>> 16);
            assertEquals(hash, ring.pointHash(position), ring + " point " + position);
            if (j - i > 1) {
                shared++;
                assertEquals(keeper.address(), store.backend(ring.pointBackend(position)).address(),
                        ring + ": hash " + Integer.toUnsignedString(hash) + " produced by " + (j - i) + " backends");
            }
            position++;
            i = j;
        }
        assertEquals(position, ring.pointCount(), ring + ": one point per distinct hash");
        return shared;
    }

    RingStore build(String backendsText, RingVersion version) throws Exception {
        Path file = Files.createTempFile(dir, "contract", ".ring");
        RingBuilder.of(BackendList.parse("contract", backendsText)).version(version).generation(1).build(file);
        return RingStore.open(file);
    }

    /** The fleet without its features (one ring of all backends). */
    static String stripFeatures(String fleet) {
        return fleet.replaceAll("  # ringstore: features=[^\n]*", "");
    }

    @Test
    void addressCheckAndAnswerAreTheFamilys() throws Exception {
        try (RingStore store = build("server 10.0.0.1:80;\nserver [2001:db8::1]:443;\n", goldenChecksums().keySet().iterator().next())) {
            for (Backend b : store.backends()) {
                assertEquals(null, family().addressProblem(b), b.address());
                assertNotEquals("", family().answer(b));
            }
        }
    }
}
