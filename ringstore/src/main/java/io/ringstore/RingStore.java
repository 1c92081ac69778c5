package io.ringstore;

import io.ringstore.internal.BackendAccess;
import io.ringstore.internal.Crc32;
import io.ringstore.internal.FeatureMasks;
import io.ringstore.internal.IoErrors;
import io.ringstore.internal.ServerParameters;
import io.ringstore.internal.format.BackendRecord;
import io.ringstore.internal.format.ParsedRingFile;
import io.ringstore.internal.format.RingFileReader;
import io.ringstore.internal.format.RingFormatException;
import io.ringstore.internal.format.SegmentCheck;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
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
import java.util.TreeMap;

import static io.ringstore.internal.format.RingFileDescriptor.ENTRY_LENGTH;
import static io.ringstore.internal.format.RingFileDescriptor.ENTRY_RING_POINTS_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.ENTRY_SEGMENT_OFFSET_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.HEADER_LENGTH;
import static io.ringstore.internal.format.RingFileDescriptor.POINT_BACKEND_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.POINT_LENGTH;
import static io.ringstore.internal.format.RingFileDescriptor.STORAGE_POINTS_WITH_TIES;
import static io.ringstore.internal.format.RingFileDescriptor.STORAGE_VIEW;
import static io.ringstore.internal.format.RingFileReader.hex;

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
    private final RingFileLayout layout;
    private final boolean watched;

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
        this.versions = p.versions().stream().map(RingStore::version).toList();
        List<ParsedRingFile.Entry> entries = p.entries();
        // Distinct segments in file order; the reader has checked that rings sharing an offset agree.
        TreeMap<Long, ParsedRingFile.Entry> byOffset = new TreeMap<>();
        for (ParsedRingFile.Entry e : entries) {
            if (e.pointCount() > 0) {
                byOffset.putIfAbsent(e.offset(), e);
            }
        }
        List<RingFileLayout.Segment> segments = new ArrayList<>();
        Map<Long, Integer> segmentAt = new HashMap<>();
        Ring.Points[] stored = new Ring.Points[byOffset.size()];
        for (ParsedRingFile.Entry e : byOffset.values()) {
            segmentAt.put(e.offset(), segments.size());
            stored[segments.size()] = new Ring.Points(file.asSlice(e.offset(), e.length()), e.pointCount());
            segments.add(new RingFileLayout.Segment(e.offset(), e.length(), e.pointCount(), e.crc()));
        }
        Ring.Points none = new Ring.Points(MemorySegment.NULL, 0);
        this.rings = new Ring[entries.size()];
        int[] segmentOfRing = new int[rings.length];
        RingFileLayout.Storage[] storageOfRing = new RingFileLayout.Storage[rings.length];
        for (int i = 0; i < rings.length; i++) {
            ParsedRingFile.Entry e = entries.get(i);
            int s = e.pointCount() == 0 ? -1 : segmentAt.get(e.offset());
            segmentOfRing[i] = s;
            storageOfRing[i] = RingFileLayout.Storage.values()[e.storage()];
            long[] members = e.storage() == STORAGE_VIEW ? memberBitmap(e.mask()) : null;
            rings[i] = new Ring(this, i, s < 0 ? none : stored[s], e.ringPoints(), e.storage(), members, backends.size(),
                    version(e.version()), featureSet(e.mask()), e.mask());
        }
        this.layout = new RingFileLayout(this, p.formatVersion(), p.headerLength(), p.metadataLength(), p.metadataCrc(),
                segments, segmentOfRing, storageOfRing);
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
     * {@link WatchedRingStore}: {@link #close()} does nothing, and the watcher unmaps it with
     * {@link #release()} a grace period after replacing it. A shared arena, not an automatic one, so
     * that the file is unmapped (and a deleted file's space returned) then, not at some later garbage
     * collection; closing a shared arena is safe against threads reading it (see {@link #release()}).
     */
    static RingStore open(Path path, boolean watched) throws RingFileException {
        requireRegularFile(path);
        long size;
        Arena arena = Arena.ofShared();
        MemorySegment file;
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
            size = ch.size();
            if (size < HEADER_LENGTH) {
                arena.close();
                throw new RingFileException(path, size, "file is " + size + " bytes, shorter than the "
                        + HEADER_LENGTH + "-byte header (truncated, or not a ring file?)");
            }
            file = ch.map(FileChannel.MapMode.READ_ONLY, 0, size, arena);
        } catch (IOException e) {
            arena.close();
            throw new RingFileException(path, -1, "cannot open: " + IoErrors.describe(e)
                    + (e.getMessage() != null && e.getMessage().contains("Map failed") ? " (out of address space or vm.max_map_count too low?)" : ""), e);
        } catch (RuntimeException e) {
            arena.close();
            throw new RingFileException(path, -1, "cannot map: " + e, e);
        }
        try {
            return new RingStore(path, arena, watched, file, RingFileReader.read(path, file, FAMILIES));
        } catch (RingFormatException | RuntimeException | InternalError e) {
            arena.close();
            switch (e) {
                case RingFormatException rfe -> throw new RingFileException(rfe.path(), rfe.offset(), rfe.reason());
                case InternalError ie -> throw shrunk(path, ie);
                default -> throw new RingFileException(path, -1, "unreadable: " + e, e);
            }
        } catch (Error e) { // out of heap reading the tables, say: a shared arena is never unmapped by the GC
            arena.close();
            throw e;
        }
    }

    /** The ring families as the reader asks about a ring index entry's code and parameter word. */
    private static final ParsedRingFile.Families FAMILIES = new ParsedRingFile.Families() {
        @Override
        public boolean known(int code) {
            return RingFamily.forCode(code).isPresent();
        }

        @Override
        public String codes() {
            return RingFamily.names(RingFamily.all().stream().map(f -> f.code() + " = " + f.name()).toList());
        }

        @Override
        public String parameterProblem(int code, int parameter) {
            try {
                new RingVersion(RingFamily.forCode(code).orElseThrow(), parameter);
                return null;
            } catch (IllegalArgumentException e) {
                return e.getMessage();
            }
        }

        @Override
        public String name(ParsedRingFile.Version version) {
            return version(version).name();
        }
    };

    /** The version a ring index entry names (the reader has checked it with {@link #FAMILIES}). */
    private static RingVersion version(ParsedRingFile.Version v) {
        return new RingVersion(RingFamily.forCode(v.family()).orElseThrow(), v.parameter());
    }

    /** The backends of the file's backend table. */
    private static List<Backend> backends(List<BackendRecord> records, List<String> features) {
        List<Backend> list = new ArrayList<>(records.size());
        for (BackendRecord r : records) {
            Set<String> own = new LinkedHashSet<>();
            for (int b = 0; b < features.size(); b++) {
                if ((r.featureMask() & (1 << b)) != 0) {
                    own.add(features.get(b));
                }
            }
            list.add(BackendAccess.create(list.size(), r.address(), r.weight(), own, r.featureMask(),
                    r.down() ? ServerParameters.DOWN : ServerParameters.DEFAULTS, 0));
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
            throw new RingFileException(path, -1, "is not a regular file (" + (attributes.isOther() ? "a FIFO, socket or device" : "unknown type")
                    + "), not a ring file");
        }
        return attributes;
    }

    /**
     * Opens {@code path} and follows it: see {@link WatchedRingStore}.
     *
     * @param path the ring file's path
     * @return the store following the path; close it to stop
     * @throws RingFileException when the file there now cannot be opened
     */
    public static WatchedRingStore watch(Path path) throws RingFileException {
        return WatchedRingStore.watch(path, WatchedRingStore.DEFAULT_POLL_MILLIS);
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
            throw new IllegalArgumentException("version " + version + " is not in " + path + " (it has " + versions + ")");
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
        long[] bits = new long[(backends.size() + 63) >>> 6];
        for (Backend b : backends) {
            if ((BackendAccess.featureMask(b) & mask) == mask) {
                bits[b.index() >>> 6] |= 1L << b.index();
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
     * read once, however many rings share it.
     *
     * @return the points checked: each distinct segment's once ({@link RingFileLayout#distinctPointCount()})
     * @throws RingFileException naming the first problem and its byte offset
     */
    public long verify() throws RingFileException {
        try {
            return verifySegments();
        } catch (InternalError e) {
            throw shrunk(path, e);
        }
    }

    /** What a read of a mapped page past the file's end becomes: the JVM reports SIGBUS as an InternalError. */
    private static RingFileException shrunk(Path path, InternalError e) {
        return new RingFileException(path, -1, "the file shrank while mapped (rewritten in place? publish new files by rename only): " + e.getMessage(), e);
    }

    /**
     * Each distinct segment is read once, however many rings share it (all 2^F rings of a version can
     * share one), in one pass ({@link SegmentCheck}): its CRC, order and backend indexes, checked with the features of the first
     * ring that uses it while the AND of its backends' feature masks and the number of distinct
     * backends are kept. A later ring sharing it then needs only its mask to lie within that AND.
     * Every point's backend being a member, the segment holds all of a ring's members exactly when
     * it holds as many distinct backends as the ring has members: O(1) a ring. Errors name the same
     * ring and point as checking ring by ring would.
     */
    private long verifySegments() throws RingFileException {
        List<RingFileLayout.Segment> segments = layout.segments();
        SegmentCheck segmentCheck = new SegmentCheck(backends.stream().mapToInt(BackendAccess::featureMask).toArray());
        SegmentCheck.Result[] checks = new SegmentCheck.Result[segments.size()];
        for (Ring r : rings) {
            int s = layout.segmentIndex(r);
            if (s < 0 || checks[s] != null) {
                continue;
            }
            checks[s] = segmentCheck.check(r.points(), r.featureMask(), r.storage() == STORAGE_POINTS_WITH_TIES ? tieRanks(r.version()) : null);
            RingFileLayout.Segment seg = segments.get(s);
            int crc = checks[s].crc32c();
            if (crc != seg.crc32c()) {
                throw new RingFileException(path, seg.offset(), "segment checksum mismatch: expected CRC-32C "
                        + hex(seg.crc32c()) + " (ring index), computed " + hex(crc) + " (corrupted points?)");
            }
        }
        long[] members = memberCounts();
        int[] commonFeatures = new int[segments.size()];
        int[] distinctBackends = new int[segments.size()];
        int[] seen = new int[backends.size()];          // the distinct backends of the segment just scanned
        Ring[] firstRing = new Ring[segments.size()];
        List<List<Ring>> views = new ArrayList<>(Collections.nCopies(segments.size(), null));
        long checked = 0;
        for (Ring r : rings) {
            int s = layout.segmentIndex(r);
            if (s >= 0) {
                if (firstRing[s] == null) {
                    commonFeatures[s] = scan(r, segments.get(s).offset(), s, checks[s], distinctBackends, seen);
                    requireChainsStartInRing(r, seen, distinctBackends[s]);
                    firstRing[s] = r;
                    checked += r.storedCount();
                } else if (!r.version().equals(firstRing[s].version())) {
                    throw new RingFileException(path, indexEntry(r) + ENTRY_SEGMENT_OFFSET_OFFSET, "ring " + r + " shares the segment at "
                            + segments.get(s).offset() + " with ring " + firstRing[s] + " of another version (corrupt ring index?)");
                } else if (r.storage() == STORAGE_VIEW) {
                    // Its members are backends of the segment it views, which holds every point of each.
                    if (views.get(s) == null) {
                        views.set(s, new ArrayList<>());
                    }
                    views.get(s).add(r);
                    continue;
                } else if ((r.featureMask() & ~commonFeatures[s]) != 0) {
                    throw lacksFeatures(r, segments.get(s).offset());
                }
            }
            if ((s < 0 ? 0 : distinctBackends[s]) != members[r.featureMask()]) {
                requireAbsentMembersLostEveryPoint(r);
            }
        }
        for (int s = 0; s < segments.size(); s++) {
            if (views.get(s) != null) {
                checkViewPointCounts(firstRing[s], views.get(s));
            }
        }
        return checked;
    }

    /**
     * Each view's ring point count against its segment's points (stored with ties, already scanned):
     * a view holds one point per hash that some member has. One pass over the segment for all its
     * views: a hash of one point counts for every view whose members include that point's backend,
     * which is a sum over feature-mask supersets; the few hashes of several points are tried view by view.
     */
    private void checkViewPointCounts(Ring base, List<Ring> views) throws RingFileException {
        long[] single = new long[1 << features.size()];
        long[] shared = new long[views.size()];
        int n = base.storedCount();
        int h = n == 0 ? 0 : base.storedHash(0);
        for (int i = 0; i < n; ) {
            int j = i + 1;
            int next = 0;
            while (j < n && (next = base.storedHash(j)) == h) {
                j++;
            }
            if (j == i + 1) {
                single[BackendAccess.featureMask(backends.get(base.storedBackend(i)))]++;
            } else {
                for (int v = 0; v < views.size(); v++) {
                    for (int k = i; k < j; k++) {
                        if (views.get(v).isMember(base.storedBackend(k))) {
                            shared[v]++;
                            break;
                        }
                    }
                }
            }
            i = j;
            h = next;
        }
        FeatureMasks.sumOverSupersets(single);
        for (int v = 0; v < views.size(); v++) {
            Ring r = views.get(v);
            long count = single[r.featureMask()] + shared[v];
            if (count != r.pointCount()) {
                throw new RingFileException(path, indexEntry(r) + ENTRY_RING_POINTS_OFFSET, "ring " + r + ": its members have points at "
                        + count + " distinct hashes of the segment at " + layout.segmentOf(r).offset() + ", the ring index says "
                        + r.pointCount() + " (corrupt ring index?)");
            }
        }
    }

    /** For each feature mask: how many backends have every feature in it (the members of its rings). */
    private long[] memberCounts() {
        long[] count = new long[1 << features.size()];
        for (Backend b : backends) {
            count[BackendAccess.featureMask(b)]++;
        }
        FeatureMasks.sumOverSupersets(count);
        return count;
    }

    /**
     * The failure {@code check} found in {@code r}'s points (segment {@code s}) if any, as an error;
     * else counts its distinct backends into {@code distinctBackends[s]}, lists them in {@code seen}
     * and returns the AND of their backends' masks.
     */
    private int scan(Ring r, long segmentOffset, int s, SegmentCheck.Result check, int[] distinctBackends, int[] seen)
            throws RingFileException {
        boolean withTies = r.storage() == STORAGE_POINTS_WITH_TIES;
        if (check.failure() != null) {
            SegmentCheck.Failure f = check.failure();
            int i = f.point();
            long at = segmentOffset + (long) i * POINT_LENGTH;
            throw switch (f.kind()) {
                case ORDER -> new RingFileException(path, at, "ring " + r + ": point " + i + " hash " + Integer.toUnsignedString(f.hash())
                        + " is not greater than the previous " + Integer.toUnsignedString(f.previousHash()) + " (points must be strictly increasing"
                        + (withTies ? ", or equal with backends in tie order)" : ")"));
                case TIE_ORDER -> new RingFileException(path, at + POINT_BACKEND_OFFSET, "ring " + r + ": point " + i + " repeats hash "
                        + Integer.toUnsignedString(f.hash()) + " with backend " + f.backend() + ", which is not after backend " + f.previousBackend()
                        + " in " + r.version() + " tie order (equal hashes must be stored in tie order, each backend once)");
                case NO_BACKEND -> new RingFileException(path, at + POINT_BACKEND_OFFSET, "ring " + r + ": point " + i + " names backend "
                        + f.backend() + " but the file has " + backends.size());
                case LACKS_FEATURES -> lacksFeatures(r, segmentOffset, i, f.backend());
            };
        }
        if (withTies && check.distinctHashes() != r.pointCount()) {
            throw new RingFileException(path, indexEntry(r) + ENTRY_RING_POINTS_OFFSET, "ring " + r + ": its segment at " + segmentOffset
                    + " has " + check.distinctHashes() + " distinct hashes, the ring index says " + r.pointCount() + " (corrupt ring index?)");
        }
        distinctBackends[s] = check.backends().length;
        System.arraycopy(check.backends(), 0, seen, 0, distinctBackends[s]);
        return check.commonMask();
    }

    /** Tie ranks of this file's backends in {@code version} (lower keeps a shared hash). */
    private int[] tieRanks(RingVersion version) {
        return version.family().tieRanks(backends);
    }

    /**
     * The first hash of each point chain of {@code r}'s backends is a point of the ring: whoever keeps
     * a tie, every generated hash is stored once. Catches a segment of the same backends built for
     * another version (two ring index entries swapped), which no other check sees; one binary search
     * a backend.
     */
    private void requireChainsStartInRing(Ring r, int[] seen, int count) throws RingFileException {
        for (int k = 0; k < count; k++) {
            Backend b = backends.get(seen[k]);
            int first = Crc32.nextPoint(r.version().family().chainBase(b), 0);
            if (!r.hasStoredHash(first)) {
                throw new RingFileException(path, indexEntry(r) + ENTRY_SEGMENT_OFFSET_OFFSET, "ring " + r + ": backend " + b.index()
                        + " (" + b.address() + ") has points but not its first " + r.version() + " point, hash "
                        + Integer.toUnsignedString(first) + " (are the segment's points of another version?)");
            }
        }
    }

    /** Where {@code r}'s ring index entry starts: the index ends at the metadata end. */
    private long indexEntry(Ring r) {
        return layout.metadataLength() - (long) (rings.length - r.position()) * ENTRY_LENGTH;
    }

    /**
     * For a ring (already scanned) with fewer distinct backends than members: each absent member must
     * have lost every point to a tie, that is every hash of its point chain is in the ring. That is
     * rare (v2 does not hash the scope, so {@code [fe80::1%3]} and {@code [fe80::1%4]} tie on every
     * point), so the check regenerates only the absent members' chains. Otherwise the ring's index
     * entry names another ring's segment, or none.
     */
    private void requireAbsentMembersLostEveryPoint(Ring r) throws RingFileException {
        boolean[] present = new boolean[backends.size()];
        for (int i = 0; i < r.storedCount(); i++) {
            present[r.storedBackend(i)] = true;
        }
        int need = r.featureMask();
        for (Backend b : backends) {
            if (present[b.index()] || (BackendAccess.featureMask(b) & need) != need || lostEveryPoint(r, b)) {
                continue;
            }
            throw new RingFileException(path, indexEntry(r) + ENTRY_SEGMENT_OFFSET_OFFSET, "ring " + r + ": backend " + b.index()
                    + " (" + b.address() + ") is a member but " + (r.isEmpty() ? "the ring has no points"
                    : "has no point in the ring's segment at " + layout.segmentOf(r).offset())
                    + " (does the ring index point at another ring's segment?)");
        }
    }

    /** Whether every hash of {@code b}'s point chain in {@code r} is a point of {@code r}. */
    private static boolean lostEveryPoint(Ring r, Backend b) {
        if (r.isEmpty()) {
            return false;
        }
        int base = r.version().family().chainBase(b);
        // Each hash depends only on the one before, so once pointCount + 1 hashes were all found, one
        // of them repeated and the chain only cycles through hashes already found.
        long steps = Math.min(r.version().family().points(new long[] {b.weight()}, r.version())[0], r.pointCount() + 1L);
        int h = 0;
        for (long j = 0; j < steps; j++) {
            h = Crc32.nextPoint(base, h);
            if (!r.hasStoredHash(h)) {
                return false;
            }
        }
        return true;
    }

    /** For a ring whose segment was scanned already: the error for its first point whose backend lacks a feature. */
    private RingFileException lacksFeatures(Ring r, long segmentOffset) {
        int need = r.featureMask();
        for (int i = 0; ; i++) {
            int b = r.storedBackend(i);
            if ((BackendAccess.featureMask(backends.get(b)) & need) != need) {
                return lacksFeatures(r, segmentOffset, i, b);
            }
        }
    }

    private RingFileException lacksFeatures(Ring r, long segmentOffset, int point, int backend) {
        return new RingFileException(path, segmentOffset + (long) point * POINT_LENGTH + POINT_BACKEND_OFFSET, "ring " + r
                + ": point " + point + " names backend " + backend + " (" + backends.get(backend).address() + ") which lacks the ring's features");
    }

    /**
     * Releases the mapping; lookups afterwards throw {@link IllegalStateException}. Idempotent. For a
     * store from {@link WatchedRingStore} it does nothing: the watcher releases the mapping a grace
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
        return "RingStore[" + path + ", generation " + Long.toUnsignedString(generation) + ", " + backends.size() + " backends, " + rings.length + " rings]";
    }
}
