package io.ringstore.internal;

import java.nio.file.Path;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The background thread that re-checks a watched file every so often (policy files, ring files).
 *
 * <p><b>A poller never dies.</b> A {@link ScheduledExecutorService} silently cancels a periodic task
 * the first time it throws, so one unexpected failure (an {@link OutOfMemoryError} while checking a
 * huge file, a bug) would end hot reload for good with nothing said. Every run is therefore wrapped
 * here, the one place all periodic checks go through: whatever it throws, {@link Error}s included,
 * is logged in one line and the schedule goes on, so the next good file is picked up.
 */
public final class Poller {
    private static final System.Logger LOG = System.getLogger(Poller.class.getName());

    private Poller() {}

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
        timer.scheduleWithFixedDelay(new NeverDies(kind, path, check), millis, millis, TimeUnit.MILLISECONDS);
        return timer;
    }

    /** {@code check}, with every failure logged and swallowed; the same failure again is logged once. */
    private static final class NeverDies implements Runnable {
        private final String kind;
        private final Path path;
        private final Runnable check;
        /** The last failure logged, until a run succeeds: a file that fails every poll is reported once. */
        private String lastFailure;

        NeverDies(String kind, Path path, Runnable check) {
            this.kind = kind;
            this.path = path;
            this.check = check;
        }

        @Override
        public void run() {
            try {
                check.run();
                lastFailure = null;
            } catch (Throwable t) { // Errors too: rethrowing anything would cancel the schedule
                try {
                    String failure = TextLines.oneLine(String.valueOf(t));
                    if (!failure.equals(lastFailure)) {
                        LOG.log(
                                System.Logger.Level.ERROR,
                                "{0}: {1} check failed, still polling: {2}",
                                path,
                                kind,
                                failure);
                        LOG.log(System.Logger.Level.DEBUG, "the failure's stack trace", t);
                    }
                    lastFailure = failure;
                } catch (Throwable again) {
                    // Logging failed too (out of memory still?): the next run logs, or the one after.
                }
            }
        }
    }
}
