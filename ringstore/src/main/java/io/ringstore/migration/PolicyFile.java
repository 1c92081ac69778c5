package io.ringstore.migration;

import io.ringstore.internal.Poller;
import io.ringstore.internal.TextLines;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ScheduledExecutorService;

/**
 * A rollout policy kept in a small properties file that operators edit, re-read when it changes:
 * <pre>
 *   # ringstore rollout policy
 *   percent = 12.5        # 0 to 100, steps of 0.01; 0 is the rollback
 *   scope   = all         # or a list of data centres: ams,fra
 *   local   = ams         # optional: this data centre (otherwise the name given in code)
 * </pre>
 * A file that cannot be read or is invalid is refused with a message (through {@link System.Logger})
 * and the previous policy stays in force. Replace the file by rename (write a temporary file, then
 * {@code mv} it over the policy), so that a poll never reads a half-written file.
 */
public final class PolicyFile implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(PolicyFile.class.getName());

    private final Path path;
    private final VersionSelector selector;
    private final String localDataCentre;
    private final ScheduledExecutorService timer;
    private Object lastStamp;
    private volatile String lastError;

    private PolicyFile(Path path, VersionSelector selector, String localDataCentre, long pollMillis) {
        this.path = path;
        this.selector = selector;
        this.localDataCentre = localDataCentre;
        this.timer = Poller.start("policy", path, pollMillis, this::checkNow);
    }

    /**
     * Applies {@code path} to {@code selector} now (when valid) and then re-reads it every
     * {@code pollMillis} ms when its modification time, size or identity changes; 0 = only on
     * {@link #checkNow()}. Close to stop watching.
     */
    public static PolicyFile watch(Path path, VersionSelector selector, String localDataCentre, long pollMillis) {
        PolicyFile f = new PolicyFile(Objects.requireNonNull(path), Objects.requireNonNull(selector),
                Objects.requireNonNull(localDataCentre), pollMillis);
        f.checkNow();
        return f;
    }

    /**
     * Re-reads the file if it changed since the last check. Returns true when a new policy was
     * applied; on a bad file logs the reason, keeps the previous policy, and returns false.
     */
    public synchronized boolean checkNow() {
        String text;
        try {
            // The file is small: compare its content, so that an edit is seen even when it keeps the
            // size and modification time (cp -p, rsync -t, two writes within one timestamp tick).
            text = Files.readString(path, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            return refuse(path + ": policy file does not exist", "missing");
        } catch (IOException e) {
            return refuse(path + ": cannot read policy file: " + e.getMessage(), "unreadable");
        }
        if (text.equals(lastStamp)) {
            return false;
        }
        Object stamp = text;
        lastStamp = stamp;
        try {
            RolloutPolicy p = parse(path, text, localDataCentre);
            RolloutPolicy before = selector.policy();
            selector.policy(p);
            lastError = null;
            LOG.log(System.Logger.Level.INFO, "{0}: rollout policy {1} (was {2})", path, p, before);
            return true;
        } catch (IllegalArgumentException e) {
            return refuse(e.getMessage() + "; keeping " + selector.policy(), stamp);
        }
    }

    private boolean refuse(String message, Object stamp) {
        if (!message.equals(lastError)) {
            LOG.log(System.Logger.Level.WARNING, message);
        }
        lastError = message;
        lastStamp = stamp;
        return false;
    }

    /** The last refusal's message, or null when the file in force was valid. */
    public String lastError() {
        return lastError;
    }

    /**
     * Parses policy text. Errors say {@code file:line: what}.
     *
     * @throws IllegalArgumentException for an invalid policy
     */
    public static RolloutPolicy parse(Path source, String text, String localDataCentre) {
        Double percent = null;
        Set<String> scope = null;
        String local = localDataCentre;
        Set<String> seen = new LinkedHashSet<>();
        String[] lines = text.split("\r?\n", -1);
        for (int i = 0; i < lines.length; i++) {
            String where = source + ":" + (i + 1) + ": ";
            String line = TextLines.content(lines[i]);
            if (line.isEmpty()) {
                continue;
            }
            int eq = line.indexOf('=');
            if (eq < 0) {
                throw new IllegalArgumentException(where + "expected 'key = value', found '" + line + "'");
            }
            String key = line.substring(0, eq).strip();
            String value = line.substring(eq + 1).strip();
            if (!seen.add(key)) {
                throw new IllegalArgumentException(where + "'" + key + "' given twice");
            }
            switch (key) {
                case "percent" -> {
                    if (!value.matches("-?[0-9]{1,9}(\\.[0-9]{1,9})?")) {
                        throw new IllegalArgumentException(where + "percent '" + value + "' is not a number (write it as 12.5)");
                    }
                    percent = Double.parseDouble(value);
                    if (!(percent >= 0 && percent <= 100)) {
                        throw new IllegalArgumentException(where + "percent " + value + " is outside 0-100");
                    }
                    if (Math.abs(percent * 100 - Math.rint(percent * 100)) > 1e-6) {
                        throw new IllegalArgumentException(where + "percent " + value + " is finer than the 0.01 % step");
                    }
                }
                case "scope" -> {
                    scope = new LinkedHashSet<>();
                    if (!value.equals("all")) {
                        for (String dc : value.split(",", -1)) {
                            if (dc.isBlank()) {
                                throw new IllegalArgumentException(where + "empty name in scope '" + value + "'");
                            }
                            scope.add(dc.strip());
                        }
                    }
                }
                case "local" -> local = value;
                default -> throw new IllegalArgumentException(where + "unknown key '" + key + "' (expected percent, scope, local)");
            }
        }
        if (percent == null) {
            throw new IllegalArgumentException(source + ": no 'percent = N' line");
        }
        try {
            return new RolloutPolicy((int) Math.round(percent * 100), scope == null ? Set.of() : scope, local);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(source + ": " + e.getMessage());
        }
    }

    @Override
    public void close() {
        if (timer != null) {
            timer.shutdownNow();
        }
    }
}
