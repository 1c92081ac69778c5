package io.ringstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.ringstore.balance.BoundedLoad;
import io.ringstore.family.Families;
import io.ringstore.family.KeyHash;
import io.ringstore.family.RingFamily;
import io.ringstore.family.RingVersion;
import io.ringstore.live.RingRouter;
import io.ringstore.state.HostState;
import io.ringstore.state.SharedLoad;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.function.IntToLongFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A lookup from the key allocates nothing, in every ring family and every key shape: for each version
 * ({@link #VERSIONS}: every family, twemproxy with each of its twelve hashes, HAProxy with each of its eight), {@value #CALLS}
 * {@link Ring#lookup} calls after a warm-up must allocate under {@value #LIMIT} bytes in all, by the
 * thread's allocation counter ({@link AllocationMeter}), for keys as {@code byte[]}, an array slice,
 * heap, read-only and direct {@link ByteBuffer}s, and heap and native {@link MemorySegment}s. One small
 * object a call would show as over a megabyte. The strict bound's {@code Route.chooseAndAcquire} is
 * measured the same way, for every key shape, on a few families ({@link #noStrictChoiceFromTheKeyAllocates}).
 *
 * <p>Not a matter of timing: a lookup that does not allocate passes in some round of {@value #CALLS}
 * calls once the JIT has compiled it, however long that takes; one that allocates fails every round.
 * The rounds run in one JVM, family after family, so the key hash's call in {@link Ring#lookup} sees
 * every family's hash (a megamorphic site, as in a router serving rings of several families): what
 * the JIT can or cannot remove there is what is measured.
 */
@org.junit.jupiter.api.Tag("slow") // seconds of warm-up and 100,000 calls a case: the full lane
class FamilyLookupAllocationTest {
    /** Every family once (twemproxy with each hash), by the name the CLI reads. */
    static final List<String> VERSIONS = versions();

    private static final int CALLS = 100_000;
    private static final int WARM_UP = 20_000;
    /**
     * Rounds before a case fails: a call that allocates fails every round, and one the JIT makes
     * allocation-free passes at its first compiled round. 20 rounds were too few for a JVM whose
     * compiler threads were starved (the whole suite beside helpers' JMH runs, load average 25: v1
     * lookup of a heap MemorySegment allocated its heapBase Optional in all 20, and passed alone).
     */
    private static final int ROUNDS = 200;

    private static final long LIMIT = 1024;
    private static final int SERVERS = 40;
    /** A power of two: keys are cycled with a mask. */
    private static final int KEYS = 64;

    @TempDir
    Path dir;

    private static List<String> versions() {
        List<String> all = new ArrayList<>(List.of("v1", "v2:160", "libketama", "libmemcached", "libmemcached-spy"));
        for (String hash : KeyHash.TWEMPROXY_HASHES) {
            all.add("twemproxy:" + hash);
        }
        all.addAll(List.of(
                "spymemcached",
                "spymemcached-weighted",
                "xmemcached",
                "xmemcached-nginx",
                "dubbo",
                "couchbase",
                "envoy",
                "envoy-murmur2",
                "grpc"));
        for (String hash : KeyHash.LIBMEMCACHED_HASHES) {
            all.add("libmemcached-consistent:" + hash);
        }
        all.add("libmemcached-spy-unweighted");
        for (String hash : KeyHash.HAPROXY_HASHES) {
            all.add("haproxy:" + hash);
        }
        all.add("grpc-java");
        return List.copyOf(all);
    }

    @Test
    void everyFamilyIsMeasured() {
        Set<RingFamily> measured = new LinkedHashSet<>();
        for (String v : VERSIONS) {
            measured.add(RingVersion.parse(v).family());
        }
        assertEquals(Families.all(), List.copyOf(measured), "families in Families.all() order, each measured");
    }

    @Test
    void noLookupFromTheKeyAllocates() throws Exception {
        AllocationMeter meter = AllocationMeter.create();
        assumeTrue(meter != null, "this JVM counts no allocated bytes per thread");
        byte[][] keys = keys(new SplittableRandom(0xA110C_2026L));
        List<String> allocating = new ArrayList<>();
        try (Arena arena = Arena.ofConfined()) {
            Shapes shapes = new Shapes(keys, arena);
            for (String name : VERSIONS) {
                RingVersion version = RingVersion.parse(name);
                Path file = dir.resolve(name.replace(':', '-') + ".ring");
                TestRings.build(file, fleet(new SplittableRandom(name.hashCode())), version);
                try (RingStore store = RingStore.open(file)) {
                    Ring ring = store.ring(Set.of(), version);
                    for (Map.Entry<String, IntToLongFunction> form :
                            shapes.lookups(ring).entrySet()) {
                        long bytes = meter.leastAllocated(form.getValue(), WARM_UP, CALLS, ROUNDS, LIMIT);
                        System.out.println(
                                name + " " + form.getKey() + ": " + bytes + " bytes allocated in " + CALLS + " calls");
                        if (bytes >= LIMIT) {
                            allocating.add(name + " " + form.getKey() + ": " + bytes + " bytes in " + CALLS + " calls");
                        }
                    }
                }
            }
        }
        assertEquals(List.of(), allocating, "lookups that allocate");
    }

    /**
     * The strict bound's choice allocates nothing either: {@code Route.chooseAndAcquire} then
     * {@code release}, under c = 1.25 through a state file, for every key shape, on a ring of nginx's
     * family, a 64-bit one (Envoy's) and a rehashing one (spymemcached: with a bound it walks by hash,
     * so a buffer's or segment's key is not copied), and without a bound on nginx's.
     */
    @Test
    void noStrictChoiceFromTheKeyAllocates() throws Exception {
        AllocationMeter meter = AllocationMeter.create();
        assumeTrue(meter != null, "this JVM counts no allocated bytes per thread");
        byte[][] keys = keys(new SplittableRandom(0xA110C_2027L));
        List<String> allocating = new ArrayList<>();
        try (Arena arena = Arena.ofConfined()) {
            Shapes shapes = new Shapes(keys, arena);
            for (String name : List.of("v1", "envoy", "spymemcached", "v1 unbounded")) {
                boolean bounded = !name.endsWith(" unbounded");
                RingVersion version = RingVersion.parse(name.split(" ")[0]);
                Path file = dir.resolve("strict-" + name.replace(' ', '-') + ".ring");
                TestRings.build(file, fleet(new SplittableRandom(name.hashCode())), version);
                try (RingRouter router = RingRouter.builder(file)
                                .jmx(false)
                                .pollMillis(0)
                                .graceMillis(0)
                                .open();
                        HostState state = HostState.open(file, HostState.Options.DEFAULTS.withCapacity(64, 4));
                        RingRouter.Route route = router.route(Set.of())) {
                    SharedLoad load = SharedLoad.open(state, router::current, bounded ? BoundedLoad.of(1.25) : null);
                    for (Map.Entry<String, IntToLongFunction> form :
                            shapes.strictChoices(route, load).entrySet()) {
                        long bytes = meter.leastAllocated(form.getValue(), WARM_UP, CALLS, ROUNDS, LIMIT);
                        System.out.println(
                                name + " " + form.getKey() + ": " + bytes + " bytes allocated in " + CALLS + " calls");
                        if (bytes >= LIMIT) {
                            allocating.add(name + " " + form.getKey() + ": " + bytes + " bytes in " + CALLS + " calls");
                        }
                    }
                }
            }
        }
        assertEquals(List.of(), allocating, "strict choices that allocate");
    }

    /**
     * A route rolling out v1 to v2 at 50 % allocates nothing either, for every key shape: direct buffers,
     * read-only buffers and native segments take the one pass that computes the ring's CRC-32 and the
     * bucket's CRC-32C together ({@code internal.KeyCrcs}), the others hash twice.
     */
    @Test
    void noRolloutLookupFromTheKeyAllocates() throws Exception {
        AllocationMeter meter = AllocationMeter.create();
        assumeTrue(meter != null, "this JVM counts no allocated bytes per thread");
        byte[][] keys = keys(new SplittableRandom(0xA110C_2028L));
        List<String> allocating = new ArrayList<>();
        try (Arena arena = Arena.ofConfined()) {
            Shapes shapes = new Shapes(keys, arena);
            Path file = dir.resolve("rollout.ring");
            TestRings.build(file, fleet(new SplittableRandom(21)), RingVersion.V1, RingVersion.v2(160));
            try (RingRouter router = RingRouter.builder(file)
                            .versions(RingVersion.V1, RingVersion.v2(160))
                            .policy(io.ringstore.migration.RolloutPolicy.everywhere(50))
                            .jmx(false)
                            .pollMillis(0)
                            .graceMillis(0)
                            .open();
                    RingRouter.Route route = router.route(Set.of())) {
                for (Map.Entry<String, IntToLongFunction> form :
                        shapes.routeLookups(route).entrySet()) {
                    long bytes = meter.leastAllocated(form.getValue(), WARM_UP, CALLS, ROUNDS, LIMIT);
                    System.out.println("v1 -> v2:160 at 50 % " + form.getKey() + ": " + bytes + " bytes allocated in "
                            + CALLS + " calls");
                    if (bytes >= LIMIT) {
                        allocating.add(form.getKey() + ": " + bytes + " bytes in " + CALLS + " calls");
                    }
                }
                assertTrue(
                        router.oldLookups() > 0 && router.newLookups() > 0,
                        "both versions answered: the rollout is between 0 and 100 %");
            }
        }
        assertEquals(List.of(), allocating, "rollout lookups that allocate");
    }

    /**
     * The same keys in every shape the lookups take, each key's bytes between other bytes (the slice,
     * buffers and segments see offsets that are not 0), and a check that every shape answers as the array.
     */
    private static final class Shapes {
        final byte[][] keys;
        final byte[][] padded;
        final ByteBuffer[] heap;
        final ByteBuffer[] readOnly;
        final ByteBuffer[] direct;
        final MemorySegment[] heapSegments;
        final MemorySegment[] nativeSegments;

        Shapes(byte[][] keys, Arena arena) {
            int n = keys.length;
            this.keys = keys;
            padded = new byte[n][];
            heap = new ByteBuffer[n];
            readOnly = new ByteBuffer[n];
            direct = new ByteBuffer[n];
            heapSegments = new MemorySegment[n];
            nativeSegments = new MemorySegment[n];
            for (int k = 0; k < n; k++) {
                byte[] key = keys[k];
                padded[k] = new byte[key.length + 5];
                System.arraycopy(key, 0, padded[k], 3, key.length);
                heap[k] = ByteBuffer.wrap(padded[k], 3, key.length);
                readOnly[k] = heap[k].asReadOnlyBuffer();
                direct[k] = ByteBuffer.allocateDirect(key.length + 5)
                        .put(padded[k])
                        .position(3)
                        .limit(3 + key.length);
                heapSegments[k] = MemorySegment.ofArray(padded[k]).asSlice(3, key.length);
                nativeSegments[k] =
                        arena.allocate(key.length + 1).asSlice(1, key.length).copyFrom(MemorySegment.ofArray(key));
            }
        }

        /** Each shape's lookup of key {@code i mod KEYS} in {@code ring}, after checking it answers as the array does. */
        Map<String, IntToLongFunction> lookups(Ring ring) {
            int mask = keys.length - 1;
            Map<String, IntToLongFunction> forms = new LinkedHashMap<>();
            forms.put("lookup(byte[])", i -> ring.lookup(keys[i & mask]));
            forms.put("lookup(byte[], int, int)", i -> ring.lookup(padded[i & mask], 3, keys[i & mask].length));
            forms.put("lookup(heap ByteBuffer)", i -> ring.lookup(heap[i & mask]));
            forms.put("lookup(read-only ByteBuffer)", i -> ring.lookup(readOnly[i & mask]));
            forms.put("lookup(direct ByteBuffer)", i -> ring.lookup(direct[i & mask]));
            forms.put("lookup(heap MemorySegment)", i -> ring.lookup(heapSegments[i & mask]));
            forms.put("lookup(native MemorySegment)", i -> ring.lookup(nativeSegments[i & mask]));
            for (int k = 0; k < keys.length; k++) {
                int expected = ring.lookup(keys[k]);
                for (Map.Entry<String, IntToLongFunction> form : forms.entrySet()) {
                    assertEquals(
                            expected,
                            form.getValue().applyAsLong(k),
                            ring.version() + " " + form.getKey() + ", key " + k);
                }
            }
            for (int k = 0; k < keys.length; k++) {
                assertEquals(3, heap[k].position(), "the lookup left the buffer as it was");
                assertEquals(3, direct[k].position(), "the lookup left the buffer as it was");
            }
            return forms;
        }

        /** Each shape's {@code Route.backend} of key {@code i mod KEYS}, after checking it answers as the array does. */
        Map<String, IntToLongFunction> routeLookups(RingRouter.Route route) {
            int mask = keys.length - 1;
            Map<String, IntToLongFunction> forms = new LinkedHashMap<>();
            forms.put("backend(byte[])", i -> route.backend(keys[i & mask]).index());
            forms.put(
                    "backend(byte[], int, int)",
                    i -> route.backend(padded[i & mask], 3, keys[i & mask].length)
                            .index());
            forms.put(
                    "backend(heap ByteBuffer)",
                    i -> route.backend(heap[i & mask]).index());
            forms.put(
                    "backend(read-only ByteBuffer)",
                    i -> route.backend(readOnly[i & mask]).index());
            forms.put(
                    "backend(direct ByteBuffer)",
                    i -> route.backend(direct[i & mask]).index());
            forms.put(
                    "backend(heap MemorySegment)",
                    i -> route.backend(heapSegments[i & mask]).index());
            forms.put(
                    "backend(native MemorySegment)",
                    i -> route.backend(nativeSegments[i & mask]).index());
            for (int k = 0; k < keys.length; k++) {
                long expected = route.backend(keys[k]).index();
                for (Map.Entry<String, IntToLongFunction> form : forms.entrySet()) {
                    assertEquals(expected, form.getValue().applyAsLong(k), form.getKey() + ", key " + k);
                }
            }
            return forms;
        }

        /**
         * Each shape's {@code chooseAndAcquire} of key {@code i mod KEYS}, released at once, after checking
         * it answers as the array does.
         */
        Map<String, IntToLongFunction> strictChoices(RingRouter.Route route, SharedLoad load) {
            int mask = keys.length - 1;
            Map<String, IntToLongFunction> forms = new LinkedHashMap<>();
            forms.put("chooseAndAcquire(byte[])", i -> released(load, route.chooseAndAcquire(keys[i & mask], load)));
            forms.put(
                    "chooseAndAcquire(byte[], int, int)",
                    i -> released(load, route.chooseAndAcquire(padded[i & mask], 3, keys[i & mask].length, load)));
            forms.put(
                    "chooseAndAcquire(heap ByteBuffer)",
                    i -> released(load, route.chooseAndAcquire(heap[i & mask], load)));
            forms.put(
                    "chooseAndAcquire(read-only ByteBuffer)",
                    i -> released(load, route.chooseAndAcquire(readOnly[i & mask], load)));
            forms.put(
                    "chooseAndAcquire(direct ByteBuffer)",
                    i -> released(load, route.chooseAndAcquire(direct[i & mask], load)));
            forms.put(
                    "chooseAndAcquire(heap MemorySegment)",
                    i -> released(load, route.chooseAndAcquire(heapSegments[i & mask], load)));
            forms.put(
                    "chooseAndAcquire(native MemorySegment)",
                    i -> released(load, route.chooseAndAcquire(nativeSegments[i & mask], load)));
            for (int k = 0; k < keys.length; k++) {
                long expected = released(load, route.chooseAndAcquire(keys[k], load));
                for (Map.Entry<String, IntToLongFunction> form : forms.entrySet()) {
                    assertEquals(expected, form.getValue().applyAsLong(k), form.getKey() + ", key " + k);
                }
            }
            return forms;
        }

        /** The backend's index, its request released. */
        private static long released(SharedLoad load, Backend b) {
            load.release(load.token(b));
            return b.index();
        }
    }

    /** {@value #SERVERS} servers on 11211 (every family's memcached clients and the others take a written port), weights 1 to 10. */
    private static String fleet(SplittableRandom random) {
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < SERVERS; i++) {
            text.append("server 10.0.")
                    .append(i / 200)
                    .append('.')
                    .append(i % 200 + 1)
                    .append(":11211 weight=")
                    .append(1 + random.nextInt(10))
                    .append(";\n");
        }
        return text.toString();
    }

    /**
     * URL-like keys of 20 to 60 bytes, and the lengths where the hashes change path: 0 to 9 (tails of
     * every size), 55 and 56 (MD5's last one-block message and first two-block one), 63, 64, 65 (a
     * block, an XXH64 stripe boundary) and 200 (several of both).
     */
    private static byte[][] keys(SplittableRandom random) {
        List<byte[]> keys = new ArrayList<>();
        for (int length : new int[] {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 55, 56, 63, 64, 65, 200}) {
            keys.add(text(random, "", length));
        }
        String[] prefixes = {"/api/v1/users/", "/static/img/", "/cart?item=", "/video/segment/", "/u/"};
        while (keys.size() < KEYS) {
            keys.add(text(random, prefixes[random.nextInt(prefixes.length)], random.nextInt(20, 61)));
        }
        return keys.toArray(byte[][]::new);
    }

    private static byte[] text(SplittableRandom random, String prefix, int length) {
        String alphabet = "abcdefghijklmnopqrstuvwxyz0123456789-_/.";
        StringBuilder sb = new StringBuilder(prefix);
        while (sb.length() < length) {
            sb.append(alphabet.charAt(random.nextInt(alphabet.length())));
        }
        sb.setLength(length);
        return sb.toString().getBytes(StandardCharsets.US_ASCII);
    }
}
