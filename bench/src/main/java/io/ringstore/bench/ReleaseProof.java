package io.ringstore.bench;

import io.ringstore.Backend;
import io.ringstore.builder.BackendList;
import io.ringstore.builder.RingBuilder;
import io.ringstore.family.RingVersion;
import io.ringstore.live.RingRouter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Proof that a {@link RingRouter} unmaps replaced generations promptly, without a garbage collection:
 * REPUBLISHES times a ~SIZE_MB ring file is published by copy and rename over the watched path
 * (alternately two files built once, generations 1 and 2, so the router allows older generations),
 * under READERS threads looking keys up through one route all along. No {@code System.gc()}.
 *
 * <p>A sampler reads {@code /proc/self/maps} every 5 ms and counts the mappings of files in the
 * directory (and of those, the deleted ones); the file store's usable space ({@code df}) is read
 * before, during and after. After each republish the program waits for the switch and for the
 * replaced generation's release (grace period + poll interval), so the figures show the steady
 * state a router sees: files published no faster than one per grace period.
 *
 * <pre>
 * java -cp bench/target/benchmarks.jar io.ringstore.bench.ReleaseProof [REPUBLISHES [SIZE_MB [READERS [DIR [GRACE_MS [POLL_MS]]]]]]
 * </pre>
 * Defaults: 1000 republishes, 100 MB, 8 readers, a new directory in java.io.tmpdir, the router's
 * default grace period and poll interval (a shorter pair runs the same proof faster). Prints the figures
 * and exits 1 when a lookup failed, more than two ring files were mapped at a sample, or the deleted
 * files' space did not come back.
 */
public final class ReleaseProof {
    private ReleaseProof() {}

    public static void main(String[] args) throws Exception {
        int republishes = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
        int sizeMb = args.length > 1 ? Integer.parseInt(args[1]) : 100;
        int readerCount = args.length > 2 ? Integer.parseInt(args[2]) : 8;
        Path dir = args.length > 3
                ? Files.createDirectories(Path.of(args[3]))
                : Files.createTempDirectory("ringstore-release-");
        // v1: 160 points of 6 bytes per weight unit.
        int weight = Math.max(1, (int) ((long) sizeMb * 1024 * 1024 / 6 / 160 / 1024));
        Path[] sources = {dir.resolve("a.source"), dir.resolve("b.source")};
        for (int s = 0; s < 2; s++) {
            StringBuilder text = new StringBuilder();
            for (int i = 0; i < 1024; i++) {
                text.append("server 10.")
                        .append(s)
                        .append('.')
                        .append(i / 256)
                        .append('.')
                        .append(i % 256)
                        .append(":80 weight=")
                        .append(weight)
                        .append('\n');
            }
            long t = System.nanoTime();
            RingBuilder.of(BackendList.parse("proof", text.toString()))
                    .version(RingVersion.V1)
                    .generation(s + 1)
                    .build(sources[s]);
            System.out.printf("built %s: %d bytes in %d ms%n", sources[s].getFileName(), Files.size(sources[s]), ms(t));
        }
        Path live = dir.resolve("fleet.ring");
        publish(sources[0], live);
        long fileBytes = Files.size(sources[0]);

        byte[][] keys = BenchRings.urlKeys(4096, BenchRings.KEY_SEED);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong lookups = new AtomicLong();
        AtomicLong failures = new AtomicLong();
        AtomicReference<String> firstFailure = new AtomicReference<>();
        int[] maxMapped = new int[1];
        int[] maxDeletedMapped = new int[1];
        long[] samples = new long[1];
        long freeAtStart = Files.getFileStore(dir).getUsableSpace();
        long[] minFree = {freeAtStart};
        long start = System.nanoTime();
        RingRouter.Builder options =
                RingRouter.builder(live).allowOlderGeneration(true).jmx(false);
        if (args.length > 4) {
            options.graceMillis(Long.parseLong(args[4]));
        }
        if (args.length > 5) {
            options.pollMillis(Long.parseLong(args[5]));
        }
        try (RingRouter router = options.open()) {
            RingRouter.Route route = router.route(Set.of());
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < readerCount; t++) {
                int id = t;
                threads.add(Thread.ofPlatform().name("reader-" + t).start(() -> {
                    long n = 0;
                    int k = id;
                    while (!stop.get()) {
                        try {
                            Backend b = route.backend(keys[k = (k + 1) & (keys.length - 1)]);
                            if (b == null) {
                                failures.incrementAndGet();
                                firstFailure.compareAndSet(null, "no backend");
                            }
                        } catch (Throwable e) {
                            failures.incrementAndGet();
                            firstFailure.compareAndSet(null, e.toString());
                        }
                        n++;
                    }
                    lookups.addAndGet(n);
                }));
            }
            Thread sampler = Thread.ofPlatform().name("maps-sampler").start(() -> {
                while (!stop.get()) {
                    try {
                        int mapped = 0;
                        int deleted = 0;
                        for (String line :
                                Files.readAllLines(Path.of("/proc/self/maps"), StandardCharsets.ISO_8859_1)) {
                            if (line.contains(dir.toString())) {
                                mapped++;
                                deleted += line.endsWith("(deleted)") ? 1 : 0;
                            }
                        }
                        maxMapped[0] = Math.max(maxMapped[0], mapped);
                        maxDeletedMapped[0] = Math.max(maxDeletedMapped[0], deleted);
                        minFree[0] =
                                Math.min(minFree[0], Files.getFileStore(dir).getUsableSpace());
                        samples[0]++;
                        Thread.sleep(5);
                    } catch (IOException | InterruptedException e) {
                        return;
                    }
                }
            });
            for (int i = 1; i <= republishes; i++) {
                long switches = router.switches();
                publish(sources[i % 2], live);
                while (router.switches() == switches || router.retiredGenerations() > 0) {
                    if (router.lastError() != null) {
                        throw new IllegalStateException("refused: " + router.lastError());
                    }
                    Thread.sleep(5);
                }
                if (i % 50 == 0) {
                    System.out.printf(
                            "%d republishes, %d s%n", i, TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start));
                }
            }
            stop.set(true);
            for (Thread t : threads) {
                t.join();
            }
            sampler.join();
            long freeAtEnd = Files.getFileStore(dir).getUsableSpace();
            System.out.printf(
                    "%d republishes of a %d-byte file in %d s, %d readers, no System.gc()%n",
                    republishes, fileBytes, TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start), readerCount);
            System.out.printf(
                    "lookups %d, failed %d%s, retried on the new generation %d%n",
                    lookups.get(),
                    failures.get(),
                    firstFailure.get() == null ? "" : " (first: " + firstFailure.get() + ")",
                    router.lookupRetries());
            System.out.printf(
                    "/proc/self/maps samples %d: ring files mapped at most %d, deleted files mapped at most %d%n",
                    samples[0], maxMapped[0], maxDeletedMapped[0]);
            System.out.printf(
                    "usable space: start %d, lowest %d (%.1f files below start), end %d (%+d bytes vs start)%n",
                    freeAtStart,
                    minFree[0],
                    (freeAtStart - minFree[0]) / (double) fileBytes,
                    freeAtEnd,
                    freeAtEnd - freeAtStart);
            boolean ok = failures.get() == 0 && maxMapped[0] <= 2 && freeAtEnd >= freeAtStart - fileBytes / 2;
            System.out.println(ok ? "PASS" : "FAIL");
            for (Path p : sources) {
                Files.deleteIfExists(p);
            }
            Files.deleteIfExists(live);
            if (!ok) {
                System.exit(1);
            }
        }
    }

    /** Copy, then rename over {@code live}: the replaced file is deleted while the router may still map it. */
    private static void publish(Path source, Path live) throws IOException {
        Path tmp = Files.createTempFile(live.getParent(), ".publish-", ".tmp");
        Files.copy(source, tmp, StandardCopyOption.REPLACE_EXISTING);
        Files.move(tmp, live, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    private static long ms(long since) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - since);
    }
}
