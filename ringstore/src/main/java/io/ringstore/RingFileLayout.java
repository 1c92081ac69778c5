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

    /** How the file stores a ring (FORMAT.md, "RingEntry": the storage byte). */
    public enum Storage {
        /** The segment holds the ring's own points, one per hash: every file before format version 3. */
        POINTS,
        /** The segment holds every point of every member, equal hashes included in tie order: what views read. */
        POINTS_WITH_TIES,
        /** No points of its own: the ring reads its version's ring of all backends, keeping its members' points. */
        VIEW,
        /**
         * As {@link #POINTS_WITH_TIES}, followed by the points' feature bits, by which its views find their members.
         */
        POINTS_WITH_TIES_AND_FEATURE_BITS,
        /**
         * As {@link #POINTS_WITH_TIES_AND_FEATURE_BITS}, the bits stored by feature (each feature's words
         * together), so a view reads its words from a table that stays in the cache: what builds write
         * since issue 32.
         */
        POINTS_WITH_TIES_AND_FEATURE_BITS_BY_FEATURE;

        /**
         * {@return the name FORMAT.md and the CLI use: "points", "points with ties", "view", "points with
         * ties and feature bits", "points with ties and feature bits by feature"}
         */
        public String label() {
            return name().toLowerCase(java.util.Locale.ROOT).replace('_', ' ');
        }
    }

    private final RingStore store;
    private final int formatVersion;
    private final int headerLength;
    private final long metadataLength;
    private final int metadataCrc;
    private final List<Segment> segments;
    private final int[] segmentOfRing;
    private final Storage[] storageOfRing;
    private final long distinctPointCount;

    RingFileLayout(
            RingStore store,
            int formatVersion,
            int headerLength,
            long metadataLength,
            int metadataCrc,
            List<Segment> segments,
            int[] segmentOfRing,
            Storage[] storageOfRing) {
        this.store = store;
        this.formatVersion = formatVersion;
        this.headerLength = headerLength;
        this.metadataLength = metadataLength;
        this.metadataCrc = metadataCrc;
        this.segments = List.copyOf(segments);
        this.segmentOfRing = segmentOfRing;
        this.storageOfRing = storageOfRing;
        this.distinctPointCount =
                segments.stream().mapToLong(Segment::pointCount).sum();
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

    /**
     * {@return how {@code ring} is stored: its own points, points with ties, or a view of its version's ring of
     * all backends (whose segment {@link #segmentOf} then names)}
     *
     * @param ring a ring of this file
     */
    public Storage storage(Ring ring) {
        segmentIndex(ring); // checks the ring is this file's
        return storageOfRing[ring.position()];
    }

    /**
     * {@return bytes of the file that hold {@code ring}'s points and no other ring's before it: its segment's
     * length for a ring stored as points (with ties or not), 0 for a view and for an empty ring}
     *
     * @param ring a ring of this file
     */
    public long ownBytes(Ring ring) {
        return storage(ring) == Storage.VIEW ? 0 : segmentOf(ring).length();
    }

    /** {@return points stored in the file: the sum over distinct segments (shared points counted once)} */
    public long distinctPointCount() {
        return distinctPointCount;
    }

    @Override
    public String toString() {
        return "RingFileLayout[format " + formatVersion + ", metadata " + metadataLength + " bytes, " + segments.size()
                + " segments, " + distinctPointCount + " points]";
    }
}
