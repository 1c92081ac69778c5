package io.ringstore.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Routers as containers run them: three child JVMs, each in its own PID namespace ({@code unshare --pid
 * --fork --mount-proc}: each is pid 1 of its namespace, and sees no other router's pid), hold 3, 5 and 7
 * requests on one backend of a shared state file while every router, this process's too, acquires and
 * releases on another backend at full speed. The one holding 5 is stopped (SIGSTOP) for 10 s: nothing is
 * reaped, the host counts 15 throughout and after SIGCONT, and it then releases its own 5 exactly. The
 * one holding 7 is killed (SIGKILL): its 7 leave. The lease's record lock is what says a process lives;
 * a pid check from another namespace would reap the stopped router.
 */
@Tag("process")
@Tag("slow")
class PidNamespaceTest {
    static final List<String> ENDPOINTS = List.of("10.0.0.1:80", "10.0.0.2:80");
    static final HostState.Options FAST = HostState.Options.DEFAULTS
            .withCapacity(64, 8)
            .withTimings(Duration.ofMillis(50), Duration.ofMillis(300), Duration.ofSeconds(60));

    @TempDir
    Path dir;

    @Test
    void aStoppedRouterInAnotherNamespaceKeepsItsCountsAndAKilledOneLosesThem() throws Exception {
        assumeTrue(
                Files.isExecutable(Path.of("/usr/bin/unshare"))
                        && ProcessHandle.current().info().user().orElse("").equals("root"),
                "needs unshare and root for PID namespaces");
        Path ring = dir.resolve("fleet.ring");
        List<Child> children = new ArrayList<>();
        assertTimeoutPreemptively(Duration.ofSeconds(180), () -> {
            try (HostState observer = HostState.open(ring, FAST)) {
                int[] slots = observer.track(ENDPOINTS);
                AtomicBoolean running = new AtomicBoolean(true);
                AtomicLong churned = new AtomicLong();
                Thread churner = Thread.ofPlatform().start(() -> {
                    while (running.get()) {
                        observer.acquire(slots[1]);
                        observer.release(slots[1]);
                        churned.incrementAndGet();
                    }
                });
                try {
                    for (int hold : new int[] {3, 5, 7}) {
                        children.add(Child.start(ring, hold));
                    }
                    for (Child c : children) {
                        assertEquals("HELD 1", c.read(), "each router is pid 1 of its own namespace");
                    }
                    assertEquals(15, observer.inFlight(slots[0]));
                    assertEquals(4, observer.leases().size());

                    Child paused = children.get(1);
                    signal("STOP", paused.jvmPid());
                    long stoppedUntil =
                            System.nanoTime() + Duration.ofSeconds(10).toNanos();
                    long[] range = sample(observer, slots, stoppedUntil);
                    System.out.printf(
                            "SIGSTOP 10 s of the router holding 5: host count %d..%d, backend churned by the others %d times%n",
                            range[0], range[1], churned.get());
                    assertEquals(15, range[0], "nothing reaped while stopped");
                    assertEquals(15, range[1]);
                    assertTrue(
                            observer.leases().stream().allMatch(HostState.LeaseState::alive),
                            "every lease alive: " + observer.leases());
                    signal("CONT", paused.jvmPid());
                    range = sample(
                            observer,
                            slots,
                            System.nanoTime() + Duration.ofSeconds(1).toNanos());
                    assertEquals(15, range[0], "nothing reaped after SIGCONT");
                    assertEquals(15, range[1]);
                    paused.send("RELEASE");
                    assertEquals("RELEASED", paused.read());
                    assertEquals(10, observer.inFlight(slots[0]), "the stopped router's 5 were still its own");
                    paused.send("ACQUIRE");
                    assertEquals("ACQUIRED", paused.read());
                    assertEquals(15, observer.inFlight(slots[0]));

                    Child killed = children.get(2);
                    long killedAt = System.nanoTime();
                    signal("KILL", killed.jvmPid());
                    long gone = waitFor(() -> observer.inFlight(slots[0]) == 8);
                    System.out.printf(
                            "SIGKILL of the router holding 7: its requests gone after %d ms%n",
                            (gone - killedAt) / 1_000_000);
                    assertEquals(3, observer.leases().size());
                    range = sample(
                            observer,
                            slots,
                            System.nanoTime() + Duration.ofMillis(500).toNanos());
                    assertEquals(8, range[0]);
                    assertEquals(8, range[1]);
                } finally {
                    running.set(false);
                    churner.join();
                }
            } finally {
                for (Child c : children) {
                    c.jvm().ifPresent(p -> signal("KILL", p.pid()));
                    c.process.destroyForcibly().waitFor();
                }
            }
        });
    }

    /**
     * Samples backend 0's host-wide count until {@code until}, and checks backend 1 (where each of at
     * most 4 routers holds at most 1 request at a time) never reads more than 4; {@return min, max of backend 0}
     */
    private static long[] sample(HostState observer, int[] slots, long until) {
        long min = Long.MAX_VALUE;
        long max = Long.MIN_VALUE;
        while (System.nanoTime() < until) {
            long held = observer.inFlight(slots[0]);
            min = Math.min(min, held);
            max = Math.max(max, held);
            long churning = observer.inFlight(slots[1]);
            assertTrue(churning <= 4, "backend 1 read " + churning + " in flight, at most 4 routers hold one each");
            Thread.onSpinWait();
        }
        return new long[] {min, max};
    }

    private static void signal(String name, long pid) {
        try {
            int rc = new ProcessBuilder("kill", "-" + name, String.valueOf(pid))
                    .inheritIO()
                    .start()
                    .waitFor();
            assertEquals(0, rc, "kill -" + name + " " + pid);
        } catch (IOException | InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    private static long waitFor(BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within 60 s");
            }
            Thread.sleep(1);
        }
        return System.nanoTime();
    }

    /** {@code unshare} running a child JVM ({@link #main}) as pid 1 of a new PID namespace. */
    record Child(Process process, BufferedReader out, PrintStream in) {
        static Child start(Path ring, int hold) throws IOException {
            String java =
                    Path.of(System.getProperty("java.home"), "bin", "java").toString();
            Process p = new ProcessBuilder(
                            "unshare",
                            "--pid",
                            "--fork",
                            "--mount-proc",
                            java,
                            "-Xmx64m",
                            "-XX:+UseSerialGC",
                            "-XX:-UsePerfData",
                            "-XX:TieredStopAtLevel=1",
                            "-cp",
                            System.getProperty("java.class.path"),
                            PidNamespaceTest.class.getName(),
                            ring.toString(),
                            String.valueOf(hold))
                    .redirectError(ProcessBuilder.Redirect.INHERIT)
                    .start();
            return new Child(
                    p,
                    new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.US_ASCII)),
                    new PrintStream(p.getOutputStream(), true, StandardCharsets.US_ASCII));
        }

        /** {@return the JVM under unshare, by its pid in this namespace} */
        Optional<ProcessHandle> jvm() {
            return process.toHandle().children().findFirst();
        }

        long jvmPid() {
            return jvm().orElseThrow(() -> new AssertionError("no JVM under unshare " + process.pid()))
                    .pid();
        }

        String read() throws IOException {
            return out.readLine();
        }

        void send(String line) {
            in.println(line);
        }
    }

    /** A router: holds {@code hold} requests on backend 0, churns on backend 1; RELEASE and ACQUIRE its held ones on command. */
    public static void main(String[] args) throws Exception {
        int hold = Integer.parseInt(args[1]);
        HostState state = HostState.open(Path.of(args[0]), FAST);
        int[] slots = state.track(ENDPOINTS);
        for (int i = 0; i < hold; i++) {
            state.acquire(slots[0]);
        }
        Thread.ofPlatform().daemon().start(() -> {
            while (true) {
                state.acquire(slots[1]);
                state.release(slots[1]);
            }
        });
        System.out.println("HELD " + ProcessHandle.current().pid());
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        for (String line; (line = in.readLine()) != null; ) {
            boolean release = line.equals("RELEASE");
            for (int i = 0; i < hold; i++) {
                if (release) {
                    state.release(slots[0]);
                } else {
                    state.acquire(slots[0]);
                }
            }
            System.out.println(release ? "RELEASED" : "ACQUIRED");
            System.out.flush();
        }
        Thread.sleep(Long.MAX_VALUE); // stdin closed: wait to be killed
    }
}
