package io.ringstore;

import static io.ringstore.internal.format.RingFileDescriptor.HEADER_LENGTH;
import static io.ringstore.internal.format.RingFileDescriptor.STORAGE_VIEW;

import io.ringstore.family.RingVersion;
import io.ringstore.internal.BackendAccess;
import io.ringstore.internal.BackendRecord;
import io.ringstore.internal.BoundedOpen;
import io.ringstore.internal.IoErrors;
import io.ringstore.internal.format.ParsedRingFile;
import io.ringstore.internal.format.PointRing;
import io.ringstore.internal.format.RingFileDescriptor;
import io.ringstore.internal.format.RingFileReader;
import io.ringstore.internal.format.RingFileVerifier;
import io.ringstore.internal.format.RingFormatException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A ring file mapped read-only into memory: every process that opens the same file shares one copy of
 * its points through the page cache.
 *
 * <p>{@link #open} checks the header, tables and ring index (O(rings)) including the metadata checksum;
 * after it succeeds no lookup can fail because of the file's content. {@link #verify} additionally
 * checks every segment's checksum and order. All methods are thread-safe. After {@link #close},
 * lookups throw {@link IllegalStateException}.
 */
public final class RingStore implements AutoCloseable {
    private final Path path;
    private final Arena arena;
    private final MemorySegment file;
    private final long generation;
    private final byte[] inputDigest;
    private final List<Backend> backends;
    private final List<String> features;
    private final Map<String, Integer> featureBits;
    private final List<RingVersion> versions;
    /** What the reader found: the verifier reads the file by it. */
    private final ParsedRingFile parsed;

    private final Ring[] rings;
    private final RingFileLayout layout;
    private final boolean watched;

    static {
        BackendAccess.registerStores(new BackendAccess.StoreOperations() {
            @Override
            public RingStore openWatched(Path path) throws RingFileException {
                return open(path, true);
            }

            @Override
            public boolean release(RingStore store) {
                return store.release();
            }

            @Override
            public boolean mapped(RingStore store) {
                return store.mapped();
            }

            @Override
            public BasicFileAttributes requireRegularFile(Path path) throws RingFileException {
                return RingStore.requireRegularFile(path);
            }
        });
    }

    private RingStore(Path path, Arena arena, boolean watched, MemorySegment file, ParsedRingFile p) {
        this.path = path;
        this.arena = arena;
        this.watched = watched;
        this.file = file;
        this.generation = p.generation();
        this.inputDigest = p.inputDigest();
        this.backends = backends(p.backends(), p.features());
        this.features = List.copyOf(p.features());
        this.featureBits = new HashMap<>();
        for (int i = 0; i < features.size(); i++) {
            featureBits.put(features.get(i), i);
        }
        this.versions = p.versions();
        this.parsed = p;
        List<ParsedRingFile.Entry> entries = p.entries();
        List<RingFileLayout.Segment> segments = new ArrayList<>();
        Map<Long, Integer> segmentAt = new HashMap<>();
        List<ParsedRingFile.Entry> distinct = p.segments();
        PointRing.Points[] stored = new PointRing.Points[distinct.size()];
        for (ParsedRingFile.Entry e : distinct) {
            segmentAt.put(e.offset(), segments.size());
            boolean wide = e.version().family().pointBits() == 64;
            long pointBytes = (long) e.pointCount() * RingFileDescriptor.POINT_LENGTH;
            MemorySegment after = file.asSlice(e.offset() + pointBytes, e.length() - pointBytes);
            boolean withBits = RingFileDescriptor.hasFeatureBits(e.storage());
            stored[segments.size()] = new PointRing.Points(
                    file.asSlice(e.offset(), pointBytes),
                    e.pointCount(),
                    wide ? after : null,
                    withBits ? after : null,
                    features.size(),
                    e.storage() == RingFileDescriptor.STORAGE_POINTS_WITH_FEATURE_BITS_BY_FEATURE);
            segments.add(new RingFileLayout.Segment(e.offset(), e.length(), e.pointCount(), e.crc()));
        }
        PointRing.Points none = new PointRing.Points(MemorySegment.NULL, 0);
        this.rings = new Ring[entries.size()];
        int[] segmentOfRing = new int[rings.length];
        RingFileLayout.Storage[] storageOfRing = new RingFileLayout.Storage[rings.length];
        for (int i = 0; i < rings.length; i++) {
            ParsedRingFile.Entry e = entries.get(i);
            int s = e.pointCount() == 0 ? -1 : segmentAt.get(e.offset());
            segmentOfRing[i] = s;
            storageOfRing[i] = RingFileLayout.Storage.values()[e.storage()];
            long[] members = e.storage() == STORAGE_VIEW ? memberBitmap(e.mask()) : null;
            rings[i] = new Ring(
                    this,
                    i,
                    s < 0 ? none : stored[s],
                    e.ringPoints(),
                    e.storage(),
                    members,
                    backends.size(),
                    e.version(),
                    featureSet(e.mask()),
                    e.mask());
        }
        this.layout = new RingFileLayout(
                this,
                p.formatVersion(),
                p.headerLength(),
                p.metadataLength(),
                p.metadataCrc(),
                segments,
                segmentOfRing,
                storageOfRing);
    }

    /**
     * Maps and validates {@code path}.
     *
     * @param path the ring file's path
     * @return the open store; close it to unmap the file
     * @throws RingFileException if the file cannot be read, is not a ring file, is corrupt or of an unsupported version
     */
    public static RingStore open(Path path) throws RingFileException {
        return open(path, false);
    }

    /**
     * Maps {@code path} in a shared arena. With {@code watched} the mapping belongs to a
     * file watcher ({@code io.ringstore.live}): {@link #close()} does nothing, and the watcher unmaps it with
     * {@link #release()} a grace period after replacing it. A shared arena, not an automatic one, so
     * that the file is unmapped (and a deleted file's space returned) then, not at some later garbage
     * collection; closing a shared arena is safe against threads reading it (see {@link #release()}).
     */
    static RingStore open(Path path, boolean watched) throws RingFileException {
        requireRegularFile(path);
        long size;
        Arena arena = Arena.ofShared();
        MemorySegment file;
        try (FileChannel ch = BoundedOpen.read(path)) { // not blocked for good by a FIFO renamed in since the check
            size = ch.size();
            if (size < HEADER_LENGTH) {
                arena.close();
                throw new RingFileException(
                        path,
                        size,
                        "file is " + size + " bytes, shorter than the " + HEADER_LENGTH
                                + "-byte header (truncated, or not a ring file?)");
            }
            file = ch.map(FileChannel.MapMode.READ_ONLY, 0, size, arena);
        } catch (IOException e) {
            arena.close();
            throw new RingFileException(
                    path,
                    -1,
                    "cannot open: " + IoErrors.describe(e)
                            + (e.getMessage() != null && e.getMessage().contains("Map failed")
                                    ? " (out of address space or vm.max_map_count too low?)"
                                    : ""),
                    e);
        } catch (RuntimeException e) {
            arena.close();
            throw new RingFileException(path, -1, "cannot map: " + e, e);
        }
        try {
            return new RingStore(path, arena, watched, file, RingFileReader.read(path, file));
        } catch (RingFormatException | RuntimeException | InternalError e) {
            arena.close();
            switch (e) {
                case RingFormatException rfe -> throw exposed(rfe);
                case InternalError ie -> throw shrunk(path, ie);
                default -> throw new RingFileException(path, -1, "unreadable: " + e, e);
            }
        } catch (Error e) { // out of heap reading the tables, say: a shared arena is never unmapped by the GC
            arena.close();
            throw e;
        }
    }

    /** The backends of the file's backend table. */
    private static List<Backend> backends(List<BackendRecord> records, List<String> features) {
        List<Backend> list = new ArrayList<>(records.size());
        Map<Integer, Set<String>> byMask = new HashMap<>(); // fleets have few distinct feature sets
        for (BackendRecord r : records) {
            Set<String> own = byMask.computeIfAbsent(r.featureMask(), mask -> {
                Set<String> names = new LinkedHashSet<>();
                for (int b = 0; b < features.size(); b++) {
                    if ((mask & (1 << b)) != 0) {
                        names.add(features.get(b));
                    }
                }
                return names;
            });
            list.add(BackendAccess.create(list.size(), r, own, 0));
        }
        return List.copyOf(list);
    }

    /**
     * Refuses what is not a regular file before opening it: opening a FIFO blocks until a writer comes,
     * and a device maps as whatever it produces ({@code /dev/zero}: endless zeros). Symbolic links are
     * followed; their target must be a regular file. What the path names may still change between this
     * check and the open; a file published by rename is a regular file on both sides of it.
     *
     * @return the file's attributes, for callers that identify the file (the watcher's stamp)
     */
    static BasicFileAttributes requireRegularFile(Path path) throws RingFileException {
        BasicFileAttributes attributes;
        try {
            attributes = Files.readAttributes(path, BasicFileAttributes.class);
        } catch (IOException e) {
            throw new RingFileException(path, -1, "cannot open: " + IoErrors.describe(e), e);
        }
        if (attributes.isDirectory()) {
            throw new RingFileException(path, -1, "is a directory, not a ring file");
        }
        if (!attributes.isRegularFile()) {
            throw new RingFileException(
                    path,
                    -1,
                    "is not a regular file (" + (attributes.isOther() ? "a FIFO, socket or device" : "unknown type")
                            + "), not a ring file");
        }
        return attributes;
    }

    /** {@return the path the file was opened from} */
    public Path path() {
        return path;
    }

    /**
     * Goes up by one each time a file is published at the same path; an unsigned 64-bit number (print it with {@link Long#toUnsignedString(long)}).
     *
     * @return the file's generation, unsigned
     */
    public long generation() {
        return generation;
    }

    /** {@return SHA-256 of what the rings were built from (backends, features, versions)} */
    public byte[] inputDigest() {
        return inputDigest.clone();
    }

    /** {@return the number of backends in the backend table} */
    public int backendCount() {
        return backends.size();
    }

    /**
     * {@return the backend a lookup answered with {@code index}}
     *
     * @param index a backend index, as a lookup answers
     */
    public Backend backend(int index) {
        return backends.get(index);
    }

    /** {@return every backend, in file order (index order); unmodifiable} */
    public List<Backend> backends() {
        return backends;
    }

    /** {@return feature names, in file order} */
    public List<String> features() {
        return features;
    }

    /** {@return the versions in the file; the first is the default} */
    public List<RingVersion> versions() {
        return versions;
    }

    /**
     * {@return the ring of the default version whose backends have every feature in {@code features}}
     *
     * @param features the features every backend of the ring must have (the empty set: all backends)
     */
    public Ring ring(Set<String> features) {
        return ring(features, versions.getFirst());
    }

    /**
     * {@return the ring of {@code version} whose backends have every feature in {@code features} (the empty set: all)}
     *
     * @param features the features every backend of the ring must have (the empty set: all backends)
     * @param version one of the file's versions
     * @throws IllegalArgumentException for a feature or version the file does not have
     */
    public Ring ring(Set<String> features, RingVersion version) {
        int v = versions.indexOf(version);
        if (v < 0) {
            throw new IllegalArgumentException(
                    "version " + version + " is not in " + path + " (it has " + versions + ")");
        }
        return rings[(v << this.features.size()) | mask(features)];
    }

    /** {@return every ring: versions in file order, then feature masks 0 to 2^F-1} */
    public List<Ring> rings() {
        return Collections.unmodifiableList(Arrays.asList(rings));
    }

    /** {@return distinct non-empty point segments} */
    public int segmentCount() {
        return layout.segments().size();
    }

    /** {@return where the header, metadata and segments are, and which segment each ring uses} */
    public RingFileLayout layout() {
        return layout;
    }

    /** {@return the file's size in bytes} */
    public long fileSize() {
        return file.byteSize();
    }

    private int mask(Collection<String> names) {
        int mask = 0;
        for (String f : names) {
            Integer bit = featureBits.get(f);
            if (bit == null) {
                throw new IllegalArgumentException("unknown feature '" + f + "' (" + path + " has "
                        + (features.isEmpty() ? "no features" : String.join(", ", features)) + ")");
            }
            mask |= 1 << bit;
        }
        return mask;
    }

    /** The backends having every feature of {@code mask}, as a bitmap by index: a view's members. */
    private long[] memberBitmap(int mask) {
        List<BackendRecord> records = parsed.backends();
        long[] bits = new long[(records.size() + 63) >>> 6];
        for (int b = 0; b < records.size(); b++) {
            if ((records.get(b).featureMask() & mask) == mask) {
                bits[b >>> 6] |= 1L << b;
            }
        }
        return bits;
    }

    private Set<String> featureSet(int mask) {
        Set<String> set = new LinkedHashSet<>();
        for (int f = 0; f < features.size(); f++) {
            if ((mask & (1 << f)) != 0) {
                set.add(features.get(f));
            }
        }
        return Collections.unmodifiableSet(set);
    }

    /**
     * Checks every segment: its CRC-32C, strictly increasing hashes, that every point's backend
     * exists and has the features of every ring that uses the segment, and conversely that every
     * member of a ring (every backend with its features) has a point in it, unless that member lost
     * each of its points to a tie; that the rings sharing a segment are of one version, and that the
     * first point each of its backends generates in that version is there. Each distinct segment is
     * read once, however many rings share it. {@link #open} is the reader's structural check
     * ({@code RingFileReader}); this is the full one ({@code RingFileVerifier}, beside {@code
     * SegmentCheck}), as Lucene separates opening from {@code checkIntegrity}.
     *
     * @return the points checked: each distinct segment's once ({@link RingFileLayout#distinctPointCount()})
     * @throws RingFileException naming the first problem and its byte offset
     */
    public long verify() throws RingFileException {
        try {
            return new RingFileVerifier(path, file, parsed).verify();
        } catch (RingFormatException e) {
            throw exposed(e);
        } catch (InternalError e) {
            throw shrunk(path, e);
        }
    }

    /**
     * {@link #verify()}, and then some: every ring's points are generated again from the file's backend
     * table and versions, as the builder generates them, and compared point by point with the stored
     * ones (FORMAT.md, check 13 of {@code verify}): a point whose hash, backend or 64-bit low word was
     * changed, or a backend's points dropped, is named even when every checksum was fixed up. It costs
     * about what building the rings did (one generation a distinct segment), so {@link #open} and the
     * routers' reloads do not run it; {@code ringstore verify} does.
     *
     * @return the points checked: each distinct segment's once ({@link RingFileLayout#distinctPointCount()})
     * @throws RingFileException naming the first problem and its byte offset
     */
    public long verifyDeep() throws RingFileException {
        try {
            return new RingFileVerifier(path, file, parsed).verify(true);
        } catch (RingFormatException e) {
            throw exposed(e);
        } catch (InternalError e) {
            throw shrunk(path, e);
        }
    }

    /** The public exception for what the format's floor found: the same path, offset and reason. */
    private static RingFileException exposed(RingFormatException e) {
        return new RingFileException(e.problem(), null);
    }

    /** What a read of a mapped page past the file's end becomes: the JVM reports SIGBUS as an InternalError. */
    private static RingFileException shrunk(Path path, InternalError e) {
        return new RingFileException(
                path,
                -1,
                "the file shrank while mapped (rewritten in place? publish new files by rename only): "
                        + e.getMessage(),
                e);
    }

    /**
     * Releases the mapping; lookups afterwards throw {@link IllegalStateException}. Idempotent. For a
     * store a {@code RingRouter} serves from a path it does nothing: the watcher releases the mapping a grace
     * period after the store was replaced (or when the watcher is closed).
     */
    @Override
    public void close() {
        if (!watched) {
            release();
        }
    }

    /**
     * Unmaps the file now, whoever reads it. Safe against a concurrent reader: closing a shared arena
     * marks it closed and then hands shake with every thread (JDK 25 {@code
     * jdk.internal.foreign.SharedSession.justClose}, {@code ScopedMemoryAccess.closeScope}); a thread
     * caught inside an access to the arena's memory gets an {@link IllegalStateException} ("Already
     * closed") instead of finishing it, and every later access checks the closed state first. So a
     * reader gets that exception, never freed memory, and never a crash. Idempotent. Returns whether
     * the file is unmapped now: a JDK whose close refuses while another thread is inside an access
     * throws instead of handing shake, and the caller tries again later.
     */
    boolean release() {
        try {
            arena.close();
        } catch (IllegalStateException e) {
            // Closed already (by another release), or in use on a JDK that refuses to close then.
        }
        return !arena.scope().isAlive();
    }

    /** Whether the file is still mapped. */
    boolean mapped() {
        return arena.scope().isAlive();
    }

    @Override
    public String toString() {
        return "RingStore[" + path + ", generation " + Long.toUnsignedString(generation) + ", " + backends.size()
                + " backends, " + rings.length + " rings]";
    }
}
