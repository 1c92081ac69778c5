package io.ringstore;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Files that are not regular files, for the tests that every reader refuses them unopened. */
public final class TestFiles {
    private TestFiles() {}

    /** Makes a FIFO at {@code path} with mkfifo(1), or skips the test where there is none. */
    public static void mkfifo(Path path) throws InterruptedException {
        int exit;
        try {
            exit = new ProcessBuilder("mkfifo", path.toString())
                    .inheritIO()
                    .start()
                    .waitFor();
        } catch (IOException e) {
            exit = -1;
        }
        assumeTrue(exit == 0 && Files.exists(path), "mkfifo is not available");
    }
}
