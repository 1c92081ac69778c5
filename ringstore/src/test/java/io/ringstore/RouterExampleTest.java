package io.ringstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.family.RingVersion;
import io.ringstore.live.RingRouter;
import java.io.File;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.spi.ToolProvider;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's router example ({@code examples/router-embedding/RouterExample.java}) compiles against the
 * library without a warning, runs in a JVM of its own, and does what it prints: the rollout policy
 * applied, the same answer from {@code byte[]} and a direct {@code ByteBuffer}, the switch to the
 * republished file, and every failover answer equal to {@link Ring#select} on the file it left
 * behind (nginx's walk of 21 points, skipping down and unhealthy servers), including the give-up.
 */
@Tag("process")
class RouterExampleTest {
    private static final Path EXAMPLE =
            Path.of(System.getProperty("ringstore.repo", "..")).resolve("examples/router-embedding/RouterExample.java");
    private static final Pattern LOOKUP =
            Pattern.compile("lookup (\\S+) (\\S+) -> (\\S+) \\(direct ByteBuffer: (\\S+)\\)( down)?");
    private static final Pattern FAILOVER = Pattern.compile("failover (\\S+) (\\S+) unhealthy \\[(.*)] -> (.+)");
    private static final String GAVE_UP = "none in 21 points: round robin";

    @TempDir
    Path dir;

    @Test
    void compilesRunsAndAnswersAsRingSelect() throws Exception {
        Path classes = Files.createDirectories(dir.resolve("classes"));
        String libraryClasses = Path.of(RingRouter.class
                        .getProtectionDomain()
                        .getCodeSource()
                        .getLocation()
                        .toURI())
                .toString();
        // java.util.spi.ToolProvider (java.base), not javax.tools: the tests are compiled into module
        // io.ringstore, which does not read java.compiler.
        ToolProvider javac =
                ToolProvider.findFirst("javac").orElseThrow(() -> new AssertionError("no javac (a JRE, not a JDK?)"));
        StringWriter diagnostics = new StringWriter();
        PrintWriter print = new PrintWriter(diagnostics, true);
        int compiled = javac.run(
                print,
                print,
                "-Xlint:all",
                "-Werror",
                "-cp",
                libraryClasses,
                "-d",
                classes.toString(),
                EXAMPLE.toString());
        assertEquals(0, compiled, "javac " + EXAMPLE + ":\n" + diagnostics);

        Path work = Files.createDirectories(dir.resolve("work"));
        Path stderr = dir.resolve("stderr.txt");
        Process child = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-Xmx64m",
                        "-cp",
                        libraryClasses + File.pathSeparator + classes,
                        "RouterExample",
                        work.toString())
                .redirectError(stderr.toFile())
                .start();
        String out = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(child.waitFor(60, TimeUnit.SECONDS), "the example did not finish");
        assertEquals(0, child.exitValue(), "exit code; stdout:\n" + out + "\nstderr:\n" + Files.readString(stderr));
        List<String> lines = out.lines().toList();

        assertTrue(
                lines.contains(
                        "listener: policy 0.00 % in all data centres (here: -) -> 50.00 % in all data centres (here: ams)"),
                out);
        int switched = lines.indexOf("listener: switched generation 1 -> 2");
        assertTrue(switched > 0, "no switch in:\n" + out);
        assertTrue(
                lines.getLast().startsWith("counters: ") && lines.getLast().endsWith("; generation 2, 1 switch"), out);

        int lookups = 0;
        boolean sawDown = false;
        for (String line : lines) {
            Matcher m = LOOKUP.matcher(line);
            if (m.matches()) {
                lookups++;
                assertEquals(m.group(3), m.group(4), "byte[] and ByteBuffer disagree: " + line);
                sawDown |= m.group(5) != null;
            }
        }
        assertEquals(5, lookups, out);
        assertTrue(sawDown, "no key on the down server before the switch:\n" + out);

        // Every failover line comes after the switch: check it on the file the example left, generation 2.
        int failovers = 0;
        boolean skippedDown = false;
        try (RingStore store = RingStore.open(work.resolve("fleet.ring"))) {
            assertEquals(2, store.generation());
            for (int i = switched; i < lines.size(); i++) {
                Matcher m = FAILOVER.matcher(lines.get(i));
                if (!m.matches()) {
                    continue;
                }
                failovers++;
                byte[] key = m.group(1).getBytes(StandardCharsets.UTF_8);
                Ring ring = store.ring(Set.of("eu"), version(store, m.group(2)));
                Set<String> unhealthy = m.group(3).isEmpty()
                        ? Set.of()
                        : Set.copyOf(Arrays.asList(m.group(3).split(", ")));
                int chosen = ring.select(
                        ring.hash(key),
                        Ring.NGINX_MAX_POINTS,
                        b -> !store.backend(b).down()
                                && !unhealthy.contains(store.backend(b).address()));
                assertEquals(
                        chosen == Ring.GAVE_UP ? GAVE_UP : store.backend(chosen).address(), m.group(4), lines.get(i));
                skippedDown |=
                        unhealthy.isEmpty() && store.backend(ring.lookup(key)).down();
            }
            assertTrue(lines.stream().anyMatch(l -> l.endsWith("-> " + GAVE_UP)), "no give-up shown:\n" + out);
        }
        assertEquals(7, failovers, out);
        assertTrue(skippedDown, "no failover past a server marked down:\n" + out);
        assertFalse(lines.stream().anyMatch(l -> l.startsWith("listener: refused")), out);
    }

    private static RingVersion version(RingStore store, String name) {
        return store.versions().stream()
                .filter(v -> v.toString().equals(name))
                .findFirst()
                .orElseThrow(() -> new AssertionError("version " + name + " is not in " + store.versions()));
    }
}
