package io.ringstore.tools;

import static io.ringstore.tools.CliRun.backends;
import static io.ringstore.tools.CliRun.build;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * File names the JVM cannot take as they were passed: a non-ASCII name under {@code LC_ALL=POSIX}
 * (decoded as U+FFFD, which the locale's charset cannot encode back), and bytes that are not UTF-8
 * under a UTF-8 locale (decoded as U+FFFD, which encodes to other bytes: another file). Every command
 * refuses such a name in one line naming it, exit 1, and never opens or writes another file.
 */
@Tag("process")
class CliFileNameTest {
    @TempDir
    static Path dir;

    @BeforeAll
    static void files() throws Exception {
        Path conf = backends(dir, "fleet.conf", "server 127.0.0.1:80\nserver 127.0.0.2:80\n");
        build(conf, dir.resolve("fleet.ring"));
    }

    /** Runs {@code ringstore ARGUMENTS} (shell text; {@code $1} is the test directory) and returns its one error line. */
    private static String refused(String locale, String command, String arguments) throws Exception {
        try (ChildCli child = ChildCli.start(locale, command + " " + arguments, dir.toString())) {
            int exit = child.exit();
            String err = child.stderr();
            assertEquals(Main.FAILED, exit, () -> command + " " + arguments + " under " + locale + ": " + err);
            List<String> lines = err.lines().toList();
            assertEquals(1, lines.size(), () -> "one error line: " + err);
            assertTrue(lines.getFirst().startsWith("ringstore " + command + ": "), err);
            assertFalse(err.contains("internal error") || err.contains("Exception"), err);
            return lines.getFirst();
        }
    }

    private static final String CAFE = "\"$1/$(printf 'caf\\303\\251')\"";

    @Test
    void aNonAsciiNameUnderPosixIsOneLineInEveryCommand() throws Exception {
        List<String[]> runs = List.of(
                new String[] {"verify", CAFE},
                new String[] {"dump", CAFE},
                new String[] {"lookup", CAFE + " key"},
                new String[] {"lookup", "--watch " + CAFE},
                new String[] {"diff", CAFE + " \"$1/fleet.ring\""},
                new String[] {"diff", "\"$1/fleet.ring\" " + CAFE},
                new String[] {"analyze", CAFE},
                new String[] {"analyze", "\"$1/fleet.conf\" --csv " + CAFE},
                new String[] {"analyze", "--backends 10 --points 10..20 --svg " + CAFE},
                new String[] {"recommend", CAFE + " --target-cv 2%"},
                new String[] {"build", CAFE + " -o \"$1/out.ring\""},
                new String[] {"build", "\"$1/fleet.conf\" -o " + CAFE},
                new String[] {"state", CAFE});
        for (String[] run : runs) {
            String line = refused("POSIX", run[0], run[1]);
            assertTrue(
                    line.contains("caf\\xc3\\xa9") && line.contains("US-ASCII") && line.contains("UTF-8 locale"),
                    () -> String.join(" ", run) + ": " + line);
        }
        assertFalse(Files.exists(dir.resolve("out.ring")));
    }

    /** Under UTF-8, {@code -o $'x\xff.ring'} used to write {@code x\uFFFD.ring}: another name. */
    @Test
    void anInvalidUtf8OutputNameIsRefusedNotWrittenAsAnother() throws Exception {
        String line = refused("C.UTF-8", "build", "\"$1/fleet.conf\" -o \"$1/$(printf 'x\\377.ring')\"");
        assertTrue(line.contains("x\\xff.ring") && line.contains("UTF-8"), line);
        assertEquals(List.of(), namesWithReplacementCharacter());
    }

    /** A file whose name is U+FFFD's own bytes is not what an invalid name opens. */
    @Test
    void anInvalidUtf8InputNameDoesNotOpenTheFileNamedByItsReplacement() throws Exception {
        Path replacement = dir.resolve("y\uFFFD.ring");
        Files.copy(dir.resolve("fleet.ring"), replacement);
        try {
            String line = refused("C.UTF-8", "verify", "\"$1/$(printf 'y\\377.ring')\"");
            assertTrue(line.contains("y\\xff.ring"), line);
        } finally {
            Files.delete(replacement);
        }
    }

    private static List<Path> namesWithReplacementCharacter() throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.getFileName().toString().contains("\uFFFD"))
                    .toList();
        }
    }
}
