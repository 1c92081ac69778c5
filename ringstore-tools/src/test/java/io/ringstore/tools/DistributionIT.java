package io.ringstore.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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
        Programs run = Programs.run(
                        Programs.target(),
                        Map.of(),
                        List.of(Programs.jdk("java").toString(), "-jar", jar.toString(), "--version"))
                .assertOk("java -jar " + jar);
        assertEquals(
                "ringstore " + Programs.version(), run.out().lines().findFirst().orElse(""), run.out());
        assertEquals("", run.err());
    }

    @Test
    void unpackedDistributionBuildsAndLooksUp(@TempDir Path dir) throws Exception {
        String version = Programs.version();
        Path archive = Programs.target().resolve("ringstore-" + version + "-dist.tar.gz");
        assertTrue(Files.isRegularFile(archive), () -> archive + " was not built");
        Programs.run(dir, Map.of(), List.of("tar", "xzf", archive.toString())).assertOk("tar xzf " + archive);
        Path home = dir.resolve("ringstore-" + version);
        for (String f : List.of(
                "bin/ringstore",
                "bin/jdk.sh",
                "lib/ringstore.jar",
                "lib/ringstore-tools.jar",
                "examples/backends.conf",
                "README.md",
                "FORMAT.md",
                "LICENSE")) {
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
        assertTrue(
                Files.notExists(home.resolve("target")) && Files.notExists(home.resolve("lib/target")),
                "the launcher tried to build in the distribution");
    }

    /**
     * The ahead-of-time cache made by the build's JDK (25+) serves the unpacked distribution's commands;
     * a cache stamped for another JDK is not passed to the JVM, and a damaged one is skipped by the JVM:
     * either way the answer is the same and stderr stays empty (no [aot] warning lines for scripts to see).
     */
    @Test
    void aheadOfTimeCacheIsUsedOnItsJdkAndSkippedCleanlyOtherwise(@TempDir Path dir) throws Exception {
        String version = Programs.version();
        Path archive = Programs.target().resolve("ringstore-" + version + "-dist.tar.gz");
        Programs.run(dir, Map.of(), List.of("tar", "xzf", archive.toString())).assertOk("tar xzf " + archive);
        Path home = dir.resolve("ringstore-" + version);
        Path cache = home.resolve("lib/ringstore.aot");
        Path lookupCache = home.resolve("lib/ringstore-lookup.aot");
        Path stamp = home.resolve("lib/ringstore.aot.jdk");
        if (Runtime.version().feature() < 25) {
            assertTrue(
                    Files.notExists(cache) && Files.notExists(lookupCache) && Files.notExists(stamp),
                    "a cache was shipped by a JDK before 25");
            return;
        }
        assertTrue(
                Files.isRegularFile(cache) && Files.isRegularFile(lookupCache) && Files.isRegularFile(stamp),
                "the distribution lacks lib/ringstore.aot, lib/ringstore-lookup.aot or their stamp");
        String launcher = home.resolve("bin/ringstore").toString();
        Map<String, String> env = Map.of("JAVA_HOME", System.getProperty("java.home"));
        Programs.run(home, env, List.of(launcher, "build", "examples/backends.conf", "-o", "example.ring", "--quiet"))
                .assertOk("bin/ringstore build");
        List<String> lookup = List.of(launcher, "lookup", "example.ring", "/index.html");
        Programs plain = Programs.run(home, env, lookup).assertOk("bin/ringstore lookup");
        assertEquals("", plain.err());
        assertEquals(1, plain.out().lines().count(), plain.out());
        // A collector chosen by the user replaces the launcher's serial one: two would stop the JVM.
        Programs g1 = Programs.run(
                        home,
                        Map.of("JAVA_HOME", System.getProperty("java.home"), "RINGSTORE_JAVA_OPTS", "-XX:+UseG1GC"),
                        lookup)
                .assertOk("bin/ringstore lookup with RINGSTORE_JAVA_OPTS=-XX:+UseG1GC");
        assertEquals(plain.out(), g1.out());
        assertEquals("", g1.err());

        // Where the CLI's main class came from: the cache ("shared objects file") or its jar.
        Map<String, String> traced =
                Map.of("JAVA_HOME", System.getProperty("java.home"), "RINGSTORE_JAVA_OPTS", "-Xlog:class+load=info");
        String mainFromCache = "io.ringstore.tools.Main source: shared objects file";
        Programs used = Programs.run(home, traced, lookup).assertOk("bin/ringstore lookup, traced");
        assertTrue(used.out().contains(mainFromCache), "the lookup cache was not used on the JDK that made it");
        // Keys on stdin: the cache of every command (a lookup of KEY arguments has its own, ringstore-lookup.aot).
        List<String> stdinLookup = List.of("sh", "-c", "echo /index.html | \"$0\" lookup example.ring", launcher);
        Programs usedByStdin = Programs.run(home, traced, stdinLookup).assertOk("bin/ringstore lookup < keys, traced");
        assertTrue(
                usedByStdin.out().contains(mainFromCache), "the commands' cache was not used on the JDK that made it");
        Map<String, String> aotLog =
                Map.of("JAVA_HOME", System.getProperty("java.home"), "RINGSTORE_JAVA_OPTS", "-Xlog:aot=info");
        assertTrue(
                Programs.run(home, aotLog, lookup)
                        .assertOk("bin/ringstore lookup, aot log")
                        .out()
                        .contains("Opened AOT cache " + lookupCache),
                "a lookup of KEY arguments did not open lib/ringstore-lookup.aot");
        assertTrue(
                Programs.run(home, aotLog, stdinLookup)
                        .assertOk("bin/ringstore lookup < keys, aot log")
                        .out()
                        .contains("Opened AOT cache " + cache),
                "a lookup of stdin did not open lib/ringstore.aot");

        String stamped = Files.readString(stamp);
        Files.writeString(
                stamp, stamped.replaceAll("JAVA_RUNTIME_VERSION=\"[^\"]*\"", "JAVA_RUNTIME_VERSION=\"22.0.2+9\""));
        Programs otherJdk = Programs.run(home, traced, lookup).assertOk("bin/ringstore lookup, cache of another JDK");
        assertTrue(otherJdk.out().contains("io.ringstore.tools.Main source: "), otherJdk.out());
        assertTrue(!otherJdk.out().contains(mainFromCache), "a cache stamped for another JDK was used");
        assertEquals("", otherJdk.err());
        Files.writeString(stamp, stamped);

        for (Path c : List.of(cache, lookupCache)) {
            byte[] good = Files.readAllBytes(c);
            byte[] garbage = good.clone();
            for (int i = 0; i < 4096; i++) {
                garbage[i] = (byte) (i * 31 + 7); // the header: magic, version and checksums
            }
            byte[] truncated = java.util.Arrays.copyOf(good, good.length / 2);
            for (byte[] damaged : List.of(garbage, truncated)) {
                Files.write(c, damaged);
                for (List<String> command : List.of(lookup, stdinLookup)) {
                    Programs run = Programs.run(home, env, command)
                            .assertOk("bin/ringstore lookup, damaged " + c.getFileName());
                    assertEquals(plain.out(), run.out());
                    assertEquals("", run.err());
                }
            }
            Files.write(c, good);
        }
    }
}
