package io.ringstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.builder.BackendList;
import io.ringstore.builder.RingBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Builds to one path at once, from threads of this process and from other processes, each taking
 * the next generation from the file it replaces: every publish is one generation more than the one
 * before, so the generations built are exactly 1 .. N, and nothing but the ring is left behind.
 */
class ConcurrentPublishTest {
    private static final String BACKENDS = "server 127.0.0.1:80\nserver 127.0.0.2:80 weight=2\nserver [::1]:80\n";
    private static final int THREADS = 4;
    private static final int PROCESSES = 2;
    private static final int BUILDS_EACH = 8;

    @TempDir(factory = MemoryTempDir.class)
    Path dir;

    /** A FIFO planted where the lock file goes would block the build forever if it were opened. */
    @Test
    void aFifoAtTheLockFilesPathIsRefusedUnopened() throws Exception {
        Path ring = dir.resolve("f.ring");
        TestFiles.mkfifo(dir.resolve(".f.ring.lock"));
        RingBuilder builder = RingBuilder.of(BackendList.parse("t", "server 127.0.0.1:80\n"));
        java.io.IOException e = assertTimeoutPreemptively(
                Duration.ofSeconds(10), // a hang detector, not a speed target
                () -> assertThrows(java.io.IOException.class, () -> builder.build(ring)));
        assertTrue(
                e.getMessage().contains(".f.ring.lock") && e.getMessage().contains("not a regular file"),
                e.getMessage());
        assertFalse(Files.exists(ring));
    }

    @Test
    void concurrentBuildsToOnePathPublishGenerationsOneByOne() throws Exception {
        Path ring = dir.resolve("shared.ring");
        List<Long> generations = Collections.synchronizedList(new ArrayList<>());
        assertTimeoutPreemptively(Duration.ofSeconds(120), () -> {
            List<MultiProcessTest.ChildJvm> children = new ArrayList<>();
            for (int p = 0; p < PROCESSES; p++) {
                children.add(MultiProcessTest.ChildJvm.start(
                        Child.class, List.of("-XX:TieredStopAtLevel=1"), ring.toString(), String.valueOf(BUILDS_EACH)));
            }
            try {
                for (MultiProcessTest.ChildJvm c : children) {
                    c.expectLine("READY"); // the children build while the threads do
                }
                CountDownLatch go = new CountDownLatch(1);
                List<Thread> threads = new ArrayList<>();
                List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
                for (int t = 0; t < THREADS; t++) {
                    Thread thread = new Thread(
                            () -> {
                                try {
                                    go.await();
                                    for (int i = 0; i < BUILDS_EACH; i++) {
                                        generations.add(build(ring));
                                    }
                                } catch (Throwable e) {
                                    failures.add(e);
                                }
                            },
                            "builder-" + t);
                    threads.add(thread);
                    thread.start();
                }
                for (MultiProcessTest.ChildJvm c : children) {
                    c.send("GO");
                }
                go.countDown();
                for (Thread t : threads) {
                    t.join();
                }
                assertEquals(List.of(), failures);
                for (MultiProcessTest.ChildJvm c : children) {
                    for (String line : c.remainingLines()) {
                        generations.add(Long.parseLong(line.substring("GENERATION ".length())));
                    }
                    assertEquals(0, c.waitFor(), () -> "child failed; stderr:\n" + c.stderr());
                }
            } finally {
                for (MultiProcessTest.ChildJvm c : children) {
                    c.process.destroyForcibly();
                }
            }
        });
        int total = (THREADS + PROCESSES) * BUILDS_EACH;
        List<Long> sorted = generations.stream().sorted().toList();
        assertEquals(
                LongStream.rangeClosed(1, total).boxed().toList(),
                sorted,
                "each publish one generation more than the file it replaced, none twice");
        try (RingStore store = RingStore.open(ring)) {
            assertEquals(total, store.generation());
        }
        try (Stream<Path> files = Files.list(dir)) {
            assertEquals(List.of(ring), files.toList(), "no lock or temporary file left behind");
        }
    }

    private static long build(Path ring) throws Exception {
        return RingBuilder.of(BackendList.parse("test", BACKENDS)).build(ring).generation();
    }

    /** Another builder process: builds {@code args[1]} times to {@code args[0]} on "GO", printing each generation. */
    static final class Child {
        public static void main(String[] args) throws Exception {
            Path ring = Path.of(args[0]);
            int builds = Integer.parseInt(args[1]);
            System.out.println("READY");
            if (!"GO".equals(new java.io.BufferedReader(new java.io.InputStreamReader(System.in)).readLine())) {
                System.exit(2);
            }
            for (int i = 0; i < builds; i++) {
                System.out.println("GENERATION " + build(ring));
            }
        }
    }
}
