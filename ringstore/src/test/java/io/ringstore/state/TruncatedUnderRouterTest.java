package io.ringstore.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The state file truncated to nothing ({@code : > fleet.ring.state}) under running routers, hundreds
 * of times (issue 31): three child JVMs, two in compiled code and one interpreted ({@code -Xint}, where
 * HotSpot does not guard an atomic read-modify-write on a page gone: SIGBUS), each holding a known
 * number of requests on two backends while two threads churn on a third, through every call of the
 * request path ({@code available} with its probe, {@code acquire}, {@code release}, {@code
 * reportFailure}, {@code reportSuccess}, {@code inFlight}, {@code totalInFlight}). Every call's
 * exception is counted, in every thread. Done means: no child dies, no call throws, and once the
 * routers are on the last file the counts there are exactly what they hold.
 */
@Tag("process")
class TruncatedUnderRouterTest {
    static final List<String> ENDPOINTS = RouterChild.ENDPOINTS;
    /** Fast heartbeat, so the routers move to a new file soon after each truncation; a probe every ms. */
    static final HostState.Options FAST = HostState.Options.DEFAULTS
            .withCapacity(64, 8)
            .withHealth(1, Duration.ofMillis(1))
            .withTimings(Duration.ofMillis(5), Duration.ofMillis(300), Duration.ofSeconds(60));

    static final int TRUNCATIONS = 520;

    @TempDir
    Path dir;

    @Test
    void routersLiveThroughHundredsOfTruncationsAndKeepTheirCounts() throws Exception {
        Path ring = dir.resolve("fleet.ring");
        Path state = HostState.statePath(ring);
        assertTimeoutPreemptively(Duration.ofMinutes(5), () -> {
            List<RouterChild> children = new ArrayList<>();
            try {
                // child i holds i+1 requests on backend 0 and 2(i+1) on backend 1
                String errorFile = "-XX:ErrorFile=" + dir.resolve("hs_err_%p.log"); // not in the module's directory
                children.add(RouterChild.start(TruncatedUnderRouterTest.class, ring, 1, errorFile, "-XX:+UseSerialGC"));
                children.add(RouterChild.start(TruncatedUnderRouterTest.class, ring, 2, errorFile, "-Xint"));
                children.add(RouterChild.start(
                        TruncatedUnderRouterTest.class,
                        ring,
                        3,
                        errorFile,
                        "-XX:+UseSerialGC",
                        "-XX:-TieredCompilation"));
                for (RouterChild c : children) {
                    c.expect("HELD");
                }
                int truncated = 0;
                long hitLive = 0;
                for (int i = 0; i < TRUNCATIONS; i++) {
                    Object before = waitForFileOfLength(state);
                    Thread.sleep(ThreadLocalRandom.current().nextInt(0, 12));
                    try (FileChannel c = FileChannel.open(state, StandardOpenOption.WRITE)) {
                        c.truncate(0);
                        truncated++;
                    } catch (NoSuchFileException e) {
                        continue; // moved aside under us: not a truncation
                    }
                    for (RouterChild c : children) {
                        if (!c.process().isAlive()) {
                            Thread.sleep(500); // its last words
                            throw new AssertionError("router " + c.hold() + " died at truncation " + truncated
                                    + " (exit " + c.process().exitValue() + "): " + crash(c) + c.stderr());
                        }
                    }
                    hitLive += before == null ? 0 : 1;
                }
                System.out.printf("%d truncations of the state file under 3 routers%n", truncated);
                assertTrue(truncated >= 500, "truncations: " + truncated);
                long calls = 0;
                for (RouterChild c : children) {
                    c.send("QUIET");
                    String line = c.expectMatching("QUIET calls=(\\d+) exceptions=(\\d+)");
                    Matcher m = Pattern.compile("QUIET calls=(\\d+) exceptions=(\\d+)")
                            .matcher(line);
                    assertTrue(m.matches());
                    System.out.printf(
                            "router holding %d: %s, %d moves to a new file logged%n",
                            c.hold(), line, c.lines("this process moved to the file now at the path"));
                    assertEquals("0", m.group(2), "exceptions to the caller in router " + c.hold() + ": " + c.stderr());
                    calls += Long.parseLong(m.group(1));
                }
                assertTrue(calls > 10_000, "the routers kept calling: " + calls);
                for (RouterChild c : children) {
                    assertTrue(c.process().isAlive(), "router " + c.hold() + " alive at the end");
                }
                // On the last file, once every router has moved to it: exactly what they hold.
                long[] want = {1 + 2 + 3, 2 * (1 + 2 + 3), 0};
                long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                String seen = "";
                while (true) {
                    seen = counts(state);
                    if (seen.equals(java.util.Arrays.toString(want) + " total " + (want[0] + want[1]))) {
                        break;
                    }
                    if (System.nanoTime() > deadline) {
                        throw new AssertionError(
                                "counts on the last file: " + seen + ", want " + java.util.Arrays.toString(want));
                    }
                    Thread.sleep(10);
                }
            } finally {
                children.forEach(c -> c.process().destroyForcibly());
            }
        });
    }

    /** {@return the frame a crashed child's error file names, and its Java frames (where HotSpot wrote them)} */
    private String crash(RouterChild c) throws IOException {
        Path log = dir.resolve("hs_err_" + c.process().pid() + ".log");
        if (!Files.exists(log)) {
            return "(no error file) ";
        }
        List<String> lines = Files.readAllLines(log, StandardCharsets.ISO_8859_1);
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).startsWith("# Problematic frame:") && i + 1 < lines.size()) {
                b.append(lines.get(i + 1)).append('\n');
            }
            if (lines.get(i).startsWith("j  ") || lines.get(i).startsWith("J ")) {
                b.append(lines.get(i)).append('\n');
            }
        }
        return b.toString();
    }

    /** The counts of the file at the path, as an operator sees them. */
    private static String counts(Path state) {
        try {
            Optional<HostState> o = HostState.inspect(state, FAST, false);
            if (o.isEmpty()) {
                return "no file";
            }
            try (HostState h = o.get()) {
                int[] slots = h.slots(ENDPOINTS);
                long[] got = new long[slots.length];
                for (int b = 0; b < slots.length; b++) {
                    got[b] = slots[b] < 0 ? -1 : h.inFlight(slots[b]);
                }
                return java.util.Arrays.toString(got) + " total " + h.totalInFlight();
            }
        } catch (StateFileException | RuntimeException e) {
            return e.toString();
        }
    }

    /** Waits until the file at the path is whole again (a router replaced it); {@return its inode} */
    private static Object waitForFileOfLength(Path state) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            try {
                if (Files.size(state) > 0) {
                    return Files.readAttributes(state, java.nio.file.attribute.BasicFileAttributes.class)
                            .fileKey();
                }
            } catch (NoSuchFileException e) {
                // being replaced
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no router made the state file again within 30 s");
            }
            Thread.sleep(1);
        }
    }

    /** Exceptions that reached a caller (or ended a thread), printed to stderr (the first 20). */
    static final AtomicLong EXCEPTIONS = new AtomicLong();

    static void count(Throwable t) {
        if (EXCEPTIONS.incrementAndGet() <= 20) {
            System.err.println("EXCEPTION in " + Thread.currentThread().getName() + ": " + t);
            t.printStackTrace();
        }
    }

    /**
     * A router: holds {@code hold} requests on backend 0 and twice that on backend 1, and two threads
     * churn on backend 2 through every call of the request path until QUIET.
     */
    public static void main(String[] args) throws Exception {
        Thread.setDefaultUncaughtExceptionHandler((t, e) -> count(e));
        int hold = Integer.parseInt(args[1]);
        HostState state = HostState.open(Path.of(args[0]), FAST);
        int[] slots = RouterChild.holdRequests(state, hold);
        AtomicBoolean churn = new AtomicBoolean(true);
        AtomicLong calls = new AtomicLong();
        List<Thread> churners = new ArrayList<>();
        for (int t = 0; t < 2; t++) {
            churners.add(Thread.ofPlatform().name("churn-" + t).start(() -> {
                long n = 0;
                while (churn.get()) {
                    try {
                        long now = System.nanoTime();
                        if (state.available(slots[2], now)) {
                            state.acquire(slots[2]);
                            if ((n & 63) == 0) {
                                state.reportFailure(slots[2], now);
                            } else {
                                state.reportSuccess(slots[2]);
                            }
                            state.inFlight(slots[0]);
                            state.totalInFlight();
                            state.release(slots[2]);
                        }
                        n++;
                    } catch (Throwable e) {
                        count(e);
                    }
                }
                calls.addAndGet(n);
            }));
        }
        System.out.println("HELD");
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        for (String line; (line = in.readLine()) != null; ) {
            if (line.equals("QUIET")) {
                churn.set(false);
                for (Thread t : churners) {
                    t.join();
                }
                System.out.println("QUIET calls=" + calls.get() + " exceptions=" + EXCEPTIONS.get());
                System.out.flush();
            }
        }
        Thread.sleep(Long.MAX_VALUE); // stdin closed: wait to be killed, holding its requests
    }
}
