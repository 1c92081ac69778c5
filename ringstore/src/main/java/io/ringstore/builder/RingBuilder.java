package io.ringstore.builder;

import io.ringstore.Backend;
import io.ringstore.RingFileException;
import io.ringstore.RingStore;
import io.ringstore.family.RingFamily;
import io.ringstore.family.RingVersion;
import io.ringstore.internal.BackendAccess;
import io.ringstore.internal.BackendRecord;
import io.ringstore.internal.FeatureMasks;
import io.ringstore.internal.PointGenerator;
import io.ringstore.internal.PointSorter;
import io.ringstore.internal.Publisher;
import io.ringstore.internal.ServerAddress;
import io.ringstore.internal.TextLines;
import io.ringstore.internal.format.RingFileDescriptor;
import io.ringstore.internal.format.RingFileWriter;
import java.io.IOException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.regex.Pattern;

/**
 * Builds a ring file from a {@link BackendList}: every version × every combination of features, one
 * segment per distinct backend set, published atomically (temporary file, fsync, rename).
 *
 * <pre>{@code
 * BuildResult r = RingBuilder.of(BackendList.parse(path)).version(RingVersion.V1).build(target);
 * }</pre>
 * Not thread-safe; one builder per build.
 */
public final class RingBuilder {
    private final BackendList backends;
    private final List<RingVersion> versions = new ArrayList<>();
    private long generation = -1;
    private Views views = Views.NONE;
    private Consumer<String> progress = s -> {};
    /** Sees the temporary file once written, before it is checked: tests damage it here to show that a bad file is never published. */
    private TemporaryFileHook afterWrite = tmp -> {};

    private static final Pattern FEATURE_NAME = Pattern.compile(RingFileDescriptor.FEATURE_NAME_REGEX);

    /** A test's access to the written temporary file before its check ({@link #afterWrite(TemporaryFileHook)}). */
    interface TemporaryFileHook {
        void accept(Path tmp) throws IOException;
    }

    private RingBuilder(BackendList backends) {
        this.backends = Objects.requireNonNull(backends, "backends");
    }

    /**
     * {@return a builder of ring files for {@code backends}}
     *
     * @param backends the servers, parsed or built in code
     */
    public static RingBuilder of(BackendList backends) {
        return new RingBuilder(backends);
    }

    /**
     * Adds a version to build; the first added is the file's default. Defaults to {@link RingVersion#V1} alone.
     *
     * @param version a version to build
     * @return this builder
     */
    public RingBuilder version(RingVersion version) {
        if (versions.contains(version)) {
            throw new IllegalArgumentException("version " + version + " given twice");
        }
        if (versions.size() == RingFileDescriptor.MAX_VERSIONS) {
            throw new IllegalArgumentException("at most " + RingFileDescriptor.MAX_VERSIONS + " versions per file");
        }
        versions.add(version);
        return this;
    }

    /**
     * The longest expected walk {@link Views#AUTO} accepts for a view: its members hold at least 1/64 of
     * the version's points. A view finds its first member point after the key's by the feature bits of
     * the ring of all backends (FORMAT.md, "Feature bits"): one u64 word per feature of the view for 64
     * points, so at f ≥ 1/64 a lookup reads one block of words, a second in at most 37 % of lookups
     * ((1 − f)^64), and the walk costs about what one more cache line costs, at any fraction above it.
     * What is left of a view's cost is the search of the ring of all backends rather than of f × its
     * points (BENCHMARKS.md, "Views"). The bytes: the feature bits cost featureCount / 48 of the ring of
     * all backends' bytes, once a version, whatever the number of views, so AUTO writes views only when
     * the rings it would make views hold more bytes than that; a ring below 1/64 holds less than 1/64 of
     * the ring of all backends' bytes, so where a fleet's fractions fall around the threshold moves the
     * file's size by at most that.
     */
    public static final int AUTO_MAX_EXPECTED_WALK = 64;

    /**
     * Chooses how feature rings are stored: {@link Views#NONE} (the default: every reader opens the
     * file), {@link Views#AUTO} or {@link Views#ALL} (format version 3). Lookups answer the same
     * whatever the choice.
     *
     * @param views the choice
     * @return this builder
     */
    public RingBuilder views(Views views) {
        this.views = Objects.requireNonNull(views, "views");
        return this;
    }

    /**
     * Sets the generation number; otherwise one more than the file being replaced, or 1.
     *
     * @param generation the generation number, 0 to {@link Long#MAX_VALUE}: the builder writes no more
     *                   (the file's field is a u64, which readers print unsigned, so a file written by
     *                   another tool may hold more; the builder refuses to go up from one)
     * @return this builder
     */
    public RingBuilder generation(long generation) {
        if (generation < 0) {
            throw new IllegalArgumentException("generation must be 0 or more: generation=" + generation);
        }
        this.generation = generation;
        return this;
    }

    /**
     * Receives a line of progress now and then during long builds.
     *
     * @param progress receives a progress line now and then
     * @return this builder
     */
    public RingBuilder progress(Consumer<String> progress) {
        this.progress = Objects.requireNonNull(progress);
        return this;
    }

    /** For tests: runs {@code hook} on the written temporary file before it is checked and published. */
    RingBuilder afterWrite(TemporaryFileHook hook) {
        this.afterWrite = Objects.requireNonNull(hook);
        return this;
    }

    /**
     * {@return the heap a build needs, roughly: the largest ring (the one of every backend, for the version
     * with the most points) is generated into one array of 8 bytes a point, sorted in place with a
     * scratch array of a bucket; add a quarter and 256 MiB for the rest of the JVM}
     */
    public long heapBytesNeeded() {
        long weights = backends.backends().stream().mapToLong(Backend::weight).sum();
        long points = 0;
        for (RingVersion v : versions.isEmpty() ? List.of(RingVersion.V1) : versions) {
            long max = RingFileDescriptor.MAX_POINTS_PER_RING; // a build above it is refused before it allocates
            long all = 0;
            for (long p : pointsOf(v, null)) {
                all = p > max - all ? max : all + p;
            }
            points = Math.max(points, all);
        }
        return points * Long.BYTES * 5 / 4 + (256L << 20);
    }

    /**
     * Builds and atomically publishes the file at {@code target}. On any failure the target is left as
     * it was and no temporary file remains.
     *
     * @param target the ring file to write (replaced atomically)
     * @return what was built: counts, sizes, timings
     * @throws BackendsFileException when the input exceeds a limit of the format (names the line)
     * @throws RingFileException     when the existing target is not a ring file and no generation was set
     * @throws IOException           when writing fails
     */
    public BuildResult build(Path target) throws BackendsFileException, RingFileException, IOException {
        try (Publisher.Transaction publish =
                Publisher.begin(target)) { // the lock: held from reading the old generation until the rename
            long start = System.nanoTime();
            List<RingVersion> vs = versions.isEmpty() ? List.of(RingVersion.V1) : List.copyOf(versions);
            checkFormatLimits(vs);
            if (Files.exists(target) && !Files.isRegularFile(target)) {
                // Renaming over a device or a FIFO would replace it; reading its generation would block.
                throw new FileSystemException(
                        target.toString(),
                        null,
                        "exists and is not a regular file (a ring file replaces only a ring file)");
            }
            long gen = generation >= 0 ? generation : nextGeneration(target);

            int featureCount = backends.features().size();
            int masks = 1 << featureCount;
            List<BitSet> memberSets = new ArrayList<>();
            int[] setOfMask = distinctMemberSets(masks, memberSets);

            int ringCount = vs.size() * masks;

            Written w = publish.write(ch -> {
                int emptyRings = 0;
                int viewRings = 0;
                long points = 0;
                long collisions = 0;
                List<BackendRecord> records = records();
                RingFileWriter writer = new RingFileWriter(ch, records, backends.features(), vs);
                PointGenerator generator = new PointGenerator(progress);
                boolean[] view = chooseViews(memberSets);
                for (int vi = 0; vi < vs.size(); vi++) {
                    RingVersion version = vs.get(vi);
                    RingFamily family = version.family();
                    int[] rank = family.ties().ranks(records);
                    PointGenerator.Source source = version.points().source(records);
                    boolean[] versionViews = family.viewable()
                            ? view
                            : new boolean[view.length]; // a view needs points that do not depend on the members
                    RingFileWriter.Segment[] written = new RingFileWriter.Segment[memberSets.size()];
                    // Set 0 is every backend's (mask 0), first: views read it, so it keeps its ties, and
                    // their point counts come from its points before the generator's array is reused.
                    for (int s = 0; s < memberSets.size(); s++) {
                        if (versionViews[s]) {
                            continue;
                        }
                        progress.accept("building " + version + " ring " + (s + 1) + "/" + memberSets.size() + " ("
                                + memberSets.get(s).cardinality() + " backends)");
                        PointGenerator.Sorted sorted = generator.generateSorted(
                                new PointGenerator.Members(source, rank, memberPoints(version, memberSets.get(s))));
                        family.ties().settle(sorted, records);
                        progress.accept("writing " + sorted.count() + " points of " + version);
                        if (s == 0 && viewCount(versionViews) > 0) {
                            written[0] = writer.writeSegmentWithFeatureBits(sorted);
                            long[] ringPoints = viewPointCounts(sorted, memberSets, setOfMask, versionViews);
                            for (int t = 1; t < memberSets.size(); t++) {
                                if (versionViews[t]) {
                                    written[t] = written[0].view(ringPoints[t], 0);
                                }
                            }
                        } else {
                            written[s] = writer.writeSegment(sorted);
                        }
                        points += written[s].pointCount();
                        collisions += written[s].collisions();
                    }
                    for (int mask = 0; mask < masks; mask++) {
                        RingFileWriter.Segment seg = written[setOfMask[mask]];
                        if (seg.pointCount() == 0) {
                            emptyRings++;
                        } else if (seg.storage() == RingFileDescriptor.STORAGE_VIEW) {
                            viewRings++;
                        }
                        writer.addRing(mask, vi, seg);
                    }
                }
                long fileLength = writer.finish(gen);
                progress.accept("syncing " + fileLength + " bytes to disk"); // the publisher forces the file next
                return new Written(fileLength, writer.segmentCount(), emptyRings, viewRings, points, collisions);
            });
            publish.commit(tmp -> {
                afterWrite.accept(tmp);
                checkWritten(tmp, target);
            });
            return new BuildResult(
                    target,
                    gen,
                    backends.size(),
                    backends.features(),
                    vs,
                    ringCount,
                    w.segments(),
                    w.viewRings(),
                    w.emptyRings(),
                    w.points(),
                    w.collisions(),
                    w.fileLength(),
                    System.nanoTime() - start,
                    publish.leftoversRemoved());
        }
    }

    /** What the write of the file tells the result. */
    private record Written(
            long fileLength, int segments, int emptyRings, int viewRings, long points, long collisions) {}

    /**
     * Opens and verifies the temporary file before it is renamed over the target: a file that a
     * reader would refuse is never published, and the target stays as it was.
     */
    private void checkWritten(Path tmp, Path target) throws RingFileException {
        progress.accept("verifying the file written");
        try (RingStore written = RingStore.open(tmp)) {
            written.verify();
        } catch (RingFileException e) {
            throw new RingFileException(
                    e.path(),
                    e.offset(),
                    e.reason() + "; the file just written fails its check, so " + target
                            + " was left as it was (a bug in ringstore: please report it)");
        }
    }

    /**
     * Checks every limit of the format ({@link RingFileDescriptor}) on the input, naming the line
     * of the backends file, before anything is written: a limit found only by the writer or by the
     * check of the written file would be a failure after the work, or worse, a corrupt file.
     */
    private void checkFormatLimits(List<RingVersion> vs) throws BackendsFileException {
        String source = backends.source();
        if (backends.size() < 1 || backends.size() > RingFileDescriptor.MAX_BACKENDS) {
            throw new BackendsFileException(
                    source,
                    0,
                    backends.size() + " backends; a ring file holds 1 to " + RingFileDescriptor.MAX_BACKENDS);
        }
        if (backends.features().size() > RingFileDescriptor.MAX_FEATURES) {
            throw new BackendsFileException(
                    source,
                    0,
                    backends.features().size() + " features; a ring file holds at most "
                            + RingFileDescriptor.MAX_FEATURES);
        }
        for (String f : backends.features()) {
            if (!FEATURE_NAME.matcher(f).matches()) {
                throw new BackendsFileException(
                        source,
                        0,
                        "bad feature name " + TextLines.quote(f) + " (" + RingFileDescriptor.FEATURE_NAME_RULE + ")");
            }
        }
        List<RingFamily> families =
                vs.stream().map(RingVersion::family).distinct().toList();
        for (Backend b : backends.backends()) {
            ServerAddress address = BackendAccess.record(b).address();
            int length = address.text().length(); // ASCII (the parser accepts nothing else): one byte a character
            if (length > RingFileDescriptor.MAX_ADDRESS_LENGTH) {
                throw new BackendsFileException(
                        source,
                        b.line(),
                        "address of " + length + " characters, longer than a ring file can store ("
                                + RingFileDescriptor.MAX_ADDRESS_LENGTH + "): " + TextLines.quote(address.text()));
            }
            if (b.weight() < 1 || b.weight() > RingFileDescriptor.MAX_WEIGHT) {
                throw new BackendsFileException(
                        source, b.line(), "weight " + b.weight() + " outside 1-" + RingFileDescriptor.MAX_WEIGHT);
            }
            for (RingFamily family : families) {
                String problem = family.addresses().problem(BackendAccess.record(b));
                if (problem != null) {
                    throw new BackendsFileException(source, b.line(), problem);
                }
            }
        }
        for (RingVersion v : vs) {
            checkIdentities(v);
        }
        checkPointCounts(vs);
    }

    /**
     * Refuses two backends that {@code version}'s point texts name alike (two servers of one name, or a
     * name equal to another server's address as the family writes it): their points would be the same
     * and one of them would get no key, without a word. (nutcracker refuses such a pool; the others do
     * not, and the server listed second, or first, is silently left without keys.)
     */
    private void checkIdentities(RingVersion version) throws BackendsFileException {
        RingFamily family = version.family();
        Map<String, Backend> seen = new HashMap<>();
        for (Backend b : backends.backends()) {
            String identity = version.points().identity(BackendAccess.record(b));
            if (identity == null) {
                return;
            }
            Backend first = seen.putIfAbsent(identity, b);
            if (first != null) {
                throw new BackendsFileException(
                        backends.source(),
                        b.line(),
                        "this server is " + TextLines.quote(identity) + " to " + family + ", as the one on line "
                                + first.line() + " is: both would have the same points and one would get no key"
                                + " (give each its own name)");
            }
        }
    }

    private void checkPointCounts(List<RingVersion> vs) throws BackendsFileException {
        for (RingVersion v : vs) {
            long total = 0;
            long[] points = pointsOf(v, null);
            for (Backend b : backends.backends()) {
                long n = points[b.index()];
                if (n > RingFileDescriptor.MAX_POINTS_PER_RING) {
                    throw new BackendsFileException(
                            backends.source(),
                            b.line(),
                            "weight " + b.weight() + " × " + v.pointMultiple() + " points (" + v + ") = " + n
                                    + " points, more than a ring can hold (" + RingFileDescriptor.MAX_POINTS_PER_RING
                                    + ")");
                }
                total += n;
                if (total > RingFileDescriptor.MAX_POINTS_PER_RING) {
                    throw new BackendsFileException(
                            backends.source(),
                            b.line(),
                            "the weights up to this line already make " + total + " points for " + v
                                    + ", more than a ring can hold (" + RingFileDescriptor.MAX_POINTS_PER_RING
                                    + "); lower the weights or the point multiple");
                }
            }
        }
    }

    private static long nextGeneration(Path target) throws RingFileException {
        if (!Files.exists(target)) {
            return 1;
        }
        long old;
        try (RingStore store = RingStore.open(target)) {
            old = store.generation();
        } catch (RingFileException e) {
            throw new RingFileException(
                    e.path(),
                    e.offset(),
                    e.reason()
                            + "; the file to be replaced is not a valid ring file, so its generation is unknown: remove it or pass a generation");
        }
        if (old < 0 || old == Long.MAX_VALUE) {
            throw new RingFileException(
                    target,
                    RingFileDescriptor.GENERATION_OFFSET,
                    "generation " + Long.toUnsignedString(old) + " cannot go up by one; pass a generation explicitly");
        }
        return old + 1;
    }

    /**
     * Which member sets become views: none of set 0 (every backend's, which views read), none without
     * members; with {@link Views#AUTO} those whose members hold at least 1/{@link #AUTO_MAX_EXPECTED_WALK}
     * of the weight (points are weight × point multiple in every version, so the share is the same in all),
     * and none when those hold fewer bytes than the feature bits views need.
     */
    private boolean[] chooseViews(List<BitSet> sets) {
        boolean[] view = new boolean[sets.size()];
        if (views == Views.NONE) {
            return view;
        }
        long total = backends.backends().stream().mapToLong(Backend::weight).sum();
        long viewWeight = 0;
        for (int s = 1; s < sets.size(); s++) {
            BitSet m = sets.get(s);
            long weight =
                    m.stream().mapToLong(b -> backends.backend(b).weight()).sum();
            view[s] = !m.isEmpty() && (views == Views.ALL || weight * AUTO_MAX_EXPECTED_WALK >= total);
            viewWeight += view[s] ? weight : 0;
        }
        // The feature bits: 1 bit a point and feature against 48 bits a stored point.
        if (views == Views.AUTO
                && viewWeight * (8L * RingFileDescriptor.POINT_LENGTH)
                        <= total * backends.features().size()) {
            Arrays.fill(view, false);
        }
        return view;
    }

    private static int viewCount(boolean[] view) {
        int n = 0;
        for (boolean v : view) {
            n += v ? 1 : 0;
        }
        return n;
    }

    /**
     * For each member set chosen as a view: its ring's point count, the hashes at which some member
     * has a point, from the sorted points of every backend (set 0). One pass: a hash of one point
     * counts for every set holding its backend, which a sum over feature-mask supersets gives; the
     * few hashes of several points are tried set by set.
     */
    private long[] viewPointCounts(PointGenerator.Sorted all, List<BitSet> sets, int[] setOfMask, boolean[] view) {
        int masks = setOfMask.length;
        long[] single = new long[masks];
        long[] shared = new long[sets.size()];
        long[] a = all.points();
        int n = all.count();
        for (int i = 0; i < n; ) {
            int j = PointSorter.sameHashEnd(a, i, n);
            if (j == i + 1) {
                single[
                        BackendAccess.record(backends.backend(PointSorter.backend(a[i])))
                                .featureMask()]++;
            } else {
                for (int s = 1; s < sets.size(); s++) {
                    for (int k = i; view[s] && k < j; k++) {
                        if (sets.get(s).get(PointSorter.backend(a[k]))) {
                            shared[s]++;
                            break;
                        }
                    }
                }
            }
            i = j;
        }
        FeatureMasks.sumOverSupersets(single);
        long[] count = new long[sets.size()];
        for (int mask = masks - 1; mask >= 0; mask--) { // any mask of a set gives its members
            count[setOfMask[mask]] = single[mask] + shared[setOfMask[mask]];
        }
        return count;
    }

    /** For each mask, the index in {@code sets} of the backends having all of its features. */
    private int[] distinctMemberSets(int masks, List<BitSet> sets) {
        // Group backends by their own feature mask: a mask's members are the union of groups that cover it.
        Map<Integer, BitSet> groups = new HashMap<>();
        for (Backend b : backends.backends()) {
            groups.computeIfAbsent(BackendAccess.record(b).featureMask(), k -> new BitSet())
                    .set(b.index());
        }
        int[] groupMasks =
                groups.keySet().stream().mapToInt(Integer::intValue).sorted().toArray();
        Map<BitSet, Integer> byGroups = new HashMap<>();
        int[] setOfMask = new int[masks];
        for (int mask = 0; mask < masks; mask++) {
            BitSet covering = new BitSet(groupMasks.length);
            for (int g = 0; g < groupMasks.length; g++) {
                if ((groupMasks[g] & mask) == mask) {
                    covering.set(g);
                }
            }
            Integer existing = byGroups.get(covering);
            if (existing == null) {
                BitSet members = new BitSet(backends.size());
                for (int g = covering.nextSetBit(0); g >= 0; g = covering.nextSetBit(g + 1)) {
                    members.or(groups.get(groupMasks[g]));
                }
                existing = sets.size();
                sets.add(members);
                byGroups.put(covering, existing);
            }
            setOfMask[mask] = existing;
        }
        return setOfMask;
    }

    /**
     * Each backend's points in {@code version}'s ring of {@code members} (all backends when null) by the
     * family's weight rule ({@link io.ringstore.family.WeightRule#memberPoints}), 0 for the others; saturated at
     * {@link Long#MAX_VALUE} (a limit check refuses it).
     */
    private long[] pointsOf(RingVersion version, BitSet members) {
        List<BackendRecord> all = records();
        List<BackendRecord> in = new ArrayList<>();
        for (int b = 0; b < all.size(); b++) {
            if (members == null || members.get(b)) {
                in.add(all.get(b));
            }
        }
        long[] points;
        try {
            points = version.family().weights().memberPoints(in, version);
        } catch (ArithmeticException e) {
            points = new long[in.size()];
            Arrays.fill(points, Long.MAX_VALUE);
        }
        long[] out = new long[all.size()];
        int k = 0;
        for (int b = 0; b < all.size(); b++) {
            if (members == null || members.get(b)) {
                out[b] = points[k++];
            }
        }
        return out;
    }

    /** {@link #pointsOf} as the generator takes them: checked against the format's limits before. */
    private int[] memberPoints(RingVersion version, BitSet members) {
        long[] points = pointsOf(version, members);
        int[] out = new int[points.length];
        for (int i = 0; i < out.length; i++) {
            out[i] = Math.toIntExact(points[i]);
        }
        return out;
    }

    /** The backends as the writer stores them and the families' rules read them. */
    private List<BackendRecord> records() {
        return backends.backends().stream().map(BackendAccess::record).toList();
    }
}
