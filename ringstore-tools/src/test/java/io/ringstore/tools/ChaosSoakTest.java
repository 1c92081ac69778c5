package io.ringstore.tools;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * The chaos run ({@link ChaosRun}) for 60 seconds, or for {@code -Dringstore.chaos.seconds=N}
 * ({@code bin/chaos-run N} runs it so, and prints the report; {@code -Dringstore.chaos.report=FILE}
 * writes the report there too). Every result of the run is asserted: no request failed but on a router
 * being killed, the in-flight counts back to zero once the load stopped, at most 2 ring files mapped
 * per router process, nothing left in the ring's directory, every corrupt file refused and logged once
 * by each router that ran through it, no router died on its own, no live router's lease reaped, no
 * live holder's directory lock broken, no event failed.
 */
@Tag("process")
@Tag("slow")
@Tag("nginx")
@EnabledOnOs(OS.LINUX) // unshare, /proc/PID/maps, tmpfs
@EnabledIf(value = Origins.TESTS_RUN, disabledReason = Origins.MISSING)
class ChaosSoakTest {
    @TempDir
    Path dir;

    @Test
    void theReferenceRouterThroughAChaosRun() throws Exception {
        Origins.requireInstalled("the chaos run");
        long seconds = Long.getLong("ringstore.chaos.seconds", 60); // 60 in the suite's slow lane
        ChaosRun.Schedule schedule = ChaosRun.Schedule.of(Duration.ofSeconds(seconds));
        ChaosRun.Report report = assertTimeoutPreemptively(
                Duration.ofSeconds(seconds * 2 + 600),
                () -> ChaosRun.run(dir, schedule),
                "a hang detector: the run takes its duration plus about a minute");
        String text = report.text();
        System.out.print(text);
        String file = System.getProperty("ringstore.chaos.report");
        if (file != null) {
            Files.writeString(Path.of(file), text, StandardCharsets.UTF_8);
        }
        assertAll(
                text,
                () -> assertTrue(report.ok() > 0, "requests answered"),
                () -> assertEquals(
                        report.failedOnKilled(), report.failed(), "requests failed but on a router being killed"),
                () -> assertTrue(
                        report.inFlightZeroMillis() >= 0,
                        "in flight back to zero once the load stopped: " + report.finalInFlight()),
                () -> assertTrue(
                        report.finalInFlight().size() >= ChaosRun.ORIGINS,
                        "state --json lists every origin: " + report.finalInFlight()),
                () -> assertTrue(
                        report.maxMapped().values().stream().allMatch(n -> n >= 1 && n <= 2),
                        "ring files mapped per process: " + report.maxMapped()),
                () -> assertEquals(List.of(), report.leftovers(), "temp or lock files left in the ring's directory"),
                () -> assertTrue(report.corruptPublished() > 0, "corrupt files published"),
                () -> assertEquals(
                        report.refusalsExpected(),
                        report.refusalsSeen(),
                        "corrupt files logged once by each router that ran through them"),
                () -> assertTrue(
                        report.kills() >= 1 && report.pauses() >= 1 && report.drains() >= seconds / 2,
                        "events happened"),
                () -> assertEquals(List.of(), report.unexpectedExits(), "routers that died on their own"),
                () -> assertEquals(
                        List.of(), report.reapedAlive(), "leases of live routers reaped (their in-flight counts lost)"),
                () -> assertEquals(
                        List.of(),
                        report.liveLocksBroken(),
                        "the state file's directory lock broken while its holder lived"),
                () -> assertEquals(List.of(), report.problems(), "rules the run broke"));
    }
}
