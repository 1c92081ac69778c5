package io.ringstore.internal;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
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

    /**
     * Openers whose open has not returned. Each open has a thread of its own (a daemon), started and
     * handed the result through a monitor: no executor or future, whose classes and set-up a one-shot
     * command would pay for at its first open.
     */
    private static final AtomicInteger OPENERS = new AtomicInteger();

    private BoundedOpen() {}

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
        return open(path, timeoutMillis, BoundedOpen::close, StandardOpenOption.READ);
    }

    private static void close(FileChannel ch) {
        try {
            ch.close();
        } catch (IOException e) {
            // nothing to do about a descriptor nobody uses
        }
    }

    /**
     * Opens {@code path} with {@code options}, waiting at most {@code timeoutMillis}, as {@link #read(Path)} does.
     *
     * @param late what to do with a channel whose open returned after the caller gave up: close it, or
     *             (the state file, whose record locks closing any descriptor of it would drop) keep it
     * @throws IOException when the open fails, or does not return in time (then the message says so)
     */
    public static FileChannel open(Path path, long timeoutMillis, Consumer<FileChannel> late, OpenOption... options)
            throws IOException {
        if (OPENERS.incrementAndGet() > MAX_OPENERS) {
            OPENERS.decrementAndGet();
            throw new IOException(
                    MAX_OPENERS + " opens of files are still blocked (FIFOs renamed over watched paths?); not opening "
                            + path + " until one returns");
        }
        Opening opening = new Opening(path, options, late);
        Thread opener = new Thread(opening, "ringstore file opener");
        opener.setDaemon(true);
        try {
            opener.start();
        } catch (Throwable t) { // no thread to be had (OutOfMemoryError): it will never count itself out
            OPENERS.decrementAndGet();
            throw t;
        }
        return opening.await(path, timeoutMillis);
    }

    /** One open on its opener thread, and what the caller waiting for it sees. */
    private static final class Opening implements Runnable {
        private final Path path;
        private final OpenOption[] options;
        private final Consumer<FileChannel> late;
        private FileChannel channel; // guarded by this
        private Throwable failure; // guarded by this
        private boolean done; // guarded by this
        private boolean abandoned; // guarded by this: the caller gave up waiting

        Opening(Path path, OpenOption[] options, Consumer<FileChannel> late) {
            this.path = path;
            this.options = options;
            this.late = late;
        }

        @Override
        public void run() {
            FileChannel ch = null;
            Throwable e = null;
            try {
                ch = FileChannel.open(path, options);
            } catch (Throwable x) { // an Error too: the caller gets it at once, not a timeout's message
                e = x;
            } finally {
                OPENERS.decrementAndGet();
            }
            boolean unwanted;
            synchronized (this) {
                unwanted = abandoned;
                if (!abandoned) {
                    channel = ch;
                    failure = e;
                    done = true;
                    notifyAll();
                }
            }
            if (unwanted && ch != null) {
                late.accept(ch); // the caller gave up waiting
            }
        }

        synchronized FileChannel await(Path path, long timeoutMillis) throws IOException {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
            try {
                while (!done) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        abandoned = true;
                        throw new IOException(
                                "opening it did not return within " + timeoutMillis
                                        + " ms (a FIFO or device renamed over it after its regular-file check?); not waiting for it");
                    }
                    TimeUnit.NANOSECONDS.timedWait(this, left);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                abandoned = true;
                if (done && channel != null) {
                    late.accept(channel);
                }
                throw new InterruptedIOException("interrupted while opening " + path);
            }
            // instanceof, not a pattern switch: its bootstrap is spun at the first call of a fresh JVM
            if (failure == null) {
                return channel;
            } else if (failure instanceof IOException io) {
                throw io;
            } else if (failure instanceof RuntimeException re) {
                throw re;
            } else if (failure instanceof Error err) {
                throw err;
            }
            throw new IOException(failure);
        }
    }
}
