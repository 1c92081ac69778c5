package io.ringstore.testing;

import java.util.concurrent.TimeUnit;

/** Waiting for a stopped process from {@code close()}, which should not throw {@link InterruptedException}. */
final class Processes {
    private static final long EXIT_WAIT_SECONDS = 5;

    private Processes() {}

    /**
     * Waits up to 5 s for {@code process} to exit and says whether it did; an interrupt ends the wait
     * early (answering whether it has exited by then) and is kept on the thread.
     */
    static boolean awaitExit(Process process) {
        try {
            return process.waitFor(EXIT_WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return !process.isAlive();
        }
    }
}
