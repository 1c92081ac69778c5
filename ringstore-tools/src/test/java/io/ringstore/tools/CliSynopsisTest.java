package io.ringstore.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The synopsis lines in docs/cli.md's "Synopsis" are the CLI's contract: they must be exactly the lines the
 * option tables generate, so the two cannot drift. Also: {@code --help} and the usage after a wrong
 * argument show those same lines, and every option a help text lists is one the parser accepts.
 */
class CliSynopsisTest {
    @Test
    void cliPageShowsExactlyTheGeneratedSynopses() throws Exception {
        String repo = System.getProperty("ringstore.repo");
        assertNotNull(repo, "system property ringstore.repo (the repository root) is not set");
        List<String> page = Files.readAllLines(Path.of(repo, "docs", "cli.md"), StandardCharsets.UTF_8);
        int heading = page.indexOf("## Synopsis");
        assertTrue(heading >= 0, "docs/cli.md has no '## Synopsis' section");
        int open = page.subList(heading, page.size()).indexOf("```") + heading;
        int close = page.subList(open + 1, page.size()).indexOf("```") + open + 1;
        assertTrue(open > heading && close > open, "no code block in docs/cli.md's 'Synopsis'");
        assertEquals(page.subList(open + 1, close), Main.synopses());
    }

    @Test
    void helpAndUsageErrorsShowTheGeneratedSynopses() {
        for (Command c : Main.commands()) {
            List<String> expected = new ArrayList<>();
            c.synopses().forEach(s -> expected.add("ringstore " + c.name() + " " + s));
            String help = CliRun.run(c.name(), "--help").assertOk().out();
            List<String> lines = help.lines().toList();
            for (int i = 0; i < expected.size(); i++) {
                assertEquals((i == 0 ? "usage: " : "       ") + expected.get(i), lines.get(i), help);
            }
            assertEquals("", lines.get(expected.size()), help);
            String usage = CliRun.run(c.name(), "--no-such-option")
                    .stderr()
                    .lines()
                    .toList()
                    .get(1);
            for (String s : expected) {
                assertTrue(usage.contains(s), () -> usage + " lacks " + s);
            }
        }
    }

    @Test
    void everyOptionInHelpIsAcceptedByTheParser() throws Exception {
        for (Command c : Main.commands()) {
            for (Option o : c.options()) {
                for (String name : o.names()) {
                    assertTrue(c.help().contains(name), () -> c.name() + " --help lacks " + name);
                    List<String> argv = new ArrayList<>(List.of(name));
                    if (o.takesValue()) {
                        argv.add("x");
                    }
                    Args args = Args.parse(argv.toArray(String[]::new), c.options());
                    assertTrue(args.has(o.name()), () -> c.name() + " " + argv);
                }
            }
        }
    }

    @Test
    void eachCommandIsFoundByItsOwnName() {
        assertEquals(Main.NAMES, Main.commands().stream().map(Command::name).toList());
        for (String name : Main.NAMES) {
            assertEquals(name, Main.command(name).name());
        }
        assertEquals(null, Main.command("nosuch"));
        String err = CliRun.run("nosuch").stderr();
        assertTrue(err.contains("commands: " + String.join(", ", Main.NAMES)), err);
    }

    @Test
    void helpTextsLineUpInOneColumn() {
        for (Command c : Main.commands()) {
            for (String line : c.help().lines().toList()) {
                if (line.startsWith("  -")) {
                    assertTrue(
                            line.length() > 24 && line.charAt(23) == ' ' && line.charAt(24) != ' ',
                            () -> c.name() + ": " + line);
                }
            }
        }
    }
}
