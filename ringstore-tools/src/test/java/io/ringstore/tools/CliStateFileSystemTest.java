package io.ringstore.tools;

import static io.ringstore.tools.CliRun.backends;
import static io.ringstore.tools.CliRun.build;
import static io.ringstore.tools.CliRun.run;
import static io.ringstore.tools.CliRun.runWithInput;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.ringstore.state.HostState;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ringstore state} and {@code lookup} on a hostile state file (issue 20): a full tmpfs (item 3),
 * a read-only mount (item 9), forged values and endpoints (item 11). Mounting needs root; those tests
 * are skipped elsewhere.
 */
@Tag("process")
class CliStateFileSystemTest {
    private static final String FLEET = """
            server 127.0.0.1:8001;
            server 127.0.0.1:8002;
            server 127.0.0.1:8003;
            server 127.0.0.1:8004;
            """;

    @TempDir
    Path dir;

    /**
     * On a 1 MiB tmpfs the 4.7 MiB state file does not fit: drain says so in one line naming the state
     * file, and leaves nothing; lookup answers (there is no state file). A sparse state file, as an
     * earlier release left on a full disk, is one line naming the state file for state and drain, and
     * lookup answers without it, saying so once; before, all three blamed "a mapped ring file".
     */
    @Test
    void aFullFileSystemIsOneLineNamingTheStateFile() throws Exception {
        Path mount = Files.createDirectory(dir.resolve("small"));
        assumeTrue(
                sh("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mount.toString()) == 0,
                "cannot mount a tmpfs (not root?)");
        try {
            Path ring = mount.resolve("fleet.ring");
            build(backends(dir, "fleet.conf", FLEET), ring);
            Path state = HostState.statePath(ring);
            assertEquals(
                    state + ": cannot create: No space left on device",
                    run("state", ring.toString(), "drain", "127.0.0.1:8004").assertError(Main.FAILED, "state"));
            assertEquals(List.of(), CliRun.otherFiles(mount, ring), "no temporary file, no state file");
            CliRun answered = run("lookup", ring.toString(), "/a").assertOk();
            assertEquals(1, answered.outLines().size());
            assertEquals("", answered.stderr());

            sparseStateFile(state);
            CliRun lookup = run("lookup", ring.toString(), "/a").assertOk();
            assertEquals(answered.out(), lookup.out(), "answered without the state file");
            List<String> err = lookup.stderr().lines().toList();
            assertEquals(1, err.size(), lookup.stderr());
            assertTrue(
                    err.getFirst()
                                    .startsWith("ringstore lookup: " + state
                                            + ": a page of the mapped state file cannot be read")
                            && err.getFirst()
                                    .endsWith(
                                            "answering without the state file (as --no-state: drain and health not applied)"),
                    lookup.stderr());
            for (String[] args : List.of(
                    new String[] {"state", ring.toString()},
                    new String[] {"state", ring.toString(), "drain", "127.0.0.1:8004"})) {
                String message = run(args).assertError(Main.FAILED, "state");
                assertTrue(message.startsWith(state + ": a page of the mapped state file cannot be read"), message);
            }
        } finally {
            umount(mount);
        }
    }

    /** What an earlier release published on a full disk: the header of a real state file, a hole, one byte at the end. */
    private void sparseStateFile(Path state) throws Exception {
        Path whole = dir.resolve("real.ring.state");
        HostState.inspect(whole, HostState.Options.DEFAULTS, true).orElseThrow().close();
        try (FileChannel in = FileChannel.open(whole);
                FileChannel out = FileChannel.open(state, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            ByteBuffer header = ByteBuffer.allocate(HEADER);
            in.read(header, 0);
            out.write(header.flip(), 0);
            out.write(ByteBuffer.allocate(1), in.size() - 1);
        }
    }

    /**
     * On a read-only mount, {@code state} shows what it reads (drained backends listed, "read-only" said),
     * lookup skips the drained backend as on the writable path, and drain refuses in one line.
     */
    @Test
    void aReadOnlyMountIsShownAndConsultedButNotDrained() throws Exception {
        Path rw = Files.createDirectory(dir.resolve("rw"));
        Path ro = Files.createDirectory(dir.resolve("ro"));
        build(backends(dir, "fleet.conf", FLEET), rw.resolve("fleet.ring"));
        run("state", rw.resolve("fleet.ring").toString(), "drain", "127.0.0.1:8004")
                .assertOk();
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            keys.add("/item/" + i);
        }
        String input = String.join("\n", keys) + "\n";
        List<String> writable = runWithInput(
                        input, "lookup", rw.resolve("fleet.ring").toString())
                .assertOk()
                .outLines();
        assertTrue(writable.stream().noneMatch(l -> l.endsWith("\t127.0.0.1:8004")));
        assumeTrue(sh("mount", "--bind", rw.toString(), ro.toString()) == 0, "cannot bind-mount (not root?)");
        try {
            assumeTrue(sh("mount", "-o", "remount,bind,ro", ro.toString()) == 0, "cannot remount read-only");
            Path ring = ro.resolve("fleet.ring");
            Path state = HostState.statePath(ring);
            CliRun shown = run("state", ring.toString()).assertOk();
            String text = shown.out();
            assertTrue(text.contains("\nread-only: cannot open for reading and writing: "), text);
            assertTrue(text.matches("(?s).*\\n  127\\.0\\.0\\.1:8004 +yes +ok .*"), text);
            Map<String, Object> json = CliJson.object(CliJson.parse(
                    run("state", ring.toString(), "--json").assertOk().out()));
            assertTrue(
                    String.valueOf(json.get("read_only")).startsWith("cannot open for reading and writing"),
                    String.valueOf(json));
            assertEquals(
                    true,
                    CliJson.object(CliJson.array(json.get("backends")).getFirst())
                            .get("drained"));

            CliRun lookup = runWithInput(input, "lookup", ring.toString()).assertOk();
            assertEquals(writable, lookup.outLines(), "the drained backend skipped, as through the writable path");
            assertEquals("", lookup.stderr());

            String message =
                    run("state", ring.toString(), "drain", "127.0.0.1:8003").assertError(Main.FAILED, "state");
            assertTrue(
                    message.startsWith(state + ": ")
                            && message.toLowerCase(java.util.Locale.ROOT).contains("read-only file system"),
                    message);
        } finally {
            umount(ro);
        }
    }

    // The default layout (256 leases; FORMAT.md, "The state file"), for forging fields.
    private static final int LEASES = 256;
    private static final int HEADER = 128 + 4 * LEASES;
    private static final long RECORDS = HEADER + 64L * LEASES;
    private static final int RECORD = 64 + 4 * LEASES + 64;
    private static final int HIGH_WATER = 80;

    /**
     * Forged values are shown flagged, not as plain numbers (fails -5, in flight 31 × (2^32 - 1)); an
     * endpoint with an escape sequence or bytes that are not UTF-8 is shown escaped, and no control
     * byte reaches the terminal, in text or JSON.
     */
    @Test
    void forgedCountsAreFlaggedAndEndpointsEscaped() throws Exception {
        Path ring = dir.resolve("fleet.ring");
        try (HostState router = HostState.open(ring)) {
            assertEquals(0, router.track(List.of("10.0.0.1:80"))[0]);
        }
        Path state = HostState.statePath(ring);
        try (FileChannel ch = FileChannel.open(state, StandardOpenOption.WRITE)) {
            put(ch, RECORDS + 16, 8, -5); // slot 0's fails
            for (int lease = 1; lease < 32; lease++) {
                put(ch, RECORDS + 64 + 4L * lease, 4, 0xFFFF_FFFFL); // slot 0's cells: as if wrapped below zero
            }
            put(ch, HIGH_WATER, 4, 32);
            forgeEndpoint(ch, 1, "\u001b[2Jevil:80".getBytes(StandardCharsets.UTF_8));
            forgeEndpoint(ch, 2, new byte[] {(byte) 0xff, 'x', ':', '8', '0'});
        }
        CliRun shown = run("state", ring.toString()).assertOk();
        String text = shown.out();
        assertTrue(
                text.matches(
                        "(?s).*\\n  10\\.0\\.0\\.1:80 +no +corrupt \\(fails -5\\) +- +133143986145 \\(corrupt\\) .*"),
                text);
        assertTrue(text.contains("\n  \\x1b[2Jevil:80 "), text);
        assertTrue(text.contains("\n  \\xffx:80 "), text);
        assertFalse(containsControl(shown.stdout()), "no control byte reaches the terminal:\n" + text);

        CliRun asJson = run("state", ring.toString(), "--json").assertOk();
        assertFalse(containsControl(asJson.stdout()), asJson.out());
        List<Object> backends =
                CliJson.array(CliJson.object(CliJson.parse(asJson.out())).get("backends"));
        Map<String, Object> first = CliJson.object(backends.getFirst());
        assertEquals(-5, ((Number) first.get("fails")).intValue(), "the value as found, under its own key");
        assertEquals(List.of("fails", "in_flight"), CliJson.array(first.get("corrupt")));
        assertEquals("\u001b[2Jevil:80", CliJson.object(backends.get(1)).get("endpoint"), "JSON escapes it (\\u001b)");
        assertEquals("\\xffx:80", CliJson.object(backends.get(2)).get("endpoint"));
        assertFalse(CliJson.object(backends.get(1)).containsKey("corrupt"));
    }

    private static void forgeEndpoint(FileChannel ch, int slot, byte[] name) throws IOException {
        long record = RECORDS + (long) slot * RECORD;
        put(ch, record, 8, 1); // used
        ByteBuffer line = ByteBuffer.allocate(2 + name.length)
                .order(ByteOrder.nativeOrder())
                .putShort((short) name.length)
                .put(name);
        ch.write(line.flip(), record + RECORD - 64);
    }

    private static void put(FileChannel ch, long offset, int width, long value) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(width).order(ByteOrder.nativeOrder());
        if (width == 8) {
            b.putLong(0, value);
        } else {
            b.putInt(0, (int) value);
        }
        ch.write(b, offset);
    }

    private static boolean containsControl(byte[] out) {
        for (byte b : out) {
            if (b >= 0 && b < 0x20 && b != '\n' || b == 0x7f) {
                return true;
            }
        }
        return false;
    }

    /**
     * Unmounts {@code mount}, retried a few times if busy; what of this process still uses it (descriptors,
     * mappings) is in the failure message.
     */
    private static void umount(Path mount) throws Exception {
        for (int attempt = 0; attempt < 5; attempt++) {
            if (sh("umount", mount.toString()) == 0) {
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

    private static int sh(String... command) throws InterruptedException {
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
