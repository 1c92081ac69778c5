package io.ringstore.internal.format;

import static io.ringstore.internal.format.RingFileDescriptor.ENTRY_LENGTH;
import static io.ringstore.internal.format.RingFileDescriptor.ENTRY_POINT_MULTIPLE_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.ENTRY_RING_POINTS_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.ENTRY_SEGMENT_OFFSET_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.FEATURE_BITS_BLOCK_POINTS;
import static io.ringstore.internal.format.RingFileDescriptor.LOW_WORD_LENGTH;
import static io.ringstore.internal.format.RingFileDescriptor.POINT_BACKEND_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.POINT_HASH_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.POINT_LENGTH;
import static io.ringstore.internal.format.RingFileDescriptor.STORAGE_VIEW;
import static io.ringstore.internal.format.RingFileDescriptor.U16;
import static io.ringstore.internal.format.RingFileDescriptor.U32;
import static io.ringstore.internal.format.RingFileDescriptor.featureWordOffset;
import static io.ringstore.internal.format.RingFileDescriptor.hasFeatureBits;
import static io.ringstore.internal.format.RingFileDescriptor.keepsTies;
import static io.ringstore.internal.format.RingFileReader.hex;

import io.ringstore.family.PointSource;
import io.ringstore.family.RingVersion;
import io.ringstore.internal.BackendRecord;
import io.ringstore.internal.FeatureMasks;
import io.ringstore.internal.PointGenerator;
import io.ringstore.internal.PointSorter;
import java.io.InterruptedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The full check of an open ring file's segments (Lucene's {@code checkIntegrity} to the reader's
 * open): every segment's CRC-32C, strictly increasing hashes, that every point's backend exists and
 * has the features of every ring that uses the segment, and conversely that every member of a ring
 * (every backend with its features) has a point in it, unless that member lost each of its points to
 * a tie; that the rings sharing a segment are of one version, and that the first point each of its
 * backends generates in that version is there. Each distinct segment is read once, however many
 * rings share it.
 *
 * <p>It reads the file as the reader parsed it ({@link ParsedRingFile}) and its mapped bytes; what
 * depends on a ring's version (tie ranks, point hashes, point counts) its family's rules answer. One
 * verifier per check; not thread-safe.
 */
public final class RingFileVerifier {
    /**
     * One ring of the file as the verifier reads it: from its ring index entry, its place in the index,
     * its features, how it is stored ({@code RingFileDescriptor.STORAGE_*}), its own points (distinct
     * hashes) and those of the segment it reads; its version's index in the file's list, the index of its
     * distinct segment (-1 for an empty ring) and that segment's bytes.
     *
     * @param lowWords     a 64-bit ring's low words, null for a 32-bit ring
     * @param featureBits  the feature bits after its segment's points (storage 3 or 4), null when the segment has none
     * @param ringVersion  its version, for messages
     * @param fileFeatures the file's features, for messages
     */
    /** Per ring, the point source its points came from ({@link #sourceOf}). */
    private final Map<StoredRing, PointSource> sources = new HashMap<>();

    private record StoredRing(
            int position,
            int featureMask,
            int storage,
            int pointCount,
            int storedCount,
            int version,
            int segment,
            MemorySegment points,
            MemorySegment lowWords,
            MemorySegment featureBits,
            int featureBitsStorage,
            RingVersion ringVersion,
            List<String> fileFeatures) {
        /** {@return the ring's name in messages, as {@code Ring} prints it: {@code v2:16 (all)}, {@code v1 eu+ssd}} */
        String name() {
            List<String> own = new ArrayList<>();
            for (int f = 0; f < fileFeatures.size(); f++) {
                if ((featureMask & 1 << f) != 0) {
                    own.add(fileFeatures.get(f));
                }
            }
            return ringVersion + (own.isEmpty() ? " (all)" : " " + String.join("+", own));
        }

        int storedHash(int p) {
            return points.get(U32, (long) p * POINT_LENGTH + POINT_HASH_OFFSET);
        }

        boolean hasStoredHash(int hash) {
            int p = PointSearch.pointIndex(points, storedCount(), hash);
            return p >= 0 && storedHash(p) == hash;
        }
    }

    private final Path path;
    private final long metadataLength;
    private final int featureCount;
    private final List<BackendRecord> backends;
    private final int[] backendMasks;
    private final List<RingVersion> versions;
    private final List<StoredRing> rings;
    private final int segmentCount;
    private final long[] segmentOffset;
    private final int[] segmentCrc;

    /**
     * A verifier of the file at {@code path}.
     *
     * @param file   the file's mapped bytes
     * @param parsed what the reader found in them
     */
    public RingFileVerifier(Path path, MemorySegment file, ParsedRingFile parsed) {
        this.path = path;
        this.metadataLength = parsed.metadataLength();
        this.featureCount = parsed.features().size();
        this.backends = parsed.backends();
        this.backendMasks =
                backends.stream().mapToInt(BackendRecord::featureMask).toArray();
        this.versions = parsed.versions();
        List<ParsedRingFile.Entry> segments = parsed.segments();
        this.segmentCount = segments.size();
        this.segmentOffset =
                segments.stream().mapToLong(ParsedRingFile.Entry::offset).toArray();
        this.segmentCrc = segments.stream().mapToInt(ParsedRingFile.Entry::crc).toArray();
        List<StoredRing> stored = new ArrayList<>(parsed.entries().size());
        for (ParsedRingFile.Entry e : parsed.entries()) {
            int s = e.pointCount() == 0 ? -1 : Arrays.binarySearch(segmentOffset, e.offset());
            ParsedRingFile.Entry segment = s < 0 ? e : segments.get(s);
            long pointBytes = (long) e.pointCount() * POINT_LENGTH;
            MemorySegment after = file.asSlice(e.offset() + pointBytes, e.length() - pointBytes);
            stored.add(new StoredRing(
                    stored.size(),
                    e.mask(),
                    e.storage(),
                    e.ringPoints(),
                    e.pointCount(),
                    versions.indexOf(e.version()),
                    s,
                    file.asSlice(e.offset(), pointBytes),
                    segment.version().family().pointBits() == 64 ? after : null,
                    hasFeatureBits(segment.storage()) ? after : null,
                    segment.storage(),
                    e.version(),
                    parsed.features()));
        }
        this.rings = List.copyOf(stored);
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
    public long verify() throws RingFormatException {
        return verify(false);
    }

    /**
     * {@link #verify()}, and with {@code regenerate} check 13 too: every ring that is not a view is
     * generated again from the backend table and the version's parameters, as the builder generates it
     * ({@link PointGenerator}: the family's point source, or its legacy one as {@link #sourceOf} tells;
     * its weight rule over the ring's members; its tie rule), and compared point by point with what the
     * file stores (hashes, backends, a 64-bit ring's low words), after checks 6, 11 and 12 of the first
     * ring using a segment and before check 7; for a later ring sharing the segment with other members,
     * after check 5. A view needs none: its points are its base's, regenerated, and which of them are
     * its members' is what checks 10 and 12 prove. It costs about what building the file's rings did
     * (one generation a distinct segment, on the builder's threads). Checks 6 and 11 hold of every
     * ring that passes 13, so they run only for one that fails it: the first failure reported is the
     * same, and a large ring's check 11 (its chains) is not paid on top of its generation.
     */
    public long verify(boolean regenerate) throws RingFormatException {
        PointGenerator generator = regenerate ? new PointGenerator(line -> {}) : null;
        SegmentCheck segmentCheck = new SegmentCheck(backendMasks);
        SegmentCheck.Result[] checks = new SegmentCheck.Result[segmentCount];
        for (StoredRing r : rings) {
            int s = r.segment();
            if (s < 0 || checks[s] != null) {
                continue;
            }
            checks[s] = segmentCheck.check(
                    r.points(), r.lowWords(), r.featureMask(), keepsTies(r.storage()) ? tieRanks(r.version()) : null);
            int crc = r.featureBits() == null
                    ? checks[s].crc32c()
                    : SegmentCheck.crc32cFollowedBy(checks[s].crc32c(), r.featureBits());
            if (crc != segmentCrc[s]) {
                throw new RingFormatException(
                        path,
                        segmentOffset[s],
                        "segment checksum mismatch: expected CRC-32C " + hex(segmentCrc[s]) + " (ring index), computed "
                                + hex(crc) + " (corrupted points?)");
            }
        }
        long[] members = memberCounts();
        int[] commonFeatures = new int[segmentCount];
        int[] distinctBackends = new int[segmentCount];
        int[] seen = new int[backendMasks.length]; // the distinct backends of the segment just scanned
        StoredRing[] firstRing = new StoredRing[segmentCount];
        List<List<StoredRing>> views = new ArrayList<>(Collections.nCopies(segmentCount, null));
        long checked = 0;
        for (StoredRing r : rings) {
            int s = r.segment();
            if (s >= 0) {
                if (firstRing[s] == null) {
                    commonFeatures[s] = scan(r, segmentOffset[s], s, checks[s], distinctBackends, seen);
                    long[] given = memberPoints(r.version(), r.featureMask());
                    // Checks 6 and 11 hold of every ring that passes 13, so with 13 they run only when it
                    // fails, to report what they would have reported first: at 204.8 M points check 11's
                    // chains cost twice what generating the ring does.
                    RingFormatException generated = generator == null ? null : generatedPointsProblem(generator, r);
                    if (generator == null || generated != null) {
                        requireChainsStartInRing(r, seen, distinctBackends[s], given);
                        requirePointCountsOfTheVersion(r, given, checks[s].pointCounts());
                    }
                    if (r.featureBits() != null) {
                        requireFeatureBitsOfThePoints(r, segmentOffset[s]);
                    }
                    if (generated != null) {
                        throw generated;
                    }
                    firstRing[s] = r;
                    checked += r.storedCount();
                } else if (r.version() != firstRing[s].version()) {
                    throw new RingFormatException(
                            path,
                            indexEntry(r) + ENTRY_SEGMENT_OFFSET_OFFSET,
                            "ring " + r.name() + " shares the segment at " + segmentOffset[s] + " with ring "
                                    + firstRing[s].name() + " of another version (corrupt ring index?)");
                } else if (r.storage() == STORAGE_VIEW) {
                    // Its members are backends of the segment it views, which holds every point of each.
                    if (views.get(s) == null) {
                        views.set(s, new ArrayList<>());
                    }
                    views.get(s).add(r);
                    continue;
                } else if ((r.featureMask() & ~commonFeatures[s]) != 0) {
                    throw lacksFeatures(r, segmentOffset[s]);
                } else if (generator != null
                        && !Arrays.equals(memberSet(r.featureMask()), memberSet(firstRing[s].featureMask()))) {
                    requireGeneratedPoints(
                            generator, r); // not in a file as built: its rings share a segment only with their members
                }
            } else {
                // An empty ring: check 7 (its members lost every point), then 13, in the documented order.
                if (members[r.featureMask()] != 0) {
                    requireAbsentMembersLostEveryPoint(r);
                }
                if (generator != null) {
                    requireGeneratedPoints(generator, r);
                }
                continue;
            }
            if (distinctBackends[s] != members[r.featureMask()]) {
                requireAbsentMembersLostEveryPoint(r);
            }
        }
        for (int s = 0; s < segmentCount; s++) {
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
    private void checkViewPointCounts(StoredRing base, List<StoredRing> views) throws RingFormatException {
        long[] single = new long[1 << featureCount];
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
                single[backendMasks[storedBackend(base, i)]]++;
            } else {
                for (int v = 0; v < views.size(); v++) {
                    for (int k = i; k < j; k++) {
                        if (isMember(views.get(v), storedBackend(base, k))) {
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
            StoredRing r = views.get(v);
            long count = single[r.featureMask()] + shared[v];
            if (count != r.pointCount()) {
                throw new RingFormatException(
                        path,
                        indexEntry(r) + ENTRY_RING_POINTS_OFFSET,
                        "ring " + r.name() + ": its members have points at "
                                + count + " distinct hashes of the segment at " + segmentOffset[r.segment()]
                                + ", the ring index says "
                                + r.pointCount() + " (corrupt ring index?)");
            }
        }
    }

    /**
     * Check 12: the feature bits after a segment's points (storage 3 and 4) are its points' backends'
     * features, block by block, feature by feature, bits past the last point 0; a view finds its
     * members by them alone. Reports the first word that differs (in block order), at its byte offset.
     */
    private void requireFeatureBitsOfThePoints(StoredRing r, long segmentOffset) throws RingFormatException {
        MemorySegment bits = r.featureBits();
        int n = r.storedCount();
        long bitsOffset = segmentOffset + (long) n * POINT_LENGTH;
        long blocks = (n + (long) FEATURE_BITS_BLOCK_POINTS - 1) / FEATURE_BITS_BLOCK_POINTS;
        for (int block = 0, first = 0; first < n; block++, first += FEATURE_BITS_BLOCK_POINTS) {
            int end = Math.min(n, first + FEATURE_BITS_BLOCK_POINTS);
            for (int f = 0; f < featureCount; f++) {
                long expected = 0;
                for (int p = first; p < end; p++) {
                    expected |= (long) (backendMasks[storedBackend(r, p)] >>> f & 1) << (p - first);
                }
                long at = featureWordOffset(r.featureBitsStorage(), blocks, featureCount, block, f);
                long found = bits.get(RingFileDescriptor.U64, at);
                if (found != expected) {
                    throw new RingFormatException(
                            path,
                            bitsOffset + at,
                            "ring " + r.name() + ": feature bits of points " + first + "-" + (end - 1)
                                    + " for feature " + f + " are 0x" + Long.toHexString(found)
                                    + ", their backends' features give 0x"
                                    + Long.toHexString(expected) + " (corrupted feature bits?)");
                }
            }
        }
    }

    /** For each feature mask: how many backends have every feature in it (the members of its rings). */
    private long[] memberCounts() {
        long[] count = new long[1 << featureCount];
        for (int mask : backendMasks) {
            count[mask]++;
        }
        FeatureMasks.sumOverSupersets(count);
        return count;
    }

    /**
     * The failure {@code check} found in {@code r}'s points (segment {@code s}) if any, as an error;
     * else counts its distinct backends into {@code distinctBackends[s]}, lists them in {@code seen}
     * and returns the AND of their backends' masks.
     */
    private int scan(
            StoredRing r, long segmentOffset, int s, SegmentCheck.Result check, int[] distinctBackends, int[] seen)
            throws RingFormatException {
        boolean withTies = keepsTies(r.storage());
        if (check.failure() != null) {
            SegmentCheck.Failure f = check.failure();
            int i = f.point();
            long at = segmentOffset + (long) i * POINT_LENGTH;
            throw switch (f.kind()) {
                case ORDER ->
                    new RingFormatException(
                            path,
                            at,
                            "ring " + r.name() + ": point " + i + " hash " + Integer.toUnsignedString(f.hash())
                                    + " is not greater than the previous " + Integer.toUnsignedString(f.previousHash())
                                    + " (points must be strictly increasing"
                                    + (withTies ? ", or equal with backends in tie order)" : ")"));
                case TIE_ORDER ->
                    new RingFormatException(
                            path,
                            at + POINT_BACKEND_OFFSET,
                            "ring " + r.name() + ": point " + i + " repeats hash "
                                    + Integer.toUnsignedString(f.hash()) + " with backend " + f.backend()
                                    + ", which is not after backend " + f.previousBackend()
                                    + " in " + versions.get(r.version()).name()
                                    + " tie order (equal hashes must be stored in tie order, each backend once)");
                case NO_BACKEND ->
                    new RingFormatException(
                            path,
                            at + POINT_BACKEND_OFFSET,
                            "ring " + r.name() + ": point " + i + " names backend " + f.backend() + " but the file has "
                                    + backendMasks.length);
                case LACKS_FEATURES -> lacksFeatures(r, segmentOffset, i, f.backend());
            };
        }
        if (withTies && check.distinctHashes() != r.pointCount()) {
            throw new RingFormatException(
                    path,
                    indexEntry(r) + ENTRY_RING_POINTS_OFFSET,
                    "ring " + r.name() + ": its segment at " + segmentOffset + " has " + check.distinctHashes()
                            + " distinct hashes, the ring index says " + r.pointCount() + " (corrupt ring index?)");
        }
        distinctBackends[s] = check.backends().length;
        System.arraycopy(check.backends(), 0, seen, 0, distinctBackends[s]);
        return check.commonMask();
    }

    /**
     * The first hash of each point chain of {@code r}'s backends is a point of the ring: whoever keeps
     * a tie, every generated hash is stored once. Catches a segment of the same backends built for
     * another version (two ring index entries swapped), which no other check sees; one binary search
     * a backend.
     */
    private void requireChainsStartInRing(StoredRing r, int[] seen, int count, long[] given)
            throws RingFormatException {
        for (int k = 0; k < count; k++) {
            int b = seen[k]; // a member: the scan refused a point of any other backend
            if (given[b] == 0) {
                continue; // a member with no points of its own (a share rule's rounding): it is checked as absent below
            }
            int first = pointHashes(r, b, 1)[0];
            if (!r.hasStoredHash(first)) {
                throw new RingFormatException(
                        path,
                        indexEntry(r) + ENTRY_SEGMENT_OFFSET_OFFSET,
                        "ring " + r.name() + ": backend " + b
                                + " (" + backends.get(b).address().text() + ") has points but not its first "
                                + versions.get(r.version()).name() + " point, hash "
                                + Integer.toUnsignedString(first) + " (are the segment's points of another version?)");
            }
        }
    }

    /**
     * Each backend's points in {@code r}'s segment against what its version gives it ({@link
     * #memberPoints}), which catches a ring index entry whose pointMultiple was changed (a
     * v2:4 segment labelled v2:160): a backend holds at most the points its chain has, and one that
     * holds fewer lost the others to equal hashes (its own chain repeating one, or another backend
     * keeping a tie), so every hash of its chain is still a point of the ring. That holds for every
     * family and for rings kept with ties or not; the chain is generated only for a backend short of
     * points, which in a file as built is one that lost a point to an equal hash (at 3.3 M points 1,248
     * of 2,048 backends: their chains are sorted and merged with the ring's hashes, not searched one by one).
     */
    private void requirePointCountsOfTheVersion(StoredRing r, long[] given, int[] counted) throws RingFormatException {
        long[] held = new long[backendMasks.length]; // counted by the segment's scan, which read every point
        for (int b = 0; b < held.length; b++) {
            held[b] = counted[b];
        }
        // At 3.3 M points about a thousand backends lose a point to a tie, so their chains are checked
        // together: sorted, then merged with the ring's sorted hashes in one pass (a binary search per
        // hash cost 60-90 % of a build). A batch that fails is checked again backend by backend, so the
        // error names the first backend and point as before.
        ChainBatch batch = new ChainBatch(r.storedCount());
        for (int b = 0; b < held.length; b++) {
            if (held[b] > given[b]) {
                requireChainsInRing(r, batch, held, given);
                throw new RingFormatException(
                        path,
                        indexEntry(r) + ENTRY_POINT_MULTIPLE_OFFSET,
                        "ring " + r.name() + ": backend " + b + " ("
                                + backends.get(b).address().text() + ") has " + held[b] + " points in the segment at "
                                + segmentOffset[r.segment()]
                                + ", more than the " + given[b] + " "
                                + versions.get(r.version()).name()
                                + " gives it (pointMultiple changed, or the points of another version?)");
            }
            if (held[b] > 0 && held[b] < given[b]) {
                // Bounded by the ring (a forged weight can make given[] anything): a chain of more than
                // pointCount + 1 hashes, all in the ring, repeats one, as in lostEveryPoint.
                int[] chain = pointHashes(r, b, (int) Math.min(given[b], r.pointCount() + 1L));
                if (batch.count > 0 && batch.count + (long) chain.length > batch.max) {
                    requireChainsInRing(r, batch, held, given);
                }
                batch.add(b, chain);
            }
        }
        requireChainsInRing(r, batch, held, given);
    }

    /**
     * Chains of backends short of points, in backend order, up to {@link #max} hashes (more only for one
     * chain alone). Each batch is checked by one pass over the ring, so a batch holds at least an eighth
     * of the ring's points: a 204.8 M-point ring, where nearly every backend is short, is read 8 times,
     * not once a million hashes (200 times).
     */
    private static final class ChainBatch {
        /** The least batch: 1 Mi hashes (4 MiB). */
        static final int MIN_MAX = 1 << 20;

        final int max;
        int[] hashes = new int[1024];
        int count;
        int firstBackend = -1;
        int lastBackend = -1;

        ChainBatch(int ringPoints) {
            this.max = Math.max(MIN_MAX, ringPoints / 8);
        }

        void add(int b, int[] chain) {
            if (count + chain.length > hashes.length) {
                hashes = Arrays.copyOf(hashes, (int)
                        Math.min(Integer.MAX_VALUE - 8, Math.max(2L * hashes.length, (long) count + chain.length)));
            }
            System.arraycopy(chain, 0, hashes, count, chain.length);
            count += chain.length;
            if (firstBackend < 0) {
                firstBackend = b;
            }
            lastBackend = b;
        }
    }

    /** Every hash of the batch's chains is a stored hash of {@code r}; else the first missing one of the first backend, as a search per hash finds it. */
    private void requireChainsInRing(StoredRing r, ChainBatch batch, long[] held, long[] given)
            throws RingFormatException {
        if (batch.count == 0) {
            return;
        }
        int[] sorted = sortedUnsigned(batch.hashes, batch.count);
        if (!SegmentCheck.allHashesStored(r.points(), sorted, batch.count)) {
            String version = versions.get(r.version()).name();
            for (int b = batch.firstBackend; b <= batch.lastBackend; b++) {
                if (held[b] > 0 && held[b] < given[b]) {
                    int[] chain = pointHashes(r, b, (int) Math.min(given[b], r.pointCount() + 1L));
                    for (int k = 0; k < chain.length; k++) {
                        if (!r.hasStoredHash(chain[k])) {
                            throw new RingFormatException(
                                    path,
                                    indexEntry(r) + ENTRY_POINT_MULTIPLE_OFFSET,
                                    "ring " + r.name() + ": backend " + b
                                            + " (" + backends.get(b).address().text() + ") has " + held[b]
                                            + " points in the segment at " + segmentOffset[r.segment()]
                                            + ", " + version + " gives it " + given[b] + ", and its point " + k
                                            + " hash " + Integer.toUnsignedString(chain[k])
                                            + " is not in the ring (pointMultiple changed, or the points of another version?)");
                        }
                    }
                }
            }
            // The search found every hash: it is the check's definition, so the batch passes.
        }
        batch.count = 0;
        batch.firstBackend = -1;
        batch.lastBackend = -1;
    }

    /** The first {@code count} values of {@code values} in unsigned order: two 16-bit passes of a radix sort. */
    static int[] sortedUnsigned(int[] values, int count) {
        int[] a = Arrays.copyOf(values, count);
        int[] b = new int[count];
        for (int shift = 0; shift < 32; shift += 16) {
            int[] start = new int[(1 << 16) + 1];
            for (int i = 0; i < count; i++) {
                start[((a[i] >>> shift) & 0xFFFF) + 1]++;
            }
            for (int d = 0; d < 1 << 16; d++) {
                start[d + 1] += start[d];
            }
            for (int i = 0; i < count; i++) {
                b[start[(a[i] >>> shift) & 0xFFFF]++] = a[i];
            }
            int[] t = a;
            a = b;
            b = t;
        }
        return a;
    }

    /** The backend of {@code r}'s stored point {@code p}, -1 for one outside the backend table. */
    private int storedBackend(StoredRing r, int p) {
        int b = Short.toUnsignedInt(r.points().get(U16, (long) p * POINT_LENGTH + POINT_BACKEND_OFFSET));
        return b < backendMasks.length ? b : -1;
    }

    /** Whether {@code backend} is a member of {@code r}: has every feature of its mask. */
    private boolean isMember(StoredRing r, int backend) {
        return (backendMasks[backend] & r.featureMask()) == r.featureMask();
    }

    /** The file's backends' tie ranks in version {@code v} (lower keeps a shared hash). */
    private int[] tieRanks(int v) {
        return versions.get(v).family().ties().ranks(backends);
    }

    /**
     * The 32-bit hashes (a 64-bit ring's high words) of backend {@code b}'s first {@code count} points in
     * ring {@code r}, as its family generates them ({@link #sourceOf}).
     */
    private int[] pointHashes(StoredRing r, int b, int count) {
        return pointHashes(sourceOf(r), b, count);
    }

    private int[] pointHashes(PointSource source, int b, int count) {
        long[] hashes = new long[count];
        source.hashes(backends, b, count, hashes);
        int shift = source.bits() == 64 ? 32 : 0;
        int[] out = new int[count];
        for (int i = 0; i < count; i++) {
            out[i] = (int) (hashes[i] >>> shift);
        }
        return out;
    }

    /**
     * The point source {@code r}'s points come from: its family's, or the family's {@link
     * PointSource#legacy} one for a ring built before its texts were fixed (Dubbo's and Couchbase's IPv6
     * texts, issue 30), told by the first backend whose two texts differ and whose first point one of
     * them has in the ring. A file built before thus still verifies, and answers as it always did.
     */
    private PointSource sourceOf(StoredRing r) {
        return sources.computeIfAbsent(r, this::chooseSource);
    }

    private PointSource chooseSource(StoredRing r) {
        PointSource current = versions.get(r.version()).points();
        PointSource legacy = current.legacy();
        if (legacy == null) {
            return current;
        }
        for (int b = 0; b < backends.size(); b++) {
            if (current.identity(backends.get(b)).equals(legacy.identity(backends.get(b)))) {
                continue;
            }
            if (r.hasStoredHash(pointHashes(current, b, 1)[0])) {
                return current;
            }
            if (r.hasStoredHash(pointHashes(legacy, b, 1)[0])) {
                return legacy;
            }
        }
        return current;
    }

    /**
     * How many points each backend's chain has in version {@code v}'s ring of the backends having every
     * feature of {@code featureMask}, by backend index (0 for one that is not a member): its family's
     * weight rule over the members. O(backends).
     */
    private long[] memberPoints(int v, int featureMask) {
        RingVersion version = versions.get(v);
        List<BackendRecord> members = new ArrayList<>();
        int[] index = new int[backends.size()];
        for (int b = 0; b < backends.size(); b++) {
            if ((backendMasks[b] & featureMask) == featureMask) {
                index[members.size()] = b;
                members.add(backends.get(b));
            }
        }
        long[] perMember = version.family().weights().memberPoints(members, version);
        long[] byBackend = new long[backends.size()];
        for (int m = 0; m < perMember.length; m++) {
            byBackend[index[m]] = perMember[m];
        }
        return byBackend;
    }

    /** The backends having every feature of {@code featureMask}: the members of its rings. */
    private long[] memberSet(int featureMask) {
        long[] bits = new long[(backendMasks.length + 63) >>> 6];
        for (int b = 0; b < backendMasks.length; b++) {
            if ((backendMasks[b] & featureMask) == featureMask) {
                bits[b >>> 6] |= 1L << b;
            }
        }
        return bits;
    }

    /**
     * Check 13: {@code r}'s points (not a view) are the ones its version generates from the backend
     * table: its members' points by the family's weight rule, from its point source ({@link #sourceOf}),
     * sorted with ties settled by its tie rule, stored as {@code r}'s storage keeps them (one point a
     * hash, or equal hashes of different backends in tie order; a 64-bit ring's low words after). Names
     * the first point that differs, at its byte offset.
     */
    private void requireGeneratedPoints(PointGenerator generator, StoredRing r) throws RingFormatException {
        RingFormatException problem = generatedPointsProblem(generator, r);
        if (problem != null) {
            throw problem;
        }
    }

    /** {@link #requireGeneratedPoints}'s failure, or null when the points are as generated. */
    private RingFormatException generatedPointsProblem(PointGenerator generator, StoredRing r) {
        RingVersion version = versions.get(r.version());
        long[] given = memberPoints(r.version(), r.featureMask());
        int[] points = new int[given.length];
        long total = 0;
        for (int b = 0; b < given.length; b++) {
            total += given[b];
            if (given[b] > RingFileDescriptor.MAX_POINTS_PER_RING || total > RingFileDescriptor.MAX_POINTS_PER_RING) {
                return new RingFormatException(
                        path,
                        indexEntry(r) + ENTRY_POINT_MULTIPLE_OFFSET,
                        "ring " + r.name() + ": " + version.name() + " gives its members more points than a ring"
                                + " can hold (" + RingFileDescriptor.MAX_POINTS_PER_RING + ")");
            }
            points[b] = (int) given[b];
        }
        PointGenerator.Sorted sorted;
        try {
            PointSource source = r.segment() < 0 ? version.points() : sourceOf(r);
            sorted = generator.generateSorted(new PointGenerator.Members(
                    source.source(backends), version.family().ties().ranks(backends), points));
        } catch (InterruptedIOException e) {
            Thread.currentThread().interrupt();
            return new RingFormatException(path, -1, "interrupted while generating the points of ring " + r.name());
        }
        version.family().ties().settle(sorted, backends);
        long[] a = sorted.points();
        int n = sorted.count();
        boolean ties = keepsTies(r.storage());
        boolean wide = sorted.low() != null; // a 64-bit ring's points are one a hash already, low words beside
        long segment = r.segment() < 0 ? -1 : segmentOffset[r.segment()];
        int stored = r.storedCount();
        int p = 0;
        for (int i = 0; i < n; i++) {
            if (i > 0
                    && !wide // equal high words of a 64-bit ring are different points
                    && PointSorter.hash(a[i]) == PointSorter.hash(a[i - 1])
                    && (!ties || PointSorter.backend(a[i]) == PointSorter.backend(a[i - 1]))) {
                continue; // not stored, as the writer leaves it out
            }
            int hash = PointSorter.hash(a[i]);
            int backend = PointSorter.backend(a[i]);
            int low = wide ? sorted.low()[i] : 0;
            if (p == stored) {
                return new RingFormatException(
                        path,
                        r.segment() < 0
                                ? indexEntry(r) + ENTRY_SEGMENT_OFFSET_OFFSET
                                : segment + (long) p * POINT_LENGTH,
                        "ring " + r.name() + ": has " + stored + " points, but " + version.name()
                                + " generates more from the backend table: its point " + p + " is "
                                + pointText(hash, wide, low, backend) + " (points dropped?)");
            }
            int foundHash = r.storedHash(p);
            int foundBackend = storedBackendField(r, p);
            int foundLow = wide ? storedLowWord(r, p) : 0;
            if (foundHash != hash || foundBackend != backend || foundLow != low) {
                long at = foundHash != hash
                        ? segment + (long) p * POINT_LENGTH + POINT_HASH_OFFSET
                        : foundBackend != backend
                                ? segment + (long) p * POINT_LENGTH + POINT_BACKEND_OFFSET
                                : segment + (long) stored * POINT_LENGTH + (long) p * LOW_WORD_LENGTH;
                return new RingFormatException(
                        path,
                        at,
                        "ring " + r.name() + ": point " + p + " is "
                                + pointText(foundHash, wide, foundLow, foundBackend)
                                + ", " + version.name() + " generates " + pointText(hash, wide, low, backend)
                                + " from the backend table (points changed, or not generated from these backends?)");
            }
            p++;
        }
        if (p < stored) {
            return new RingFormatException(
                    path,
                    segment + (long) p * POINT_LENGTH,
                    "ring " + r.name() + ": point " + p + " is "
                            + pointText(r.storedHash(p), wide, wide ? storedLowWord(r, p) : 0, storedBackendField(r, p))
                            + ", but " + version.name() + " generates only " + p
                            + " points from the backend table (points added?)");
        }
        return null;
    }

    /** The backend field of {@code r}'s stored point {@code p}, as stored. */
    private static int storedBackendField(StoredRing r, int p) {
        return Short.toUnsignedInt(r.points().get(U16, (long) p * POINT_LENGTH + POINT_BACKEND_OFFSET));
    }

    /** The low word of a 64-bit ring's stored point {@code p}. */
    private static int storedLowWord(StoredRing r, int p) {
        return r.lowWords().get(U32, (long) p * LOW_WORD_LENGTH);
    }

    /** A point as messages print it: {@code hash H backend B (X)}, a 64-bit ring's hash on 64 bits. */
    private String pointText(int hash, boolean wide, int low, int backend) {
        String h = wide
                ? Long.toUnsignedString((long) hash << 32 | Integer.toUnsignedLong(low))
                : Integer.toUnsignedString(hash);
        return "hash " + h + " backend " + backend
                + (backend < backends.size()
                        ? " (" + backends.get(backend).address().text() + ")"
                        : "");
    }

    /** Where {@code r}'s ring index entry starts: the index ends at the metadata end. */
    private long indexEntry(StoredRing r) {
        return metadataLength - (long) (rings.size() - r.position()) * ENTRY_LENGTH;
    }

    /**
     * For a ring (already scanned) with fewer distinct backends than members: each absent member must
     * have lost every point to a tie, that is every hash of its point chain is in the ring. That is
     * rare (v2 does not hash the scope, so {@code [fe80::1%3]} and {@code [fe80::1%4]} tie on every
     * point), so the check regenerates only the absent members' chains. Otherwise the ring's index
     * entry names another ring's segment, or none.
     */
    private void requireAbsentMembersLostEveryPoint(StoredRing r) throws RingFormatException {
        boolean[] present = new boolean[backendMasks.length];
        for (int i = 0; i < r.storedCount(); i++) {
            present[storedBackend(r, i)] = true;
        }
        int need = r.featureMask();
        for (int b = 0; b < backendMasks.length; b++) {
            if (present[b] || (backendMasks[b] & need) != need || lostEveryPoint(r, b)) {
                continue;
            }
            throw new RingFormatException(
                    path,
                    indexEntry(r) + ENTRY_SEGMENT_OFFSET_OFFSET,
                    "ring " + r.name() + ": backend " + b
                            + " (" + backends.get(b).address().text() + ") is a member but "
                            + (r.pointCount() == 0
                                    ? "the ring has no points"
                                    : "has no point in the ring's segment at " + segmentOffset[r.segment()])
                            + " (does the ring index point at another ring's segment?)");
        }
    }

    /** Whether every hash of {@code b}'s point chain in {@code r} is a point of {@code r}. */
    private boolean lostEveryPoint(StoredRing r, int b) {
        if (memberPoints(r.version(), r.featureMask())[b] == 0) {
            return true; // no points of its own: a down backend its family leaves out, or a share rounded to nothing
        }
        if (r.pointCount() == 0) {
            return false;
        }
        // A CRC-32 chain's hash depends only on the one before, so once pointCount + 1 hashes were all
        // found, one of them repeated and the chain only cycles through hashes already found.
        long steps = Math.min(memberPoints(r.version(), r.featureMask())[b], r.pointCount() + 1L);
        for (int h : pointHashes(r, b, (int) steps)) {
            if (!r.hasStoredHash(h)) {
                return false;
            }
        }
        return true;
    }

    /** For a ring whose segment was scanned already: the error for its first point whose backend lacks a feature. */
    private RingFormatException lacksFeatures(StoredRing r, long segmentOffset) {
        int need = r.featureMask();
        for (int i = 0; ; i++) {
            int b = storedBackend(r, i);
            if ((backendMasks[b] & need) != need) {
                return lacksFeatures(r, segmentOffset, i, b);
            }
        }
    }

    private RingFormatException lacksFeatures(StoredRing r, long segmentOffset, int point, int backend) {
        return new RingFormatException(
                path,
                segmentOffset + (long) point * POINT_LENGTH + POINT_BACKEND_OFFSET,
                "ring " + r.name() + ": point " + point + " names backend " + backend + " ("
                        + backends.get(backend).address().text() + ") which lacks the ring's features");
    }
}
