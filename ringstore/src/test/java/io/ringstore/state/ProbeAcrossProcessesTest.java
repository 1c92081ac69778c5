package io.ringstore.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * nginx's probe after {@code fail_timeout}, for the whole host: once a failed backend's time is up,
 * exactly one caller of all processes gets it. The probe is taken under a POSIX record lock on the
 * record's {@code checked} word (no compare-and-set on the mapping since issue 31), so this is a
 * question for several processes, not threads: four child JVMs ask 2,000 times each with the same
 * clock value at once, in 20 rounds (a failure reported before each), and each round has one probe.
 */
@Tag("process")
class ProbeAcrossProcessesTest {
    static final HostState.Options OPTIONS =
            HostState.Options.DEFAULTS.withCapacity(16, 8).withHealth(1, Duration.ofSeconds(10));
    static final long SECOND = 1_000_000_000L;
    static final int ROUNDS = 20;
    static final int ASKS = 2_000;

    @TempDir
    Path dir;

    @Test
    void oneProbePerTimeoutForTheHost() throws Exception {
        Path ring = dir.resolve("fleet.ring");
        assertTimeoutPreemptively(Duration.ofSeconds(120), () -> {
            List<RouterChild> children = new ArrayList<>();
            try (HostState state = HostState.open(ring, OPTIONS)) {
                int slot = state.track(List.of("10.0.0.9:80"))[0];
                for (int i = 0; i < 4; i++) {
                    children.add(RouterChild.start(ProbeAcrossProcessesTest.class, ring, 0, "-XX:+UseSerialGC"));
                }
                for (RouterChild c : children) {
                    c.expect("READY");
                }
                for (int round = 1; round <= ROUNDS; round++) {
                    long failedAt = round * 100 * SECOND;
                    state.reportFailure(slot, failedAt);
                    long probeAt = failedAt + 11 * SECOND; // past fail_timeout: one caller may probe
                    for (RouterChild c : children) {
                        c.send("ASK " + probeAt);
                    }
                    int probes = 0;
                    for (RouterChild c : children) {
                        String line = c.expectMatching("PROBES \\d+");
                        probes += Integer.parseInt(line.substring("PROBES ".length()));
                    }
                    assertEquals(1, probes, "probes in round " + round + " of " + 4 * ASKS + " asks in 4 processes");
                }
            } finally {
                children.forEach(c -> c.process().destroyForcibly());
            }
        });
    }

    /** A router: on "ASK T", asks {@value #ASKS} times whether the backend is available at T; prints how many said yes. */
    public static void main(String[] args) throws Exception {
        try (HostState state = HostState.open(Path.of(args[0]), OPTIONS)) {
            int slot = state.track(List.of("10.0.0.9:80"))[0];
            System.out.println("READY");
            System.out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
            for (String line; (line = in.readLine()) != null; ) {
                long at = Long.parseLong(line.substring("ASK ".length()));
                int yes = 0;
                for (int i = 0; i < ASKS; i++) {
                    yes += state.available(slot, at) ? 1 : 0;
                }
                System.out.println("PROBES " + yes);
                System.out.flush();
            }
        }
    }
}
