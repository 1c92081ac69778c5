package io.ringstore.tools;

import static io.ringstore.tools.CliRun.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.Ring;
import io.ringstore.RingFileLayout;
import io.ringstore.RingStore;
import io.ringstore.family.Families;
import io.ringstore.family.RingFamily;
import io.ringstore.internal.format.RingFileDescriptor;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Check 13 of {@code verify} (FORMAT.md): for every family of the table ({@link Families#all()}, so a
 * family added later is covered by this test as it stands), a file is built, one point of a ring is
 * changed with every checksum fixed up (its hash, its backend, a 64-bit ring's low word, or every point
 * of one member dropped), and {@code verify} must fail naming that point and its byte; the file as
 * built, and a copy rewritten by the forging code with nothing changed, pass. Every ring of the file
 * is mutated in turn (the ring of all backends, and the ring of the backends with feature {@code a},
 * whose weight rule runs over other members).
 */
class VerifyRegenerationTest {
    private static final Pattern AT_BYTE = Pattern.compile("at byte (\\d+)");

    /**
     * Weights 1 to 3, a down server (a member some families leave without points), a feature held by
     * three servers; explicit ports, so that every family takes every line.
     */
    private static final String FLEET = """
            upstream pool {
                server 10.0.0.1:11211 weight=2 features=a;
                server 10.0.0.2:11211 features=a;
                server 10.0.0.3:11211 weight=3;
                server 10.0.0.4:11211 down features=a;
                server 10.0.0.5:11211 weight=2;
            }
            """;

    @TempDir
    static Path dir;

    static Stream<RingFamily> families() {
        return Families.all().stream();
    }

    /** Ring {@code ring}'s segment in a file's bytes: where its points are, how many, whether 64-bit. */
    private record Stored(int ring, String name, long offset, int points, boolean wide) {
        long pointAt(int p) {
            return offset + (long) p * RingFileDescriptor.POINT_LENGTH;
        }

        long lowWordAt(int p) {
            return pointAt(points) + (long) p * RingFileDescriptor.LOW_WORD_LENGTH;
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("families")
    void everyChangedPointIsNamed(RingFamily family) throws Exception {
        Path conf = dir.resolve(family.name() + ".conf");
        Files.writeString(conf, FLEET);
        Path good = dir.resolve(family.name() + ".ring");
        CliRun.build(conf, good, "--algorithm", family.name(), "--quiet").assertOk();
        run("verify", good.toString()).assertOk();
        byte[] bytes = Files.readAllBytes(good);
        Path same = RingPatch.of(bytes).write(dir.resolve(family.name() + "-rewritten.ring"));
        run("verify", same.toString()).assertOk(); // the forging alone changes nothing verify sees

        List<Stored> rings = new ArrayList<>();
        try (RingStore store = RingStore.open(good)) {
            for (int i = 0; i < store.rings().size(); i++) {
                Ring r = store.rings().get(i);
                RingFileLayoutView seg = new RingFileLayoutView(
                        store.layout().segmentOf(r).offset(),
                        store.layout().segmentOf(r).pointCount());
                if (seg.points() > 2) {
                    rings.add(new Stored(i, r.toString(), seg.offset(), seg.points(), family.pointBits() == 64));
                }
            }
        }
        assertEquals(2, rings.size(), "the fleet gives two rings with points: " + rings);
        int mutations = 0;
        for (Stored s : rings) {
            mutations += changedHash(family.name(), bytes, s);
            mutations += swappedBackends(family, bytes, s);
            mutations += droppedMember(family, bytes, s);
            if (s.wide()) {
                mutations += changedLowWord(family, bytes, s);
                mutations += zeroedLowWords(family, bytes, s);
            }
        }
        assertEquals(family.pointBits() == 64 ? 10 : 6, mutations);
    }

    /**
     * A family whose feature rings can be views ({@code --views all}): the ring of all backends, stored
     * with ties and feature bits, is what the views read; a hash changed in it is named too.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("families")
    void aChangedPointOfTheRingViewsReadIsNamed(RingFamily family) throws Exception {
        if (!family.viewable()) {
            return; // its rings are stored as their points: the builder makes no view of them, the reader refuses one
        }
        Path conf = dir.resolve(family.name() + "-views.conf");
        Files.writeString(conf, FLEET);
        Path good = dir.resolve(family.name() + "-views.ring");
        CliRun.build(conf, good, "--algorithm", family.name(), "--views", "all", "--quiet")
                .assertOk();
        run("verify", good.toString()).assertOk();
        Stored base;
        try (RingStore store = RingStore.open(good)) {
            Ring all = store.rings().get(0);
            assertEquals(
                    RingFileLayout.Storage.POINTS_WITH_TIES_AND_FEATURE_BITS_BY_FEATURE,
                    store.layout().storage(all));
            assertEquals(
                    RingFileLayout.Storage.VIEW,
                    store.layout().storage(store.rings().get(1)));
            base = new Stored(
                    0,
                    all.toString(),
                    store.layout().segmentOf(all).offset(),
                    store.layout().segmentOf(all).pointCount(),
                    false);
        }
        assertEquals(1, changedHash(family.name() + "-views", Files.readAllBytes(good), base));
    }

    /**
     * A 64-bit ring large enough that two of its points share a high word (262,144 points: about 8
     * pairs expected) passes: such points are two, told apart by their low words, never one.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("families")
    void sixtyFourBitPointsSharingAHighWordPass(RingFamily family) throws Exception {
        if (family.pointBits() != 64) {
            return;
        }
        Path conf = dir.resolve(family.name() + "-wide.conf");
        Files.writeString(conf, FLEET);
        Path ring = dir.resolve(family.name() + "-wide.ring");
        String size = "262144";
        CliRun built = run(
                "build",
                conf.toString(),
                "-o",
                ring.toString(),
                "--algorithm",
                family.name() + ":" + size + ":" + size);
        if (built.exit() != 0) {
            assertTrue(built.stderr().contains("4096"), built.stderr()); // gRPC's cap: too few points for a shared word
            return;
        }
        byte[] bytes = Files.readAllBytes(ring);
        Stored s;
        try (RingStore store = RingStore.open(ring)) {
            Ring all = store.rings().get(0);
            s = new Stored(
                    0,
                    all.toString(),
                    store.layout().segmentOf(all).offset(),
                    store.layout().segmentOf(all).pointCount(),
                    true);
        }
        ByteBuffer b = le(bytes);
        int shared = 0;
        for (int p = 1; p < s.points(); p++) {
            shared += b.getInt((int) s.pointAt(p)) == b.getInt((int) s.pointAt(p - 1)) ? 1 : 0;
        }
        assertTrue(shared > 0, "the ring has points sharing a high word");
        run("verify", ring.toString()).assertOk();
    }

    private record RingFileLayoutView(long offset, int points) {}

    /** Point p's hash one more (still below the next point's): named at its hash field. */
    private static int changedHash(String name, byte[] bytes, Stored s) throws Exception {
        ByteBuffer b = le(bytes);
        for (int p = s.points() / 3; p < s.points() - 1; p++) {
            int hash = b.getInt((int) s.pointAt(p));
            if (Integer.compareUnsigned(hash + 1, b.getInt((int) s.pointAt(p + 1))) >= 0) {
                continue;
            }
            Path bad = RingPatch.of(bytes)
                    .pointHash(s.ring(), p, hash + 1)
                    .write(dir.resolve(name + "-hash-" + s.ring() + ".ring"));
            String line = run("verify", bad.toString()).assertError(Main.FAILED, "verify");
            if (line.contains("but not its first")) {
                continue; // check 6 saw it first: the point was a backend's first; take another
            }
            assertNamed(line, s, p, s.pointAt(p) + RingFileDescriptor.POINT_HASH_OFFSET);
            return 1;
        }
        throw new AssertionError("no point of " + s + " to change");
    }

    /** Two neighbouring points of different backends swap backends (each backend keeps its count). */
    private static int swappedBackends(RingFamily family, byte[] bytes, Stored s) throws Exception {
        ByteBuffer b = le(bytes);
        for (int p = s.points() / 2; p < s.points() - 1; p++) {
            int x = backend(b, s, p);
            int y = backend(b, s, p + 1);
            if (x == y) {
                continue;
            }
            Path bad = RingPatch.of(bytes)
                    .pointBackend(s.ring(), p, y)
                    .pointBackend(s.ring(), p + 1, x)
                    .write(dir.resolve(family.name() + "-backend-" + s.ring() + ".ring"));
            String line = run("verify", bad.toString()).assertError(Main.FAILED, "verify");
            assertNamed(line, s, p, s.pointAt(p) + RingFileDescriptor.POINT_BACKEND_OFFSET);
            return 1;
        }
        throw new AssertionError("no two neighbouring points of different backends in " + s);
    }

    /** A 64-bit point's low word 0 (1 if it was 0), its neighbours' high words different. */
    private static int changedLowWord(RingFamily family, byte[] bytes, Stored s) throws Exception {
        ByteBuffer b = le(bytes);
        for (int p = s.points() / 2; p < s.points() - 1; p++) {
            int high = b.getInt((int) s.pointAt(p));
            if (high == b.getInt((int) s.pointAt(p - 1)) || high == b.getInt((int) s.pointAt(p + 1))) {
                continue;
            }
            byte[] changed = bytes.clone();
            ByteBuffer c = le(changed);
            c.putInt((int) s.lowWordAt(p), c.getInt((int) s.lowWordAt(p)) == 0 ? 1 : 0);
            Path bad = RingPatch.of(changed).write(dir.resolve(family.name() + "-low-" + s.ring() + ".ring"));
            String line = run("verify", bad.toString()).assertError(Main.FAILED, "verify");
            assertNamed(line, s, p, s.lowWordAt(p));
            return 1;
        }
        throw new AssertionError("no point of " + s + " with a high word of its own");
    }

    /** Every low word of a 64-bit ring 0 (the forgery): the first point whose low word was not 0 is named. */
    private static int zeroedLowWords(RingFamily family, byte[] bytes, Stored s) throws Exception {
        byte[] changed = bytes.clone();
        ByteBuffer c = le(changed);
        int first = -1;
        for (int p = 0; p < s.points(); p++) {
            if (first < 0 && c.getInt((int) s.lowWordAt(p)) != 0) {
                first = p;
            }
            c.putInt((int) s.lowWordAt(p), 0);
        }
        Path bad = RingPatch.of(changed).write(dir.resolve(family.name() + "-low0-" + s.ring() + ".ring"));
        String line = run("verify", bad.toString()).assertError(Main.FAILED, "verify");
        assertNamed(line, s, first, s.lowWordAt(first));
        return 1;
    }

    /**
     * Every point of the backend of the middle point removed, the segment closed up (low words too),
     * its point count, length and checksums fixed, the file cut when it was the last segment: named at
     * the first point the backend had.
     */
    private static int droppedMember(RingFamily family, byte[] bytes, Stored s) throws Exception {
        ByteBuffer b = le(bytes);
        int gone = backend(b, s, s.points() / 2);
        int pointLength = RingFileDescriptor.POINT_LENGTH;
        List<Integer> kept = new ArrayList<>();
        int firstGone = -1;
        for (int p = 0; p < s.points(); p++) {
            if (backend(b, s, p) != gone) {
                kept.add(p);
            } else if (firstGone < 0) {
                firstGone = p;
            }
        }
        byte[] changed = bytes.clone();
        ByteBuffer c = le(changed);
        int at = (int) s.offset();
        for (int p : kept) {
            System.arraycopy(bytes, (int) s.pointAt(p), changed, at, pointLength);
            at += pointLength;
        }
        if (s.wide()) {
            for (int p : kept) {
                c.putInt(at, b.getInt((int) s.lowWordAt(p)));
                at += RingFileDescriptor.LOW_WORD_LENGTH;
            }
        }
        long oldEnd = s.wide() ? s.lowWordAt(s.points()) : s.pointAt(s.points());
        Arrays.fill(changed, at, (int) oldEnd, (byte) 0); // now padding before the next segment
        int entry = (int) b.getLong(RingFileDescriptor.RING_INDEX_OFFSET_OFFSET)
                + s.ring() * RingFileDescriptor.ENTRY_LENGTH;
        c.putInt(entry + RingFileDescriptor.ENTRY_POINT_COUNT_OFFSET, kept.size());
        c.putLong(entry + RingFileDescriptor.ENTRY_SEGMENT_LENGTH_OFFSET, at - s.offset());
        if (oldEnd == bytes.length) {
            changed = Arrays.copyOf(changed, at);
            le(changed).putLong(RingFileDescriptor.FILE_LENGTH_OFFSET, at);
        }
        Path bad = RingPatch.of(changed).write(dir.resolve(family.name() + "-dropped-" + s.ring() + ".ring"));
        String line = run("verify", bad.toString()).assertError(Main.FAILED, "verify");
        int named = firstGone;
        assertTrue(line.contains("point " + named + " "), () -> "names point " + named + ": " + line);
        assertTrue(line.contains("generates"), line);
        assertByte(line, s.pointAt(firstGone));
        return 1;
    }

    private static void assertNamed(String line, Stored s, int p, long offset) {
        assertTrue(
                line.contains("ring " + s.name() + ": point " + p + " is hash "),
                () -> "names ring " + s.name() + " point " + p + ": " + line);
        assertTrue(line.contains(" generates hash "), line);
        assertByte(line, offset);
    }

    private static void assertByte(String line, long offset) {
        Matcher m = AT_BYTE.matcher(line);
        assertTrue(m.find(), line);
        assertEquals(offset, Long.parseLong(m.group(1)), line);
    }

    private static int backend(ByteBuffer b, Stored s, int p) {
        return Short.toUnsignedInt(b.getShort((int) s.pointAt(p) + RingFileDescriptor.POINT_BACKEND_OFFSET));
    }

    private static ByteBuffer le(byte[] bytes) {
        return ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
    }
}
