package io.ringstore.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.ringstore.Ring;
import io.ringstore.RingStore;
import io.ringstore.builder.BackendList;
import io.ringstore.builder.RingBuilder;
import java.io.OutputStream;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code lookup --watch} on a file rewritten in place, which the README forbids and people do
 * ({@code cp b.ring fleet.ring}): the serving mapping loses its pages, and every lookup faults (SIGBUS,
 * an {@code InternalError} to Java). In a child JVM, so that the fault is a real one: the command says
 * so in one line, answers no key it cannot answer, keeps reading, and answers from the next good file
 * published by rename; no trace, and exit 1 at the end for the keys left unanswered.
 */
@Tag("process")
class CliWatchRewriteTest {
    private static final String PREFIX = "ringstore lookup: ";

    @TempDir
    Path dir;

    @Test
    void aFileTruncatedInPlaceIsReportedOnceAndTheNextGoodFileServes() throws Exception {
        assumeTrue(
                System.getProperty("os.name").startsWith("Linux"),
                "SIGBUS on a truncated mapping is Linux's behaviour");
        Path ring = dir.resolve("fleet.ring");
        publish(ring, 1, "10.0.1");
        List<String> keys = new ArrayList<>();
        for (int k = 0; k < 50; k++) {
            keys.add("/rewrite/" + k);
        }
        assertTimeoutPreemptively(Duration.ofSeconds(120), () -> {
            try (ChildCli child =
                    ChildCli.start("C.UTF-8", "lookup \"$1\" --watch --show-generation", ring.toString())) {
                assertEquals(expected(ring, keys, 1), ask(child, keys), "generation 1 answers");

                try (FileChannel ch = FileChannel.open(ring, StandardOpenOption.WRITE)) {
                    ch.truncate(0); // what cp does first to the file it overwrites
                }
                send(child.stdin(), keys);
                child.awaitStderr(PREFIX, 30_000);
                assertEquals(null, child.nextLine(500), "no answer from a mapping without pages");

                publish(ring, 2, "10.0.2");
                List<String> second = expected(ring, keys, 2);
                awaitAnswer(child, keys.getFirst(), second.getFirst());
                assertEquals(second, ask(child, keys), "generation 2 answers every key");

                int exit = child.exit();
                String stderr = child.stderr();
                System.out.println("the child's stderr:\n" + stderr);
                assertEquals(Main.FAILED, exit, stderr);
                List<String> errorLines =
                        stderr.lines().filter(l -> l.startsWith(PREFIX)).toList();
                assertEquals(1, errorLines.size(), () -> "one error line:\n" + stderr);
                assertTrue(errorLines.getFirst().contains("rewritten in place"), errorLines.getFirst());
                assertFalse(
                        stderr.contains("\tat ") || stderr.contains("InternalError") || stderr.contains("Exception"),
                        () -> "no trace:\n" + stderr);
            }
        });
    }

    /** Builds {@code count} backends in {@code subnet} with generation {@code generation}, published by rename. */
    private static void publish(Path ring, long generation, String subnet) throws Exception {
        StringBuilder text = new StringBuilder();
        for (int i = 1; i <= 64; i++) {
            text.append("server ").append(subnet).append('.').append(i).append(":80\n");
        }
        RingBuilder.of(BackendList.parse("test", text.toString()))
                .generation(generation)
                .build(ring);
    }

    private static List<String> expected(Path ring, List<String> keys, long generation) throws Exception {
        try (RingStore store = RingStore.open(ring)) {
            Ring r = store.ring(Set.of());
            List<String> lines = new ArrayList<>();
            for (String k : keys) {
                lines.add(k + "\t"
                        + store.backend(r.lookup(k.getBytes(StandardCharsets.UTF_8)))
                                .upstreamAddress() + "\t" + generation);
            }
            return lines;
        }
    }

    private static void send(OutputStream stdin, List<String> keys) throws Exception {
        stdin.write((String.join("\n", keys) + "\n").getBytes(StandardCharsets.UTF_8));
        stdin.flush();
    }

    private static List<String> ask(ChildCli child, List<String> keys) throws Exception {
        send(child.stdin(), keys);
        List<String> lines = new ArrayList<>();
        for (int k = 0; k < keys.size(); k++) {
            byte[] line = child.nextLine(30_000);
            assertTrue(line != null, () -> "no answer; stderr:\n" + child.stderr());
            lines.add(new String(line, StandardCharsets.UTF_8));
        }
        return lines;
    }

    /** Asks {@code key} until it is answered (the watcher has switched); the first answer must be {@code expected}. */
    private static void awaitAnswer(ChildCli child, String key, String expected) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            send(child.stdin(), List.of(key));
            byte[] line = child.nextLine(300);
            if (line != null) {
                assertEquals(expected, new String(line, StandardCharsets.UTF_8), "the first answer after the fault");
                return;
            }
            assertTrue(System.nanoTime() < deadline, () -> "no answer within 30 s of a good file:\n" + child.stderr());
        }
    }
}
