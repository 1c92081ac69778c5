package io.ringstore;

import java.util.List;

/**
 * Where things are in an open ring file ({@link RingStore#layout()}): for tools that inspect or repair
 * files; lookups never need it. Offsets and lengths are in bytes from the start of the file; FORMAT.md
 * defines every field. Immutable.
 */
public final class RingFileLayout {
    /**
     * The points of one or more rings: {@code pointCount} 6-byte points at {@code offset}, with the
     * CRC-32C the ring index records for them.
     *
     * @param offset where the segment starts in the file, in bytes
     * @param length the segment's length in bytes
     * @param pointCount how many 6-byte points the segment holds
     * @param crc32c the CRC-32C of the segment's bytes, as the ring index records it
     */
    public record Segment(long offset, long length, int pointCount, int crc32c) {
        /** What the ring index records for an empty ring: no segment. */
        public static final Segment NONE = new Segment(0, 0, 0, 0);
    }

    private final RingStore store;
    private final int formatVersion;
    private final int headerLength;
    private final long metadataLength;
    private final int metadataCrc;
    private final List<Segment> segments;
    private final int[] segmentOfRing;
    private final long distinctPointCount;

    RingFileLayout(RingStore store, int formatVersion, int headerLength, long metadataLength, int metadataCrc,
                   List<Segment> segments, int[] segmentOfRing) {
        this.store = store;
        this.formatVersion = formatVersion;
        this.headerLength = headerLength;
        this.metadataLength = metadataLength;
        this.metadataCrc = metadataCrc;
        this.segments = List.copyOf(segments);
        this.segmentOfRing = segmentOfRing;
        this.distinctPointCount = segments.stream().mapToLong(Segment::pointCount).sum();
    }

    /** {@return the file's format version} */
    public int formatVersion() {
        return formatVersion;
    }

    /** {@return bytes of the fixed header} */
    public int headerLength() {
        return headerLength;
    }

    /** {@return bytes covered by the metadata checksum: header, backend table, feature table, ring index} */
    public long metadataLength() {
        return metadataLength;
    }

    /** {@return the CRC-32C stored right after the metadata} */
    public int metadataCrc() {
        return metadataCrc;
    }

    /** {@return the distinct non-empty segments, in file order; rings with identical backends share one} */
    public List<Segment> segments() {
        return segments;
    }

    /**
     * {@return the index in {@link #segments()} of the segment holding {@code ring}'s points, or -1 for an empty
     * ring}
     *
     * @param ring a ring of this file
     * @throws IllegalArgumentException for a ring of another store
     */
    public int segmentIndex(Ring ring) {
        if (ring.store() != store) {
            throw new IllegalArgumentException("ring " + ring + " is not from " + store.path());
        }
        return segmentOfRing[ring.position()];
    }

    /**
     * {@return the segment holding {@code ring}'s points; {@link Segment#NONE} for an empty ring}
     *
     * @param ring a ring of this file
     */
    public Segment segmentOf(Ring ring) {
        int s = segmentIndex(ring);
        return s < 0 ? Segment.NONE : segments.get(s);
    }

    /** {@return points stored in the file: the sum over distinct segments (shared points counted once)} */
    public long distinctPointCount() {
        return distinctPointCount;
    }

    @Override
    public String toString() {
        return "RingFileLayout[format " + formatVersion + ", metadata " + metadataLength + " bytes, "
                + segments.size() + " segments, " + distinctPointCount + " points]";
    }
}
