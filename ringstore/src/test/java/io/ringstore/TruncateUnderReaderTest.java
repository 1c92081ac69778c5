package io.ringstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.ringstore.builder.BackendList;
import io.ringstore.builder.RingBuilder;
import io.ringstore.live.RingRouter;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What happens on this JDK when a mapped ring file is truncated in place under a reader (which
 * FORMAT.md forbids, and people do anyway): the read of a page past the new end raises SIGBUS. The
 * experiment runs in a child JVM so that a crash cannot take the test JVM with it; it must survive,
 * lookups must fail with the JVM's {@code InternalError} and {@link RingStore#verify()} with a
 * {@link RingFileException} saying the file shrank.
 */
@Tag("slow")
class TruncateUnderReaderTest {
    private static final int LOOKUPS = 200_000; // enough for the lookup path to be JIT-compiled while faulting
    private static final String FAULT = "a fault occurred in an unsafe memory access operation";

    @TempDir
    Path dir;

    @Test
    void truncatingAMappedFileFailsLookupsAndVerifyWithoutCrashingTheJvm() throws Exception {
        assumeTrue(System.getProperty("os.name").startsWith("Linux"), "the SIGBUS behaviour examined is Linux's");
        Path ring = dir.resolve("shrinking.ring");
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < 2048; i++) {
            text.append("server 127.0.")
                    .append(i / 250)
                    .append('.')
                    .append(1 + i % 250)
                    .append(":80\n");
        }
        RingBuilder.of(BackendList.parse("generated", text.toString())).build(ring);
        Path crashDir = Files.createDirectory(dir.resolve("crash"));

        assertTimeoutPreemptively(Duration.ofSeconds(120), () -> {
            MultiProcessTest.ChildJvm child = MultiProcessTest.ChildJvm.start(
                    Child.class,
                    List.of("-XX:ErrorFile=" + crashDir.resolve("hs_err_pid%p.log"), "-XX:-CreateCoredumpOnCrash"),
                    ring.toString());
            try {
                List<String> lines = child.remainingLines();
                int exit = child.waitFor();
                try (Stream<Path> files = Files.list(crashDir)) {
                    List<Path> crashes = files.toList();
                    assertTrue(
                            crashes.isEmpty(),
                            () -> "the child JVM crashed: " + crashes + "\n" + read(crashes.getFirst()));
                }
                String report = String.join("\n", lines) + "\nstderr:\n" + child.stderr();
                System.out.println("child report:\n" + report);
                assertEquals(0, exit, () -> "the child JVM must survive the truncation:\n" + report);
                Map<String, String> outcome = new LinkedHashMap<>();
                for (String line : lines) {
                    int space = line.indexOf(' ');
                    outcome.put(
                            space < 0 ? line : line.substring(0, space), space < 0 ? "" : line.substring(space + 1));
                }
                assertEquals("ok", outcome.get("BEFORE"), report);
                for (String reader : List.of("WATCHED", "PLAIN")) {
                    String result = outcome.get(reader);
                    assertEquals(
                            "returned=0 thrown=" + LOOKUPS + " first=java.lang.InternalError: " + FAULT,
                            result,
                            reader + " lookups after the truncation:\n" + report);
                }
                String verify = outcome.get("VERIFY");
                assertTrue(
                        verify != null
                                && verify.startsWith(RingFileException.class.getName() + ": ")
                                && verify.contains("the file shrank while mapped"),
                        () -> "verify after the truncation:\n" + report);
                String watch = outcome.get("WATCH");
                assertTrue(
                        watch != null && watch.startsWith("switched=false ") && watch.contains("(truncated?)"),
                        () -> "the watcher must refuse the truncated file:\n" + report);
                assertTrue(outcome.containsKey("DONE"), report);
            } finally {
                child.process.destroyForcibly();
            }
        });
    }

    private static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.ISO_8859_1)
                    .lines()
                    .limit(40)
                    .reduce("", (a, b) -> a + b + "\n");
        } catch (Exception e) {
            return "(unreadable: " + e + ")";
        }
    }

    /**
     * Maps the ring twice (a watched, GC-managed store and a plain one), truncates the file in place to
     * one page, then reports each kind of access: {@code NAME outcome} per line.
     */
    static final class Child {
        public static void main(String[] args) throws Exception {
            Path ring = Path.of(args[0]);
            byte[][] keys = new byte[1024][];
            for (int k = 0; k < keys.length; k++) {
                keys[k] = ("/truncated/" + k).getBytes(StandardCharsets.US_ASCII);
            }
            try (RingRouter watched =
                            RingRouter.builder(ring).pollMillis(0).jmx(false).open();
                    RingStore plain = RingStore.open(ring)) {
                RingRouter.Route route = watched.route(Set.of());
                Lookup live = key -> {
                    Backend b = route.backend(key);
                    return b == null ? Ring.NO_BACKEND : b.index();
                };
                Ring plainRing = plain.ring(Set.of());
                boolean before = live.lookup(keys[0]) >= 0 && plainRing.lookup(keys[0]) == live.lookup(keys[0]);
                System.out.println("BEFORE " + (before ? "ok" : "wrong answers"));

                try (FileChannel ch = FileChannel.open(ring, StandardOpenOption.WRITE)) {
                    ch.truncate(4096); // the points start well after the first page
                }
                System.out.println("WATCHED " + lookups(keys, live::lookup));
                System.out.println("PLAIN " + lookups(keys, plainRing::lookup));
                try {
                    watched.current().verify();
                    System.out.println("VERIFY passed");
                } catch (Throwable t) {
                    System.out.println("VERIFY " + t.getClass().getName() + ": " + t.getMessage());
                }
                boolean switched = watched.checkNow();
                System.out.println("WATCH switched=" + switched + " lastError=" + watched.lastError());
            }
            System.out.println("DONE");
        }

        private interface Lookup {
            int lookup(byte[] key);
        }

        private static String lookups(byte[][] keys, Lookup lookup) {
            long returned = 0;
            long thrown = 0;
            String first = null;
            for (int i = 0; i < LOOKUPS; i++) {
                try {
                    lookup.lookup(keys[i % keys.length]);
                    returned++;
                } catch (Throwable t) {
                    thrown++;
                    if (first == null) {
                        first = t.getClass().getName() + ": " + t.getMessage();
                    }
                }
            }
            return "returned=" + returned + " thrown=" + thrown + " first=" + first;
        }
    }
}
