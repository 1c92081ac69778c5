package io.ringstore.tools;

import static io.ringstore.tools.CliRun.backends;
import static io.ringstore.tools.CliRun.build;
import static io.ringstore.tools.CliRun.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CliArgsTest {
    private static final List<String> COMMANDS = List.of("build", "lookup", "dump", "verify");

    @Test
    void helpForEveryCommand() {
        for (String command : COMMANDS) {
            for (String[] args : List.of(
                    new String[] {command, "--help"},
                    new String[] {command, "-h"},
                    new String[] {"help", command},
                    new String[] {"--help", command})) {
                CliRun r = run(args).assertOk();
                assertTrue(
                        r.out().startsWith("usage: ringstore " + command + " "),
                        () -> String.join(" ", args) + ":\n" + r.out());
                assertTrue(r.out().contains("exit codes"), r.out());
                assertEquals("", r.stderr(), String.join(" ", args));
            }
        }
    }

    /** A 100,000-character option value is quoted cut in the one error line, not echoed whole. */
    @Test
    void aHugeOptionValueIsCutInTheError() {
        String huge = "9".repeat(100_000);
        String line = run("dump", "x.ring", "--points", huge).assertError(Main.USAGE, "dump");
        assertTrue(line.length() < 400 && line.contains("(cut: 100000 characters in all)"), line);
        line = run("analyze", "--backends", "x".repeat(100_000), "--points", "10..20")
                .assertError(Main.USAGE, "analyze");
        assertTrue(line.length() < 400 && line.contains("(cut: 100000 characters in all)"), line);
    }

    /** A 100,000-character path is not echoed whole either: every error line is cut at a bound. */
    @Test
    void aHugePathIsCutInTheError() {
        String line = run("lookup", "p".repeat(100_000), "k").assertError(Main.FAILED, "lookup");
        assertTrue(
                line.length() < 1100 && line.contains("characters in all)"),
                line.length() + ": " + line.substring(0, 200));
    }

    /** An empty output path is named as such, not as ": is a directory". */
    @Test
    void anEmptyOutputPathIsNamed() {
        String line = run("analyze", "--backends", "10", "--points", "10..20", "--csv", "")
                .assertError(Main.FAILED, "analyze");
        assertTrue(line.contains("the output path is empty"), line);
    }

    @Test
    void helpWinsOverOtherArguments() {
        // --help anywhere prints help and does nothing else, even with arguments that would be wrong.
        CliRun r = run("build", "no-such-file", "--help").assertOk();
        assertTrue(r.out().startsWith("usage: ringstore build "), r.out());
        r = run("lookup", "--help", "no-such-file", "key").assertOk();
        assertTrue(r.out().startsWith("usage: ringstore lookup "), r.out());
    }

    /**
     * Help asked of help ({@code --help --help}, {@code help help}, {@code -h -h}, any mix) is the
     * top-level help, once: it used to call itself until the stack overflowed.
     */
    @Test
    void helpOfHelpIsTheTopLevelHelp() {
        List<String> words = List.of("--help", "-h", "help");
        for (String first : words) {
            for (String second : words) {
                CliRun r = run(first, second).assertOk();
                assertTrue(r.out().startsWith("usage: ringstore "), () -> first + " " + second + ":\n" + r.out());
                assertTrue(r.out().contains("commands:"), () -> first + " " + second + ":\n" + r.out());
                assertEquals("", r.stderr(), first + " " + second);
            }
        }
        CliRun r = run("help", "help", "help").assertOk();
        assertTrue(r.out().contains("commands:"), r.out());
        String line = run("help", "no-such-command").assertError(Main.USAGE, null);
        assertTrue(line.contains("unknown command 'no-such-command'"), line);
    }

    @Test
    void topLevelHelpListsEveryCommand() {
        CliRun r = run("--help").assertOk();
        assertTrue(r.out().startsWith("usage: ringstore "), r.out());
        for (String command : COMMANDS) {
            assertTrue(r.out().contains(command), () -> command + " missing from:\n" + r.out());
        }
        assertEquals("", r.stderr());
    }

    @Test
    void noArgumentsIsAUsageError() {
        CliRun r = run();
        assertEquals(Main.USAGE, r.exit());
        assertEquals(0, r.stdout().length, "usage goes to stderr when it is an error");
        assertTrue(r.stderr().contains("usage: ringstore"), r.stderr());
        r.assertNoStackTrace();
    }

    @Test
    void unknownCommandIsAUsageError() {
        for (String command : List.of("biuld", "BUILD", "", "-x", "--verbose")) {
            CliRun r = run(command, "x");
            String error = r.assertError(Main.USAGE, null);
            assertTrue(error.contains("'" + command + "'"), error);
            assertEquals(0, r.stdout().length);
        }
    }

    @Test
    void unknownOptionsAndMissingValuesAreUsageErrorsForEveryCommand(@TempDir Path dir) throws Exception {
        Path ring = dir.resolve("x.ring");
        build(backends(dir, "x.conf", "server 127.0.0.1:8080\nserver 127.0.0.2:8080\n"), ring);
        String file = ring.toString();
        for (String command : COMMANDS) {
            CliRun r = run(command, file, "--no-such-option");
            String error = r.assertError(Main.USAGE, command);
            assertTrue(error.contains("--no-such-option"), error);
            assertTrue(r.stderr().lines().anyMatch(l -> l.startsWith("usage: ringstore " + command)), r.stderr());
        }
        run("lookup", file, "--features").assertError(Main.USAGE, "lookup");
        run("lookup", file, "--algorithm").assertError(Main.USAGE, "lookup");
        run("lookup", file, "--features", "a", "--features", "b").assertError(Main.USAGE, "lookup");
        run("dump", file, "--points").assertError(Main.USAGE, "dump");
        run("build", file, "--generation").assertError(Main.USAGE, "build");
    }

    @Test
    void optionValuesMayBeJoinedWithEquals(@TempDir Path dir) throws Exception {
        Path input = backends(dir, "x.conf", "server 127.0.0.1:8080\nserver 127.0.0.2:8080\n");
        Path ring = dir.resolve("x.ring");
        CliRun r = run(
                        "build",
                        input.toString(),
                        "--output=" + ring,
                        "--algorithm=v2",
                        "--point-multiple=10",
                        "--generation=3")
                .assertOk();
        assertEquals("3", r.field("generation"));
        assertEquals("v2:10", r.field("versions"));
        CliRun a =
                run("lookup", ring.toString(), "--algorithm=v2:10", "/a", "/b").assertOk();
        CliRun b = run("lookup", ring.toString(), "--algorithm", "v2", "--point-multiple", "10", "/a", "/b")
                .assertOk();
        assertEquals(a.out(), b.out());
        assertEquals(2, a.outLines().size());
    }
}
