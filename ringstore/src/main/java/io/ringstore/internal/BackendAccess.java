package io.ringstore.internal;

import io.ringstore.Backend;

import java.util.Set;

/**
 * What the builder and the file reader may do with a {@link Backend} that its public API does not
 * offer: make one, and read its feature mask and parsed address. {@code Backend} registers the
 * implementation when its class initialises (the JDK's "shared secrets" pattern), so no constructor
 * or internal type appears in the public API.
 */
public final class BackendAccess {
    /** The operations {@code Backend} grants to the rest of the module. */
    public interface Operations {
        Backend create(int index, ServerAddress address, long weight, Set<String> features, int featureMask, ServerParameters parameters,
                       int line);

        int featureMask(Backend backend);

        ServerAddress address(Backend backend);
    }

    private static volatile Operations operations;

    private BackendAccess() {
    }

    /** Called once, by {@code Backend}'s static initialiser. */
    public static void register(Operations ops) {
        operations = ops;
    }

    public static Operations get() {
        Operations ops = operations;
        if (ops == null) {
            SharedSecrets.initialize(Backend.class);
            ops = operations;
        }
        return ops;
    }

    public static Backend create(int index, ServerAddress address, long weight, Set<String> features, int featureMask, int line) {
        return create(index, address, weight, features, featureMask, ServerParameters.DEFAULTS, line);
    }

    public static Backend create(int index, ServerAddress address, long weight, Set<String> features, int featureMask,
                                 ServerParameters parameters, int line) {
        return get().create(index, address, weight, features, featureMask, parameters, line);
    }

    public static int featureMask(Backend backend) {
        return get().featureMask(backend);
    }

    public static ServerAddress address(Backend backend) {
        return get().address(backend);
    }
}
