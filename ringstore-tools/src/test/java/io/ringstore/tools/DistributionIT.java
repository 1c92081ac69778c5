package io.ringstore.tools;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The CLI as a user installs it, run after {@code package}: {@code java -jar} on the built jar, and the
 * distribution unpacked into an empty directory far from the source tree, run through its
 * {@code bin/ringstore} with only a JDK.
 */
@Tag("process")
class DistributionIT {
    @Test
    void javaJarFindsTheLibraryItsManifestNames() throws Exception {
        Path jar = Programs.target().resolve("ringstore-tools.jar");
        Programs run = Programs.run(Programs.target(), Map.of(), List.of(Programs.jdk("java").toString(), "-jar", jar.toString(), "--version"))
                .assertOk("java -jar " + jar);
        assertEquals("ringstore " + Programs.version(), run.out().lines().findFirst().orElse(""), run.out());
        assertEquals("", run.err());
    }

    @Test
    void unpackedDistributionBuildsAndLooksUp(@TempDir Path dir) throws Exception {
        String version = Programs.version();
        Path archive = Programs.target().resolve("ringstore-" + version + "-dist.tar.gz");
        assertTrue(Files.isRegularFile(archive), () -> archive + " was not built");
        Programs.run(dir, Map.of(), List.of("tar", "xzf", archive.toString())).assertOk("tar xzf " + archive);
        Path home = dir.resolve("ringstore-" + version);
        for (String f : List.of("bin/ringstore", "bin/jdk.sh", "lib/ringstore.jar", "lib/ringstore-tools.jar",
                "examples/backends.conf", "README.md", "FORMAT.md", "LICENSE")) {
            assertTrue(Files.isRegularFile(home.resolve(f)), () -> "the distribution lacks " + f);
        }
        try (var docs = Files.list(Path.of(System.getProperty("ringstore.repo"), "docs"))) {
            for (Path page : docs.toList()) {
                Path shipped = home.resolve("docs").resolve(page.getFileName().toString());
                assertTrue(Files.isRegularFile(shipped), () -> "the distribution lacks docs/" + page.getFileName());
            }
        }
        assertTrue(Files.isExecutable(home.resolve("bin/ringstore")), "bin/ringstore is not executable");

        // JAVA_HOME is the only thing the launcher is given: the JDK running this test.
        Map<String, String> env = Map.of("JAVA_HOME", System.getProperty("java.home"));
        String launcher = home.resolve("bin/ringstore").toString();
        Programs v = Programs.run(home, env, List.of(launcher, "--version")).assertOk("bin/ringstore --version");
        assertEquals("ringstore " + version, v.out().lines().findFirst().orElse(""), v.out());
        assertTrue(v.out().contains("java.home: "), v.out());

        Programs.run(home, env, List.of(launcher, "build", "examples/backends.conf", "-o", "example.ring", "--quiet"))
                .assertOk("bin/ringstore build");
        Programs lookup = Programs.run(home, env, List.of(launcher, "lookup", "example.ring", "/index.html"))
                .assertOk("bin/ringstore lookup");
        assertEquals(1, lookup.out().lines().count(), lookup.out());
        assertTrue(lookup.out().contains("/index.html"), lookup.out());
        assertTrue(Files.notExists(home.resolve("target")) && Files.notExists(home.resolve("lib/target")),
                "the launcher tried to build in the distribution");
    }
}
