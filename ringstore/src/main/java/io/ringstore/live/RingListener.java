package io.ringstore.live;

import io.ringstore.migration.RolloutPolicy;
import java.nio.file.Path;

/**
 * Told what a {@link RingRouter} did: each switch to a new generation,
 * each refused file, each new rollout policy. Called on the thread that did it (the watcher's, or
 * whoever called {@code checkNow} or set the policy), after the change took effect; a listener that
 * throws is logged and does not undo or stop anything. Keep it short: the watcher waits for it.
 *
 * <p>The same facts go to JFR (events {@code io.ringstore.Switch}, {@code io.ringstore.Refusal},
 * {@code io.ringstore.PolicyChange}) and to {@link System.Logger}; this is for code that reacts.
 */
public interface RingListener {
    /**
     * Generation {@code to} serves now instead of {@code from} (unsigned numbers).
     *
     * @param path the ring file's path
     * @param from the generation that served until now
     * @param to the generation serving now
     */
    default void switched(Path path, long from, long to) {}

    /**
     * The file found at {@code path} was refused for {@code reason}; generation {@code serving} keeps serving.
     *
     * @param path the ring file's path
     * @param serving the generation that keeps serving
     * @param reason why the file was refused
     */
    default void refused(Path path, long serving, String reason) {}

    /**
     * A router's rollout policy changed (by code or by a {@link PolicyFileWatcher}).
     *
     * @param path the ring file's path
     * @param before the policy until now
     * @param after the policy from now on
     */
    default void policyChanged(Path path, RolloutPolicy before, RolloutPolicy after) {}
}
