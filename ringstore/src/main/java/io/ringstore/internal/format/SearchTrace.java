package io.ringstore.internal.format;

import static io.ringstore.internal.format.RingFileDescriptor.POINT_HASH_LENGTH;
import static io.ringstore.internal.format.RingFileDescriptor.POINT_HASH_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.POINT_LENGTH;

import java.util.Objects;

/**
 * The reads {@link PointSearch} makes, reported to a listener for a model of the cache (bench's
 * {@code SearchCacheModel}), so that the model replays the library's own search rather than a copy.
 *
 * <p>Off unless the JVM starts with {@code -Dringstore.traceSearch=true}. Off, {@link #ON} is a constant
 * false, the JIT drops each report together with the branch that guards it, and a search costs what it
 * costs without this class. On, every search reports to the one listener, which must then be the only
 * thread searching.
 */
public final class SearchTrace {
    /** Whether searches report their reads; fixed when the class is initialised. */
    public static final boolean ON = Boolean.getBoolean("ringstore.traceSearch");

    /** What a traced search reports, in the order it reads. */
    public interface Listener {
        /** A read of {@code length} bytes at {@code offset} in the index's table of slice starts. */
        void indexRead(long offset, int length);

        /** A read of {@code length} bytes at {@code offset} in the segment of points searched. */
        void pointRead(long offset, int length);

        /**
         * The next {@code reads} reads have addresses that depend on no read among them, so a processor
         * issues them together and waits for their misses at once; any other read waits for the one
         * before it.
         */
        void together(int reads);
    }

    private static final Listener NONE = new Listener() {
        @Override
        public void indexRead(long offset, int length) {}

        @Override
        public void pointRead(long offset, int length) {}

        @Override
        public void together(int reads) {}
    };

    private static Listener listener = NONE;

    private SearchTrace() {}

    /**
     * Sends every later search's reads to {@code to}.
     *
     * @throws IllegalStateException if the JVM was not started with {@code -Dringstore.traceSearch=true}
     */
    public static void listen(Listener to) {
        if (!ON) {
            throw new IllegalStateException("searches are not traced: start the JVM with -Dringstore.traceSearch=true");
        }
        listener = Objects.requireNonNull(to, "listener");
    }

    /** The index's slice {@code k} read: its start and the next slice's, 4 bytes each. */
    static void slice(int k) {
        listener.indexRead(4L * k, 8);
    }

    /** The hash of the point at {@code position} read. */
    static void point(long position) {
        listener.pointRead(position * POINT_LENGTH + POINT_HASH_OFFSET, POINT_HASH_LENGTH);
    }

    static void together(int reads) {
        listener.together(reads);
    }
}
