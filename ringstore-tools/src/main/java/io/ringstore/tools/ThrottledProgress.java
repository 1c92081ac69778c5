package io.ringstore.tools;

import java.io.PrintStream;
import java.util.function.Consumer;

/** Prints progress lines only once a job has run for a second, then at most once a second. */
final class ThrottledProgress implements Consumer<String> {
    private static final long INTERVAL_NANOS = 1_000_000_000L;

    private final PrintStream err;
    private final String prefix;
    private final long start = System.nanoTime();
    private long last = start;

    ThrottledProgress(PrintStream err, String prefix) {
        this.err = err;
        this.prefix = prefix;
    }

    @Override
    public void accept(String message) {
        long now = System.nanoTime();
        if (now - last >= INTERVAL_NANOS) {
            last = now;
            err.printf("%s%s (%.1f s)%n", prefix, message, (now - start) / 1e9);
        }
    }
}
