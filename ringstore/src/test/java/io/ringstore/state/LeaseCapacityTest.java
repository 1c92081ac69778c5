package io.ringstore.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A state file of 256 leases, every one held by a live process, and a router still starting. The
 * holders are 256 processes forked by one python3 process, each taking the POSIX record lock of its
 * own lease's byte range ({@code fcntl.lockf}, which is {@code fcntl(F_SETLK)} as Java's is) and
 * writing its pid into the lease's owner and pid words, as a router does; a lease's liveness is its
 * lock, so any process may hold one. The router that finds them all held routes on without counting
 * its requests; once one holder is killed, the next router takes its lease.
 */
@Tag("process")
class LeaseCapacityTest {
    static final int LEASES = StateFileLayout.DEFAULT_LEASES;
    static final HostState.Options OPTIONS = HostState.Options.DEFAULTS
            .withCapacity(64, LEASES)
            .withTimings(Duration.ofMillis(50), Duration.ofMillis(300), Duration.ofSeconds(60));

    /** argv: state file, lease count, header length. Forks one lock holder per lease; prints their pids, then waits for stdin to close. */
    static final String HOLDERS = """
            import ctypes, fcntl, os, signal, struct, sys
            path, n, header = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
            fd = os.open(path, os.O_RDWR)
            kids = []
            for i in range(n):
                r, w = os.pipe()
                pid = os.fork()
                if pid == 0:
                    ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: die with the parent
                    os.close(r)
                    off = header + 64 * i
                    try:
                        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, off, 0)
                    except OSError:
                        os.write(w, b'f'); os._exit(1)
                    me = os.getpid()
                    os.pwrite(fd, struct.pack('=q', me << 32), off)       # owner
                    os.pwrite(fd, struct.pack('=q', me), off + 16)        # pid
                    os.write(w, b'k'); os.close(w)
                    while True:
                        signal.pause()
                os.close(w)
                ok = os.read(r, 1); os.close(r)
                if ok != b'k':
                    print('FAILED', i, flush=True); sys.exit(1)
                kids.append(pid)
            print(' '.join(map(str, kids)), flush=True)
            sys.stdin.read()
            for k in kids:
                os.kill(k, signal.SIGKILL)
            """;

    @TempDir
    Path dir;

    @Test
    void aFileOf256LeasesAllHeldStillLetsARouterStart() throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/python3")), "needs python3 to hold the leases");
        Path ring = dir.resolve("fleet.ring");
        Path stateFile = HostState.statePath(ring);
        HostState.inspect(stateFile, OPTIONS, true).orElseThrow().close();
        int header = StateFileLayout.headerLength(LEASES);
        assertEquals(128 + 4 * 256, header);
        try (FileChannel ch = FileChannel.open(stateFile, StandardOpenOption.READ);
                Arena arena = Arena.ofConfined()) {
            MemorySegment s = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size(), arena);
            assertEquals(2, s.get(ValueLayout.JAVA_INT, StateFileLayout.VERSION_OFFSET));
            assertEquals(LEASES, s.get(ValueLayout.JAVA_INT, StateFileLayout.LEASE_COUNT_OFFSET));
            assertEquals(header, s.get(ValueLayout.JAVA_INT, StateFileLayout.HEADER_LENGTH_OFFSET));
            assertEquals(header + 64L * LEASES + 64L * (128 + 4 * 256), ch.size(), "FORMAT.md's fileLength");
        }
        Path script = Files.writeString(dir.resolve("holders.py"), HOLDERS);
        Process python = new ProcessBuilder(
                        "python3",
                        script.toString(),
                        stateFile.toString(),
                        String.valueOf(LEASES),
                        String.valueOf(header))
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        assertTimeoutPreemptively(Duration.ofSeconds(120), () -> {
            try {
                String line = new BufferedReader(
                                new InputStreamReader(python.getInputStream(), StandardCharsets.US_ASCII))
                        .readLine();
                long[] holders = Arrays.stream(line.split(" "))
                        .mapToLong(Long::parseLong)
                        .toArray();
                assertEquals(LEASES, holders.length, line);

                try (HostState router = HostState.open(ring, OPTIONS)) {
                    assertFalse(router.counted(), "every lease is held");
                    List<HostState.LeaseState> leases = router.leases();
                    assertEquals(LEASES, leases.size());
                    assertTrue(
                            leases.stream().allMatch(HostState.LeaseState::alive),
                            "held by their locks, whatever their heartbeat");
                    assertEquals(holders[17], leases.get(17).pid());
                    int slot = router.track(List.of("10.0.0.1:80"))[0];
                    router.acquire(slot);
                    assertEquals(0, router.inFlight(slot), "routing goes on, uncounted");
                    router.release(slot);
                    assertTrue(
                            router.drain("10.0.0.1:80") == false && !router.available(slot, System.nanoTime()),
                            "drain still shared");
                    router.undrain("10.0.0.1:80");
                }

                new ProcessBuilder("kill", "-KILL", String.valueOf(holders[200]))
                        .start()
                        .waitFor();
                long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                while (true) {
                    try (HostState router = HostState.open(ring, OPTIONS)) {
                        if (router.counted()) {
                            int slot = router.track(List.of("10.0.0.1:80"))[0];
                            router.acquire(slot);
                            assertEquals(
                                    1, router.inFlight(slot), "counted in the dead holder's lease, its cells summed");
                            assertEquals(LEASES, router.leases().size());
                            break;
                        }
                    }
                    assertTrue(System.nanoTime() < deadline, "the killed holder's lease never came free");
                    Thread.sleep(10);
                }
            } finally {
                python.getOutputStream().close();
                python.waitFor();
            }
        });
    }

    /**
     * A channel call on an interrupted thread closes the channel, and closing any descriptor of the file
     * drops every record lock of the process: an interrupted caller must not cost the process its
     * leases. python3 tests the lock of lease 0 from outside, as another router would.
     */
    @Test
    void anInterruptedCallerKeepsTheProcesssLeaseLocks() throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/python3")), "needs python3 to test the locks");
        Path ring = dir.resolve("fleet.ring");
        try (HostState router = HostState.open(ring, OPTIONS)) {
            Thread.currentThread().interrupt();
            try (HostState inspector =
                    HostState.inspect(HostState.statePath(ring), OPTIONS, false).orElseThrow()) {
                assertEquals(1, inspector.leases().size());
            } finally {
                assertTrue(Thread.interrupted(), "the interrupt is kept for the caller");
            }
            Thread.currentThread().interrupt();
            try (HostState second = HostState.open(ring, OPTIONS)) {
                assertTrue(second.counted());
            } finally {
                assertTrue(Thread.interrupted());
            }
            String probe = """
                    import fcntl, os, sys
                    fd = os.open(sys.argv[1], os.O_RDWR)
                    try:
                        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, int(sys.argv[2]), 0)
                        print('free')
                    except OSError:
                        print('held')
                    """;
            Process p = new ProcessBuilder(
                            "python3",
                            "-c",
                            probe,
                            HostState.statePath(ring).toString(),
                            String.valueOf(StateFileLayout.leaseOffset(LEASES, 0)))
                    .redirectError(ProcessBuilder.Redirect.INHERIT)
                    .start();
            assertEquals(
                    "held",
                    new String(p.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).strip(),
                    "lease 0's lock still held by this process");
            assertEquals(0, p.waitFor());
            int slot = router.track(List.of("10.0.0.1:80"))[0];
            router.acquire(slot);
            assertEquals(1, router.inFlight(slot));
        }
    }

    /**
     * The directory lock of a live holder is never broken, however long it holds it (a paused {@code
     * ringstore state drain}): python3 holds it 2 s; a drain waits for it, then is in the file.
     */
    @Test
    void aLiveHoldersDirectoryLockIsWaitedForNotBroken() throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/python3")), "needs python3 to hold the lock");
        Path ring = dir.resolve("fleet.ring");
        Path stateFile = HostState.statePath(ring);
        HostState.inspect(stateFile, OPTIONS, true).orElseThrow().close();
        String holder = """
                import fcntl, os, sys, time
                fd = os.open(sys.argv[1], os.O_RDWR)
                fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 8, 64, 0)
                print('held', flush=True)
                sys.stdin.readline()
                fcntl.lockf(fd, fcntl.LOCK_UN, 8, 64, 0)
                print('released', flush=True)
                """;
        Process p = new ProcessBuilder("python3", "-c", holder, stateFile.toString())
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.US_ASCII));
        assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
            try (HostState router = HostState.open(ring, OPTIONS)) {
                assertEquals("held", out.readLine());
                java.util.concurrent.CompletableFuture<Boolean> drain =
                        java.util.concurrent.CompletableFuture.supplyAsync(() -> router.drain("10.0.0.9:80"));
                Thread.sleep(2000); // over the second after which the lock used to be broken
                assertFalse(drain.isDone(), "the drain waits for the live holder");
                assertEquals(-1, router.slot("10.0.0.9:80"), "a lookup reads the directory without the lock");
                p.getOutputStream().write('\n');
                p.getOutputStream().flush();
                assertEquals("released", out.readLine());
                assertFalse(drain.get(), "drained now, not before");
                int slot = router.slot("10.0.0.9:80");
                assertTrue(slot >= 0 && !router.available(slot, System.nanoTime()), "in the file");
            } finally {
                p.destroyForcibly().waitFor();
            }
        });
    }

    @Test
    void theLargestTableOpensAndCountsInItsLastLease() throws Exception {
        Path ring = dir.resolve("big.ring");
        HostState.Options big = OPTIONS.withCapacity(16, StateFileLayout.MAX_LEASES);
        List<HostState> states = new java.util.ArrayList<>();
        try {
            for (int i = 0; i < StateFileLayout.MAX_LEASES; i++) {
                states.add(HostState.open(ring, big));
            }
            HostState last = states.getLast();
            assertTrue(last.counted());
            int slot = last.track(List.of("10.0.0.1:80"))[0];
            last.acquire(slot);
            assertEquals(1, states.getFirst().inFlight(slot), "the last lease's cell is summed");
            assertEquals(1, states.getFirst().totalInFlight());
            try (HostState extra = HostState.open(ring, big)) {
                assertFalse(extra.counted());
            }
        } finally {
            states.forEach(HostState::close);
        }
        assertEquals(StateFileLayout.fileLength(1024, 16), Files.size(HostState.statePath(ring)));
    }
}
