package io.ringstore.bench;

import io.ringstore.Ring;
import io.ringstore.RingStore;
import io.ringstore.builder.BackendList;
import io.ringstore.builder.RingBuilder;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.function.IntPredicate;
import java.util.function.IntUnaryOperator;

/**
 * Bytes allocated per call, measured: {@code com.sun.management.ThreadMXBean.getThreadAllocatedBytes}
 * of this thread before and after {@value #CALLS} calls of each lookup form, after
 * {@value #ROUNDS} - 1 warm-up rounds of the same (so the JIT has compiled and, where it can,
 * scalar-replaced). Also the mean time per call, for orientation only (JMH's {@code LookupBenchmark}
 * is the timing reference).
 *
 * <p>The ring: 100 backends, every tenth marked down (built in code with {@link BackendList#builder()});
 * {@value #KEY_COUNT} URL-like keys of 20 – 120 bytes, prepared beforehand as {@code byte[]}, heap,
 * read-only heap and direct {@link ByteBuffer}s, and heap and native {@link MemorySegment}s.
 * {@code select} uses one predicate built before the loop.
 *
 * <pre>
 * java -cp bench/target/benchmarks.jar io.ringstore.bench.SelectAllocation [--tsv FILE]
 * </pre>
 */
public final class SelectAllocation {
    private static final int CALLS = 5_000_000;
    private static final int ROUNDS = 4;
    private static final int KEY_COUNT = 1024;
    /** Where results go, so the calls are not optimised away. */
    private static volatile long sink;

    private SelectAllocation() {}

    private record Form(String name, IntUnaryOperator call) {}

    public static void main(String[] args) throws Exception {
        String tsvPath = args.length == 2 && args[0].equals("--tsv") ? args[1] : null;
        Path dir = Files.createTempDirectory("select-allocation");
        Path file = dir.resolve("fleet.ring");
        BackendList.Builder fleet = BackendList.builder();
        for (int b = 0; b < 100; b++) {
            String address = "10.0." + (b / 250) + "." + (b % 250 + 1) + ":8080";
            if (b % 10 == 0) {
                fleet.down(address);
            } else {
                fleet.add(address);
            }
        }
        RingBuilder.of(fleet.build()).build(file);
        var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long thread = Thread.currentThread().threadId();
        try (RingStore store = RingStore.open(file);
                Arena arena = Arena.ofConfined()) {
            Ring ring = store.ring(Set.of());
            byte[][] keys = BenchRings.urlKeys(KEY_COUNT, BenchRings.KEY_SEED);
            int[] hashes = BenchRings.hashes(keys);
            ByteBuffer[] heap = new ByteBuffer[KEY_COUNT];
            ByteBuffer[] readOnly = new ByteBuffer[KEY_COUNT];
            ByteBuffer[] direct = new ByteBuffer[KEY_COUNT];
            MemorySegment[] heapSegments = new MemorySegment[KEY_COUNT];
            MemorySegment[] nativeSegments = new MemorySegment[KEY_COUNT];
            for (int k = 0; k < KEY_COUNT; k++) {
                heap[k] = ByteBuffer.wrap(keys[k]);
                readOnly[k] = heap[k].asReadOnlyBuffer();
                direct[k] =
                        ByteBuffer.allocateDirect(keys[k].length).put(keys[k]).flip();
                heapSegments[k] = MemorySegment.ofArray(keys[k]);
                nativeSegments[k] = arena.allocate(keys[k].length).copyFrom(heapSegments[k]);
            }
            boolean[] down = new boolean[store.backendCount()];
            for (int b = 0; b < down.length; b++) {
                down[b] = store.backend(b).down();
            }
            IntPredicate up = b -> !down[b];
            List<Form> forms = List.of(
                    new Form("lookup(byte[])", k -> ring.lookup(keys[k])),
                    new Form("lookup(heap ByteBuffer)", k -> ring.lookup(heap[k])),
                    new Form("lookup(read-only heap ByteBuffer)", k -> ring.lookup(readOnly[k])),
                    new Form("lookup(direct ByteBuffer)", k -> ring.lookup(direct[k])),
                    new Form("lookup(heap MemorySegment)", k -> ring.lookup(heapSegments[k])),
                    new Form("lookup(native MemorySegment)", k -> ring.lookup(nativeSegments[k])),
                    new Form("select(hash, 21, up)", k -> ring.select(hashes[k], Ring.NGINX_MAX_POINTS, up)),
                    new Form("backends(byte[]) first 3", k -> {
                        var it = ring.backends(keys[k]);
                        return it.nextInt() + it.nextInt() + it.nextInt();
                    }));
            System.out.printf("%-36s %14s %10s%n", "call", "bytes/call", "ns/call");
            try (Tsv tsv = Tsv.create(tsvPath, "call", "bytesPerCall", "nsPerCall")) {
                for (Form form : forms) {
                    double bytes = 0;
                    double ns = 0;
                    for (int round = 0; round < ROUNDS; round++) {
                        long acc = 0;
                        long before = threads.getThreadAllocatedBytes(thread);
                        long start = System.nanoTime();
                        for (int i = 0; i < CALLS; i++) {
                            acc += form.call().applyAsInt(i & (KEY_COUNT - 1));
                        }
                        ns = (System.nanoTime() - start) / (double) CALLS;
                        bytes = (threads.getThreadAllocatedBytes(thread) - before) / (double) CALLS;
                        sink += acc;
                    }
                    System.out.printf("%-36s %14.3f %10.1f%n", form.name(), bytes, ns);
                    tsv.row(form.name(), String.format("%.3f", bytes), String.format("%.1f", ns));
                }
            }
        } finally {
            Files.deleteIfExists(file);
            Files.deleteIfExists(dir);
        }
    }
}
