package io.ringstore.tools;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The README's walk-throughs work as written: every {@code bin/ringstore} line in the shell blocks of
 * "Quick start" and "Migrating between ring versions" runs in-process, in order, and exits 0. Files the
 * README names under {@code examples/} are the repository's; the files a command writes ({@code *.ring})
 * go to a temporary directory. A {@code < FILE} becomes stdin; a trailing {@code | less} is dropped.
 * The point multiple the migration builds with is the one its {@code recommend} line answers.
 */
class ReadmeWalkthroughTest {
    private static final Pattern POINT_MULTIPLE = Pattern.compile("--point-multiple (\\d+)");

    @TempDir
    Path dir;

    @Test
    void quickStartRunsAsWritten() throws Exception {
        List<String> commands = commands("## Quick start");
        assertTrue(commands.stream().anyMatch(c -> c.contains("< examples/keys.txt")), "Then try reads examples/keys.txt: " + commands);
        commands.forEach(this::run);
    }

    @Test
    void migrationRunsAsWrittenWithTheRecommendedPointMultiple() throws Exception {
        List<String> commands = commands("## Migrating between ring versions");
        String recommend = commands.stream().filter(c -> c.startsWith("bin/ringstore recommend ")).findFirst().orElseThrow(
                () -> new AssertionError("the migration walk-through chooses K with recommend: " + commands));
        String answer = run(recommend).field("point_multiple");
        for (String c : commands) {
            Matcher m = POINT_MULTIPLE.matcher(c);
            if (m.find()) {
                assertEquals(answer, m.group(1), "the K built is the K recommended: " + c);
            }
            if (c.contains("v2:")) {
                assertTrue(c.contains("v2:" + answer), () -> "the K compared is the K recommended: " + c);
            }
            run(c);
        }
    }

    private CliRun run(String line) {
        String command = line.replaceFirst("\\s+#.*$", "").replaceFirst("\\s*\\|\\s*less$", "");
        assertFalse(command.contains("|"), () -> "a pipe the test cannot run: " + line);
        byte[] stdin = new byte[0];
        int redirect = command.indexOf(" < ");
        try {
            if (redirect >= 0) {
                stdin = Files.readAllBytes(repoFile(command.substring(redirect + 3).trim()));
                command = command.substring(0, redirect);
            }
        } catch (IOException e) {
            throw new AssertionError(line, e);
        }
        List<String> words = new ArrayList<>(Arrays.asList(command.trim().split("\\s+")));
        assertEquals("bin/ringstore", words.removeFirst(), line);
        String[] args = words.stream().map(this::path).toArray(String[]::new);
        CliRun r = CliRun.runWithInput(stdin, args);
        assertEquals(Main.OK, r.exit(), () -> line + "\nstderr:\n" + r.stderr() + "stdout:\n" + r.out());
        r.assertNoStackTrace();
        return r;
    }

    private String path(String word) {
        if (word.startsWith("examples/")) {
            return repoFile(word).toString();
        }
        return word.endsWith(".ring") ? dir.resolve(word).toString() : word;
    }

    private static Path repoFile(String relative) {
        Path p = repo().resolve(relative);
        assertTrue(Files.isRegularFile(p), () -> "the README names " + relative + ", which the repository lacks");
        return p;
    }

    /** The {@code bin/ringstore} lines of the {@code ```sh} blocks in the README section under {@code heading}. */
    private static List<String> commands(String heading) throws IOException {
        List<String> readme = Files.readAllLines(repo().resolve("README.md"), StandardCharsets.UTF_8);
        int start = readme.indexOf(heading);
        assertTrue(start >= 0, "README.md has no '" + heading + "'");
        List<String> commands = new ArrayList<>();
        boolean inShell = false;
        for (String line : readme.subList(start + 1, readme.size())) {
            if (line.startsWith("## ")) {
                break;
            }
            if (line.startsWith("```")) {
                inShell = !inShell && line.equals("```sh");
            } else if (inShell && line.startsWith("bin/ringstore ")) {
                commands.add(line);
            }
        }
        assertFalse(commands.isEmpty(), "no bin/ringstore command under '" + heading + "'");
        return commands;
    }

    private static Path repo() {
        String repo = System.getProperty("ringstore.repo");
        assertNotNull(repo, "system property ringstore.repo (the repository root) is not set");
        return Path.of(repo);
    }
}
