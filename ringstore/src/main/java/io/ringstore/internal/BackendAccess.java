package io.ringstore.internal;

import io.ringstore.Backend;
import io.ringstore.Ring;
import io.ringstore.RingFileException;
import io.ringstore.RingStore;
import io.ringstore.internal.format.PointRing;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Set;
import java.util.function.Supplier;

/**
 * THE bridge between the public types and the module's internals: the one class of
 * {@code io.ringstore.internal} and {@code io.ringstore.internal.format} that names a public type (the
 * package-cycle test allows it and nothing else). What the builder and the file reader may do with a
 * {@link Backend} that its public API does not offer: make one, and read the record it wraps (parsed
 * address, feature mask); a {@link Ring}'s walk by cursor ({@link PointRing}), which bounded load uses so that a
 * view needs no position table; and what the live package's file watcher does with a
 * {@link RingStore}'s mapping (map it for watching, unmap it when the grace period passed). {@code
 * Backend}, {@code Ring} and {@code RingStore} register their implementations when their classes
 * initialise (the JDK's "shared secrets" pattern), so no constructor or internal type
 * appears in the public API.
 */
public final class BackendAccess {
    /** The operations {@code Backend} grants to the rest of the module. */
    public interface Operations {
        Backend create(int index, BackendRecord record, Set<String> features, int line);

        BackendRecord record(Backend backend);
    }

    /** What {@code Ring} grants to the rest of the module. */
    @FunctionalInterface
    public interface RingOperations {
        /** The ring's walk over its points by cursor. */
        PointRing walk(Ring ring);
    }

    /** What {@code RingStore} grants the file watcher (package {@code io.ringstore.live}). */
    public interface StoreOperations {
        /** Maps {@code path} for a watcher: the store's {@code close()} does nothing, the watcher {@link #release}s it. */
        RingStore openWatched(Path path) throws RingFileException;

        /** Unmaps the store now, whoever reads it; whether it is unmapped (see {@code RingStore.release()}). */
        boolean release(RingStore store);

        /** Whether the store's file is still mapped. */
        boolean mapped(RingStore store);

        /** Refuses what is not a regular file; its attributes, to identify the file. */
        BasicFileAttributes requireRegularFile(Path path) throws RingFileException;
    }

    private static volatile Operations operations;
    private static volatile RingOperations rings;
    private static volatile StoreOperations stores;

    private BackendAccess() {}

    /** Called once, by {@code Backend}'s static initialiser. */
    public static void register(Operations ops) {
        operations = ops;
    }

    /** Called once, by {@code Ring}'s static initialiser. */
    public static void registerRings(RingOperations ops) {
        rings = ops;
    }

    /** {@return what {@code Ring} grants: a caller on a hot path keeps it in a static final field} */
    public static RingOperations rings() {
        return granted(rings, Ring.class, () -> rings);
    }

    /** Called once, by {@code RingStore}'s static initialiser. */
    public static void registerStores(StoreOperations ops) {
        stores = ops;
    }

    /** {@return what {@code RingStore} grants the file watcher} */
    public static StoreOperations stores() {
        return granted(stores, RingStore.class, () -> stores);
    }

    public static Operations get() {
        return granted(operations, Backend.class, () -> operations);
    }

    /**
     * {@return {@code ops}, or, when {@code owner}'s static initialiser has not run yet (a caller that
     * reached here first), what it registers once run}
     */
    private static <T> T granted(T ops, Class<?> owner, Supplier<T> registered) {
        if (ops != null) {
            return ops;
        }
        SharedSecrets.initialize(owner);
        return registered.get();
    }

    public static Backend create(int index, BackendRecord record, Set<String> features, int line) {
        return get().create(index, record, features, line);
    }

    /** {@return what {@code backend} wraps: the record the ring families' rules and the file's writer read} */
    public static BackendRecord record(Backend backend) {
        return get().record(backend);
    }
}
