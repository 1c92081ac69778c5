package io.ringstore.internal;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * Opening a file for reading that a watcher has just checked to be a regular file, without waiting
 * for good if it no longer is one. A FIFO renamed over the path between the check and the open makes
 * {@code open(2)} block until a writer comes, maybe never; Java cannot pass {@code O_NONBLOCK}, and a
 * library that calls no native code has no {@code openat}/{@code fstat} to check the descriptor
 * instead. So the open runs on an opener thread and the caller waits at most {@link #TIMEOUT_MILLIS}:
 * past that it gets an {@link IOException} and goes on (a watcher refuses this poll and polls again);
 * the opener stays blocked until the FIFO gets a writer or the process ends, and closes what it
 * opened if it ever returns. At most {@link #MAX_OPENERS} openers exist at once, so blocked ones are
 * bounded too; each is a daemon thread, so none keeps the JVM alive.
 */
public final class BoundedOpen {
    /** How long an open may take: a local file opens in microseconds, a slow network file system in well under this. */
    public static final long TIMEOUT_MILLIS = 5_000;
    /** Openers at once, blocked ones included: past this, opens are refused until one returns. */
    public static final int MAX_OPENERS = 16;

    private static final ThreadPoolExecutor OPENERS = new ThreadPoolExecutor(0, MAX_OPENERS, 30, TimeUnit.SECONDS,
            new SynchronousQueue<>(), r -> Thread.ofPlatform().daemon().name("ringstore file opener").unstarted(r));

    private BoundedOpen() {
    }

    /**
     * Opens {@code path} for reading, waiting at most {@link #TIMEOUT_MILLIS}.
     *
     * @param path a file just checked to be a regular file
     * @return the open channel
     * @throws IOException when the open fails, or does not return in time (then the message says so)
     */
    public static FileChannel read(Path path) throws IOException {
        return read(path, TIMEOUT_MILLIS);
    }

    /** {@link #read(Path)} with another limit (tests). */
    static FileChannel read(Path path, long timeoutMillis) throws IOException {
        return open(path, timeoutMillis, ch -> {
            try {
                ch.close();
            } catch (IOException e) {
                // nothing to do about a descriptor nobody uses
            }
        }, StandardOpenOption.READ);
    }

    /**
     * Opens {@code path} with {@code options}, waiting at most {@code timeoutMillis}, as {@link #read(Path)} does.
     *
     * @param late what to do with a channel whose open returned after the caller gave up: close it, or
     *             (the state file, whose record locks closing any descriptor of it would drop) keep it
     * @throws IOException when the open fails, or does not return in time (then the message says so)
     */
    public static FileChannel open(Path path, long timeoutMillis, Consumer<FileChannel> late, OpenOption... options) throws IOException {
        CompletableFuture<FileChannel> opened = new CompletableFuture<>();
        try {
            OPENERS.execute(() -> {
                try {
                    FileChannel ch = FileChannel.open(path, options);
                    if (!opened.complete(ch)) {
                        late.accept(ch); // the caller gave up waiting
                    }
                } catch (IOException | RuntimeException e) {
                    opened.completeExceptionally(e);
                }
            });
        } catch (RejectedExecutionException e) {
            throw new IOException(MAX_OPENERS + " opens of files are still blocked (FIFOs renamed over watched paths?); not opening "
                    + path + " until one returns");
        }
        try {
            try {
                return opened.get(timeoutMillis, TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                if (opened.cancel(false)) {
                    throw new IOException("opening it did not return within " + timeoutMillis
                            + " ms (a FIFO or device renamed over it after its regular-file check?); not waiting for it");
                }
                return opened.get(); // it returned just now after all
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            if (!opened.cancel(false) && opened.state() == Future.State.SUCCESS) {
                late.accept(opened.resultNow());
            }
            throw new InterruptedIOException("interrupted while opening " + path);
        } catch (ExecutionException e) {
            switch (e.getCause()) {
                case IOException io -> throw io;
                case RuntimeException re -> throw re;
                default -> throw new IOException(e.getCause());
            }
        }
    }
}
