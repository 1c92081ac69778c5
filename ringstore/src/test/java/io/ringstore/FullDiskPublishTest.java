package io.ringstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.ringstore.builder.BackendList;
import io.ringstore.builder.RingBuilder;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A build into a directory on a file system with no space left: it fails, and leaves nothing
 * behind, not even its publish lock file (whose token write is the first write to fail). Needs root
 * to mount a 64 KiB tmpfs; skipped elsewhere.
 */
@Tag("process")
class FullDiskPublishTest {
    @TempDir
    Path dir;

    @Test
    void aBuildOnAFullFileSystemLeavesNoLockOrTemporaryFile() throws Exception {
        Path mount = Files.createDirectory(dir.resolve("full"));
        assumeTrue(
                run("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mount.toString()) == 0,
                "cannot mount a tmpfs (not root?)");
        try {
            fill(mount.resolve("filler"));
            Path ring = mount.resolve("f.ring");
            RingBuilder builder = RingBuilder.of(BackendList.parse("t", "server 127.0.0.1:80\nserver 127.0.0.2:80\n"));
            IOException e = assertThrows(IOException.class, () -> builder.build(ring));
            assertTrue(e.getMessage().contains("No space left on device"), e.getMessage());
            assertEquals(List.of("filler"), names(mount), "nothing but the filler is left");
            Files.delete(mount.resolve("filler"));
            builder.build(ring); // with space again, the same build publishes
            assertEquals(List.of("f.ring"), names(mount));
        } finally {
            assertEquals(0, run("umount", mount.toString()), "umount " + mount);
        }
    }

    /** Writes until the file system is full. */
    private static void fill(Path file) throws IOException {
        byte[] block = new byte[4096];
        try (OutputStream out = Files.newOutputStream(file)) {
            while (true) {
                out.write(block);
            }
        } catch (IOException e) {
            if (!String.valueOf(e.getMessage()).contains("No space left on device")) {
                throw e;
            }
        }
    }

    private static List<String> names(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString()).sorted().toList();
        }
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
