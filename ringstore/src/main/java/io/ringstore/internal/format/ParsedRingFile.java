package io.ringstore.internal.format;

import io.ringstore.internal.BackendRecord;
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
public record ParsedRingFile(
        int formatVersion,
        int headerLength,
        long generation,
        byte[] inputDigest,
        List<BackendRecord> backends,
        List<String> features,
        List<Version> versions,
        long metadataLength,
        int metadataCrc,
        List<Entry> entries,
        int segmentCount) {

    /**
     * A version as the ring index stores it: the family code and the parameter word.
     *
     * @param family    the entry's family code byte
     * @param parameter its parameter word (the point multiple of v1 and v2)
     */
    public record Version(int family, int parameter, int parameter2) {
        /** A version of a one-parameter family. */
        public Version(int family, int parameter) {
            this(family, parameter, 0);
        }

        // Written out: a record's own equals and hashCode bootstrap through ObjectMethods, which spins
        // seven method handle classes in a fresh JVM (the AOT cache does not keep them): 5-7 ms of
        // every command that opens a file.
        @Override
        public boolean equals(Object o) {
            return o instanceof Version v
                    && family == v.family
                    && parameter == v.parameter
                    && parameter2 == v.parameter2;
        }

        @Override
        public int hashCode() {
            return (31 * family + parameter) * 31 + parameter2;
        }
    }

    /**
     * One ring index entry; an empty ring has offset, length and CRC 0. {@code pointCount} is the
     * segment's; {@code ringPoints} the ring's own (equal for {@code STORAGE_POINTS}).
     */
    public record Entry(
            int mask, Version version, long offset, long length, int pointCount, int crc, int storage, int ringPoints) {
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

        /** {@return how many parameters family {@code code} has: 1, or 2 (the second in the entry's ringPoints word, format 4)} */
        default int parameterCount(int code) {
            return 1;
        }

        /** {@return whether family {@code code}'s rings may be kept with ties or as views (storage 1, 2)} */
        default boolean viewable(int code) {
            return true;
        }

        /** {@return whether family {@code code}'s points are 64-bit (a low word a point after the 6-byte points; format 4)} */
        default boolean wide(int code) {
            return false;
        }

        /** {@return why family {@code code} cannot have these two parameters, or null} */
        default String parameterProblem(int code, int parameter, int parameter2) {
            return parameterProblem(code, parameter);
        }

        /**
         * {@return the most points version {@code v}'s ring of backends weighing {@code totalWeight} in all,
         * {@code backends} of them, can have (saturating at {@link Long#MAX_VALUE}): weight × the parameter
         * word unless the family says}
         */
        default long pointBound(Version v, long totalWeight, int backends) {
            return v.parameter() == 0
                    ? 0
                    : totalWeight > Long.MAX_VALUE / v.parameter() ? Long.MAX_VALUE : totalWeight * v.parameter();
        }
    }
}
