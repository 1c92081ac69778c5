package io.ringstore.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The documented walk-throughs work as written: every {@code bin/ringstore} line in the shell blocks of
 * README.md's "Quick start", docs/migration.md ("Migrating between ring versions") and docs/cli.md's
 * "The distribution" runs in-process, in order, and exits 0; and no page (README.md, FORMAT.md,
 * BENCHMARKS.md, docs/*.md) has a {@code bin/ringstore} line in a shell block outside those sections.
 * Files a page names under {@code examples/} are the repository's; the files a command writes
 * ({@code *.ring}) go to a temporary directory. A {@code < FILE} becomes stdin; a trailing
 * {@code | less} is dropped. The point multiple the migration builds with is the one its
 * {@code recommend} line answers.
 */
class ReadmeWalkthroughTest {
    private static final Pattern POINT_MULTIPLE = Pattern.compile("--point-multiple (\\d+)");

    @TempDir
    Path dir;

    /** The sections whose commands run, as page and heading. */
    private static final List<List<String>> WALKS = List.of(
            List.of("README.md", "## Quick start"),
            List.of("docs/migration.md", "# Migrating between ring versions"),
            List.of("docs/migration.md", "# Migrating from a memcached client's ring"),
            List.of("docs/cli.md", "## The distribution"));

    @Test
    void quickStartRunsAsWritten() throws Exception {
        List<String> commands = commands("README.md", "## Quick start");
        assertTrue(
                commands.stream().anyMatch(c -> c.contains("< examples/keys.txt")),
                "Then try reads examples/keys.txt: " + commands);
        commands.forEach(this::run);
    }

    @Test
    void migrationRunsAsWrittenWithTheRecommendedPointMultiple() throws Exception {
        List<String> commands = commands("docs/migration.md", "# Migrating between ring versions");
        String recommend = commands.stream()
                .filter(c -> c.startsWith("bin/ringstore recommend "))
                .findFirst()
                .orElseThrow(
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

    /** The memcached walk-through runs as written, and prints the figures the page quotes. */
    @Test
    void memcachedMigrationRunsAsWrittenWithTheFiguresItQuotes() throws Exception {
        List<String> commands = commands("docs/migration.md", "# Migrating from a memcached client's ring");
        String page = Files.readString(repo().resolve("docs/migration.md"), StandardCharsets.UTF_8);
        for (String c : commands) {
            CliRun r = run(c);
            if (c.contains("diff ")) {
                String moved = r.field("moved_fraction");
                assertTrue(
                        page.contains("moved_fraction: " + moved),
                        () -> "the page quotes what " + c + " prints: moved_fraction: " + moved);
            }
        }
    }

    @Test
    void distributionRunsAsWritten() throws Exception {
        List<String> commands = commands("docs/cli.md", "## The distribution");
        assertTrue(
                commands.stream().anyMatch(c -> c.equals("bin/ringstore --version")),
                "the distribution shows --version: " + commands);
        commands.forEach(this::run);
    }

    @Test
    void everyDocumentedCommandIsInAWalkThrough() throws Exception {
        List<String> walked = new ArrayList<>();
        for (List<String> walk : WALKS) {
            commands(walk.get(0), walk.get(1)).forEach(c -> walked.add(walk.get(0) + ": " + c));
        }
        List<Path> pages = new ArrayList<>(
                List.of(repo().resolve("README.md"), repo().resolve("FORMAT.md"), repo().resolve("BENCHMARKS.md")));
        try (var docs = Files.list(repo().resolve("docs"))) {
            docs.filter(f -> f.toString().endsWith(".md")).sorted().forEach(pages::add);
        }
        for (Path page : pages) {
            String name = repo().relativize(page).toString();
            for (String c : shellCommands(Files.readAllLines(page, StandardCharsets.UTF_8))) {
                assertTrue(
                        walked.contains(name + ": " + c), () -> name + " shows a command no walk-through runs: " + c);
            }
        }
    }

    private CliRun run(String line) {
        String command = line.replaceFirst("\\s+#.*$", "").replaceFirst("\\s*\\|\\s*less$", "");
        assertFalse(command.contains("|"), () -> "a pipe the test cannot run: " + line);
        byte[] stdin = new byte[0];
        int redirect = command.indexOf(" < ");
        try {
            if (redirect >= 0) {
                stdin = Files.readAllBytes(
                        repoFile(command.substring(redirect + 3).trim()));
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
        assertTrue(Files.isRegularFile(p), () -> "a walk-through names " + relative + ", which the repository lacks");
        return p;
    }

    /**
     * The {@code bin/ringstore} lines of the {@code ```sh} blocks in {@code page}'s section under
     * {@code heading} (up to the next heading of the same or a higher level; a {@code #} line in a code
     * block is not a heading).
     */
    private static List<String> commands(String page, String heading) throws IOException {
        List<String> lines = Files.readAllLines(repo().resolve(page), StandardCharsets.UTF_8);
        int start = lines.indexOf(heading);
        assertTrue(start >= 0, page + " has no '" + heading + "'");
        int level = heading.indexOf(' ');
        int end = start + 1;
        boolean inCode = false;
        for (; end < lines.size(); end++) {
            String line = lines.get(end);
            if (line.startsWith("```")) {
                inCode = !inCode;
            } else if (!inCode && isHeadingUpTo(line, level)) {
                break;
            }
        }
        List<String> commands = shellCommands(lines.subList(start + 1, end));
        assertFalse(commands.isEmpty(), "no bin/ringstore command under " + page + "'s '" + heading + "'");
        return commands;
    }

    /** Whether {@code line} is a heading of level 1 to {@code level} ({@code #} to that many). */
    private static boolean isHeadingUpTo(String line, int level) {
        int hashes = 0;
        while (hashes < line.length() && line.charAt(hashes) == '#') {
            hashes++;
        }
        return hashes >= 1 && hashes <= level && line.length() > hashes && line.charAt(hashes) == ' ';
    }

    /** The {@code bin/ringstore} lines of the {@code ```sh} blocks in {@code lines}. */
    private static List<String> shellCommands(List<String> lines) {
        List<String> commands = new ArrayList<>();
        boolean inShell = false;
        for (String line : lines) {
            if (line.startsWith("```")) {
                inShell = !inShell && line.equals("```sh");
            } else if (inShell && line.startsWith("bin/ringstore ")) {
                commands.add(line);
            }
        }
        return commands;
    }

    private static Path repo() {
        String repo = System.getProperty("ringstore.repo");
        assertNotNull(repo, "system property ringstore.repo (the repository root) is not set");
        return Path.of(repo);
    }
}
