package io.ringstore.state;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.LogCapture;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A bad state file is bad input: a router replaces a corrupt one with one log line (the old one moved
 * aside), refuses another version's, and nothing read from the file is trusted for an offset.
 */
class StateFileCorruptionTest {
    private static final HostState.Options SMALL = HostStateTest.SMALL;

    @TempDir
    Path dir;

    private Path ring() {
        return dir.resolve("fleet.ring");
    }

    private Path state() {
        return HostState.statePath(ring());
    }

    /** A valid file with a few backends in it, as bytes. */
    private byte[] validFile() throws Exception {
        try (HostState h = HostState.open(ring(), SMALL)) {
            h.track(List.of("10.0.0.1:80", "10.0.0.2:80", "[::1]:9000"));
            h.drain("10.0.0.2:80");
        }
        byte[] bytes = Files.readAllBytes(state());
        Files.delete(state());
        return bytes;
    }

    /** Opens the state of {@link #ring()} as a router and expects it replaced, with one warning naming it. */
    private void expectRebuilt(String because) throws Exception {
        try (LogCapture log = new LogCapture(HostState.class);
                HostState h = HostState.open(ring(), SMALL)) {
            List<String> lines = log.containing(state().toString());
            assertEquals(1, lines.size(), () -> "one line: " + log.lines());
            assertTrue(lines.getFirst().startsWith("WARNING"), lines.getFirst());
            assertTrue(lines.getFirst().contains(because), () -> lines.getFirst() + " should say " + because);
            assertTrue(lines.getFirst().contains("moved aside to fleet.ring.state.bad"), lines.getFirst());
            assertEquals(List.of(), h.backends(), "a new, empty file");
            int s = h.track(List.of("a:1"))[0];
            h.acquire(s);
            assertEquals(1, h.inFlight(s));
        }
        assertTrue(Files.exists(dir.resolve("fleet.ring.state.bad")));
    }

    @Test
    void truncatedFilesAreReplaced() throws Exception {
        byte[] valid = validFile();
        for (int length : new int[] {0, 7, 100, 255, 256, valid.length / 2, valid.length - 1}) {
            Files.write(state(), Arrays.copyOf(valid, length));
            expectRebuilt(length < 256 ? "shorter than the 256-byte header" : "truncated or extended?");
        }
        Files.write(state(), Arrays.copyOf(valid, valid.length + 64));
        expectRebuilt("truncated or extended?");
    }

    /** A FIFO or a directory at the state file's path is refused unopened and left alone, never rebuilt over. */
    @Test
    void aFifoOrADirectoryIsRefusedNotRebuilt() throws Exception {
        io.ringstore.TestFiles.mkfifo(state());
        StateFileException e = assertThrows(StateFileException.class, () -> HostState.open(ring(), SMALL));
        assertTrue(e.getMessage().contains("is not a regular file"), e.getMessage());
        assertTrue(Files.exists(state()) && !Files.isRegularFile(state()), "the FIFO is left where it was");
        Files.delete(state());
        Files.createDirectory(state());
        e = assertThrows(StateFileException.class, () -> HostState.open(ring(), SMALL));
        assertTrue(e.getMessage().contains("is a directory") && !e.getMessage().contains("Exception"), e.getMessage());
        assertTrue(Files.isDirectory(state()));
    }

    @Test
    void garbageIsReplaced() throws Exception {
        byte[] garbage = new byte[validFile().length];
        new SplittableRandom(12).nextBytes(garbage);
        Files.write(state(), garbage);
        expectRebuilt("not a state file");
        Files.writeString(state(), "server 10.0.0.1:80;\n".repeat(100));
        expectRebuilt("not a state file");
    }

    @Test
    void aHeaderThatLiesAboutItsSizesIsReplaced() throws Exception {
        byte[] valid = validFile();
        ByteBuffer b = ByteBuffer.wrap(valid).order(ByteOrder.nativeOrder());
        b.putInt(StateFileLayout.SLOT_COUNT_OFFSET, 1 << 20); // CRC left as it was: the checksum catches it
        Files.write(state(), valid);
        expectRebuilt("header CRC-32C");
    }

    @Test
    void anotherVersionsFileIsRefusedAndLeftAlone() throws Exception {
        byte[] valid = validFile();
        ByteBuffer.wrap(valid).order(ByteOrder.nativeOrder()).putInt(StateFileLayout.VERSION_OFFSET, 3);
        Files.write(state(), valid);
        StateFileException e = assertThrows(StateFileException.class, () -> HostState.open(ring(), SMALL));
        assertEquals(
                state() + ": at byte 8: state file version 3, this library reads versions 1 and 2 "
                        + "(delete the file when no router of that version runs)",
                e.getMessage());
        assertArrayEquals(valid, Files.readAllBytes(state()), "untouched");
        StateFileException inspected =
                assertThrows(StateFileException.class, () -> HostState.inspect(state(), SMALL, true));
        assertEquals(e.getMessage(), inspected.getMessage());
    }

    @Test
    void theOtherByteOrderIsReplaced() throws Exception {
        byte[] valid = validFile();
        ByteBuffer.wrap(valid)
                .order(ByteOrder.nativeOrder())
                .putInt(StateFileLayout.VERSION_OFFSET, Integer.reverseBytes(1));
        Files.write(state(), valid);
        expectRebuilt("other byte order");
    }

    @Test
    void corruptRecordsAreShownAsCorruptNeverFollowed() throws Exception {
        byte[] valid = validFile();
        int leases = SMALL.leases();
        long firstRecord = StateFileLayout.recordsOffset(leases);
        int endpointLength =
                (int) firstRecord + StateFileLayout.recordLength(leases) - StateFileLayout.ENDPOINT_LINE_LENGTH;
        ByteBuffer.wrap(valid).order(ByteOrder.nativeOrder()).putShort(endpointLength, (short) 0xFFFF);
        Files.write(state(), valid);
        try (HostState h = HostState.open(ring(), SMALL)) {
            List<HostState.BackendState> b = h.backends();
            assertEquals("(corrupt endpoint)", b.getFirst().endpoint());
            assertEquals("10.0.0.2:80", b.get(1).endpoint());
            assertTrue(b.get(1).drained());
            assertEquals(-1, h.slot("10.0.0.1:80"), "not found in a corrupt record");
            assertThrows(IndexOutOfBoundsException.class, () -> h.inFlight(SMALL.slots()));
            assertThrows(IndexOutOfBoundsException.class, () -> h.available(-1, 0));
        }
    }

    /**
     * Mutated files, seeded: flipped bytes anywhere, in the header especially, and truncations. Each
     * open either serves (the mutation hit counts or names) or replaces the file with one warning; no
     * other exception, and every operation afterwards works.
     */
    @Test
    void fuzzedStateFilesNeverCrashAnOpen() throws Exception {
        byte[] valid = validFile();
        SplittableRandom random = new SplittableRandom(2026);
        int replaced = 0;
        for (int round = 0; round < 300; round++) {
            byte[] bytes = valid.clone();
            int flips = 1 + random.nextInt(8);
            for (int i = 0; i < flips; i++) {
                int at = random.nextBoolean()
                        ? random.nextInt(StateFileLayout.HEADER_LENGTH)
                        : random.nextInt(bytes.length);
                bytes[at] = (byte) random.nextInt(256);
            }
            if (random.nextInt(10) == 0) {
                bytes = Arrays.copyOf(bytes, random.nextInt(bytes.length + 1));
            }
            Files.write(state(), bytes);
            try (LogCapture log = new LogCapture(HostState.class);
                    HostState h = HostState.open(ring(), SMALL)) {
                replaced += log.containing("moved aside").size();
                for (HostState.BackendState b : h.backends()) {
                    // opening only zeroes counts (a reaped or claimed lease's), never adds: at most what the
                    // mutated file held, never a count taken below zero (an unsigned 4,294,967,295)
                    long held = cellsInFlight(bytes, b.slot());
                    assertTrue(
                            b.inFlight() <= held,
                            "round " + round + ": " + b.endpoint() + " has " + b.inFlight()
                                    + " in flight, the file held " + held);
                }
                int[] slots = h.track(List.of("fuzz:1", "10.0.0.1:80"));
                h.acquire(slots[0]);
                assertEquals(1, h.inFlight(slots[0]), "round " + round + ": one acquired");
                h.available(slots[1], System.nanoTime());
                h.release(slots[0]);
                assertEquals(0, h.inFlight(slots[0]), "round " + round + ": released");
                assertFalse(h.leases().isEmpty());
            } catch (StateFileException e) {
                assertTrue(e.getMessage().contains("state file version"), e.getMessage()); // the one refusal
            }
        }
        assertTrue(replaced > 100, "most mutations hit the checked header: " + replaced);
    }

    /** The sum of the unsigned in-flight cells of the record {@code slot} in the file {@code bytes}, laid out as {@link #SMALL}'s. */
    private static long cellsInFlight(byte[] bytes, int slot) {
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.nativeOrder());
        long cells = StateFileLayout.recordsOffset(SMALL.leases())
                + (long) slot * StateFileLayout.recordLength(SMALL.leases())
                + StateFileLayout.IN_FLIGHT_OFFSET;
        long sum = 0;
        for (int l = 0; l < SMALL.leases(); l++) {
            sum += Integer.toUnsignedLong(b.getInt(Math.toIntExact(cells + 4L * l)));
        }
        return sum;
    }
}
