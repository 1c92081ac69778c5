package io.ringstore.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The state file on a hostile file system (issue 20): a full tmpfs (items 3), a read-only view and the
 * descriptor it shares with a router of the same process (item 9), a FIFO renamed over the path
 * between the regular-file check and the open (item 6's race, for the state file). The tmpfs needs
 * root to mount; skipped elsewhere.
 */
@Tag("process")
class StateFileSystemTest {
    private static final HostState.Options OPTIONS = HostState.Options.DEFAULTS; // 256 leases: about 4.7 MiB
    private static final HostState.Options SMALL = HostStateTest.SMALL;

    @TempDir
    Path dir;

    /**
     * A 1 MiB tmpfs cannot hold the default 4.7 MiB state file: creating it is refused with one line
     * naming the state file, and nothing is left; before, a sparse file was published and every
     * process that mapped it faulted (SIGBUS, an InternalError) on its first unallocated page. A
     * sparse file left by an earlier release is refused at open the same way, naming the state file.
     */
    @Test
    void aFullFileSystemRefusesToCreateAndASparseFileIsRefusedAtOpen() throws Exception {
        Path mount = Files.createDirectory(dir.resolve("small"));
        assumeTrue(
                run("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mount.toString()) == 0,
                "cannot mount a tmpfs (not root?)");
        try {
            Path ring = mount.resolve("f.ring");
            Path state = HostState.statePath(ring);
            StateFileException e = assertThrows(StateFileException.class, () -> HostState.open(ring, OPTIONS));
            assertEquals(state + ": cannot create: No space left on device", e.getMessage());
            assertEquals(List.of(), names(mount), "no temporary file, no state file");
            e = assertThrows(StateFileException.class, () -> HostState.inspect(state, OPTIONS, true));
            assertTrue(
                    e.getMessage().startsWith(state + ": ") && e.getMessage().contains("No space left on device"),
                    e.getMessage());
            assertEquals(List.of(), names(mount));

            // What an earlier release published: the header, a hole, one byte at the end.
            Path whole = dir.resolve("whole.state");
            StateMapping.create(whole, OPTIONS.leases(), OPTIONS.slots());
            long length = Files.size(whole);
            try (FileChannel in = FileChannel.open(whole);
                    FileChannel out =
                            FileChannel.open(state, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                ByteBuffer header = ByteBuffer.allocate(StateFileLayout.headerLength(OPTIONS.leases()));
                in.read(header, 0);
                out.write(header.flip(), 0);
                out.write(ByteBuffer.allocate(1), length - 1);
            }
            for (var open : List.<ThrowingOpen>of(
                    () -> HostState.open(ring, OPTIONS),
                    () -> HostState.openIfExists(ring, OPTIONS).orElseThrow(),
                    () -> HostState.inspect(state, OPTIONS, false).orElseThrow(),
                    () -> HostState.inspectReadOnly(state, OPTIONS).orElseThrow())) {
                e = assertThrows(StateFileException.class, open::open);
                assertTrue(
                        e.getMessage()
                                .startsWith(state
                                        + ": a page of the mapped state file cannot be read (the file system is full"),
                        e.getMessage());
            }
            assertEquals(List.of("f.ring.state"), names(mount), "not moved aside: a new file would not fit either");
        } finally {
            umount(mount);
        }
    }

    private interface ThrowingOpen {
        HostState open() throws StateFileException;
    }

    /**
     * A read-only view shares the router's descriptor in either order, and closing it never drops the
     * router's lease lock (closing any descriptor of the file would): python3 tests the lock from outside.
     */
    @Test
    void aReadOnlyViewNeverClosesTheDescriptorOfARouterInTheSameProcess() throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/python3")), "needs python3 to test the locks");
        Path ring = dir.resolve("fleet.ring");
        Path state = HostState.statePath(ring);
        StateMapping.create(state, SMALL.leases(), SMALL.slots());
        HostState first =
                HostState.inspectReadOnly(state, SMALL).orElseThrow(); // read-only first: the router comes after
        try (HostState router = HostState.open(ring, SMALL)) {
            assertTrue(router.counted());
            router.acquire(router.track(List.of("10.0.0.1:80"))[0]);
            assertEquals(1, first.totalInFlight(), "the read-only mapping sees the router's count");
            first.close();
            assertEquals(
                    "held",
                    probe(state, StateFileLayout.leaseOffset(SMALL.leases(), 0)),
                    "closing the read-only view kept the lock");
            try (HostState second = HostState.inspectReadOnly(state, SMALL).orElseThrow()) { // the router first
                assertEquals(
                        List.of(new HostState.LeaseState(
                                0, ProcessHandle.current().pid(), true, 1)),
                        second.leases());
                IllegalStateException refused = assertThrows(
                        IllegalStateException.class,
                        () -> second.drain("10.0.0.2:80"),
                        "a read-only view writes nothing");
                assertTrue(refused.getMessage().contains("opened read-only"), refused.getMessage());
            }
            // The refused write left no lock behind: the router still gives slots (it hung here for good before).
            org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(
                    java.time.Duration.ofSeconds(20), () -> router.track(List.of("10.0.0.1:80", "10.0.0.2:80")));
            assertEquals("held", probe(state, StateFileLayout.leaseOffset(SMALL.leases(), 0)));
            router.acquire(0);
            assertEquals(2, router.inFlight(0));
        }
        assertEquals(
                "free",
                probe(state, StateFileLayout.leaseOffset(SMALL.leases(), 0)),
                "the router's close gave it back");
    }

    /**
     * A drain behind a process that holds the directory lock and does not let go (a stopped router)
     * waits, and says so, naming the holder from the lock word, then completes once the lock is
     * released (issue 31, item 5): before, it waited without a word.
     */
    @Test
    void aDrainBehindAHeldDirectoryLockSaysWhoHoldsIt() throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/python3")), "needs python3 to hold the lock");
        Path state = dir.resolve("fleet.ring.state");
        StateMapping.create(state, SMALL.leases(), SMALL.slots());
        forgeLong(state, StateFileLayout.DIRECTORY_LOCK_OFFSET, 4242L << 32 | 1);
        String holder = """
                import fcntl, os, sys
                fd = os.open(sys.argv[1], os.O_RDWR)
                fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 8, int(sys.argv[2]), 0)
                print('locked', flush=True)
                sys.stdin.read()
                """;
        Process p = new ProcessBuilder(
                        "python3",
                        "-c",
                        holder,
                        state.toString(),
                        String.valueOf(StateFileLayout.DIRECTORY_LOCK_OFFSET))
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        try (io.ringstore.LogCapture log = new io.ringstore.LogCapture(HostState.class);
                HostState inspector = HostState.inspect(state, SMALL, false).orElseThrow()) {
            assertEquals(
                    "locked",
                    new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.US_ASCII))
                            .readLine());
            java.util.concurrent.CompletableFuture<Boolean> drain =
                    java.util.concurrent.CompletableFuture.supplyAsync(() -> inspector.drain("10.0.0.1:80"));
            long deadline = System.nanoTime() + 20_000_000_000L;
            while (log.containing("held by process 4242").isEmpty()) {
                assertTrue(System.nanoTime() < deadline, "no word of the wait in 20 s: " + log.lines());
                assertFalse(drain.isDone(), "the drain did not wait for the lock");
                Thread.sleep(20);
            }
            assertTrue(
                    log.containing("held by process 4242").getFirst().contains("waiting 1 s for the directory lock"),
                    log.lines().toString());
            p.getOutputStream().close(); // the holder exits: the kernel releases its lock
            assertFalse(drain.get(20, java.util.concurrent.TimeUnit.SECONDS), "not drained before");
            assertTrue(inspector.undrain("10.0.0.1:80"), "drained by the drain that waited");
            assertEquals(
                    1,
                    log.containing("directory lock taken after").size(),
                    log.lines().toString());
        } finally {
            p.destroyForcibly().waitFor();
        }
    }

    /**
     * A dead lease 0 (its owner word set, its lock free: the first router on the host died) is reaped by
     * the next process to open the file, an inspector too, and its requests in flight returned. The
     * constructor reaped before its own lease was known, and took lease 0 for its own: "lease 0: dead,
     * 3 in flight" stayed for good and a {@code max_conns=3} backend looked full.
     */
    @Test
    void aDeadLeaseZeroIsReapedByTheNextInspector() throws Exception {
        Path state = dir.resolve("fleet.ring.state");
        StateMapping.create(state, SMALL.leases(), SMALL.slots());
        long lease0 = StateFileLayout.leaseOffset(SMALL.leases(), 0);
        forgeLong(state, lease0 + StateFileLayout.LEASE_OWNER_OFFSET, 1L << 33);
        forgeLong(state, lease0 + StateFileLayout.LEASE_PID_OFFSET, 4242);
        forgeInt(state, StateFileLayout.LEASE_TOTALS_OFFSET, 3);
        try (HostState view = HostState.inspectReadOnly(state, SMALL).orElseThrow()) {
            assertEquals(List.of(new HostState.LeaseState(0, 4242, false, 3)), view.leases(), "forged as dead");
        }
        try (HostState inspector = HostState.inspect(state, SMALL, false).orElseThrow()) {
            assertEquals(List.of(), inspector.leases(), "lease 0 reaped, its 3 in flight returned");
        }
    }

    /**
     * Through a read-only mapping a lease held by another process is alive (a shared lock test fails
     * while the holder lives) and a dead one dead, and the dead one is not reaped (nothing written).
     */
    @Test
    void aReadOnlyViewTellsAliveFromDeadWithoutReaping() throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/python3")), "needs python3 to hold a lease");
        Path state = dir.resolve("fleet.ring.state");
        StateMapping.create(state, SMALL.leases(), SMALL.slots());
        long lease0 = StateFileLayout.leaseOffset(SMALL.leases(), 0);
        long lease1 = StateFileLayout.leaseOffset(SMALL.leases(), 1);
        forgeLong(state, lease0 + StateFileLayout.LEASE_OWNER_OFFSET, 1L << 33);
        forgeLong(state, lease0 + StateFileLayout.LEASE_PID_OFFSET, 4242);
        forgeLong(state, lease1 + StateFileLayout.LEASE_OWNER_OFFSET, 1L << 34);
        forgeLong(state, lease1 + StateFileLayout.LEASE_PID_OFFSET, 4343);
        String holder = """
                import fcntl, os, sys
                fd = os.open(sys.argv[1], os.O_RDWR)
                fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, int(sys.argv[2]), 0)
                print('locked', flush=True)
                sys.stdin.read()
                """;
        Process p = new ProcessBuilder("python3", "-c", holder, state.toString(), String.valueOf(lease0))
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        try {
            assertEquals(
                    "locked",
                    new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.US_ASCII))
                            .readLine());
            try (HostState view = HostState.inspectReadOnly(state, SMALL).orElseThrow()) {
                assertEquals(
                        List.of(
                                new HostState.LeaseState(0, 4242, true, 0),
                                new HostState.LeaseState(1, 4343, false, 0)),
                        view.leases());
            }
        } finally {
            p.destroyForcibly().waitFor();
        }
        try (HostState view = HostState.inspectReadOnly(state, SMALL).orElseThrow()) {
            assertEquals(
                    List.of(new HostState.LeaseState(0, 4242, false, 0), new HostState.LeaseState(1, 4343, false, 0)),
                    view.leases(),
                    "dead leases shown, not reaped");
        }
    }

    /**
     * A FIFO renamed over the path between the regular-file check and the open: a read-only open (which
     * on a FIFO blocks until a writer comes) gives up after the bound, and a router's read-write open
     * (which does not block) sees that the path is no longer a file and refuses it, rather than taking
     * the FIFO for a truncated state file, moving it aside and creating another.
     */
    @Test
    void aFifoRenamedInAfterTheCheckIsRefusedNotWaitedForNorRebuiltOver() throws Exception {
        Path ring = dir.resolve("fleet.ring");
        Path state = HostState.statePath(ring);
        StateMapping.create(state, SMALL.leases(), SMALL.slots());
        Path fifo = dir.resolve("fifo");
        long timeout = StateChannels.openTimeoutMillis;
        StateChannels.openTimeoutMillis = 300;
        try {
            for (boolean readOnly : new boolean[] {true, false}) {
                assertEquals(0, run("mkfifo", fifo.toString()));
                StateChannels.afterRegularCheck = () -> { // once: the race is lost once, not at every retry
                    StateChannels.afterRegularCheck = () -> {};
                    try {
                        Files.move(fifo, state, StandardCopyOption.REPLACE_EXISTING);
                    } catch (IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                };
                StateFileException e = assertThrows(
                        StateFileException.class,
                        readOnly ? () -> HostState.inspectReadOnly(state, SMALL) : () -> HostState.open(ring, SMALL));
                StateChannels.afterRegularCheck = () -> {};
                assertTrue(e.getMessage().startsWith(state + ": cannot open for reading"), e.getMessage());
                assertTrue(
                        e.getMessage()
                                .contains(
                                        readOnly
                                                ? "did not return within 300 ms"
                                                : "replaced while being opened by something that is not"),
                        e.getMessage());
                assertFalse(Files.isRegularFile(state), "the FIFO is left where it is");
                assertFalse(Files.exists(state.resolveSibling(state.getFileName() + ".bad")), "nothing moved aside");
                if (readOnly) { // a writer lets the opener that waits on the FIFO return (its descriptor is kept)
                    FileChannel.open(state, StandardOpenOption.WRITE).close();
                }
                Files.delete(state);
                StateMapping.create(state, SMALL.leases(), SMALL.slots());
            }
        } finally {
            StateChannels.afterRegularCheck = () -> {};
            StateChannels.openTimeoutMillis = timeout;
        }
    }

    private static void forgeInt(Path file, long offset, int value) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.allocate(4).order(ByteOrder.nativeOrder()).putInt(0, value), offset);
        }
    }

    private static void forgeLong(Path file, long offset, long value) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(0, value), offset);
        }
    }

    /** Whether another process can take the lock of the byte at {@code offset}: "free" or "held". */
    static String probe(Path file, long offset) throws Exception {
        String probe = """
                import fcntl, os, sys
                fd = os.open(sys.argv[1], os.O_RDWR)
                try:
                    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, int(sys.argv[2]), 0)
                    print('free')
                except OSError:
                    print('held')
                """;
        Process p = new ProcessBuilder("python3", "-c", probe, file.toString(), String.valueOf(offset))
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        String answer = new String(p.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).strip();
        assertEquals(0, p.waitFor());
        return answer;
    }

    private static List<String> names(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    /**
     * Unmounts {@code mount}, retried a few times if busy; what of this process still uses it (descriptors,
     * mappings) is in the failure message.
     */
    private static void umount(Path mount) throws Exception {
        for (int attempt = 0; attempt < 5; attempt++) {
            if (run("umount", mount.toString()) == 0) {
                return;
            }
            Thread.sleep(200);
        }
        StringBuilder users = new StringBuilder();
        try (java.util.stream.Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            for (Path fd : fds.toList()) {
                try {
                    Path target = Files.readSymbolicLink(fd);
                    if (target.startsWith(mount)) {
                        users.append("fd ")
                                .append(fd.getFileName())
                                .append(" -> ")
                                .append(target)
                                .append('\n');
                    }
                } catch (IOException e) {
                    // closed meanwhile
                }
            }
        }
        Files.readAllLines(Path.of("/proc/self/maps")).stream()
                .filter(l -> l.contains(mount.toString()))
                .forEach(l -> users.append(l).append('\n'));
        org.junit.jupiter.api.Assertions.fail("umount " + mount + " failed; this process still uses it:\n" + users);
    }

    private static int run(String... command) throws InterruptedException {
        try {
            return new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start()
                    .waitFor();
        } catch (IOException e) {
            return -1;
        }
    }
}
