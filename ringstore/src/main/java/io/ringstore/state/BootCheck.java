package io.ringstore.state;

import static io.ringstore.state.StateFileLayout.*;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;

/**
 * A state file from an earlier boot. Its times are {@code System.nanoTime()} values, which restart at
 * boot: after a reboot each stored time reads as in the future, so a backend whose last event was a
 * failure would be skipped host-wide for up to the previous uptime. The header keeps the kernel's boot
 * id of the boot its times belong to; a process that opens the file to write and finds another boot's
 * id resets what cannot carry over (every backend's failure count and times, every lease's heartbeat)
 * and keeps what can (drains, the endpoints' slots), under the directory lock, once per boot.
 */
final class BootCheck {
    private static final System.Logger LOG = System.getLogger(HostState.class.getName());
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    private static final Path BOOT_ID = Path.of("/proc/sys/kernel/random/boot_id");
    /** This boot's id, as two words; {@code null} where the kernel does not say (not Linux). */
    private static final long[] CURRENT = read(BOOT_ID);

    private BootCheck() {}

    /** {@return the boot id in {@code file} as two words, or {@code null} if there is none or it is not a UUID} */
    static long[] read(Path file) {
        try {
            String text =
                    Files.readString(file, StandardCharsets.US_ASCII).trim().replace("-", "");
            if (text.length() != 32) {
                return null;
            }
            HexFormat hex = HexFormat.of();
            return new long[] {hex.fromHexDigitsToLong(text, 0, 16), hex.fromHexDigitsToLong(text, 16, 32)};
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /**
     * Makes {@code file}'s times this boot's: if it carries another boot's id, resets failure counts,
     * failure and probe times and lease heartbeats (one log line); then stores this boot's id. A file
     * with no id yet (new, or written by an earlier release) only gets this boot's id: its times in
     * the future are read as stale.
     */
    static void adopt(StateMapping file) {
        adopt(file, CURRENT);
    }

    /** {@link #adopt(StateMapping)} with the boot id given, for tests. */
    static void adopt(StateMapping file, long[] current) {
        if (current == null || matches(file.segment, current)) {
            return;
        }
        FileLock lock = file.lockDirectory();
        try {
            MemorySegment s = file.segment;
            if (matches(s, current)) {
                return; // another process adopted it meanwhile
            }
            long hi = (long) LONG.getVolatile(s, (long) BOOT_ID_OFFSET);
            long lo = (long) LONG.getVolatile(s, (long) BOOT_ID_OFFSET + 8);
            if (hi != 0 || lo != 0) {
                long now = System.nanoTime();
                int failed = 0;
                for (int slot = 0; slot < file.slots; slot++) {
                    long r = file.record(slot);
                    if ((long) LONG.getVolatile(s, r + FAILS_OFFSET) != 0) { // no getAndSet: see BackendHealth
                        failed++;
                        LONG.setVolatile(s, r + FAILS_OFFSET, 0L);
                    }
                    LONG.setVolatile(s, r + CHECKED_OFFSET, 0L);
                    LONG.setVolatile(s, r + ACCESSED_OFFSET, 0L);
                    LONG.setVolatile(s, r + NAMED_OFFSET, now); // the reclaim clock starts again
                }
                for (int l = 0; l < file.leases; l++) {
                    LONG.setVolatile(s, file.lease(l) + LEASE_HEARTBEAT_OFFSET, 0L);
                }
                LOG.log(
                        Level.INFO,
                        "{0}: written during an earlier boot (boot id {1}); failure counts and times reset ({2} backends "
                                + "had failures), drains kept",
                        file.path,
                        text(hi, lo),
                        String.valueOf(failed));
            }
            LONG.setVolatile(s, (long) BOOT_ID_OFFSET + 8, current[1]);
            LONG.setVolatile(s, (long) BOOT_ID_OFFSET, current[0]);
        } finally {
            file.unlockDirectory(lock);
        }
    }

    private static boolean matches(MemorySegment s, long[] id) {
        return (long) LONG.getVolatile(s, (long) BOOT_ID_OFFSET) == id[0]
                && (long) LONG.getVolatile(s, (long) BOOT_ID_OFFSET + 8) == id[1];
    }

    /** {@return the two words as the kernel writes a boot id} */
    static String text(long hi, long lo) {
        String h = HexFormat.of().toHexDigits(hi) + HexFormat.of().toHexDigits(lo);
        return h.substring(0, 8) + "-" + h.substring(8, 12) + "-" + h.substring(12, 16) + "-" + h.substring(16, 20)
                + "-" + h.substring(20);
    }
}
