package io.ringstore.internal;

import java.lang.invoke.MethodHandles;

/**
 * The JDK's "shared secrets" pattern, once: a public class of the library registers what it grants
 * the rest of the module ({@link BackendAccess}) in its static initialiser, and a
 * caller that finds nothing registered yet initialises that class first.
 */
final class SharedSecrets {
    private SharedSecrets() {}

    /** Runs {@code owner}'s static initialiser if it has not run, so that it has registered its operations. */
    static void initialize(Class<?> owner) {
        try {
            MethodHandles.lookup().ensureInitialized(owner);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }
}
