package io.ringstore.internal.format;

import io.ringstore.family.RingVersion;
import io.ringstore.internal.BackendRecord;
import java.util.List;
import java.util.TreeMap;

/**
 * What {@link RingFileReader} found in a ring file's metadata, every field checked.
 *
 * @param backends       the backend table, in index order
 * @param versions       the versions, in file order
 * @param metadataLength bytes covered by the metadata CRC (header, tables, ring index)
 * @param entries        the ring index, versions in file order then masks 0 .. 2^F-1
 * @param segmentCount   distinct non-empty segments
 */
public record ParsedRingFile(
        int formatVersion,
        int headerLength,
        long generation,
        byte[] inputDigest,
        List<BackendRecord> backends,
        List<String> features,
        List<RingVersion> versions,
        long metadataLength,
        int metadataCrc,
        List<Entry> entries,
        int segmentCount) {

    /**
     * One ring index entry; an empty ring has offset, length and CRC 0. {@code pointCount} is the
     * segment's; {@code ringPoints} the ring's own (equal for {@code STORAGE_POINTS}).
     */
    public record Entry(
            int mask,
            RingVersion version,
            long offset,
            long length,
            int pointCount,
            int crc,
            int storage,
            int ringPoints) {
        /** A ring stored as its own points (formats 1 and 2). */
        public Entry(int mask, RingVersion version, long offset, long length, int pointCount, int crc) {
            this(mask, version, offset, length, pointCount, crc, RingFileDescriptor.STORAGE_POINTS, pointCount);
        }
    }

    /**
     * {@return the distinct non-empty segments, in file order: for each, the first entry that names it
     * (a version's mask-0 ring for the segment its views read)} The reader has checked that the entries
     * sharing an offset agree.
     */
    public List<Entry> segments() {
        TreeMap<Long, Entry> byOffset = new TreeMap<>();
        for (Entry e : entries) {
            if (e.pointCount() > 0) {
                byOffset.putIfAbsent(e.offset(), e);
            }
        }
        return List.copyOf(byOffset.values());
    }
}
