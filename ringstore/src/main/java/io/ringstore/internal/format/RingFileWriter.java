package io.ringstore.internal.format;

import static io.ringstore.internal.format.RingFileDescriptor.*;

import io.ringstore.family.RingVersion;
import io.ringstore.internal.BackendRecord;
import io.ringstore.internal.PointGenerator;
import io.ringstore.internal.PointSorter;
import io.ringstore.internal.ServerParameters;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * Writes a ring file into a channel: first the segments ({@link #writeSegment}, appended at aligned
 * offsets after the room kept for the metadata), one ring index entry per ring in file order
 * ({@link #addRing}), then the header, tables, index and metadata CRC-32C ({@link #finish}). Every
 * field is set at its {@link RingFileDescriptor} offset. Not thread-safe; one writer per file.
 */
public final class RingFileWriter {
    /**
     * A ring as the index records it: where its points are, how they are stored
     * ({@link RingFileDescriptor#STORAGE_POINTS} and the others) and the ring's own point count
     * ({@code ringPoints}: its distinct hashes, which is {@code pointCount} for stored points); an
     * empty ring's is {@link #NONE}.
     *
     * @param collisions the points the ring does not keep because another backend holds their hash
     */
    public record Segment(
            long offset, long length, long pointCount, int crc, long collisions, int storage, long ringPoints) {
        public static final Segment NONE = new Segment(0, 0, 0, 0, 0, STORAGE_POINTS, 0);

        /** A view of this segment (stored with ties) holding {@code ringPoints} of its points, {@code collisions} dropped. */
        public Segment view(long ringPoints, long collisions) {
            if (!keepsTies(storage) || ringPoints < 1 || ringPoints > pointCount) {
                throw new IllegalArgumentException(
                        "a view of " + ringPoints + " points needs a segment with ties of at least as many: " + this);
            }
            return new Segment(offset, length, pointCount, crc, collisions, STORAGE_VIEW, ringPoints);
        }
    }

    private final FileChannel ch;
    private final List<RingVersion> versions;
    private final int backendCount;
    private final int featureCount;
    /** Each backend's feature bits (bits 0 .. featureCount-1 of its mask), for the feature bits of a segment. */
    private final int[] backendFeatures;

    private final int ringCount;
    /** The lowest version that holds the content: 2 only when a backend has a flag, 3 once a ring is not plain points. */
    private int formatVersion;

    private final byte[] metadata;
    private final MemorySegment meta;
    private final long backendTableLength;
    private final long featureTableLength;
    private final long ringIndexOffset;
    private final long metadataEnd;
    private final SegmentWriter segments;
    private int ringsAdded;
    private int segmentCount;

    /**
     * Lays out the backend and feature tables for {@code backends}, {@code features} and
     * {@code versions} (2^features rings per version), ready for the segments.
     *
     * @throws IllegalArgumentException when a count or an address exceeds a limit of the format
     */
    public RingFileWriter(
            FileChannel ch, List<BackendRecord> backends, List<String> features, List<RingVersion> versions) {
        require(backends.size() >= 1 && backends.size() <= MAX_BACKENDS, "backends 1-" + MAX_BACKENDS, backends.size());
        require(features.size() <= MAX_FEATURES, "features at most " + MAX_FEATURES, features.size());
        require(versions.size() >= 1 && versions.size() <= MAX_VERSIONS, "versions 1-" + MAX_VERSIONS, versions.size());
        this.ch = ch;
        this.versions = List.copyOf(versions);
        this.backendCount = backends.size();
        this.featureCount = features.size();
        this.ringCount = versions.size() << featureCount;
        this.backendFeatures =
                backends.stream().mapToInt(BackendRecord::featureMask).toArray();
        this.formatVersion =
                backends.stream().anyMatch(b -> flags(b) != 0) ? FORMAT_VERSION_BACKEND_FLAGS : FORMAT_VERSION;

        List<byte[]> addresses = backends.stream()
                .map(b -> (b.address().text() + (b.name() == null ? "" : "\0" + b.name()))
                        .getBytes(StandardCharsets.US_ASCII))
                .toList();
        List<byte[]> names = features.stream()
                .map(n -> n.getBytes(StandardCharsets.US_ASCII))
                .toList();
        long backendBytes = 0;
        for (int i = 0; i < backends.size(); i++) {
            byte[] a = addresses.get(i);
            require(
                    a.length >= 1 && a.length <= MAX_ADDRESS_LENGTH,
                    "address length 1-" + MAX_ADDRESS_LENGTH,
                    a.length);
            backendBytes += BACKEND_FIXED_LENGTH + a.length + (backends.get(i).hasHealth() ? BACKEND_HEALTH_LENGTH : 0);
        }
        long featureBytes = 0;
        for (byte[] n : names) {
            require(
                    n.length >= 1 && n.length <= MAX_FEATURE_NAME_LENGTH,
                    "feature name length 1-" + MAX_FEATURE_NAME_LENGTH,
                    n.length);
            featureBytes += FEATURE_FIXED_LENGTH + n.length;
        }
        this.backendTableLength = backendBytes;
        this.featureTableLength = featureBytes;
        this.ringIndexOffset = HEADER_LENGTH + backendBytes + featureBytes;
        this.metadataEnd = ringIndexOffset + (long) ringCount * ENTRY_LENGTH;
        this.metadata = new byte[Math.toIntExact(metadataEnd + METADATA_CRC_LENGTH)];
        this.meta = MemorySegment.ofArray(metadata);

        long p = HEADER_LENGTH;
        for (int i = 0; i < backends.size(); i++) {
            BackendRecord b = backends.get(i);
            byte[] a = addresses.get(i);
            meta.set(U32, p + BACKEND_WEIGHT_OFFSET, (int) b.weight());
            meta.set(U32, p + BACKEND_FEATURES_OFFSET, b.featureMask() | flags(b));
            meta.set(U16, p + BACKEND_ADDRESS_LENGTH_OFFSET, (short) a.length);
            System.arraycopy(a, 0, metadata, Math.toIntExact(p + BACKEND_ADDRESS_OFFSET), a.length);
            p += BACKEND_FIXED_LENGTH + a.length;
            if (b.hasHealth()) {
                ServerParameters h = b.parameters();
                require(h.maxFails() >= 0, "max_fails 0-" + MAX_HEALTH_VALUE, h.maxFails());
                require(
                        h.failTimeoutSeconds() >= 0 && h.failTimeoutSeconds() <= MAX_HEALTH_VALUE,
                        "fail_timeout 0-" + MAX_HEALTH_VALUE,
                        h.failTimeoutSeconds());
                require(h.maxConns() >= 0, "max_conns 0-" + MAX_HEALTH_VALUE, h.maxConns());
                meta.set(U32, p + HEALTH_MAX_FAILS_OFFSET, h.maxFails());
                meta.set(U32, p + HEALTH_FAIL_TIMEOUT_OFFSET, (int) h.failTimeoutSeconds());
                meta.set(U32, p + HEALTH_MAX_CONNS_OFFSET, h.maxConns());
                p += BACKEND_HEALTH_LENGTH;
            }
        }
        for (byte[] n : names) {
            meta.set(U8, p + FEATURE_NAME_LENGTH_OFFSET, (byte) n.length);
            System.arraycopy(n, 0, metadata, Math.toIntExact(p + FEATURE_NAME_OFFSET), n.length);
            p += FEATURE_FIXED_LENGTH + n.length;
        }
        this.segments = new SegmentWriter(ch, metadataEnd + METADATA_CRC_LENGTH); // each segment aligns itself
    }

    /** The backend flags of {@code b}'s record: 0 for a backend with nothing but an address, a weight and features. */
    private static int flags(BackendRecord b) {
        return (b.down() ? BACKEND_FLAG_DOWN : 0)
                | (b.name() != null ? BACKEND_FLAG_NAMED : 0)
                | (b.hasHealth() ? BACKEND_FLAG_HEALTH : 0);
    }

    private static void require(boolean holds, String what, long value) {
        if (!holds) {
            throw new IllegalArgumentException(what + " must hold: " + value);
        }
    }

    /**
     * Appends the points of one ring at the next aligned offset, keeping one point per hash (the first
     * in tie order), and returns where they went; {@link Segment#NONE} for no points. A 64-bit ring's
     * points ({@link PointGenerator.Sorted#low()}: FORMAT.md, "64-bit rings") go as 6-byte points holding
     * each hash's high word, then each hash's low word, in the same order; one checksum over both.
     */
    public Segment writeSegment(PointGenerator.Sorted sorted) throws IOException {
        return count(sorted.low() != null ? segments.writeWide(sorted) : segments.write(sorted, false, null, 0));
    }

    /**
     * Appends every point of one ring at the next aligned offset, equal hashes of different backends
     * included in tie order ({@link RingFileDescriptor#STORAGE_POINTS_WITH_TIES}): the segment views
     * read. Only a backend's own repeated hash (never seen: a point chain is a permutation's cycle) is
     * stored once. A 32-bit ring's only: 64-bit rings are stored as their points.
     */
    public Segment writeSegmentWithTies(PointGenerator.Sorted sorted) throws IOException {
        return count(segments.write(sorted, true, null, 0));
    }

    /**
     * {@link #writeSegmentWithTies} followed by the points' feature bits by feature
     * ({@link RingFileDescriptor#STORAGE_POINTS_WITH_FEATURE_BITS_BY_FEATURE}): what the views of a
     * version read their members from, 64 points a word.
     */
    public Segment writeSegmentWithFeatureBits(PointGenerator.Sorted sorted) throws IOException {
        return count(segments.write(sorted, true, backendFeatures, featureCount));
    }

    private Segment count(Segment s) {
        if (s.pointCount() > 0) {
            segmentCount++;
        }
        return s;
    }

    /**
     * Adds the next ring index entry: rings come in file order, versions then masks 0 .. 2^F-1;
     * {@code version} is the index of the ring's version in the constructor's list.
     */
    public void addRing(int mask, int version, Segment segment) {
        int i = ringsAdded;
        if (i >= ringCount || mask != (i & ((1 << featureCount) - 1)) || version != i >> featureCount) {
            throw new IllegalStateException(
                    "ring " + i + " must be version " + (i < ringCount ? i >> featureCount : "none") + " mask "
                            + (i & ((1 << featureCount) - 1)) + ": got version " + version + " mask " + mask);
        }
        RingVersion v = versions.get(version);
        int[] parameters = v.parameters();
        long e = ringIndexOffset + (long) i * ENTRY_LENGTH;
        meta.set(U32, e + ENTRY_FEATURE_MASK_OFFSET, mask);
        meta.set(U8, e + ENTRY_ALGORITHM_OFFSET, (byte) v.family().code());
        meta.set(U8, e + ENTRY_STORAGE_OFFSET, (byte) segment.storage());
        if (segment.storage() != STORAGE_POINTS) {
            meta.set(U32, e + ENTRY_RING_POINTS_OFFSET, (int) segment.ringPoints());
            formatVersion = Math.max(formatVersion, FORMAT_VERSION_VIEWS);
        }
        if (v.family().pointBits() == 64 || parameters.length == 2) {
            // A second parameter takes the ringPoints word: a ring of such a family is stored as its points.
            meta.set(U32, e + ENTRY_RING_POINTS_OFFSET, parameters.length == 2 ? parameters[1] : 0);
            formatVersion = FORMAT_VERSION_WIDE;
        }
        meta.set(U32, e + ENTRY_POINT_MULTIPLE_OFFSET, parameters[0]);
        meta.set(U32, e + ENTRY_POINT_COUNT_OFFSET, (int) segment.pointCount());
        meta.set(U64, e + ENTRY_SEGMENT_OFFSET_OFFSET, segment.offset());
        meta.set(U64, e + ENTRY_SEGMENT_LENGTH_OFFSET, segment.length());
        meta.set(U32, e + ENTRY_SEGMENT_CRC_OFFSET, segment.crc());
        // The reserved bytes (and ringPoints of stored points) stay 0, as the array was allocated.
        ringsAdded++;
    }

    /** Distinct non-empty segments written so far. */
    public int segmentCount() {
        return segmentCount;
    }

    /**
     * Writes the header, tables, ring index and metadata CRC at the start of the file, and makes the
     * file reach its full length; returns that length. Does not force the channel.
     */
    public long finish(long generation) throws IOException {
        if (ringsAdded != ringCount) {
            throw new IllegalStateException(
                    "ring index incomplete: " + ringsAdded + " of " + ringCount + " rings added");
        }
        long fileLength = segments.end();
        System.arraycopy(MAGIC, 0, metadata, MAGIC_OFFSET, MAGIC_LENGTH);
        meta.set(U16, FORMAT_VERSION_OFFSET, (short) formatVersion);
        meta.set(U16, FLAGS_OFFSET, (short) 0);
        meta.set(U32, HEADER_LENGTH_OFFSET, HEADER_LENGTH);
        meta.set(U64, GENERATION_OFFSET, generation);
        meta.set(U64, FILE_LENGTH_OFFSET, fileLength);
        System.arraycopy(inputDigest(), 0, metadata, INPUT_DIGEST_OFFSET, INPUT_DIGEST_LENGTH);
        meta.set(U32, BACKEND_COUNT_OFFSET, backendCount);
        meta.set(U16, FEATURE_COUNT_OFFSET, (short) featureCount);
        meta.set(U16, VERSION_COUNT_OFFSET, (short) versions.size());
        meta.set(U32, RING_COUNT_OFFSET, ringCount);
        meta.set(U32, SEGMENT_COUNT_OFFSET, segmentCount);
        meta.set(U64, BACKEND_TABLE_OFFSET_OFFSET, HEADER_LENGTH);
        meta.set(U64, BACKEND_TABLE_LENGTH_OFFSET, backendTableLength);
        meta.set(U64, FEATURE_TABLE_OFFSET_OFFSET, HEADER_LENGTH + backendTableLength);
        meta.set(U64, FEATURE_TABLE_LENGTH_OFFSET, featureTableLength);
        meta.set(U64, RING_INDEX_OFFSET_OFFSET, ringIndexOffset);
        meta.set(U64, RING_INDEX_LENGTH_OFFSET, (long) ringCount * ENTRY_LENGTH);
        CRC32C crc = new CRC32C();
        crc.update(metadata, 0, (int) metadataEnd);
        meta.set(U32, metadataEnd, (int) crc.getValue());
        writeFully(ch, ByteBuffer.wrap(metadata), 0);
        if (ch.size() < fileLength) {
            // No segment was written (every ring empty): the file must still reach fileLength.
            writeFully(ch, ByteBuffer.allocate(1), fileLength - 1);
        }
        return fileLength;
    }

    /**
     * SHA-256 over the backend table, the feature table and each version's digest encoding (FORMAT.md,
     * input digest): what the rings were built from.
     */
    private byte[] inputDigest() {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            sha.update(metadata, HEADER_LENGTH, (int) (backendTableLength + featureTableLength));
            for (RingVersion v : versions) {
                sha.update(v.digestEncoding());
            }
            return sha.digest();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every JDK", e);
        }
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

        /**
         * @param features each backend's feature bits, to follow the points with their feature bits; null for none
         * @param featureCount the file's features (words per block of feature bits)
         */
        Segment write(PointGenerator.Sorted sorted, boolean ties, int[] features, int featureCount) throws IOException {
            if (sorted.low() != null) {
                throw new IllegalArgumentException(
                        "a 64-bit ring is stored as its points, without ties or feature bits");
            }
            long[] a = sorted.points();
            int n = sorted.count();
            if (n == 0) {
                return Segment.NONE;
            }
            long kept = 0;
            long distinct = 0;
            for (int i = 0; i < n; i++) {
                kept += repeats(a, i, ties) ? 0 : 1;
                distinct += repeats(a, i, false) ? 0 : 1;
            }
            long length = kept * POINT_LENGTH + (features == null ? 0 : featureBitsLength(kept, featureCount));
            long offset = align(position, alignmentFor(length));
            crc.reset();
            long at = offset;
            buf.clear();
            for (int i = 0; i < n; i++) {
                if (repeats(a, i, ties)) {
                    continue; // a backend earlier in tie order already holds this hash
                }
                at = putPoint(a[i], at);
            }
            if (features != null) {
                at = writeFeatureBits(a, n, features, featureCount, at);
            }
            at = flush(at);
            position = at;
            return new Segment(
                    offset,
                    length,
                    kept,
                    (int) crc.getValue(),
                    n - kept,
                    features != null
                            ? STORAGE_POINTS_WITH_FEATURE_BITS_BY_FEATURE
                            : ties ? STORAGE_POINTS_WITH_TIES : STORAGE_POINTS,
                    distinct);
        }

        /**
         * The feature bits of the points just written with ties (the same points kept), by feature
         * (storage 4): for each feature, one u64 word for each 64 points, the last word's bits past the
         * last point 0. One pass over the points a feature, so nothing but a word is held.
         */
        private long writeFeatureBits(long[] a, int n, int[] features, int featureCount, long at) throws IOException {
            for (int f = 0; f < featureCount; f++) {
                long word = 0;
                int inBlock = 0;
                for (int i = 0; i < n; i++) {
                    if (repeats(a, i, true)) {
                        continue; // as the points: a backend's own repeated hash is stored once
                    }
                    word |= (long) (features[PointSorter.backend(a[i])] >>> f & 1) << inBlock;
                    if (++inBlock == FEATURE_BITS_BLOCK_POINTS) {
                        at = putWord(word, at);
                        word = 0;
                        inBlock = 0;
                    }
                }
                if (inBlock != 0) {
                    at = putWord(word, at);
                }
            }
            return at;
        }

        /**
         * Whether sorted point {@code i} is left out of the file: it has the hash of the point before it
         * and, when ties are kept, that point's backend too (the earlier one in tie order holds the hash).
         */
        private static boolean repeats(long[] sorted, int i, boolean ties) {
            return i > 0
                    && PointSorter.hash(sorted[i]) == PointSorter.hash(sorted[i - 1])
                    && (!ties || PointSorter.backend(sorted[i]) == PointSorter.backend(sorted[i - 1]));
        }

        /** Puts the sorted point's hash and backend as a 6-byte point, flushing first when the buffer is full. */
        private long putPoint(long sorted, long at) throws IOException {
            if (buf.remaining() < POINT_LENGTH) {
                at = flush(at);
            }
            int p = buf.position();
            buf.putInt(p + POINT_HASH_OFFSET, PointSorter.hash(sorted))
                    .putShort(p + POINT_BACKEND_OFFSET, (short) PointSorter.backend(sorted));
            buf.position(p + POINT_LENGTH);
            return at;
        }

        private long putWord(long word, long at) throws IOException {
            if (buf.remaining() < FEATURE_BITS_WORD_LENGTH) {
                at = flush(at);
            }
            buf.putLong(word);
            return at;
        }

        /** A 64-bit ring's points, one a hash already: the high words in 6-byte points, then the low words. */
        Segment writeWide(PointGenerator.Sorted wide) throws IOException {
            long[] a = wide.points();
            int n = wide.count();
            if (n == 0) {
                return Segment.NONE;
            }
            long length = (long) n * (POINT_LENGTH + LOW_WORD_LENGTH);
            long offset = align(position, alignmentFor(length));
            crc.reset();
            long at = offset;
            buf.clear();
            for (int i = 0; i < n; i++) {
                at = putPoint(a[i], at);
            }
            for (int i = 0; i < n; i++) {
                if (buf.remaining() < LOW_WORD_LENGTH) {
                    at = flush(at);
                }
                buf.putInt(wide.low()[i]);
            }
            at = flush(at);
            position = at;
            return new Segment(offset, length, n, (int) crc.getValue(), wide.dropped(), STORAGE_POINTS, n);
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
}
