package io.ringstore.internal.format;

import java.util.List;

/**
 * What {@link RingFileReader} found in a ring file's metadata, every field checked.
 *
 * @param backends       the backend table, in index order
 * @param versions       the versions, in file order
 * @param metadataLength bytes covered by the metadata CRC (header, tables, ring index)
 * @param entries        the ring index, versions in file order then masks 0 .. 2^F-1
 * @param segmentCount   distinct non-empty segments
 */
public record ParsedRingFile(int formatVersion, int headerLength, long generation, byte[] inputDigest,
                             List<BackendRecord> backends, List<String> features, List<Version> versions,
                             long metadataLength, int metadataCrc, List<Entry> entries, int segmentCount) {

    /**
     * A version as the ring index stores it: the family code and the parameter word.
     *
     * @param family    the entry's family code byte
     * @param parameter its parameter word (the point multiple of v1 and v2)
     */
    public record Version(int family, int parameter) {
    }

    /**
     * One ring index entry; an empty ring has offset, length and CRC 0. {@code pointCount} is the
     * segment's; {@code ringPoints} the ring's own (equal for {@code STORAGE_POINTS}).
     */
    public record Entry(int mask, Version version, long offset, long length, int pointCount, int crc, int storage, int ringPoints) {
        /** A ring stored as its own points (formats 1 and 2). */
        public Entry(int mask, Version version, long offset, long length, int pointCount, int crc) {
            this(mask, version, offset, length, pointCount, crc, RingFileDescriptor.STORAGE_POINTS, pointCount);
        }
    }

    /**
     * What the reader asks of the ring families (which live above this floor) about a ring index
     * entry's family code and parameter word, so that it checks them in its order.
     */
    public interface Families {
        /** {@return whether a family has code {@code code}} */
        boolean known(int code);

        /** {@return the known codes for an error message: {@code 1 = v1 or 2 = v2}} */
        String codes();

        /** {@return why family {@code code} cannot have parameter word {@code parameter}, or null when it can} */
        String parameterProblem(int code, int parameter);

        /** {@return the version's name ({@code v2:16}) for messages} */
        String name(Version version);
    }
}
