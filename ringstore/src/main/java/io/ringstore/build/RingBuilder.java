package io.ringstore.build;

import io.ringstore.Backend;
import io.ringstore.RingFileException;
import io.ringstore.RingStore;
import io.ringstore.RingVersion;
import io.ringstore.internal.BackendAccess;
import io.ringstore.internal.PointGenerator;
import io.ringstore.internal.PointSorter;
import io.ringstore.internal.Publisher;
import io.ringstore.internal.RingFormat;
import io.ringstore.internal.ServerAddress;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.zip.CRC32C;

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
    private Consumer<String> progress = s -> { };

    private RingBuilder(BackendList backends) {
        this.backends = Objects.requireNonNull(backends, "backends");
    }

    public static RingBuilder of(BackendList backends) {
        return new RingBuilder(backends);
    }

    /** Adds a version to build; the first added is the file's default. Defaults to {@link RingVersion#V1} alone. */
    public RingBuilder version(RingVersion version) {
        if (versions.contains(version)) {
            throw new IllegalArgumentException("version " + version + " given twice");
        }
        if (versions.size() == RingFormat.MAX_VERSIONS) {
            throw new IllegalArgumentException("at most " + RingFormat.MAX_VERSIONS + " versions per file");
        }
        versions.add(version);
        return this;
    }

    /** Sets the generation number; otherwise one more than the file being replaced, or 1. */
    public RingBuilder generation(long generation) {
        if (generation < 0) {
            throw new IllegalArgumentException("generation must be 0 or more: generation=" + generation);
        }
        this.generation = generation;
        return this;
    }

    /** Receives a line of progress now and then during long builds. */
    public RingBuilder progress(Consumer<String> progress) {
        this.progress = Objects.requireNonNull(progress);
        return this;
    }

    /**
     * Builds and atomically publishes the file at {@code target}. On any failure the target is left as
     * it was and no temporary file remains.
     *
     * @throws BackendsFileException when the input cannot make rings (point counts overflow)
     * @throws RingFileException     when the existing target is not a ring file and no generation was set
     * @throws IOException           when writing fails
     */
    public BuildResult build(Path target) throws BackendsFileException, RingFileException, IOException {
        try (Publisher.Lock lock = Publisher.lock(target)) { // held from reading the old generation until the rename
            return buildLocked(target);
        }
    }

    private BuildResult buildLocked(Path target) throws BackendsFileException, RingFileException, IOException {
        long start = System.nanoTime();
        List<RingVersion> vs = versions.isEmpty() ? List.of(RingVersion.V1) : List.copyOf(versions);
        checkPointCounts(vs);
        long gen = generation >= 0 ? generation : nextGeneration(target);

        int featureCount = backends.features().size();
        int masks = 1 << featureCount;
        List<BitSet> memberSets = new ArrayList<>();
        int[] setOfMask = distinctMemberSets(masks, memberSets);

        byte[] backendTable = backendTable();
        byte[] featureTable = featureTable();
        int ringCount = vs.size() * masks;
        long metadataEnd = RingFormat.HEADER_LENGTH + backendTable.length + featureTable.length
                + (long) ringCount * RingFormat.ENTRY_LENGTH;
        long segmentsStart = metadataEnd + RingFormat.METADATA_CRC_LENGTH; // each segment aligns itself

        Path dir = target.toAbsolutePath().getParent();
        Path tmp = Files.createTempFile(dir, "." + target.getFileName() + ".", ".tmp");
        boolean published = false;
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
            Publisher.shareable(tmp, target);
            SegmentWriter writer = new SegmentWriter(ch, segmentsStart);
            PointGenerator generator = pointGenerator();
            ByteBuffer index = ByteBuffer.allocate(ringCount * RingFormat.ENTRY_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
            int segments = 0;
            int emptyRings = 0;
            long points = 0;
            long collisions = 0;
            for (int v = 0; v < vs.size(); v++) {
                RingVersion version = vs.get(v);
                int[] rank = generator.tieRanks(version.algorithm());
                Segment[] written = new Segment[memberSets.size()];
                for (int s = 0; s < memberSets.size(); s++) {
                    progress.accept("building " + version + " ring " + (s + 1) + "/" + memberSets.size()
                            + " (" + memberSets.get(s).cardinality() + " backends)");
                    written[s] = writer.write(generator.generateSorted(memberSets.get(s), version, rank));
                    if (written[s].pointCount > 0) {
                        segments++;
                    }
                    points += written[s].pointCount;
                    collisions += written[s].collisions;
                }
                for (int mask = 0; mask < masks; mask++) {
                    Segment seg = written[setOfMask[mask]];
                    if (seg.pointCount == 0) {
                        emptyRings++;
                    }
                    index.putInt(mask).put((byte) version.algorithm().code()).put((byte) 0).putShort((short) 0)
                            .putInt(version.pointMultiple()).putInt((int) seg.pointCount)
                            .putLong(seg.offset).putLong(seg.length).putInt(seg.crc).putInt(0);
                }
            }
            long fileLength = writer.end();
            byte[] digest = inputDigest(backendTable, featureTable, vs);
            ByteBuffer meta = ByteBuffer.allocate((int) metadataEnd + RingFormat.METADATA_CRC_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
            meta.put(RingFormat.MAGIC).putShort((short) RingFormat.FORMAT_VERSION).putShort((short) 0)
                    .putInt(RingFormat.HEADER_LENGTH).putLong(gen).putLong(fileLength).put(digest)
                    .putInt(backends.size()).putShort((short) featureCount).putShort((short) vs.size())
                    .putInt(ringCount).putInt(segments)
                    .putLong(RingFormat.HEADER_LENGTH).putLong(backendTable.length)
                    .putLong(RingFormat.HEADER_LENGTH + backendTable.length).putLong(featureTable.length)
                    .putLong(RingFormat.HEADER_LENGTH + backendTable.length + featureTable.length)
                    .putLong((long) ringCount * RingFormat.ENTRY_LENGTH);
            meta.put(backendTable).put(featureTable).put(index.array());
            CRC32C crc = new CRC32C();
            crc.update(meta.array(), 0, (int) metadataEnd);
            meta.putInt((int) crc.getValue());
            meta.flip();
            writeFully(ch, meta, 0);
            if (ch.size() < fileLength) {
                // No segment was written (every ring empty): the file must still reach fileLength.
                writeFully(ch, ByteBuffer.allocate(1), fileLength - 1);
            }
            progress.accept("syncing " + fileLength + " bytes to disk");
            ch.force(true);
            ch.close();
            Publisher.publish(tmp, target);
            published = true;
            return new BuildResult(target, gen, backends.size(), backends.features(), vs, ringCount, segments,
                    emptyRings, points, collisions, fileLength, System.nanoTime() - start);
        } finally {
            if (!published) {
                Files.deleteIfExists(tmp);
            }
        }
    }

    private void checkPointCounts(List<RingVersion> vs) throws BackendsFileException {
        for (RingVersion v : vs) {
            long total = 0;
            for (Backend b : backends.backends()) {
                long n = b.weight() * v.pointMultiple();
                if (n > RingFormat.MAX_POINTS_PER_RING) {
                    throw new BackendsFileException(backends.source(), b.line(), "weight " + b.weight() + " × " + v.pointMultiple()
                            + " points (" + v + ") = " + n + " points, more than a ring can hold (" + RingFormat.MAX_POINTS_PER_RING + ")");
                }
                total += n;
                if (total > RingFormat.MAX_POINTS_PER_RING) {
                    throw new BackendsFileException(backends.source(), b.line(), "the weights up to this line already make " + total
                            + " points for " + v + ", more than a ring can hold (" + RingFormat.MAX_POINTS_PER_RING + "); lower the weights or the point multiple");
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
            throw new RingFileException(e.path(), e.offset(), e.reason()
                    + "; the file to be replaced is not a valid ring file, so its generation is unknown: remove it or pass a generation");
        }
        if (old < 0 || old == Long.MAX_VALUE) {
            throw new RingFileException(target, RingFormat.GENERATION_OFFSET, "generation " + Long.toUnsignedString(old)
                    + " cannot go up by one; pass a generation explicitly");
        }
        return old + 1;
    }

    /** For each mask, the index in {@code sets} of the backends having all of its features. */
    private int[] distinctMemberSets(int masks, List<BitSet> sets) {
        // Group backends by their own feature mask: a mask's members are the union of groups that cover it.
        Map<Integer, BitSet> groups = new HashMap<>();
        for (Backend b : backends.backends()) {
            groups.computeIfAbsent(BackendAccess.featureMask(b), k -> new BitSet()).set(b.index());
        }
        int[] groupMasks = groups.keySet().stream().mapToInt(Integer::intValue).sorted().toArray();
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


    private record Segment(long offset, long length, long pointCount, int crc, long collisions) {
    }

    private PointGenerator pointGenerator() {
        int n = backends.size();
        ServerAddress[] addresses = new ServerAddress[n];
        long[] weights = new long[n];
        for (int i = 0; i < n; i++) {
            addresses[i] = BackendAccess.address(backends.backend(i));
            weights[i] = backends.backend(i).weight();
        }
        return new PointGenerator(addresses, weights, progress);
    }

    /** Appends deduplicated segments at aligned offsets, streaming through one buffer. */
    private static final class SegmentWriter {
        private final FileChannel ch;
        private final ByteBuffer buf = ByteBuffer.allocateDirect(1 << 20).order(ByteOrder.LITTLE_ENDIAN);
        private final CRC32C crc = new CRC32C();
        private long position;

        SegmentWriter(FileChannel ch, long start) {
            this.ch = ch;
            this.position = start;
        }

        Segment write(PointGenerator.Sorted sorted) throws IOException {
            long[] a = sorted.points();
            int n = sorted.count();
            if (n == 0) {
                return new Segment(0, 0, 0, 0, 0);
            }
            long kept = 0;
            int previousHash = 0;
            for (int i = 0; i < n; i++) {
                int h = PointSorter.hash(a[i]);
                if (i == 0 || h != previousHash) {
                    kept++;
                    previousHash = h;
                }
            }
            long length = kept * RingFormat.POINT_LENGTH;
            long offset = RingFormat.align(position, RingFormat.alignmentFor(length));
            crc.reset();
            long at = offset;
            buf.clear();
            for (int i = 0; i < n; i++) {
                int h = PointSorter.hash(a[i]);
                if (i > 0 && h == previousHash) {
                    continue; // a backend earlier in tie order already holds this hash
                }
                previousHash = h;
                if (buf.remaining() < RingFormat.POINT_LENGTH) {
                    at = flush(at);
                }
                buf.putInt(h).putShort((short) PointSorter.backend(a[i]));
            }
            at = flush(at);
            position = at;
            return new Segment(offset, length, kept, (int) crc.getValue(), n - kept);
        }

        private long flush(long at) throws IOException {
            buf.flip();
            crc.update(buf.duplicate());
            int len = buf.remaining();
            writeFully(ch, buf, at);
            buf.clear();
            return at + len;
        }

        long end() {
            return position;
        }
    }

    private static void writeFully(FileChannel ch, ByteBuffer buf, long at) throws IOException {
        while (buf.hasRemaining()) {
            at += ch.write(buf, at);
        }
    }

    private byte[] backendTable() {
        int size = 0;
        List<byte[]> texts = new ArrayList<>();
        for (Backend b : backends.backends()) {
            byte[] t = b.address().getBytes(StandardCharsets.US_ASCII);
            texts.add(t);
            size += RingFormat.BACKEND_FIXED_LENGTH + t.length;
        }
        ByteBuffer bb = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < backends.size(); i++) {
            Backend b = backends.backend(i);
            bb.putInt((int) b.weight()).putInt(BackendAccess.featureMask(b)).putShort((short) texts.get(i).length).put(texts.get(i));
        }
        return bb.array();
    }

    private byte[] featureTable() {
        List<byte[]> names = backends.features().stream().map(f -> f.getBytes(StandardCharsets.US_ASCII)).toList();
        ByteBuffer bb = ByteBuffer.allocate(names.stream().mapToInt(n -> 1 + n.length).sum());
        for (byte[] n : names) {
            bb.put((byte) n.length).put(n);
        }
        return bb.array();
    }

    /** SHA-256 over the backend table, the feature table and the versions: what the rings were built from. */
    private static byte[] inputDigest(byte[] backendTable, byte[] featureTable, List<RingVersion> vs) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            sha.update(backendTable);
            sha.update(featureTable);
            for (RingVersion v : vs) {
                sha.update(v.toString().getBytes(StandardCharsets.US_ASCII));
                sha.update((byte) 0);
            }
            return sha.digest();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JDK", e);
        }
    }
}
