package io.ringstore.live;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.TestFiles;
import io.ringstore.migration.RolloutPolicy;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A FIFO renamed over the policy file between the watcher's regular-file check and its open: the
 * check gives up on the open instead of blocking the watcher for good, and the next file is applied.
 * The limits only detect a hang.
 */
class PolicyFileWatcherFifoTest {
    @TempDir
    Path dir;

    @Test
    @Tag("slow") // waits out the bounded open's 5 s
    void aFifoRenamedInBetweenCheckAndOpenDoesNotBlockTheWatcher() throws Exception {
        Path file = write(dir.resolve("rollout.policy"), "percent = 1\nscope = all\n");
        Path fifo = dir.resolve("planted.fifo");
        TestFiles.mkfifo(fifo);
        AtomicReference<RolloutPolicy> policy = new AtomicReference<>(RolloutPolicy.NONE);
        try (PolicyFileWatcher watcher = PolicyFileWatcher.watch(file, policy::get, policy::set, "ams", 0)) {
            assertEquals(100, policy.get().basisPoints());
            write(file, "percent = 2\nscope = all\n");
            AtomicBoolean once = new AtomicBoolean();
            watcher.afterRegularCheck = () -> {
                if (once.compareAndSet(false, true)) {
                    try {
                        Files.move(fifo, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                }
            };
            try {
                assertFalse(assertTimeoutPreemptively(Duration.ofSeconds(60), watcher::checkNow));
                assertTrue(once.get());
                assertTrue(watcher.lastError().contains("did not return within"), watcher.lastError());
                Files.delete(file);
                write(file, "percent = 3\nscope = all\n");
                assertTrue(assertTimeoutPreemptively(Duration.ofSeconds(60), watcher::checkNow), watcher::lastError);
                assertEquals(300, policy.get().basisPoints());
            } finally {
                if (Files.exists(file) && !Files.isRegularFile(file)) {
                    try (RandomAccessFile w =
                            new RandomAccessFile(file.toFile(), "rw")) { // O_RDWR: unblocks a reader, never blocks
                        w.getFD();
                    }
                }
            }
        }
    }

    private static Path write(Path file, String text) throws IOException {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.writeString(tmp, text, StandardCharsets.UTF_8);
        return Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }
}
