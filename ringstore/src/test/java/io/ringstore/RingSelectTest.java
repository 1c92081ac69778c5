package io.ringstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.function.IntPredicate;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Ring#select} against a naive oracle: the ring's points put in a {@code TreeMap<unsigned hash,
 * backend>}, walked from {@code ceilingEntry} on, wrapping to {@code firstEntry}, point by point; and
 * the {@code ByteBuffer} and {@code MemorySegment} lookups against the {@code byte[]} one.
 */
class RingSelectTest {
    @TempDir
    Path dir;

    /** nginx's loop: the key's point, then hp->hash++ and hp->tries++ until tries &gt; 20. */
    private static int oracleSelect(TreeMap<Long, Integer> points, int hash, int maxPoints, IntPredicate accept) {
        if (points.isEmpty()) {
            return Ring.NO_BACKEND;
        }
        Map.Entry<Long, Integer> e = points.ceilingEntry(Integer.toUnsignedLong(hash));
        List<Integer> walk = new ArrayList<>();
        for (Map.Entry<Long, Integer> p : (e == null ? points : points.tailMap(e.getKey(), true)).entrySet()) {
            walk.add(p.getValue());
        }
        if (e != null) {
            walk.addAll(points.headMap(e.getKey(), false).values());
        }
        for (int tries = 0; ; tries++) {
            int b = walk.get(tries % walk.size());
            if (accept.test(b)) {
                return b;
            }
            if (tries + 1 >= maxPoints) {
                return Ring.GAVE_UP;
            }
        }
    }

    private static TreeMap<Long, Integer> oracle(Ring ring) {
        TreeMap<Long, Integer> map = new TreeMap<>();
        for (int i = 0; i < ring.pointCount(); i++) {
            map.put(ring.pointHash(i), ring.pointBackend(i));
        }
        return map;
    }

    @Tag("slow") // an exhaustive sweep of several seconds: the full lane runs it
    @Test
    void selectWalksPointsAsNginxDoes() throws Exception {
        SplittableRandom random = new SplittableRandom(11);
        for (int round = 0; round < 20; round++) {
            int n = 1 + random.nextInt(12);
            StringBuilder text = new StringBuilder();
            for (int b = 0; b < n; b++) {
                text.append("server 10.0.")
                        .append(round)
                        .append('.')
                        .append(b + 1)
                        .append(":80 weight=")
                        .append(1 + random.nextInt(3))
                        .append(";\n");
            }
            Path file = dir.resolve(round + ".ring");
            TestRings.build(file, text.toString());
            try (RingStore store = RingStore.open(file)) {
                Ring ring = store.ring(java.util.Set.of());
                TreeMap<Long, Integer> points = oracle(ring);
                for (int k = 0; k < 300; k++) {
                    int hash = random.nextInt();
                    long downMask = random.nextLong() & random.nextLong(); // about a quarter down
                    IntPredicate up = b -> (downMask & (1L << b)) == 0;
                    int maxPoints = 1 + random.nextInt(40);
                    String what = "round " + round + " hash " + Integer.toUnsignedString(hash) + " down "
                            + Long.toHexString(downMask) + " maxPoints " + maxPoints;
                    assertEquals(oracleSelect(points, hash, maxPoints, up), ring.select(hash, maxPoints, up), what);
                    assertEquals(ring.lookupHash(hash), ring.select(hash, maxPoints, b -> true), what);
                    assertEquals(Ring.GAVE_UP, ring.select(hash, maxPoints, b -> false), what);
                    int expected = oracleSelect(points, hash, maxPoints, up);
                    assertEquals(
                            expected < 0 ? null : store.backend(expected),
                            ring.selectBackend(hash, maxPoints, b -> up.test(b.index())),
                            what + " (by Backend)");
                }
            }
        }
    }

    @Test
    void selectCountsPointsNotBackends() throws Exception {
        Path file = dir.resolve("two.ring");
        TestRings.build(file, "server 10.0.0.1:80 weight=50;\nserver 10.0.0.2:80;\n"); // long runs of backend 0
        try (RingStore store = RingStore.open(file)) {
            Ring ring = store.ring(java.util.Set.of());
            // A hash whose walk starts with at least NGINX_MAX_POINTS points of backend 0.
            int[] calls = new int[1];
            for (int p = 0; p < ring.pointCount(); p++) {
                boolean run = true;
                for (int i = 0; i < Ring.NGINX_MAX_POINTS && run; i++) {
                    run = ring.pointBackend((p + i) % ring.pointCount()) == 0;
                }
                if (run) {
                    calls[0] = 0;
                    int answer = ring.select(ring.pointHash(p), Ring.NGINX_MAX_POINTS, b -> {
                        calls[0]++;
                        return b != 0;
                    });
                    assertEquals(Ring.GAVE_UP, answer, "backend 1 lies beyond the 21 points nginx looks at");
                    assertEquals(
                            Ring.NGINX_MAX_POINTS,
                            calls[0],
                            "accept is asked once per point, the same backend again each time");
                    return;
                }
            }
            throw new AssertionError("no run of " + Ring.NGINX_MAX_POINTS + " points of one backend in a 50:1 ring");
        }
    }

    @Test
    void emptyRingAndBadLimit() throws Exception {
        Path file = dir.resolve("f.ring");
        TestRings.build(file, "server 10.0.0.1:80 features=a;\n");
        try (RingStore store = RingStore.open(file)) {
            Ring all = store.ring(java.util.Set.of());
            assertThrows(IllegalArgumentException.class, () -> all.select(0, 0, b -> true));
            assertEquals(0, all.select(0, 1, b -> true));
        }
    }

    @Test
    void bufferAndSegmentLookupsEqualTheArrayOne() throws Exception {
        Path file = dir.resolve("k.ring");
        TestRings.build(file, "server 10.0.0.1:80;\nserver 10.0.0.2:80;\nserver 10.0.0.3:80 weight=3;\n");
        SplittableRandom random = new SplittableRandom(5);
        try (RingStore store = RingStore.open(file);
                Arena arena = Arena.ofConfined()) {
            Ring ring = store.ring(java.util.Set.of());
            for (int k = 0; k < 500; k++) {
                byte[] key = new byte[random.nextInt(70)];
                random.nextBytes(key);
                int expected = ring.lookup(key);
                assertEquals(ring.hash(key), ring.hash(MemorySegment.ofArray(key)));

                byte[] padded = new byte[key.length + 7];
                System.arraycopy(key, 0, padded, 3, key.length);
                ByteBuffer heap = ByteBuffer.wrap(padded, 3, key.length);
                assertEquals(expected, ring.lookup(heap));
                assertEquals(3, heap.position(), "position unchanged");
                assertEquals(3 + key.length, heap.limit(), "limit unchanged");
                assertEquals(expected, ring.lookup(heap.asReadOnlyBuffer()), "read-only heap buffer: no array to read");
                assertEquals(expected, ring.lookup(heap.slice()), "slice: array offset");

                ByteBuffer direct = ByteBuffer.allocateDirect(padded.length)
                        .put(padded)
                        .position(3)
                        .limit(3 + key.length);
                assertEquals(expected, ring.lookup(direct));
                assertEquals(3, direct.position());
                assertEquals(3 + key.length, direct.limit());
                assertEquals(
                        expected,
                        ring.lookup(direct.duplicate().order(java.nio.ByteOrder.LITTLE_ENDIAN)),
                        "the buffer's byte order does not matter");

                MemorySegment nativeKey = arena.allocate(key.length + 1).asSlice(1, key.length); // unaligned start
                nativeKey.copyFrom(MemorySegment.ofArray(key));
                assertEquals(expected, ring.lookup(nativeKey));
                assertEquals(
                        expected,
                        ring.lookup(MemorySegment.ofArray(padded).asSlice(3, key.length)),
                        "heap segment with an offset");
                long[] longs = new long[(key.length + 7) / 8];
                MemorySegment.ofArray(longs)
                        .copyFrom(MemorySegment.ofArray(java.util.Arrays.copyOf(key, longs.length * 8)));
                assertEquals(
                        expected,
                        ring.lookup(MemorySegment.ofArray(longs).asSlice(0, key.length)),
                        "heap segment over a long[]");
            }
            assertEquals(
                    ring.hash("GET /".getBytes(StandardCharsets.US_ASCII)),
                    ring.hash(ByteBuffer.wrap("GET /".getBytes(StandardCharsets.US_ASCII))));
        }
    }
}
