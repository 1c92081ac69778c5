package io.ringstore.live;

import io.ringstore.internal.BoundedOpen;
import io.ringstore.internal.FollowedFile;
import io.ringstore.internal.IoErrors;
import io.ringstore.internal.Poller;
import io.ringstore.migration.PolicyFile;
import io.ringstore.migration.RolloutPolicy;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.channels.Channels;
import java.nio.charset.CoderResult;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Objects;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Watches a rollout policy file ({@link PolicyFile}: its format) and applies each valid version of it
 * to a target, such as a router's {@code router::policy}. A file that cannot be read or is invalid is
 * refused with a message (through {@link System.Logger}) and the previous policy stays in force; so is
 * a file over {@value PolicyFile#MAX_BYTES} bytes or one that is not a regular file (neither is
 * opened). The poller keeps polling whatever happens, and applies the next valid file. Replace the
 * file by rename (write a temporary file, then {@code mv} it over the policy), so that a poll never
 * reads a half-written file.
 *
 * <p>A refused file is logged once: not again while the same file (inode) is at the path, rewritten in
 * place or not (appended to while it grows, say: other text, another size, at every poll), until a
 * policy is applied; a refusal naming no file (none at the path) once per reason.
 */
public final class PolicyFileWatcher implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(PolicyFileWatcher.class.getName());
    private static final int MAX_BYTES = PolicyFile.MAX_BYTES;

    private final Path path;
    /** The policy in force and where a new one goes: a {@link RingRouter}'s, say. */
    private final Supplier<RolloutPolicy> inForce;

    private final Consumer<RolloutPolicy> target;
    private final String localDataCentre;
    private final ScheduledExecutorService timer;
    /** The file followed: its text is its identity, the policy it states what is opened of it (a value, never let go of). */
    private final FollowedFile<RolloutPolicy> file;
    /** The file (its {@link BasicFileAttributes#fileKey()}) the last check read, null when there was none. */
    private Object readKey;
    /** Test hook: runs in a check between the regular-file check and the open. */
    Runnable afterRegularCheck = () -> {};

    private PolicyFileWatcher(
            Path path,
            Supplier<RolloutPolicy> inForce,
            Consumer<RolloutPolicy> target,
            String localDataCentre,
            long pollMillis) {
        this.path = path;
        this.inForce = inForce;
        this.target = target;
        this.localDataCentre = localDataCentre;
        this.file = new FollowedFile<>(path, new Text(), this, 0, null, null);
        this.timer = Poller.start("policy", path, pollMillis, this::checkNow);
    }

    /**
     * Applies {@code path} to {@code target} now (when valid) and then re-reads it every
     * {@code pollMillis} ms, applying it when its text changed; 0 = only on {@link #checkNow()}.
     * Close to stop watching.
     *
     * @param path the policy file's path
     * @param inForce the policy in force (for the log: what a new policy replaces, what a refusal keeps)
     * @param target where each valid policy goes: {@code router::policy}, which logs it, emits it as a
     *        JFR event and tells the router's listener
     * @param localDataCentre this process's data centre, matched against the policy's scope
     * @param pollMillis how often to look at the file, in milliseconds (0: only on {@code checkNow()})
     * @return the watcher; close it to stop watching
     */
    public static PolicyFileWatcher watch(
            Path path,
            Supplier<RolloutPolicy> inForce,
            Consumer<RolloutPolicy> target,
            String localDataCentre,
            long pollMillis) {
        PolicyFileWatcher f = new PolicyFileWatcher(
                Objects.requireNonNull(path),
                Objects.requireNonNull(inForce),
                Objects.requireNonNull(target),
                Objects.requireNonNull(localDataCentre),
                pollMillis);
        f.checkNow();
        return f;
    }

    /**
     * {@link #watch(Path, Supplier, Consumer, String, long)} for a router's policy.
     *
     * @param path the policy file's path
     * @param router the router whose policy the file sets
     * @param localDataCentre this process's data centre, matched against the policy's scope
     * @param pollMillis how often to look at the file, in milliseconds (0: only on {@code checkNow()})
     * @return the watcher; close it to stop watching
     */
    public static PolicyFileWatcher watch(Path path, RingRouter router, String localDataCentre, long pollMillis) {
        Objects.requireNonNull(router);
        return watch(path, router::policy, router::policy, localDataCentre, pollMillis);
    }

    /**
     * Re-reads the file if it changed since the last check. Returns true when a new policy was
     * applied; on a bad file logs the reason, keeps the previous policy, and returns false.
     *
     * @return true when a new policy was applied
     */
    public boolean checkNow() {
        return file.check();
    }

    /** A policy file as the follower sees it: its text is its identity, a policy what is opened of it. */
    private final class Text implements FollowedFile.Kind<RolloutPolicy> {
        /**
         * The whole file: it is small, so its content is compared rather than its modification time or
         * size, and an edit is seen even when it keeps both (cp -p, rsync -t, two writes within one
         * timestamp tick). What is read is bounded: only a regular file is opened (a FIFO would block
         * the watcher until someone writes to it, a device could be read forever), and a file over
         * {@value #MAX_BYTES} bytes is refused without being read.
         */
        @Override
        public Object look(Path path) throws FollowedFile.Refused {
            readKey = null;
            try {
                BasicFileAttributes a = Files.readAttributes(path, BasicFileAttributes.class);
                readKey = a.fileKey();
                if (!a.isRegularFile()) {
                    throw unreadable(
                            a.isDirectory()
                                    ? "is a directory"
                                    : "not a regular file (a FIFO, socket or device?); not opened");
                }
                if (a.size() > MAX_BYTES) {
                    throw unreadable(tooLarge(a.size()));
                }
                byte[] bytes;
                afterRegularCheck.run();
                try (InputStream in = Channels.newInputStream(
                        BoundedOpen.read(path))) { // a FIFO renamed in since the check would block a plain open
                    bytes = in.readNBytes(MAX_BYTES + 1);
                }
                if (bytes.length > MAX_BYTES) {
                    throw unreadable(
                            "grew past " + MAX_BYTES + " bytes while being read, more than a policy file may have");
                }
                return decode(bytes);
            } catch (NoSuchFileException e) {
                throw new FollowedFile.Refused(path + ": policy file does not exist", null, e);
            } catch (IOException e) {
                throw unreadable(IoErrors.describe(e));
            }
        }

        private FollowedFile.Refused unreadable(String reason) {
            return new FollowedFile.Refused(path + ": cannot read policy file: " + reason, readKey, null);
        }

        /** Strict UTF-8: a malformed byte is named, not replaced. */
        private String decode(byte[] bytes) throws FollowedFile.Refused {
            ByteBuffer in = ByteBuffer.wrap(bytes);
            CharBuffer out = CharBuffer.allocate(bytes.length);
            CoderResult r = StandardCharsets.UTF_8.newDecoder().decode(in, out, true);
            if (r.isError()) {
                throw unreadable("not UTF-8 text at byte " + in.position());
            }
            return out.flip().toString();
        }

        @Override
        public RolloutPolicy open(Path path, Object text, RolloutPolicy parsed) throws FollowedFile.Refused {
            try {
                return PolicyFile.parse(path, (String) text, localDataCentre);
            } catch (IllegalArgumentException e) {
                throw new FollowedFile.Refused(e.getMessage() + "; keeping " + inForce.get(), readKey, e);
            }
        }

        /** The text parsed is the text looked at: no second read. */
        @Override
        public Object identity(Path path, Object text, RolloutPolicy parsed) {
            return text;
        }

        @Override
        public void switched(RolloutPolicy parsedBefore, RolloutPolicy p) {
            RolloutPolicy before = inForce.get();
            target.accept(p);
            LOG.log(System.Logger.Level.INFO, "{0}: rollout policy {1} (was {2})", path, p, before);
        }

        @Override
        public void refused(RolloutPolicy parsed, String reason) {
            LOG.log(System.Logger.Level.WARNING, reason);
        }

        @Override
        public boolean release(RolloutPolicy old) {
            return true; // a value: nothing to let go of
        }
    }

    private static String tooLarge(long size) {
        return "is " + size + " bytes, more than the " + MAX_BYTES + " a policy file may have (not a policy file?)";
    }

    /** {@return the last refusal's message, or null when the file in force was valid} */
    public String lastError() {
        return file.lastError();
    }

    @Override
    public void close() {
        if (timer != null) {
            timer.shutdownNow();
        }
    }
}
