package io.ringstore.migration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.ringstore.LogCapture;
import io.ringstore.RingFileException;
import io.ringstore.RingStore;
import io.ringstore.TestFiles;
import io.ringstore.TestRings;
import io.ringstore.family.RingVersion;
import io.ringstore.live.PolicyFileWatcher;
import io.ringstore.live.RingRouter;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.util.Set;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link PolicyFile}: valid files are applied, changes are picked up by {@code checkNow()} and by the
 * poller, and every kind of bad file is refused with a message naming the file (and the line, where
 * there is one) while the policy in force stays.
 */
class PolicyFileTest {
    @TempDir
    static Path shared;

    private static RingStore store;

    @TempDir
    Path dir;

    private long mtime = 1_700_000_000_000L;

    @BeforeAll
    static void buildRing() throws Exception {
        Path ring = shared.resolve("policy.ring");
        TestRings.build(ring, "server 127.0.0.1:80\nserver 127.0.0.2:80\n", RingVersion.V1, RingVersion.v2(4));
        store = RingStore.open(ring);
    }

    @AfterAll
    static void close() {
        store.close();
    }

    /** A router over the fixed store, between v1 and v2:4, at {@link RolloutPolicy#NONE}: what the file's policy goes to. */
    private static RingRouter selector() throws RingFileException {
        return RingRouter.builder(store)
                .versions(RingVersion.V1, RingVersion.v2(4))
                .policy(RolloutPolicy.NONE)
                .open();
    }

    /**
     * Writes the file in place and moves its modification time one second on, so that the change is
     * seen even where the file system's timestamps are coarser than the test's pace (see the report on
     * same-size edits within one timestamp tick).
     */
    /** Publishes a policy the documented way: a temporary file beside it, renamed over it. */
    private Path write(Path file, String text) throws IOException {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.writeString(tmp, text, StandardCharsets.UTF_8);
        mtime += 1000;
        Files.setLastModifiedTime(tmp, FileTime.fromMillis(mtime));
        Files.move(
                tmp,
                file,
                java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        return file;
    }

    // ---- parsing ----

    @Test
    void validTextGivesThePolicy() {
        Path src = Path.of("rollout.policy");
        assertEquals(
                new RolloutPolicy(1250, Set.of(), "ams"),
                PolicyFile.parse(src, "percent = 12.5\nscope = all\n", "ams"));
        assertEquals(
                new RolloutPolicy(1, Set.of(), "ams"),
                PolicyFile.parse(
                        src, "# ringstore rollout policy\n\n   percent=0.01   # one step\nscope = all\n", "ams"));
        assertEquals(
                new RolloutPolicy(10_000, Set.of("ams", "fra"), "fra"),
                PolicyFile.parse(src, "percent = 100\r\nscope = ams, fra\r\nlocal = fra\r\n", ""),
                "CRLF, a list, local from the file");
        assertEquals(
                new RolloutPolicy(500, Set.of("ams"), "ams"),
                PolicyFile.parse(src, "percent = 5\nscope = ams", "ams"),
                "local from the code, no final line end");
        assertEquals(
                new RolloutPolicy(500, Set.of("ams"), "lhr"),
                PolicyFile.parse(src, "local = lhr\npercent = 5\nscope = ams\n", "ams"),
                "the file's local wins over the code's");
        assertEquals(0, PolicyFile.parse(src, "percent = 0\nscope = all\n", "").basisPoints(), "the rollback");
        assertEquals(
                new RolloutPolicy(500, Set.of(), "ams"),
                PolicyFile.parse(src, "percent = 5%\nscope = all\n", "ams"),
                "the sign is allowed, as recommend --target-cv allows it (one parser: TextLines.percent)");
        assertEquals(
                new RolloutPolicy(1250, Set.of(), "ams"),
                PolicyFile.parse(src, "percent = 12.5 %\nscope = all\n", "ams"));
        assertFalse(PolicyFile.parse(src, "percent = 50\nscope = ams\nlocal = fra\n", "")
                .inScope());
    }

    @Test
    void badLinesAreRefusedWithFileAndLine() {
        Path src = Path.of("/etc/ringstore/rollout.policy");
        String[][] cases = {
            // text, line, what the message says
            {"percent = abc\n", "1", "not a number"},
            {"\n# comment\npercent = 100.01\n", "3", "outside 0-100"},
            {"percent = -1\n", "1", "outside 0-100"},
            {"percent = NaN\n", "1", "not a number"},
            {"percent = 5d\n", "1", "not a number"},
            {"percent = 5%%\n", "1", "not a number"},
            {"percent = 0x1p3\n", "1", "not a number"},
            {"percent = 12.345\n", "1", "0.01 % step"},
            {"percent = \n", "1", "not a number"},
            {"percent = 5\nmode = fast\n", "2", "unknown key 'mode'"},
            {"percent = 5\npercent = 6\n", "2", "given twice"},
            {"percent 5\n", "1", "expected 'key = value'"},
            {"scope = ams,,fra\npercent = 1\n", "1", "empty name"},
        };
        for (String[] c : cases) {
            IllegalArgumentException e =
                    assertThrows(IllegalArgumentException.class, () -> PolicyFile.parse(src, c[0], "ams"), c[0]);
            assertTrue(
                    e.getMessage().startsWith(src + ":" + c[1] + ": "),
                    () -> "file and line " + c[1] + " expected: " + e.getMessage());
            assertTrue(e.getMessage().contains(c[2]), () -> "'" + c[2] + "' expected: " + e.getMessage());
        }
    }

    /** What a message quotes of the file is one line (control characters as {@code \\xNN}) and at most 200 characters of it. */
    @Test
    void refusalsQuoteTheFileAsOneBoundedLine() {
        Path src = Path.of("p");
        for (String text : new String[] {
            "percent = 5\rscope = all\n",
            "percent 5\u001b[2J\n",
            "scope = a\u0007b\npercent = 1\n",
            "percent = 1\nscope = all\nlocal = x\ry\n",
            "percent = 1\nscope = all\nmo\rde = 1\n"
        }) {
            IllegalArgumentException e =
                    assertThrows(IllegalArgumentException.class, () -> PolicyFile.parse(src, text, "ams"), text);
            assertTrue(
                    e.getMessage().chars().noneMatch(Character::isISOControl),
                    () -> "a control character in: " + e.getMessage());
            assertTrue(e.getMessage().contains("\\x"), e.getMessage());
        }
        for (String text : new String[] {
            "x".repeat(60_000) + "\n",
            "percent = " + "9".repeat(60_000) + "\n",
            "scope = " + "a".repeat(60_000) + "\npercent = 1\n",
            "scope = ams," + "a".repeat(60_000) + "\npercent = 1\n",
            "percent = 1\nscope = all\n" + "k".repeat(60_000) + " = 1\n"
        }) {
            IllegalArgumentException e =
                    assertThrows(IllegalArgumentException.class, () -> PolicyFile.parse(src, text, "ams"));
            assertTrue(
                    e.getMessage().length() < 400 && e.getMessage().contains("characters in all)"),
                    () -> e.getMessage().length() + ": " + e.getMessage().substring(0, 300));
        }
    }

    /** A percent finer than 0.01 % is refused however close it is to a step: 99.999999999 is not 100. */
    @Test
    void aPercentFinerThanTheStepIsRefusedEvenNearAStep() {
        for (String value : new String[] {"99.999999999", "99.999999999%", "0.000000001", "50.000000001", "12.345"}) {
            IllegalArgumentException e = assertThrows(
                    IllegalArgumentException.class,
                    () -> PolicyFile.parse(Path.of("p"), "percent = " + value + "\nscope = all\n", "ams"),
                    value);
            assertTrue(e.getMessage().contains("finer than the 0.01 % step"), e.getMessage());
        }
        assertEquals(
                10_000,
                PolicyFile.parse(Path.of("p"), "percent = 100.000000000\nscope = all\n", "ams")
                        .basisPoints());
        assertEquals(
                1,
                PolicyFile.parse(Path.of("p"), "percent = 0.0100\nscope = all\n", "ams")
                        .basisPoints());
    }

    /** {@code all} in any case is every data centre; in a list of names it is refused, not taken as a data centre called all. */
    @Test
    void scopeAllIsReadInAnyCase() {
        for (String all : new String[] {"all", "ALL", "All"}) {
            RolloutPolicy p = PolicyFile.parse(Path.of("p"), "percent = 5\nscope = " + all + "\n", "ams");
            assertEquals(Set.of(), p.scope(), all);
            assertTrue(p.inScope(), all);
        }
        IllegalArgumentException e = assertThrows(
                IllegalArgumentException.class,
                () -> PolicyFile.parse(Path.of("p"), "percent = 5\nscope = ams,ALL\n", "ams"));
        assertTrue(e.getMessage().startsWith("p:2: ") && e.getMessage().contains("'all'"), e.getMessage());
    }

    @Test
    void badWholeFilesAreRefusedWithTheFile() {
        Path src = Path.of("/etc/ringstore/rollout.policy");
        String[][] cases = {
            {"scope = all\n", "", "no 'percent"},
            {"", "", "no 'percent"},
            {"percent = 100\n", "", "no 'scope"}, // cut short before its scope line: not 100 % everywhere
            {"percent = 5\nscope = ams\n", "", "local data centre"},
            {"percent = 5\nscope = ams b\n", "ams", "bad data centre name 'ams b'"},
        };
        for (String[] c : cases) {
            IllegalArgumentException e =
                    assertThrows(IllegalArgumentException.class, () -> PolicyFile.parse(src, c[0], c[1]), c[0]);
            assertTrue(e.getMessage().startsWith(src + ": "), () -> "file expected: " + e.getMessage());
            assertTrue(e.getMessage().contains(c[2]), () -> "'" + c[2] + "' expected: " + e.getMessage());
        }
    }

    @Test
    void aByteOrderMarkIsNotPartOfTheFirstKey() throws Exception {
        assertEquals(
                new RolloutPolicy(500, Set.of(), "ams"),
                PolicyFile.parse(Path.of("p"), "\uFEFFpercent = 5\nscope = all\n", "ams"));
        Path file = dir.resolve("rollout.policy");
        Files.write(file, new byte[] {
            (byte) 0xEF,
            (byte) 0xBB,
            (byte) 0xBF,
            'p',
            'e',
            'r',
            'c',
            'e',
            'n',
            't',
            '=',
            '6',
            '\n',
            's',
            'c',
            'o',
            'p',
            'e',
            '=',
            'a',
            'l',
            'l'
        });
        RingRouter sel = selector();
        try (PolicyFileWatcher pf = PolicyFileWatcher.watch(file, sel, "ams", 0)) {
            assertNull(pf.lastError());
            assertEquals(600, sel.policy().basisPoints());
        }
    }

    @Test
    void aFileWithoutReadPermissionSaysSo() throws Exception {
        Path file = write(dir.resolve("rollout.policy"), "percent = 5\nscope = all\n");
        Files.setPosixFilePermissions(file, Set.of());
        assumeFalse(Files.isReadable(file), "running as a user who reads any file (root)");
        RingRouter sel = selector();
        try (PolicyFileWatcher pf = PolicyFileWatcher.watch(file, sel, "ams", 0)) {
            assertEquals(file + ": cannot read policy file: permission denied", pf.lastError());
        }
    }

    // ---- watching ----

    @Test
    void aValidFileIsAppliedAndItsChangesOnCheckNow() throws Exception {
        Path file = write(dir.resolve("rollout.policy"), "percent = 1\nscope = all\n");
        RingRouter sel = selector();
        try (PolicyFileWatcher pf = PolicyFileWatcher.watch(file, sel, "ams", 0)) {
            assertEquals(
                    RolloutPolicy.everywhere(1).basisPoints(),
                    sel.policy().basisPoints(),
                    "applied when watching starts");
            assertNull(pf.lastError());
            RolloutPolicy applied = sel.policy();
            assertFalse(pf.checkNow(), "unchanged file");
            assertSame(applied, sel.policy());

            write(file, "percent = 10\nscope = ams,fra\n");
            assertTrue(pf.checkNow());
            assertEquals(new RolloutPolicy(1000, Set.of("ams", "fra"), "ams"), sel.policy());

            write(file, "percent = 0\nscope = all\n");
            assertTrue(pf.checkNow());
            assertEquals(0, sel.policy().basisPoints(), "rolled back");
            assertFalse(sel.policy().migrates(new byte[] {1, 2, 3}, 0, 3));
        }
    }

    /** Each bad file is refused, the message names the file (and line), the policy stays, and a fix is applied. */
    @Test
    void aBadFileIsRefusedAndThePreviousPolicyStays() throws Exception {
        Path file = write(dir.resolve("rollout.policy"), "percent = 7.5\nscope = all\n");
        RingRouter sel = selector();
        String[][] bad = {
            {"percent = 150\n", ":1: "},
            {"percent = 5\nspeed = max\n", ":2: "},
            {"percent = 5\nscope = ams\n", ": "
            }, // scoped, and neither the file nor the code names the local data centre
            {"scope = all\n", ": "},
            {"percent = 100\n", ": "},
            {"percent = 5\npercent = 5\n", ":2: "},
        };
        try (PolicyFileWatcher pf = PolicyFileWatcher.watch(file, sel, "", 0)) {
            RolloutPolicy good = sel.policy();
            assertEquals(750, good.basisPoints());
            for (String[] b : bad) {
                write(file, b[0]);
                assertFalse(pf.checkNow(), b[0]);
                assertSame(good, sel.policy(), () -> "policy kept after " + b[0]);
                String error = pf.lastError();
                assertTrue(
                        error != null && error.startsWith(file + b[1]),
                        () -> "file" + (b[1].length() > 2 ? " and line" : "") + " expected: " + error);
                assertTrue(error.contains("keeping " + good), () -> "says which policy stays: " + error);
                assertFalse(pf.checkNow(), "the same bad file again");
                assertEquals(error, pf.lastError());
            }
            write(file, "percent = 8\nscope = all\n");
            assertTrue(pf.checkNow());
            assertEquals(800, sel.policy().basisPoints());
            assertNull(pf.lastError(), "a valid file clears the error");
        }
    }

    @Test
    void aFileWhoseTextNamesTheLastFailureIsReadAsText() throws Exception {
        Path file = dir.resolve("rollout.policy");
        RingRouter sel = selector();
        try (PolicyFileWatcher pf = PolicyFileWatcher.watch(file, sel, "ams", 0)) {
            assertTrue(pf.lastError().contains("does not exist"), pf.lastError());
            write(file, "missing");
            assertFalse(pf.checkNow());
            assertTrue(pf.lastError().contains("expected 'key = value', found 'missing'"), pf.lastError());

            Files.delete(file);
            Files.createDirectory(file);
            assertFalse(pf.checkNow());
            assertTrue(pf.lastError().contains("cannot read"), pf.lastError());
            Files.delete(file);
            write(file, "unreadable");
            assertFalse(pf.checkNow());
            assertTrue(pf.lastError().contains("expected 'key = value', found 'unreadable'"), pf.lastError());
        }
    }

    @Test
    void aMissingOrUnreadableFileIsRefused() throws Exception {
        Path file = dir.resolve("rollout.policy");
        RingRouter sel = selector();
        sel.policy(RolloutPolicy.everywhere(3));
        RolloutPolicy initial = sel.policy();
        try (PolicyFileWatcher pf = PolicyFileWatcher.watch(file, sel, "ams", 0)) {
            assertSame(initial, sel.policy(), "no file: the selector's policy stays");
            assertTrue(
                    pf.lastError().startsWith(file.toString()) && pf.lastError().contains("does not exist"),
                    pf.lastError());

            write(file, "percent = 4\nscope = all\n");
            assertTrue(pf.checkNow());
            assertEquals(400, sel.policy().basisPoints());
            assertNull(pf.lastError());

            Files.delete(file);
            assertFalse(pf.checkNow());
            assertEquals(400, sel.policy().basisPoints(), "deleted: the policy stays");
            assertTrue(pf.lastError().contains("does not exist"), pf.lastError());

            Files.createDirectory(file); // exists, but cannot be read as text
            assertFalse(pf.checkNow());
            assertEquals(400, sel.policy().basisPoints());
            assertTrue(pf.lastError().startsWith(file + ": cannot read"), pf.lastError());
            Files.delete(file);

            Files.write(
                    file,
                    new byte[] {'p', 'e', 'r', 'c', 'e', 'n', 't', '=', (byte) 0xC3, (byte) 0x28, '\n'}); // not UTF-8
            assertFalse(pf.checkNow());
            assertEquals(400, sel.policy().basisPoints());
            assertTrue(pf.lastError().startsWith(file + ": cannot read"), pf.lastError());
            assertTrue(pf.lastError().contains("not UTF-8 text at byte 8"), pf.lastError());

            write(file, "percent = 5\nscope = all\n");
            assertTrue(pf.checkNow());
            assertEquals(500, sel.policy().basisPoints());
        }
    }

    /** The poller (20 ms) picks up a change within a bounded wait, refuses a bad file, and stops on close. */
    @Test
    void thePollerAppliesChangesUntilClosed() throws Exception {
        Path file = write(dir.resolve("rollout.policy"), "percent = 1\nscope = all\n");
        RingRouter sel = selector();
        PolicyFileWatcher pf = PolicyFileWatcher.watch(file, sel, "ams", 20);
        try {
            assertEquals(100, sel.policy().basisPoints());
            write(file, "percent = 25\nscope = all\n");
            assertTrue(waitFor(() -> sel.policy().basisPoints() == 2500), "the poller applied 25 % within 10 s");

            write(file, "percent = 250\n");
            assertTrue(waitFor(() -> pf.lastError() != null), "the poller refused the bad file within 10 s");
            assertTrue(pf.lastError().startsWith(file + ":1: "), pf.lastError());
            assertEquals(2500, sel.policy().basisPoints(), "the bad file changed nothing");

            write(file, "percent = 0\nscope = all\n");
            assertTrue(
                    waitFor(() -> sel.policy().basisPoints() == 0 && pf.lastError() == null),
                    "rolled back within 10 s");
        } finally {
            pf.close();
        }
        write(file, "percent = 60\nscope = all\n");
        Thread.sleep(200); // ten poll intervals
        assertEquals(0, sel.policy().basisPoints(), "a closed watcher applies nothing");
    }

    /**
     * A 3 GiB sparse file is refused without being read (before: an OutOfMemoryError that cancelled the
     * poller, with nothing logged), in one logged line however often it is polled; a good file after
     * it is applied.
     */
    @Test
    void aFileOverTheLimitIsRefusedUnreadAndTheNextGoodFileIsApplied() throws Exception {
        Path file = write(dir.resolve("rollout.policy"), "percent = 1\nscope = all\n");
        RingRouter sel = selector();
        try (LogCapture log = new LogCapture(PolicyFileWatcher.class);
                PolicyFileWatcher pf = PolicyFileWatcher.watch(file, sel, "ams", 5)) {
            Path huge = dir.resolve("huge.tmp");
            try (RandomAccessFile raf = new RandomAccessFile(huge.toFile(), "rw")) {
                raf.setLength(3L << 30);
            }
            Files.move(huge, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            String reason =
                    file + ": cannot read policy file: is 3221225472 bytes, more than the 65536 a policy file may have";
            assertTrue(
                    waitFor(() -> pf.lastError() != null && pf.lastError().startsWith(reason)),
                    () -> "refused within 10 s: " + pf.lastError());
            Thread.sleep(100); // twenty polls more
            assertEquals(1, log.containing("3221225472 bytes").size(), () -> "one line: " + log.lines());
            assertEquals(100, sel.policy().basisPoints(), "the policy stays");

            write(file, "percent = 2\nscope = all\n");
            assertTrue(waitFor(() -> sel.policy().basisPoints() == 200), "the next good file applied within 10 s");
        }
    }

    /**
     * A bad file written in place while it grows (appended to, as by a running {@code >>}) is
     * refused in one log line, not one a poll, though each poll reads other text (a longer line, a
     * larger size); a good file applied after it, then a bad one again, is logged again.
     */
    @Test
    void aBadFileGrowingInPlaceIsLoggedOnce() throws Exception {
        Path file = write(dir.resolve("rollout.policy"), "percent = 1\nscope = all\n");
        RingRouter sel = selector();
        try (LogCapture log = new LogCapture(PolicyFileWatcher.class);
                PolicyFileWatcher pf = PolicyFileWatcher.watch(file, sel, "ams", 0)) {
            Path bad = write(dir.resolve("rollout.policy"), "percent = 2\nscope = all\n");
            byte[] chunk = "y".repeat(1000).getBytes(StandardCharsets.US_ASCII);
            Files.writeString(bad, "percent = 2\nscope = all\ny", java.nio.file.StandardOpenOption.TRUNCATE_EXISTING);
            for (int i = 0; i < 80; i++) { // past the 64 KiB limit on the way
                assertFalse(pf.checkNow());
                Files.write(bad, chunk, java.nio.file.StandardOpenOption.APPEND);
            }
            assertTrue(pf.checkNow() || pf.lastError() != null);
            assertEquals(
                    1,
                    log.lines().stream().filter(l -> l.startsWith("WARNING")).count(),
                    () -> "one warning: " + log.lines());
            assertEquals(100, sel.policy().basisPoints(), "the policy stays");

            write(file, "percent = 3\nscope = all\n");
            assertTrue(pf.checkNow());
            write(file, "percent = 4\n");
            assertFalse(pf.checkNow());
            assertEquals(
                    2,
                    log.lines().stream().filter(l -> l.startsWith("WARNING")).count(),
                    () -> "a new file's refusal: " + log.lines());
        }
    }

    /**
     * A FIFO is refused without being opened (opening one blocks until a writer comes): neither
     * {@code watch} nor the poller hangs, and a good file replacing it is applied. The 10 s limits
     * only detect a hang.
     */
    @Test
    void aFifoAtThePathIsRefusedUnopened() throws Exception {
        Path file = dir.resolve("rollout.policy");
        TestFiles.mkfifo(file);
        RingRouter sel = selector();
        FutureTask<PolicyFileWatcher> watching = new FutureTask<>(() -> PolicyFileWatcher.watch(file, sel, "ams", 5));
        Thread.ofPlatform().daemon().name("watch a FIFO").start(watching);
        try (PolicyFileWatcher pf = watching.get(10, TimeUnit.SECONDS)) {
            assertEquals(
                    file + ": cannot read policy file: not a regular file (a FIFO, socket or device?); not opened",
                    pf.lastError());
            Files.delete(file);
            write(file, "percent = 3\nscope = all\n");
            assertTrue(
                    waitFor(() -> sel.policy().basisPoints() == 300),
                    "the poller applied the file replacing the FIFO within 10 s");
            assertNull(pf.lastError());
        }
    }

    private static boolean waitFor(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (System.nanoTime() < deadline) {
            if (condition.getAsBoolean()) {
                return true;
            }
            Thread.sleep(5);
        }
        return condition.getAsBoolean();
    }
}
