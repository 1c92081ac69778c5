package io.ringstore.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A program run to its end in a child process, as a user runs it from a shell, for the *IT tests that
 * check the built jars and the distribution: exit code, stdout, stderr.
 */
record Programs(int exit, String out, String err) {

    /** {@code command} in {@code directory}, with {@code env} added to this JVM's environment. */
    static Programs run(Path directory, Map<String, String> env, List<String> command)
            throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(command).directory(directory.toFile());
        pb.environment().putAll(env);
        Path err = Files.createTempFile("ringstore-it", ".err");
        pb.redirectError(err.toFile());
        Process p = pb.start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), () -> command + " did not end within 120 s");
        String errText = Files.readString(err);
        Files.delete(err);
        return new Programs(p.exitValue(), out, errText);
    }

    /** The JDK running this test: {@code bin/java}, {@code bin/javac} and a home for {@code JAVA_HOME}. */
    static Path jdk(String tool) {
        return Path.of(System.getProperty("java.home"), "bin", tool);
    }

    /** The build's directory of this module ({@code target}), from the failsafe configuration. */
    static Path target() {
        String target = System.getProperty("ringstore.target");
        assertNotNull(target, "system property ringstore.target (the module's build directory) is not set");
        return Path.of(target);
    }

    static String version() {
        String version = System.getProperty("ringstore.version");
        assertNotNull(version, "system property ringstore.version (the project version) is not set");
        return version;
    }

    Programs assertOk(Object what) {
        assertEquals(0, exit, () -> what + " exited " + exit + "\nstdout:\n" + out + "\nstderr:\n" + err);
        return this;
    }
}
