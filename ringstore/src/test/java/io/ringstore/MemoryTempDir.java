package io.ringstore;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.extension.AnnotatedElementContext;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.io.TempDirFactory;

/**
 * A temporary directory in memory (/dev/shm) where there is one: RingBuilder forces every file to
 * disk, which costs about 10 ms on a virtual disk and nothing on tmpfs; a thousand builds must
 * stay fast. Elsewhere the default temporary directory.
 */
public final class MemoryTempDir implements TempDirFactory {
    @Override
    public Path createTempDirectory(AnnotatedElementContext element, ExtensionContext extension) throws IOException {
        Path shm = Path.of("/dev/shm");
        if (Files.isDirectory(shm) && Files.isWritable(shm)) {
            return Files.createTempDirectory(shm, "ringstore-test-");
        }
        return Files.createTempDirectory("ringstore-test-");
    }
}
