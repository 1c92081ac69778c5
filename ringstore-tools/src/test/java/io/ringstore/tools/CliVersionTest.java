package io.ringstore.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code ringstore --version}: one fact a line (tool version, ring-file format versions, JDK), exit 0. */
class CliVersionTest {
    @Test
    void printsTheVersionTheFormatAndTheJdk() {
        String version = System.getProperty("ringstore.version");
        assertNotNull(version, "system property ringstore.version (the project version) is not set");
        CliRun run = CliRun.run("--version").assertOk();
        assertEquals("", run.stderr());
        assertEquals(
                List.of(
                        "ringstore " + version,
                        "ring file format: reads versions 1 to 4; writes 1, or 2 when a backend is marked down or named, 3 when a ring is a view (build --views), 4 when a ring has 64-bit points (envoy, envoy-murmur2, grpc)",
                        "java: " + Runtime.version() + " (" + System.getProperty("java.vendor") + ")",
                        "java.home: " + System.getProperty("java.home")),
                run.out().lines().toList());
    }

    /** Top-level help and version to a full disk: one line and exit 1, as every command's output. */
    @Test
    void aFailedWriteOfHelpOrVersionIsAnError() {
        for (String arg : new String[] {"--version", "--help"}) {
            CliRun r = CliRun.runWithBrokenStdout(arg);
            org.junit.jupiter.api.Assertions.assertEquals(Main.FAILED, r.exit(), arg);
            org.junit.jupiter.api.Assertions.assertTrue(r.stderr().contains("cannot write the output"), r.stderr());
        }
    }
}
