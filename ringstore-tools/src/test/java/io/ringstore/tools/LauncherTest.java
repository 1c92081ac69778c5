package io.ringstore.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What {@code bin/ringstore} passes to the JVM (docs/cli.md#jvm-options), seen through a stand-in JDK
 * whose {@code java} prints its arguments: the launcher and its JDK finder copied into a distribution's
 * layout of empty jars and caches, so that nothing is built and no JVM starts.
 */
@Tag("process")
class LauncherTest {
    private static final String STAMP = "IMPLEMENTOR=\"Test\"\nJAVA_RUNTIME_VERSION=\"25.0.1+1\"\nOS_ARCH=\"x86_64\"\n";

    @TempDir
    Path dir;

    private Path home;
    private Path jdk;

    @BeforeEach
    void layOut() throws IOException {
        home = dir.resolve("ringstore");
        Path repo = Path.of(System.getProperty("ringstore.repo", "."));
        Files.createDirectories(home.resolve("bin"));
        Files.createDirectories(home.resolve("lib"));
        for (String script : List.of("ringstore", "jdk.sh")) {
            Files.copy(repo.resolve("bin").resolve(script), home.resolve("bin").resolve(script));
        }
        executable(home.resolve("bin/ringstore"));
        for (String f : List.of("ringstore.jar", "ringstore-tools.jar", "ringstore.aot", "ringstore-lookup.aot")) {
            Files.writeString(home.resolve("lib").resolve(f), "");
        }
        Files.writeString(home.resolve("lib/ringstore.aot.jdk"), STAMP);
        jdk = fakeJdk(dir.resolve("jdk-25"), "25", STAMP);
    }

    /** A JDK home whose {@code java} prints its arguments one a line, and whose {@code javac} exists. */
    private static Path fakeJdk(Path at, String feature, String stamp) throws IOException {
        Files.createDirectories(at.resolve("bin"));
        Files.writeString(at.resolve("release"), "JAVA_VERSION=\"" + feature + ".0.1\"\n" + stamp);
        Files.writeString(at.resolve("bin/java"), "#!/bin/sh\nprintf 'java=%s\\n' \"$0\"\nprintf '%s\\n' \"$@\"\n");
        Files.writeString(at.resolve("bin/javac"), "#!/bin/sh\nexit 0\n");
        executable(at.resolve("bin/java"));
        executable(at.resolve("bin/javac"));
        return at;
    }

    private static void executable(Path file) throws IOException {
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    /** The JVM's arguments for {@code ringstore ARGS}, before the main class; with {@code env} set. */
    private List<String> jvmArguments(Map<String, String> env, String... args) throws Exception {
        List<String> command =
                new java.util.ArrayList<>(List.of(home.resolve("bin/ringstore").toString()));
        command.addAll(List.of(args));
        Map<String, String> all = new HashMap<>(Map.of("JAVA_HOME", jdk.toString(), "RINGSTORE_JAVA_OPTS", ""));
        all.putAll(env);
        Programs run = Programs.run(dir, all, command).assertOk(String.join(" ", command));
        List<String> lines = run.out().lines().toList();
        int main = lines.indexOf("io.ringstore.tools.Main");
        assertTrue(main > 0, run.out());
        assertEquals(List.of(args), lines.subList(main + 1, lines.size()), "the command line passed on unchanged");
        return lines.subList(0, main);
    }

    private List<String> jvmArguments(String... args) throws Exception {
        return jvmArguments(Map.of(), args);
    }

    private String cacheOf(List<String> jvm) {
        return jvm.stream()
                .filter(a -> a.startsWith("-XX:AOTCache="))
                .map(a -> Path.of(a.substring("-XX:AOTCache=".length()))
                        .getFileName()
                        .toString())
                .findFirst()
                .orElse("none");
    }

    @Test
    void aLookupOfKeyArgumentsRunsWithC1AndTheLookupCache() throws Exception {
        assertOptions(
                true,
                "ringstore-lookup.aot",
                List.of(
                        new String[] {"lookup", "f.ring", "/a"},
                        new String[] {"lookup", "--features", "eu,ssd", "f.ring", "/a", "/b"},
                        new String[] {"lookup", "--algorithm=v2", "f.ring", "/a"},
                        new String[] {"lookup", "--no-failover", "f.ring", "/a"},
                        new String[] {"lookup", "--", "f.ring", "-a"}));
    }

    @Test
    void longRunsKeepBothCompilersAndTheCommandsCache() throws Exception {
        assertOptions(
                false,
                "ringstore.aot",
                List.of(
                        new String[] {"lookup", "f.ring"},
                        new String[] {"lookup", "--features", "eu", "f.ring"},
                        new String[] {"lookup", "--watch", "f.ring"},
                        new String[] {"lookup", "f.ring", "--watch", "--show-generation"},
                        new String[] {"lookup", "--point-multiple", "16", "--algorithm", "v2", "f.ring"},
                        new String[] {"build", "fleet.conf", "-o", "f.ring"},
                        new String[] {"verify", "f.ring"},
                        new String[] {"--version"}));
    }

    /** Each command line gets the serial collector, no hsperfdata, C1 only or not, and that cache. */
    private void assertOptions(boolean c1Only, String cache, List<String[]> commandLines) throws Exception {
        for (String[] args : commandLines) {
            List<String> jvm = jvmArguments(args);
            assertEquals(c1Only, jvm.contains("-XX:TieredStopAtLevel=1"), () -> String.join(" ", args) + ": " + jvm);
            assertEquals(cache, cacheOf(jvm), () -> String.join(" ", args) + ": " + jvm);
            assertTrue(jvm.contains("-XX:+UseSerialGC") && jvm.contains("-XX:-UsePerfData"), jvm::toString);
        }
    }

    /** Options from the environment come last; a collector chosen there replaces the serial one (two stop the JVM). */
    @Test
    void optionsFromTheEnvironmentComeLastAndWin() throws Exception {
        List<String> jvm = jvmArguments(
                Map.of("RINGSTORE_JAVA_OPTS", "-XX:TieredStopAtLevel=4 -XX:+UseG1GC"), "lookup", "f.ring", "/a");
        assertTrue(jvm.indexOf("-XX:TieredStopAtLevel=4") > jvm.indexOf("-XX:TieredStopAtLevel=1"), jvm::toString);
        assertTrue(jvm.contains("-XX:+UseG1GC") && !jvm.contains("-XX:+UseSerialGC"), jvm::toString);
        for (String variable :
                List.of("JDK_JAVA_OPTIONS", "JAVA_TOOL_OPTIONS")) { // read by the JVM itself, not passed on
            List<String> chosen =
                    jvmArguments(Map.of(variable, "-XX:+UseParallelGC"), "build", "fleet.conf", "-o", "f.ring");
            assertFalse(chosen.contains("-XX:+UseSerialGC"), variable + ": " + chosen);
        }
    }

    @Test
    void noCacheForAnotherJdkNoneWhenTurnedOffAndTheCommandsCacheWithoutALookupOne() throws Exception {
        Files.writeString(home.resolve("lib/ringstore.aot.jdk"), STAMP.replace("25.0.1+1", "25.0.2+7"));
        assertEquals("none", cacheOf(jvmArguments("lookup", "f.ring", "/a")));
        Files.writeString(home.resolve("lib/ringstore.aot.jdk"), STAMP);
        assertEquals("none", cacheOf(jvmArguments(Map.of("RINGSTORE_AOT", "off"), "lookup", "f.ring", "/a")));
        Files.delete(home.resolve("lib/ringstore-lookup.aot"));
        List<String> jvm = jvmArguments("lookup", "f.ring", "/a");
        assertEquals("ringstore.aot", cacheOf(jvm));
        assertTrue(jvm.contains("-XX:TieredStopAtLevel=1"), jvm::toString);
    }

    /**
     * With no JAVA_HOME, a {@code javac} on PATH that links into a JDK outside the usual install
     * locations is found (the launcher resolves the link), and the newest JDK wins.
     */
    @Test
    void withoutJavaHomeTheNewestJdkIsFoundThroughJavacOnPath() throws Exception {
        Path newest = fakeJdk(dir.resolve("elsewhere/jdk-99"), "99", STAMP);
        Path onPath = Files.createDirectories(dir.resolve("path-bin"));
        Files.createSymbolicLink(onPath.resolve("javac"), newest.resolve("bin/javac"));
        List<String> command = List.of(
                "env",
                "-u",
                "JAVA_HOME",
                "PATH=" + onPath + ":/usr/bin:/bin",
                home.resolve("bin/ringstore").toString(),
                "lookup",
                "f.ring",
                "/a");
        Programs run = Programs.run(dir, Map.of(), command).assertOk(command);
        assertEquals(
                "java=" + newest.resolve("bin/java"),
                run.out().lines().findFirst().orElse(""),
                run.out());
    }
}
