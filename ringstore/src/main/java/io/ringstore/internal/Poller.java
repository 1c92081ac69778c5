package io.ringstore.internal;

import java.nio.file.Path;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/** The background thread that re-checks a watched file every so often (policy files, ring files). */
public final class Poller {
    private Poller() {
    }

    /**
     * Runs {@code check} every {@code millis} ms on a daemon thread named after the file; null (no
     * thread) when {@code millis} is 0, for callers that check on demand only.
     */
    public static ScheduledExecutorService start(String kind, Path path, long millis, Runnable check) {
        if (millis <= 0) {
            return null;
        }
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "ringstore-" + kind + " " + path.getFileName());
            t.setDaemon(true);
            return t;
        });
        timer.scheduleWithFixedDelay(check, millis, millis, TimeUnit.MILLISECONDS);
        return timer;
    }
}
