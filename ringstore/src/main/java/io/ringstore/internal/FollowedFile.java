package io.ringstore.internal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A file at a path that another process may replace, remove, truncate or make again while this one
 * uses what it opened of it (a ring file's mapping, a state file's mapping, a policy file's policy):
 * the one place that tells the file at the path from the one in use, opens the new one, swaps it in,
 * keeps the one it replaced for a grace period before letting it go, and reports each switch and each
 * refused file once. What differs between files is their {@link Kind}.
 *
 * <p><b>Identity.</b> {@link Kind#look} names the file at the path by a value compared with
 * {@code equals} (an inode, a stamp of inode, time, size and header, a text). A check that finds the
 * identity of the file in use, still {@linkplain Kind#intact intact}, does nothing more. A file
 * replaced while it was being opened is let go and the path looked at again, at most
 * {@value #ATTEMPTS} times a check, so that the identity kept is the one of the file in use.
 *
 * <p><b>Refusals.</b> A file that cannot be used is refused ({@link Refused}) and the one in use stays.
 * A refusal that names a file is reported once for that file, and the file is not opened again until
 * another takes the path; one that names none (nothing usable at the path, or a failure that may
 * pass) is tried again at the next check and reported once per reason. {@link #lastError()} is the
 * last refusal until a file is in use again.
 *
 * <p><b>Grace.</b> The one replaced is let go ({@link Kind#release}) at the first check at least
 * {@code graceNanos} after the switch (at once for 0): a reader still on it has that long to finish.
 * One that cannot be let go yet stays for the next check.
 *
 * <p>Checks, switches and {@link #close()} run under the lock given at construction, which the user
 * also holds where it must not interleave with a switch; {@link #current()} is one volatile read.
 *
 * @param <T> what is opened of a file
 */
public final class FollowedFile<T> {
    /** Opens per check of a path whose file is replaced each time it is being opened. */
    private static final int ATTEMPTS = 3;

    /**
     * How files of one kind are told apart, opened, reported and let go. Called under the follower's
     * lock, by the thread that checks.
     *
     * @param <T> what is opened of a file
     */
    public interface Kind<T> {
        /**
         * {@return the identity of the file at {@code path} now, or null when there is none}
         *
         * @param path the followed path
         * @throws Refused when what is at the path cannot be followed (not a regular file, unreadable)
         */
        Object look(Path path) throws Refused;

        /**
         * {@return whether {@code inUse}, whose file is still at the path, can go on serving} False for a
         * file truncated under its mapping: a check then opens the file at the path again.
         *
         * @param inUse the one in use (null before the first)
         */
        default boolean intact(T inUse) {
            return true;
        }

        /**
         * Opens the file at the path, whose identity {@link #look} gave as {@code seen}, and checks that it
         * can take the place of {@code inUse}; lets go of what it opened before throwing.
         *
         * @param path the followed path
         * @param seen the identity of the file at the path (null: none)
         * @param inUse the one in use (null before the first)
         * @return what was opened, or null when there is nothing to switch to (the file in use published
         *     again, or kept while nothing is at the path)
         * @throws Refused when the file cannot be used
         */
        T open(Path path, Object seen, T inUse) throws Refused;

        /**
         * {@return the identity of {@code opened}, or null when the path changed while it was opened}
         * By default the path is looked at again: {@code seen} if it still shows that.
         *
         * @param path the followed path
         * @param seen the identity {@link #look} gave before the open
         * @param opened what {@link #open} returned
         * @throws Refused when what is at the path now cannot be followed
         */
        default Object identity(Path path, Object seen, T opened) throws Refused {
            return Objects.equals(look(path), seen) ? seen : null;
        }

        /**
         * {@code after} took the place of {@code before}: says so in one log line, and tells whoever
         * listens. A user whose every call reads the one in use (a lookup, a request's count) keeps its
         * own volatile copy, set here: through the follower, each call would read a field more.
         *
         * @param before the one replaced (null: none before)
         * @param after the one in use now
         */
        void switched(T before, T after);

        /**
         * Says in one log line that a file was refused.
         *
         * @param inUse the one that stays in use (null: none yet)
         * @param reason why, as {@link FollowedFile#lastError()} gives it
         */
        void refused(T inUse, String reason);

        /**
         * Lets go of {@code old}, replaced at least the grace period ago.
         *
         * @param old the one to let go of
         * @return false when it cannot be let go of yet: the next check tries again
         */
        boolean release(T old);
    }

    /** Why a file cannot be used, and which file it is (to report it once), or none. */
    public static final class Refused extends Exception {
        private static final long serialVersionUID = 1L;
        /** The file refused (its identity, or one that tells it from others), or null: see {@link FollowedFile}. */
        private final transient Object file;

        /**
         * @param reason why, in one line
         * @param file the file refused, or null when the refusal names none
         * @param cause what the reason comes from, or null
         */
        public Refused(String reason, Object file, Throwable cause) {
            super(reason, cause, false, false); // a refusal is an answer, not a fault: no stack trace
            this.file = file;
        }

        /** {@return the file refused, or null} */
        public Object file() {
            return file;
        }
    }

    private record Retired<T>(T value, long since) {}

    private final Path path;
    /** Null for a follower of nothing ({@link #fixed}). */
    private final Kind<T> kind;

    private final Object lock;
    private final long graceNanos;
    private volatile T current;
    /** The identity of the file last found usable, or refused by name (guarded by the lock). */
    private Object identity;
    /** The ones replaced and not let go of yet, oldest first (guarded by the lock). */
    private final ArrayDeque<Retired<T>> retired = new ArrayDeque<>();

    private volatile String lastError;
    /** The file of the last refusal, until a switch (guarded by the lock). */
    private Object lastRefused;

    private volatile long switches;
    private volatile Instant lastSwitch = Instant.now();
    private volatile boolean closed;

    /**
     * Follows {@code path}, whose file {@code inUse} was opened of.
     *
     * @param path the path to follow
     * @param kind how its files are told apart, opened, reported and let go
     * @param lock what checks and switches hold (the user's own lock)
     * @param graceNanos how long a replaced one stays before it is let go
     * @param inUse what is in use now (null: nothing yet)
     * @param identity the identity of its file (null: none)
     */
    public FollowedFile(Path path, Kind<T> kind, Object lock, long graceNanos, T inUse, Object identity) {
        this.path = Objects.requireNonNull(path, "path");
        this.kind = Objects.requireNonNull(kind, "kind");
        this.lock = Objects.requireNonNull(lock, "lock");
        this.graceNanos = graceNanos;
        this.current = inUse;
        this.identity = identity;
    }

    private FollowedFile(T fixed, Object lock) {
        this.path = null;
        this.kind = null;
        this.lock = lock;
        this.graceNanos = 0;
        this.current = fixed;
    }

    /**
     * {@return a follower of nothing: {@code value} is in use for good, a check finds nothing new, and
     * {@link #close()} hands nothing back (the value is its owner's to close)}
     *
     * @param value what is in use
     * @param lock what {@link #close()} holds
     * @param <T> its type
     */
    public static <T> FollowedFile<T> fixed(T value, Object lock) {
        return new FollowedFile<>(Objects.requireNonNull(value, "value"), Objects.requireNonNull(lock, "lock"));
    }

    /**
     * {@return the identity of the file at {@code path} as the file system gives it (its inode), or null
     * when there is none or its attributes cannot be read}
     *
     * @param path a path
     */
    public static Object fileKey(Path path) {
        try {
            return Files.readAttributes(path, BasicFileAttributes.class).fileKey();
        } catch (IOException e) {
            return null;
        }
    }

    /** {@return what is in use now} One volatile read. */
    public T current() {
        return current;
    }

    /**
     * Looks at the path and, when another file is there (or the one in use is no longer intact), opens
     * it and switches to it; see the class comment. Nothing after {@link #close()}.
     *
     * @return whether it switched
     */
    public boolean check() {
        synchronized (lock) {
            if (closed || kind == null) {
                return false;
            }
            retireDue(System.nanoTime());
            Object seen = null;
            try {
                for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
                    seen = null;
                    Object at = kind.look(path);
                    if (Objects.equals(at, identity) && kind.intact(current)) {
                        return false;
                    }
                    seen = at;
                    T next = kind.open(path, seen, current);
                    if (next == null) {
                        identity = seen;
                        lastError = null;
                        return false;
                    }
                    Object opened;
                    try {
                        opened = kind.identity(path, seen, next);
                    } catch (Refused | RuntimeException | Error e) {
                        kind.release(next);
                        throw e;
                    }
                    if (opened != null) {
                        switchTo(next, opened);
                        return true;
                    }
                    kind.release(next); // what was opened may not be what was looked at: look again
                }
                return false; // replaced faster than it can be opened: the next check looks again
            } catch (Refused r) {
                refuse(r, seen);
                return false;
            }
        }
    }

    private void switchTo(T next, Object opened) {
        T before = current;
        current = next;
        identity = opened;
        lastError = null; // before anyone is told: whoever sees the new one sees no stale error
        lastRefused = null;
        switches++;
        lastSwitch = Instant.now();
        long now = System.nanoTime();
        if (before != null) {
            retired.addLast(new Retired<>(before, now));
        }
        kind.switched(before, next);
        retireDue(now);
    }

    /** {@return switches so far} */
    public long switches() {
        return switches;
    }

    /** Reports {@code r} once (see the class comment), and remembers its file when it names one. */
    private void refuse(Refused r, Object seen) {
        String reason = r.getMessage();
        Object file = r.file();
        boolean told = file != null ? !file.equals(lastRefused) : !reason.equals(lastError);
        lastError = reason;
        lastRefused = file;
        identity = file != null && seen != null ? seen : null;
        if (told) {
            kind.refused(current, reason);
        }
    }

    /** {@return the last refusal's reason, or null when the newest file at the path is in use} */
    public String lastError() {
        return lastError;
    }

    /** Lets go of the replaced ones whose grace period has passed at {@code now}. */
    private void retireDue(long now) {
        while (!retired.isEmpty() && now - retired.peekFirst().since() >= graceNanos) {
            if (!kind.release(retired.peekFirst().value())) {
                return; // still in use (a JDK that refuses to close an arena being read): the next check tries again
            }
            retired.removeFirst();
        }
    }

    /** {@return replaced ones not let go of yet} */
    public int retiredCount() {
        synchronized (lock) {
            return retired.size();
        }
    }

    /**
     * {@return whether {@code value} is no longer the one in use} A call that failed on it (unmapped
     * after its grace period) is then done again on the one in use, which is newer each time.
     *
     * @param value one that was in use
     */
    public boolean replaced(T value) {
        return value != current;
    }

    /** {@return when the last switch was made (for none yet, when following started)} */
    public Instant lastSwitch() {
        return lastSwitch;
    }

    /**
     * Stops following. {@return what is still open, for the caller to let go of: the replaced ones,
     * oldest first, then the one in use} Empty when closed already, and for a follower of nothing.
     * {@link #current()} keeps answering the one that was in use.
     */
    public List<T> close() {
        synchronized (lock) {
            if (closed) {
                return List.of();
            }
            closed = true;
            if (kind == null) {
                return List.of();
            }
            List<T> open = new ArrayList<>();
            for (Retired<T> r : retired) {
                open.add(r.value());
            }
            retired.clear();
            if (current != null) {
                open.add(current);
            }
            return open;
        }
    }

    /** {@return whether {@link #close()} was called} */
    public boolean closed() {
        return closed;
    }
}
