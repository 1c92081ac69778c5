package io.ringstore.bench;

import io.ringstore.Ring;
import io.ringstore.RingStore;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * A lookup from a precomputed hash against one dependent random memory load: how many memory latencies
 * a lookup costs in a ring too large for any cache.
 *
 * <ul>
 *   <li>{@code load}: one step of a chase through an off-heap region as large as the ring's file, cut
 *       into 64-byte slots that hold a random cyclic permutation (Sattolo's shuffle, one cycle through
 *       every slot): each load reads the next slot's offset from the current one, so it waits for the
 *       one before;
 *   <li>{@code lookup}: {@link Ring#lookupHash(int)} over {@code lookups} seeded random hashes in turn,
 *       as {@link LookupBenchmark} does (independent: the processor may overlap consecutive lookups);
 *   <li>{@code chainedLookup}: the same lookups, each hash's position chosen by the backend the previous
 *       lookup found (each lookup waits for the one before, as each load of the chase does).
 * </ul>
 * Size defaults to {@code 2048x100000} (204.8 million points, a 1.2 GB file, and a 1.2 GB region);
 * the region's anonymous huge pages, which would make the chase's loads cheaper than the ring's, are
 * printed at setup.
 *
 * <pre>
 * java -jar bench/target/benchmarks.jar PointerChaseBenchmark
 * </pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 9, time = 2)
@Fork(value = 1, jvmArgsAppend = "-Xmx4g") // enough to build the largest ring if it is not cached yet
@State(Scope.Thread)
public class PointerChaseBenchmark {
    private static final int SLOT_BYTES = 64;
    private static final long HASH_SEED = 0xC4A5EL;
    private static final long PERMUTATION_SEED = 0x51077EDL;

    @Param({BenchRings.LARGE})
    public String size;

    /** Hashes looked up in turn; a power of two. */
    @Param("4194304")
    public int lookups;

    private RingStore store;
    private Ring ring;
    private Arena arena;
    private MemorySegment region;
    private int[] hashes;
    private int mask;
    private long position;
    private int next;
    private int backend;

    @Setup(Level.Trial)
    public void open() throws Exception {
        if (Integer.bitCount(lookups) != 1) {
            throw new IllegalArgumentException("lookups must be a power of two: lookups=" + lookups);
        }
        store = BenchRings.open(size);
        ring = store.ring(Set.of());
        hashes = new SplittableRandom(HASH_SEED).ints(lookups).toArray();
        mask = lookups - 1;
        arena = Arena.ofShared();
        region = cycle(arena, Files.size(store.path()) / SLOT_BYTES);
        System.out.printf(
                "%nring %s: %,d points; chase: %,d bytes in one random cycle of %d-byte slots; %s%n",
                size, ring.pointCount(), region.byteSize(), SLOT_BYTES, hugePages());
    }

    @TearDown(Level.Trial)
    public void close() {
        arena.close();
        store.close();
    }

    /**
     * {@code slots} 64-byte slots, off-heap, each holding the byte offset of the next slot of one cycle
     * through all of them (Sattolo's shuffle of the identity).
     */
    private static MemorySegment cycle(Arena arena, long slots) {
        if (slots < 2 || slots > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("slots must be in [2, 2^31): slots=" + slots);
        }
        int[] next = new int[(int) slots];
        Arrays.setAll(next, i -> i);
        SplittableRandom random = new SplittableRandom(PERMUTATION_SEED);
        for (int i = next.length - 1; i > 0; i--) {
            int j = random.nextInt(i); // j < i: Sattolo, so the permutation is a single cycle
            int t = next[i];
            next[i] = next[j];
            next[j] = t;
        }
        MemorySegment region = arena.allocate(slots * SLOT_BYTES, 4096);
        for (int i = 0; i < next.length; i++) {
            region.set(ValueLayout.JAVA_LONG, (long) i * SLOT_BYTES, (long) next[i] * SLOT_BYTES);
        }
        return region;
    }

    /** The process's anonymous huge pages (they would make the chase's loads cheaper than the ring's). */
    private static String hugePages() throws IOException {
        Path rollup = Path.of("/proc/self/smaps_rollup");
        if (!Files.isReadable(rollup)) {
            return "huge pages unknown";
        }
        return Files.readAllLines(rollup).stream()
                .filter(l -> l.startsWith("AnonHugePages:"))
                .map(l -> l.replaceAll("\\s+", " "))
                .findFirst()
                .orElse("AnonHugePages unknown");
    }

    @Benchmark
    public long load() {
        return position = region.get(ValueLayout.JAVA_LONG, position);
    }

    @Benchmark
    public int lookup() {
        next = (next + 1) & mask;
        return ring.lookupHash(hashes[next]);
    }

    @Benchmark
    public int chainedLookup() {
        next = (next + 1) & mask;
        return backend = ring.lookupHash(hashes[(next + backend) & mask]);
    }
}
