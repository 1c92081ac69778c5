package io.ringstore.tools;

import static io.ringstore.tools.CliRun.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.Ring;
import io.ringstore.RingStore;
import io.ringstore.builder.BackendList;
import io.ringstore.builder.RingBuilder;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ringstore lookup RINGFILE --watch --show-generation} fed line by line from this thread: keys
 * before a new file is published are answered from the old generation, keys after it (once the watcher
 * has polled) from the new one, a bad file in between changes nothing, and the end of stdin ends the
 * command with exit 0.
 */
class CliWatchTest {
    /** Disjoint addresses, so every answer says which file it came from. */
    private static final String FIRST = """
            server 127.0.0.1:8001
            server 127.0.0.1:8002 weight=2
            server [::1]:8003
            """;

    private static final String SECOND = """
            server 127.0.0.2:9001
            server 127.0.0.2:9002
            server 127.0.0.3:9003 weight=3
            server 127.0.0.4:9004
            """;
    private static final String THIRD = """
            server 127.0.0.7:7001
            server 127.0.0.7:7002
            """;
    private static final int KEYS = 200;

    @TempDir
    Path dir;

    @Test
    void answersCarryTheGenerationTheyCameFromAcrossPublishes() throws Exception {
        Path ring = dir.resolve("watched.ring");
        publish(FIRST, 1, ring);
        List<String> keys = new ArrayList<>();
        for (int k = 0; k < KEYS; k++) {
            keys.add("/watch/" + k);
        }
        List<String> first = expected(ring, keys);

        assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
            Watch w = Watch.start(ring, "--show-generation");
            PipedOutputStream stdin = w.stdin;
            LineQueue stdout = w.stdout;
            ByteArrayOutputStream stderr = w.stderr;
            AtomicInteger exit = w.exit;
            Thread cli = w.cli;

            assertEquals(answerLines(keys, first, 1), ask(stdin, stdout, keys), "before any new file");

            publish(SECOND, 2, ring);
            List<String> second = expected(ring, keys);
            for (int k = 0; k < KEYS; k++) {
                assertNotEquals(first.get(k), second.get(k), "the two files answer every key differently");
            }
            awaitGeneration(stdin, stdout, keys.getFirst(), 2, first.getFirst(), second.getFirst());
            assertEquals(answerLines(keys, second, 2), ask(stdin, stdout, keys), "after generation 2 was published");

            // A damaged file at the path is refused; generation 2 keeps answering.
            byte[] damaged = Files.readAllBytes(ring);
            damaged[damaged.length / 2] ^= 0x55;
            Path tmp = dir.resolve("damaged.tmp");
            Files.write(tmp, damaged);
            Files.move(tmp, ring, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            Thread.sleep(3 * 200 + 100); // several polls of the default 200 ms
            assertEquals(answerLines(keys, second, 2), ask(stdin, stdout, keys), "after a damaged file was published");

            publish(THIRD, 3, ring);
            List<String> third = expected(ring, keys);
            awaitGeneration(stdin, stdout, keys.getFirst(), 3, second.getFirst(), third.getFirst());
            assertEquals(answerLines(keys, third, 3), ask(stdin, stdout, keys), "after generation 3 was published");

            stdin.close(); // end of input: the command ends
            cli.join(10_000);
            assertFalse(cli.isAlive(), "lookup --watch must end at the end of stdin");
            assertEquals(Main.OK, exit.get(), () -> "exit code; stderr:\n" + stderr);
            assertTrue(stdout.isEmpty(), "no answers beyond the keys asked");
            String errors = stderr.toString(StandardCharsets.UTF_8);
            assertFalse(errors.contains("ringstore lookup:"), () -> "no error from the command: " + errors);
        });
    }

    /**
     * A drain reaches a running {@code lookup --watch} when its endpoint had no slot when the answers
     * were made, and when the state file was removed and made again by the drain (issue 20, item 5):
     * before, the command kept the old inode and the slots it found at its start.
     */
    @Test
    void drainsReachAWatchThroughANewSlotAndAStateFileMadeAgain() throws Exception {
        Path ring = dir.resolve("drained.ring");
        publish(FIRST, 1, ring);
        Path state = ring.resolveSibling("drained.ring.state");
        run("state", ring.toString(), "drain", "127.0.0.9:1")
                .assertOk(); // the file exists, with no slot for any backend
        String key = "/watch/0";
        String owner = expected(ring, List.of(key)).getFirst();
        assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
            Watch w = Watch.start(ring);
            PipedOutputStream stdin = w.stdin;
            LineQueue stdout = w.stdout;
            ByteArrayOutputStream stderr = w.stderr;
            AtomicInteger exit = w.exit;
            Thread cli = w.cli;
            assertEquals(key + "\t" + owner, ask(stdin, stdout, List.of(key)).getFirst());

            run("state", ring.toString(), "drain", owner).assertOk(); // a slot given now, drained
            awaitAnswerOtherThan(stdin, stdout, key, owner);

            run("state", ring.toString(), "undrain", owner).assertOk();
            awaitAnswer(stdin, stdout, key, owner);

            Files.delete(state); // what the CLI advises for a bad file; the next drain makes a new one
            run("state", ring.toString(), "drain", owner).assertOk();
            awaitAnswerOtherThan(stdin, stdout, key, owner);

            stdin.close();
            cli.join(10_000);
            assertFalse(cli.isAlive());
            assertEquals(Main.OK, exit.get(), () -> "exit code; stderr:\n" + stderr);
        });
    }

    /**
     * A {@code lookup --watch} started while the ring has no state file takes the one a later drain
     * makes, and keeps following it across a republish of the ring (issue 31, item 4): before, it kept
     * answering without a state file for good and the drain was ignored.
     */
    @Test
    void aStateFileMadeAfterTheWatchStartedIsTaken() throws Exception {
        Path ring = dir.resolve("late.ring");
        publish(FIRST, 1, ring);
        Path state = ring.resolveSibling("late.ring.state");
        assertFalse(Files.exists(state));
        String key = "/watch/0";
        String owner = expected(ring, List.of(key)).getFirst();
        assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
            Watch w = Watch.start(ring);
            assertEquals(
                    key + "\t" + owner, ask(w.stdin, w.stdout, List.of(key)).getFirst());

            run("state", ring.toString(), "drain", owner).assertOk(); // makes the state file
            assertTrue(Files.exists(state));
            String other = awaitAnswerOtherThan(w.stdin, w.stdout, key, owner);
            assertNotEquals(owner, other);

            publish(FIRST, 2, ring); // the same fleet, a new generation: the drain still holds
            Thread.sleep(300);
            assertEquals(
                    key + "\t" + other, ask(w.stdin, w.stdout, List.of(key)).getFirst());

            run("state", ring.toString(), "undrain", owner).assertOk();
            awaitAnswer(w.stdin, w.stdout, key, owner);

            w.stdin.close();
            w.cli.join(10_000);
            assertFalse(w.cli.isAlive());
            assertEquals(Main.OK, w.exit.get(), () -> "exit code; stderr:\n" + w.stderr);
        });
    }

    /** Asks for {@code key} until its backend is not {@code owner}; {@return the backend it got} */
    private static String awaitAnswerOtherThan(OutputStream stdin, LineQueue stdout, String key, String owner)
            throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            String got = ask(stdin, stdout, List.of(key)).getFirst().split("\t")[1];
            if (!got.equals(owner)) {
                return got;
            }
            assertTrue(System.nanoTime() < deadline, "the drain of " + owner + " did not reach the watch within 10 s");
            Thread.sleep(20);
        }
    }

    /** Asks for {@code key} until its backend is {@code owner}. */
    private static void awaitAnswer(OutputStream stdin, LineQueue stdout, String key, String owner) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!ask(stdin, stdout, List.of(key)).getFirst().split("\t")[1].equals(owner)) {
            assertTrue(
                    System.nanoTime() < deadline, "the undrain of " + owner + " did not reach the watch within 10 s");
            Thread.sleep(20);
        }
    }

    @Test
    void showGenerationWithoutWatchIsAUsageError() throws Exception {
        Path ring = dir.resolve("plain.ring");
        publish(FIRST, 1, ring);
        String error =
                run("lookup", ring.toString(), "--show-generation", "/key").assertError(Main.USAGE, "lookup");
        assertTrue(error.contains("--show-generation") && error.contains("--watch"), error);
    }

    private static void publish(String backends, long generation, Path ring) throws Exception {
        RingBuilder.of(BackendList.parse("test", backends))
                .generation(generation)
                .build(ring);
    }

    /** The address each key gets from the file now at {@code ring}, read with the library (v1: nginx's form). */
    private static List<String> expected(Path ring, List<String> keys) throws Exception {
        try (RingStore store = RingStore.open(ring)) {
            Ring r = store.ring(Set.of());
            List<String> out = new ArrayList<>();
            for (String k : keys) {
                out.add(store.backend(r.lookup(k.getBytes(StandardCharsets.UTF_8)))
                        .upstreamAddress());
            }
            return out;
        }
    }

    private static List<String> answerLines(List<String> keys, List<String> addresses, long generation) {
        List<String> lines = new ArrayList<>();
        for (int k = 0; k < keys.size(); k++) {
            lines.add(keys.get(k) + "\t" + addresses.get(k) + "\t" + generation);
        }
        return lines;
    }

    /** Writes the keys and collects one answer line per key. */
    private static List<String> ask(OutputStream stdin, LineQueue stdout, List<String> keys) throws Exception {
        stdin.write((String.join("\n", keys) + "\n").getBytes(StandardCharsets.UTF_8));
        stdin.flush();
        List<String> lines = new ArrayList<>();
        for (int k = 0; k < keys.size(); k++) {
            lines.add(stdout.next());
        }
        return lines;
    }

    /**
     * Asks for {@code key} until the answer comes from {@code generation}; every answer before must be
     * the old one, and the new one must carry the new address.
     */
    private static void awaitGeneration(
            OutputStream stdin, LineQueue stdout, String key, long generation, String oldAddress, String newAddress)
            throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            String line = ask(stdin, stdout, List.of(key)).getFirst();
            if (line.equals(key + "\t" + newAddress + "\t" + generation)) {
                return;
            }
            assertEquals(
                    key + "\t" + oldAddress + "\t" + (generation - 1),
                    line,
                    "until the switch, the old generation answers");
            assertTrue(System.nanoTime() < deadline, "generation " + generation + " was not picked up within 10 s");
            Thread.sleep(20);
        }
    }

    /** {@code ringstore lookup RING --watch [extra]} run on a thread, fed through {@code stdin}. */
    private record Watch(
            PipedOutputStream stdin, LineQueue stdout, ByteArrayOutputStream stderr, AtomicInteger exit, Thread cli) {
        static Watch start(Path ring, String... extra) throws IOException {
            PipedOutputStream stdin = new PipedOutputStream();
            PipedInputStream in = new PipedInputStream(stdin, 1 << 16);
            LineQueue stdout = new LineQueue();
            ByteArrayOutputStream stderr = new ByteArrayOutputStream();
            AtomicInteger exit = new AtomicInteger(-1);
            List<String> args = new ArrayList<>(List.of("lookup", ring.toString(), "--watch"));
            args.addAll(List.of(extra));
            Thread cli = new Thread(
                    () -> {
                        try (PrintStream o = new PrintStream(stdout, true, StandardCharsets.UTF_8);
                                PrintStream e = new PrintStream(stderr, true, StandardCharsets.UTF_8)) {
                            exit.set(Main.run(args.toArray(String[]::new), in, o, e));
                        }
                    },
                    "ringstore lookup --watch");
            cli.start();
            return new Watch(stdin, stdout, stderr, exit, cli);
        }
    }

    /** An output stream that hands out complete lines (without the line end) as they are written. */
    private static final class LineQueue extends OutputStream {
        private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        private final ByteArrayOutputStream partial = new ByteArrayOutputStream();

        @Override
        public synchronized void write(int b) {
            if (b == '\n') {
                lines.add(partial.toString(StandardCharsets.UTF_8));
                partial.reset();
            } else {
                partial.write(b);
            }
        }

        @Override
        public synchronized void write(byte[] b, int off, int len) {
            for (int i = off; i < off + len; i++) {
                write(b[i]);
            }
        }

        String next() throws InterruptedException {
            String line = lines.poll(10, TimeUnit.SECONDS);
            assertNotNull(line, "no answer within 10 s");
            return line;
        }

        synchronized boolean isEmpty() {
            return lines.isEmpty() && partial.size() == 0;
        }

        @Override
        public void close() throws IOException {
            // the command's PrintStream closes it; lines stay readable
        }
    }
}
