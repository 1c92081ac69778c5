package io.ringstore;

import io.ringstore.internal.BackendAccess;
import io.ringstore.build.BackendList;
import io.ringstore.internal.IoErrors;
import io.ringstore.internal.RingFormat;
import io.ringstore.internal.ServerAddress;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.zip.CRC32C;

import static io.ringstore.internal.RingFormat.*;

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
    private final Ring[] rings;
    private final int segmentCount;
    private final boolean gcManaged;

    private RingStore(Path path, Arena arena, boolean gcManaged, MemorySegment file, Parsed p) {
        this.path = path;
        this.arena = arena;
        this.gcManaged = gcManaged;
        this.file = file;
        this.generation = p.generation;
        this.inputDigest = p.inputDigest;
        this.backends = p.backends;
        this.features = p.features;
        this.featureBits = new HashMap<>();
        for (int i = 0; i < features.size(); i++) {
            featureBits.put(features.get(i), i);
        }
        this.versions = p.versions;
        this.segmentCount = p.segmentCount;
        this.rings = new Ring[p.entries.length];
        Map<Long, MemorySegment> slices = new HashMap<>();
        for (int i = 0; i < rings.length; i++) {
            Entry e = p.entries[i];
            MemorySegment points = e.pointCount == 0 ? MemorySegment.NULL
                    : slices.computeIfAbsent(e.offset, o -> file.asSlice(o, e.length));
            rings[i] = new Ring(this, points, e.pointCount, backends.size(), versions.get(i >> features.size()),
                    featureSet(e.mask), e.mask, e.offset, e.crc);
        }
    }

    /**
     * Maps and validates {@code path}.
     *
     * @throws RingFileException if the file cannot be read, is not a ring file, is corrupt or of an unsupported version
     */
    public static RingStore open(Path path) throws RingFileException {
        return open(path, false);
    }

    /**
     * Maps {@code path}; with {@code gcManaged} the mapping lives as long as anything can reach this
     * store or its rings, and is released by the garbage collector afterwards ({@link #close()} does
     * nothing). That is how {@link WatchedRingStore} never unmaps a file under a reader.
     */
    static RingStore open(Path path, boolean gcManaged) throws RingFileException {
        if (Files.isDirectory(path)) {
            throw new RingFileException(path, -1, "is a directory, not a ring file");
        }
        long size;
        Arena arena = gcManaged ? Arena.ofAuto() : Arena.ofShared();
        MemorySegment file;
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
            size = ch.size();
            if (size < HEADER_LENGTH) {
                closeQuietly(arena);
                throw new RingFileException(path, size, "file is " + size + " bytes, shorter than the "
                        + HEADER_LENGTH + "-byte header (truncated, or not a ring file?)");
            }
            file = ch.map(FileChannel.MapMode.READ_ONLY, 0, size, arena);
        } catch (IOException e) {
            closeQuietly(arena);
            throw new RingFileException(path, -1, "cannot open: " + IoErrors.describe(e)
                    + (e.getMessage() != null && e.getMessage().contains("Map failed") ? " (out of address space or vm.max_map_count too low?)" : ""), e);
        } catch (RuntimeException e) {
            closeQuietly(arena);
            throw new RingFileException(path, -1, "cannot map: " + e, e);
        }
        try {
            return new RingStore(path, arena, gcManaged, file, new Parser(path, file).parse());
        } catch (RingFileException | RuntimeException | InternalError e) {
            closeQuietly(arena);
            switch (e) {
                case RingFileException rfe -> throw rfe;
                case InternalError ie -> throw shrunk(path, ie);
                default -> throw new RingFileException(path, -1, "unreadable: " + e, e);
            }
        }
    }

    private static void closeQuietly(Arena arena) {
        try {
            arena.close();
        } catch (UnsupportedOperationException e) {
            // An automatic arena: the garbage collector releases what was mapped.
        }
    }

    /**
     * Opens {@code path} and follows it: see {@link WatchedRingStore}.
     *
     * @throws RingFileException when the file there now cannot be opened
     */
    public static WatchedRingStore watch(Path path) throws RingFileException {
        return WatchedRingStore.watch(path, WatchedRingStore.DEFAULT_POLL_MILLIS);
    }

    public Path path() {
        return path;
    }

    /** Goes up by one each time a file is published at the same path. */
    public long generation() {
        return generation;
    }

    /** SHA-256 of what the rings were built from (backends, features, versions). */
    public byte[] inputDigest() {
        return inputDigest.clone();
    }

    public int backendCount() {
        return backends.size();
    }

    /** The backend a lookup answered with {@code index}. */
    public Backend backend(int index) {
        return backends.get(index);
    }

    public List<Backend> backends() {
        return backends;
    }

    /** Feature names, in file order. */
    public List<String> features() {
        return features;
    }

    /** The versions in the file; the first is the default. */
    public List<RingVersion> versions() {
        return versions;
    }

    /** The ring of the default version whose backends have every feature in {@code features}. */
    public Ring ring(Set<String> features) {
        return ring(features, versions.getFirst());
    }

    /**
     * The ring of {@code version} whose backends have every feature in {@code features} (the empty set: all).
     *
     * @throws IllegalArgumentException for a feature or version the file does not have
     */
    public Ring ring(Set<String> features, RingVersion version) {
        int v = versions.indexOf(version);
        if (v < 0) {
            throw new IllegalArgumentException("version " + version + " is not in " + path + " (it has " + versions + ")");
        }
        return rings[(v << this.features.size()) | mask(features)];
    }

    /** Every ring: versions in file order, then feature masks 0 .. 2^F-1. */
    public List<Ring> rings() {
        return Collections.unmodifiableList(Arrays.asList(rings));
    }

    /** Distinct non-empty point segments. */
    public int segmentCount() {
        return segmentCount;
    }

    /** The file's size in bytes. */
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
     * Checks every segment: its CRC-32C, strictly increasing hashes, and that every point's backend
     * exists and has the ring's features.
     *
     * @throws RingFileException naming the first problem and its byte offset
     */
    public void verify() throws RingFileException {
        try {
            verifySegments();
        } catch (InternalError e) {
            throw shrunk(path, e);
        }
    }

    /** What a read of a mapped page past the file's end becomes: the JVM reports SIGBUS as an InternalError. */
    private static RingFileException shrunk(Path path, InternalError e) {
        return new RingFileException(path, -1, "the file shrank while mapped (rewritten in place? publish new files by rename only): " + e.getMessage(), e);
    }

    private void verifySegments() throws RingFileException {
        Set<Long> done = new HashSet<>();
        for (Ring r : rings) {
            if (r.pointCount() == 0 || !done.add(r.segmentOffset())) {
                continue;
            }
            int crc = crc32c(r.points());
            if (crc != r.segmentCrc()) {
                throw new RingFileException(path, r.segmentOffset(), "segment checksum mismatch: expected CRC-32C "
                        + hex(r.segmentCrc()) + " (ring index), computed " + hex(crc) + " (corrupted points?)");
            }
        }
        // Order and membership are checked per ring: shared segments must suit every ring that uses them.
        for (Ring r : rings) {
            MemorySegment seg = r.points();
            int previous = 0;
            for (int i = 0; i < r.pointCount(); i++) {
                long at = r.segmentOffset() + (long) i * POINT_LENGTH;
                int h = r.pointHash(i);
                if (i > 0 && Integer.compareUnsigned(h, previous) <= 0) {
                    throw new RingFileException(path, at, "ring " + r + ": point " + i + " hash " + Integer.toUnsignedString(h)
                            + " is not greater than the previous " + Integer.toUnsignedString(previous) + " (points must be strictly increasing)");
                }
                previous = h;
                int b = Short.toUnsignedInt(seg.get(U16, (long) i * POINT_LENGTH + POINT_BACKEND_OFFSET));
                if (b >= backends.size()) {
                    throw new RingFileException(path, at + POINT_BACKEND_OFFSET, "ring " + r + ": point " + i + " names backend "
                            + b + " but the file has " + backends.size());
                }
                int need = r.featureMask();
                if ((BackendAccess.featureMask(backends.get(b)) & need) != need) {
                    throw new RingFileException(path, at + POINT_BACKEND_OFFSET, "ring " + r + ": point " + i + " names backend "
                            + b + " (" + backends.get(b).address() + ") which lacks the ring's features");
                }
            }
        }
    }

    /**
     * CRC-32C of mapped bytes, read through a heap buffer: if the file is truncated under the mapping,
     * the copy raises an {@link InternalError}, where the CRC intrinsic reading the mapping directly
     * would crash the JVM with SIGBUS (seen on JDK 25).
     */
    static int crc32c(MemorySegment seg) {
        CRC32C crc = new CRC32C();
        byte[] chunk = new byte[(int) Math.min(seg.byteSize(), 1 << 20)];
        for (long off = 0; off < seg.byteSize(); off += chunk.length) {
            int n = (int) Math.min(chunk.length, seg.byteSize() - off);
            MemorySegment.copy(seg, U8, off, chunk, 0, n);
            crc.update(chunk, 0, n);
        }
        return (int) crc.getValue();
    }

    static String hex(int v) {
        return String.format("0x%08x", v);
    }

    /**
     * Releases the mapping; lookups afterwards throw {@link IllegalStateException}. Idempotent. For a
     * store from {@link WatchedRingStore} it does nothing: the garbage collector releases the mapping.
     */
    @Override
    public void close() {
        if (!gcManaged && arena.scope().isAlive()) {
            arena.close();
        }
    }

    @Override
    public String toString() {
        return "RingStore[" + path + ", generation " + generation + ", " + backends.size() + " backends, " + rings.length + " rings]";
    }

    // ------------------------------------------------------------------------------------------

    private record Entry(int mask, long offset, long length, int pointCount, int crc) {
    }

    private record Parsed(long generation, byte[] inputDigest, List<Backend> backends, List<String> features,
                          List<RingVersion> versions, Entry[] entries, int segmentCount) {
    }

    /** Reads and validates the metadata; every count is checked against the file size before use. */
    private static final class Parser {
        private final Path path;
        private final MemorySegment f;
        private final long size;

        Parser(Path path, MemorySegment f) {
            this.path = path;
            this.f = f;
            this.size = f.byteSize();
        }

        private RingFileException bad(long offset, String reason) {
            return new RingFileException(path, offset, reason);
        }

        private long u32(long at) {
            return Integer.toUnsignedLong(f.get(U32, at));
        }

        private int u16(long at) {
            return Short.toUnsignedInt(f.get(U16, at));
        }

        private long u64(long at, String what) throws RingFileException {
            long v = f.get(U64, at);
            if (v < 0 || v > size) {
                throw bad(at, what + " " + Long.toUnsignedString(v) + " is beyond the file's " + size + " bytes (corrupt header?)");
            }
            return v;
        }

        private void expect(long at, long actual, long expected, String what) throws RingFileException {
            if (actual != expected) {
                throw bad(at, what + ": expected " + expected + ", found " + actual);
            }
        }

        Parsed parse() throws RingFileException {
            byte[] magic = f.asSlice(MAGIC_OFFSET, MAGIC_LENGTH).toArray(U8);
            if (!Arrays.equals(magic, MAGIC)) {
                throw bad(MAGIC_OFFSET, "bad magic: expected \"RINGSTOR\", found \"" + printable(magic) + "\" (not a ring file?)");
            }
            int version = u16(FORMAT_VERSION_OFFSET);
            if (version < MIN_SUPPORTED_VERSION || version > MAX_SUPPORTED_VERSION) {
                throw bad(FORMAT_VERSION_OFFSET, "unsupported format version " + version + " (this reader supports "
                        + MIN_SUPPORTED_VERSION + " to " + MAX_SUPPORTED_VERSION + ")");
            }
            expect(FLAGS_OFFSET, u16(FLAGS_OFFSET), 0, "flags (none are defined in format version 1)");
            expect(HEADER_LENGTH_OFFSET, u32(HEADER_LENGTH_OFFSET), HEADER_LENGTH, "header length");
            long fileLength = f.get(U64, FILE_LENGTH_OFFSET);
            if (fileLength != size) {
                throw bad(FILE_LENGTH_OFFSET, "header says the file is " + Long.toUnsignedString(fileLength) + " bytes, it is "
                        + size + (size < fileLength ? " (truncated?)" : " (extended or overwritten?)"));
            }
            long generation = f.get(U64, GENERATION_OFFSET);
            byte[] digest = f.asSlice(INPUT_DIGEST_OFFSET, INPUT_DIGEST_LENGTH).toArray(U8);
            long backendCount = u32(BACKEND_COUNT_OFFSET);
            if (backendCount < 1 || backendCount > BackendList.MAX_BACKENDS) {
                throw bad(BACKEND_COUNT_OFFSET, "backend count " + backendCount + " is outside 1-" + BackendList.MAX_BACKENDS);
            }
            int featureCount = u16(FEATURE_COUNT_OFFSET);
            if (featureCount > BackendList.MAX_FEATURES) {
                throw bad(FEATURE_COUNT_OFFSET, "feature count " + featureCount + " is more than " + BackendList.MAX_FEATURES);
            }
            int versionCount = u16(VERSION_COUNT_OFFSET);
            if (versionCount < 1 || versionCount > MAX_VERSIONS) {
                throw bad(VERSION_COUNT_OFFSET, "version count " + versionCount + " is outside 1-" + MAX_VERSIONS);
            }
            long ringCount = u32(RING_COUNT_OFFSET);
            expect(RING_COUNT_OFFSET, ringCount, (long) versionCount << featureCount, "ring count (versions × 2^features)");
            long segmentCount = u32(SEGMENT_COUNT_OFFSET);
            if (segmentCount > ringCount) {
                throw bad(SEGMENT_COUNT_OFFSET, "segment count " + segmentCount + " is more than the ring count " + ringCount);
            }
            long backendsAt = u64(BACKEND_TABLE_OFFSET_OFFSET, "backend table offset");
            expect(BACKEND_TABLE_OFFSET_OFFSET, backendsAt, HEADER_LENGTH, "backend table offset");
            long backendsLength = u64(BACKEND_TABLE_LENGTH_OFFSET, "backend table length");
            long featuresAt = u64(FEATURE_TABLE_OFFSET_OFFSET, "feature table offset");
            expect(FEATURE_TABLE_OFFSET_OFFSET, featuresAt, backendsAt + backendsLength, "feature table offset (end of backend table)");
            long featuresLength = u64(FEATURE_TABLE_LENGTH_OFFSET, "feature table length");
            long indexAt = u64(RING_INDEX_OFFSET_OFFSET, "ring index offset");
            expect(RING_INDEX_OFFSET_OFFSET, indexAt, featuresAt + featuresLength, "ring index offset (end of feature table)");
            long indexLength = u64(RING_INDEX_LENGTH_OFFSET, "ring index length");
            expect(RING_INDEX_LENGTH_OFFSET, indexLength, ringCount * ENTRY_LENGTH, "ring index length (ring count × " + ENTRY_LENGTH + ")");
            long metadataEnd = indexAt + indexLength;
            if (metadataEnd + METADATA_CRC_LENGTH > size) {
                throw bad(Math.min(metadataEnd, size), "metadata ends at " + (metadataEnd + METADATA_CRC_LENGTH) + ", past the file's end at " + size + " (truncated?)");
            }
            int crc = crc32c(f.asSlice(0, metadataEnd));
            int storedCrc = f.get(U32, metadataEnd);
            if (crc != storedCrc) {
                throw bad(metadataEnd, "metadata checksum mismatch: stored CRC-32C " + hex(storedCrc) + ", computed "
                        + hex(crc) + " over bytes 0-" + metadataEnd + " (corrupted header or tables?)");
            }
            List<String> features = parseFeatures(featuresAt, featuresLength, featureCount);
            List<Backend> backends = parseBackends(backendsAt, backendsLength, (int) backendCount, features);
            long segmentsStart = metadataEnd + METADATA_CRC_LENGTH;
            List<RingVersion> versions = new ArrayList<>();
            Entry[] entries = parseIndex(indexAt, (int) ringCount, featureCount, segmentsStart, versions);
            long distinct = Arrays.stream(entries).filter(e -> e.pointCount > 0).mapToLong(Entry::offset).distinct().count();
            expect(SEGMENT_COUNT_OFFSET, distinct, segmentCount, "segment count (distinct non-empty segments in the index)");
            return new Parsed(generation, digest, backends, features, List.copyOf(versions), entries, (int) segmentCount);
        }

        private List<Backend> parseBackends(long at, long length, int count, List<String> features) throws RingFileException {
            int featureCount = features.size();
            if (length < (long) count * BACKEND_FIXED_LENGTH) {
                throw bad(BACKEND_TABLE_LENGTH_OFFSET, "backend table of " + length + " bytes cannot hold " + count + " backends");
            }
            List<Backend> list = new ArrayList<>(count);
            Set<String> endpoints = new HashSet<>();
            long end = at + length;
            long p = at;
            for (int i = 0; i < count; i++) {
                if (p + BACKEND_FIXED_LENGTH > end) {
                    throw bad(p, "backend " + i + " runs past the end of the backend table at " + end);
                }
                long weight = u32(p + BACKEND_WEIGHT_OFFSET);
                if (weight < 1 || weight > BackendList.MAX_WEIGHT) {
                    throw bad(p + BACKEND_WEIGHT_OFFSET, "backend " + i + " weight " + weight + " is outside 1-" + BackendList.MAX_WEIGHT);
                }
                int mask = f.get(U32, p + BACKEND_FEATURES_OFFSET);
                if (featureCount < 32 && (mask >>> featureCount) != 0) {
                    throw bad(p + BACKEND_FEATURES_OFFSET, "backend " + i + " feature mask " + hex(mask) + " names features beyond the " + featureCount + " declared");
                }
                int len = u16(p + BACKEND_ADDRESS_LENGTH_OFFSET);
                if (len == 0 || p + BACKEND_FIXED_LENGTH + len > end) {
                    throw bad(p + BACKEND_ADDRESS_LENGTH_OFFSET, "backend " + i + " address length " + len + " is 0 or runs past the backend table");
                }
                String text = new String(f.asSlice(p + BACKEND_ADDRESS_OFFSET, len).toArray(U8), StandardCharsets.ISO_8859_1);
                ServerAddress address;
                try {
                    address = ServerAddress.parse(text);
                } catch (IllegalArgumentException e) {
                    throw bad(p + BACKEND_ADDRESS_OFFSET, "backend " + i + ": " + e.getMessage());
                }
                if (!endpoints.add(address.socketAddress())) {
                    throw bad(p + BACKEND_ADDRESS_OFFSET, "backend " + i + " '" + text + "' is a duplicate");
                }
                Set<String> own = new LinkedHashSet<>();
                for (int b = 0; b < featureCount; b++) {
                    if ((mask & (1 << b)) != 0) {
                        own.add(features.get(b));
                    }
                }
                list.add(BackendAccess.create(i, address, weight, own, mask, 0));
                p += BACKEND_FIXED_LENGTH + len;
            }
            if (p != end) {
                throw bad(p, "backend table has " + (end - p) + " bytes after its " + count + " backends");
            }
            return list;
        }

        private List<String> parseFeatures(long at, long length, int count) throws RingFileException {
            List<String> names = new ArrayList<>(count);
            long end = at + length;
            long p = at;
            for (int i = 0; i < count; i++) {
                if (p >= end) {
                    throw bad(p, "feature " + i + " runs past the end of the feature table at " + end);
                }
                int len = Byte.toUnsignedInt(f.get(U8, p));
                if (len == 0 || p + 1 + len > end) {
                    throw bad(p, "feature " + i + " name length " + len + " is 0 or runs past the feature table");
                }
                String name = new String(f.asSlice(p + 1, len).toArray(U8), StandardCharsets.ISO_8859_1);
                if (!name.matches("[A-Za-z0-9_.-]{1,64}") || names.contains(name)) {
                    throw bad(p + 1, "feature " + i + " name '" + printable(name.getBytes(StandardCharsets.ISO_8859_1)) + "' is invalid or repeated");
                }
                names.add(name);
                p += 1 + len;
            }
            if (p != end) {
                throw bad(p, "feature table has " + (end - p) + " bytes after its " + count + " names");
            }
            return List.copyOf(names);
        }

        private Entry[] parseIndex(long at, int ringCount, int featureCount, long segmentsStart,
                                   List<RingVersion> versions) throws RingFileException {
            Entry[] entries = new Entry[ringCount];
            int masks = 1 << featureCount;
            Map<Long, Entry> byOffset = new HashMap<>();
            for (int i = 0; i < ringCount; i++) {
                long e = at + (long) i * ENTRY_LENGTH;
                int mask = f.get(U32, e + ENTRY_FEATURE_MASK_OFFSET);
                expect(e + ENTRY_FEATURE_MASK_OFFSET, mask, i % masks, "ring " + i + " feature mask (entries are in mask order)");
                int code = Byte.toUnsignedInt(f.get(U8, e + ENTRY_ALGORITHM_OFFSET));
                Algorithm algorithm = Algorithm.ofCode(code);
                if (algorithm == null) {
                    throw bad(e + ENTRY_ALGORITHM_OFFSET, "ring " + i + " algorithm " + code + " is unknown (expected 1 = v1 or 2 = v2)");
                }
                if (f.get(U8, e + ENTRY_RESERVED1_OFFSET) != 0 || f.get(U16, e + ENTRY_RESERVED1_OFFSET + 1) != 0
                        || f.get(U32, e + ENTRY_RESERVED2_OFFSET) != 0) {
                    throw bad(e + ENTRY_RESERVED1_OFFSET, "ring " + i + " reserved bytes are not zero");
                }
                long multiple = u32(e + ENTRY_POINT_MULTIPLE_OFFSET);
                RingVersion version;
                try {
                    version = new RingVersion(algorithm, (int) Math.min(multiple, Integer.MAX_VALUE));
                } catch (IllegalArgumentException ex) {
                    throw bad(e + ENTRY_POINT_MULTIPLE_OFFSET, "ring " + i + ": " + ex.getMessage());
                }
                int v = i / masks;
                if (i % masks == 0) {
                    if (versions.contains(version)) {
                        throw bad(e + ENTRY_ALGORITHM_OFFSET, "ring " + i + " repeats version " + version);
                    }
                    versions.add(version);
                } else if (!versions.get(v).equals(version)) {
                    throw bad(e + ENTRY_ALGORITHM_OFFSET, "ring " + i + " is " + version + " but its version block is " + versions.get(v));
                }
                long points = u32(e + ENTRY_POINT_COUNT_OFFSET);
                long offset = f.get(U64, e + ENTRY_SEGMENT_OFFSET_OFFSET);
                long length = f.get(U64, e + ENTRY_SEGMENT_LENGTH_OFFSET);
                int crc = f.get(U32, e + ENTRY_SEGMENT_CRC_OFFSET);
                if (points > MAX_POINTS_PER_RING) {
                    throw bad(e + ENTRY_POINT_COUNT_OFFSET, "ring " + i + " point count " + points + " is more than " + MAX_POINTS_PER_RING);
                }
                expect(e + ENTRY_SEGMENT_LENGTH_OFFSET, length, points * POINT_LENGTH, "ring " + i + " segment length (points × 6)");
                if (points == 0) {
                    expect(e + ENTRY_SEGMENT_OFFSET_OFFSET, offset, 0, "ring " + i + " segment offset of an empty ring");
                } else if (offset < segmentsStart || offset > size || length > size - offset) {
                    throw bad(e + ENTRY_SEGMENT_OFFSET_OFFSET, "ring " + i + " segment [" + offset + ", +" + length
                            + ") is outside the segment area [" + segmentsStart + ", " + size + ") (truncated or corrupt index?)");
                }
                Entry entry = new Entry(mask, offset, length, (int) points, crc);
                if (points > 0) {
                    Entry same = byOffset.putIfAbsent(offset, entry);
                    if (same != null && (same.length != length || same.crc != crc)) {
                        throw bad(e + ENTRY_SEGMENT_OFFSET_OFFSET, "ring " + i + " shares offset " + offset
                                + " with another ring but not its length and checksum");
                    }
                }
                entries[i] = entry;
            }
            long[] starts = byOffset.keySet().stream().mapToLong(Long::longValue).sorted().toArray();
            for (int s = 1; s < starts.length; s++) {
                Entry prev = byOffset.get(starts[s - 1]);
                if (prev.offset + prev.length > starts[s]) {
                    throw bad(at, "segments at " + prev.offset + " (+" + prev.length + ") and " + starts[s] + " overlap");
                }
            }
            return entries;
        }

        private static String printable(byte[] bytes) {
            StringBuilder sb = new StringBuilder();
            for (byte b : bytes) {
                sb.append(b >= 0x20 && b < 0x7f ? String.valueOf((char) b) : String.format("\\x%02x", b));
            }
            return sb.toString();
        }
    }
}
