package io.ringstore.internal;

import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Byte layout of a ring file; FORMAT.md is the normative description and names these constants.
 * Every multi-byte field is little-endian. Each offset is the previous offset plus the previous size.
 *
 * <pre>
 * File       := Header BackendTable FeatureTable RingIndex MetadataCrc Padding Segments
 * Header     := 128 bytes, fields below
 * Backend    := weight u32, featureMask u32, addressLength u16, address bytes[addressLength]
 * Feature    := nameLength u8, name bytes[nameLength]
 * RingEntry  := 40 bytes, fields below; RingIndex = versionCount × 2^featureCount entries
 * MetadataCrc:= u32 CRC-32C of every byte before it
 * Segment    := pointCount × Point, at an aligned offset; Point := hash u32, backend u16
 * </pre>
 */
public final class RingFormat {
    private RingFormat() {
    }

    public static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    public static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    public static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    public static final ValueLayout.OfByte U8 = ValueLayout.JAVA_BYTE;

    /** "RINGSTOR" in ASCII. */
    public static final byte[] MAGIC = {'R', 'I', 'N', 'G', 'S', 'T', 'O', 'R'};
    public static final int FORMAT_VERSION = 1;
    public static final int MIN_SUPPORTED_VERSION = 1;
    public static final int MAX_SUPPORTED_VERSION = 1;

    // ---- Header ----
    public static final int MAGIC_OFFSET = 0;
    public static final int MAGIC_LENGTH = 8;
    public static final int FORMAT_VERSION_OFFSET = MAGIC_OFFSET + MAGIC_LENGTH;            // u16
    public static final int FLAGS_OFFSET = FORMAT_VERSION_OFFSET + 2;                        // u16, must be 0
    public static final int HEADER_LENGTH_OFFSET = FLAGS_OFFSET + 2;                         // u32
    public static final int GENERATION_OFFSET = HEADER_LENGTH_OFFSET + 4;                    // u64
    public static final int FILE_LENGTH_OFFSET = GENERATION_OFFSET + 8;                      // u64
    public static final int INPUT_DIGEST_OFFSET = FILE_LENGTH_OFFSET + 8;                    // 32 bytes SHA-256
    public static final int INPUT_DIGEST_LENGTH = 32;
    public static final int BACKEND_COUNT_OFFSET = INPUT_DIGEST_OFFSET + INPUT_DIGEST_LENGTH; // u32
    public static final int FEATURE_COUNT_OFFSET = BACKEND_COUNT_OFFSET + 4;                 // u16
    public static final int VERSION_COUNT_OFFSET = FEATURE_COUNT_OFFSET + 2;                 // u16
    public static final int RING_COUNT_OFFSET = VERSION_COUNT_OFFSET + 2;                    // u32
    public static final int SEGMENT_COUNT_OFFSET = RING_COUNT_OFFSET + 4;                    // u32
    public static final int BACKEND_TABLE_OFFSET_OFFSET = SEGMENT_COUNT_OFFSET + 4;          // u64
    public static final int BACKEND_TABLE_LENGTH_OFFSET = BACKEND_TABLE_OFFSET_OFFSET + 8;   // u64
    public static final int FEATURE_TABLE_OFFSET_OFFSET = BACKEND_TABLE_LENGTH_OFFSET + 8;   // u64
    public static final int FEATURE_TABLE_LENGTH_OFFSET = FEATURE_TABLE_OFFSET_OFFSET + 8;   // u64
    public static final int RING_INDEX_OFFSET_OFFSET = FEATURE_TABLE_LENGTH_OFFSET + 8;      // u64
    public static final int RING_INDEX_LENGTH_OFFSET = RING_INDEX_OFFSET_OFFSET + 8;         // u64
    public static final int HEADER_LENGTH = RING_INDEX_LENGTH_OFFSET + 8;                    // 128

    // ---- Backend record ----
    public static final int BACKEND_WEIGHT_OFFSET = 0;                                       // u32
    public static final int BACKEND_FEATURES_OFFSET = BACKEND_WEIGHT_OFFSET + 4;             // u32
    public static final int BACKEND_ADDRESS_LENGTH_OFFSET = BACKEND_FEATURES_OFFSET + 4;     // u16
    public static final int BACKEND_ADDRESS_OFFSET = BACKEND_ADDRESS_LENGTH_OFFSET + 2;      // bytes
    public static final int BACKEND_FIXED_LENGTH = BACKEND_ADDRESS_OFFSET;                   // 10

    // ---- Ring index entry ----
    public static final int ENTRY_FEATURE_MASK_OFFSET = 0;                                   // u32
    public static final int ENTRY_ALGORITHM_OFFSET = ENTRY_FEATURE_MASK_OFFSET + 4;          // u8
    public static final int ENTRY_RESERVED1_OFFSET = ENTRY_ALGORITHM_OFFSET + 1;             // u8 + u16, must be 0
    public static final int ENTRY_POINT_MULTIPLE_OFFSET = ENTRY_RESERVED1_OFFSET + 3;        // u32
    public static final int ENTRY_POINT_COUNT_OFFSET = ENTRY_POINT_MULTIPLE_OFFSET + 4;      // u32
    public static final int ENTRY_SEGMENT_OFFSET_OFFSET = ENTRY_POINT_COUNT_OFFSET + 4;      // u64
    public static final int ENTRY_SEGMENT_LENGTH_OFFSET = ENTRY_SEGMENT_OFFSET_OFFSET + 8;   // u64
    public static final int ENTRY_SEGMENT_CRC_OFFSET = ENTRY_SEGMENT_LENGTH_OFFSET + 8;      // u32 CRC-32C
    public static final int ENTRY_RESERVED2_OFFSET = ENTRY_SEGMENT_CRC_OFFSET + 4;           // u32, must be 0
    public static final int ENTRY_LENGTH = ENTRY_RESERVED2_OFFSET + 4;                       // 40

    public static final int METADATA_CRC_LENGTH = 4;

    // ---- Points ----
    public static final int POINT_HASH_OFFSET = 0;                                           // u32
    public static final int POINT_BACKEND_OFFSET = POINT_HASH_OFFSET + 4;                    // u16
    public static final int POINT_LENGTH = POINT_BACKEND_OFFSET + 2;                         // 6

    /**
     * Segments of at least this many bytes start on a page boundary; smaller ones on a cache line, so
     * that many small feature rings do not pay up to a page of padding each.
     */
    public static final long PAGE_ALIGN_THRESHOLD = 1024 * 1024;
    public static final long PAGE_ALIGNMENT = 4096;
    public static final long LINE_ALIGNMENT = 64;

    /** The most points one ring may hold: a Java array of packed points must fit while building. */
    public static final long MAX_POINTS_PER_RING = Integer.MAX_VALUE - 8;
    /** The most versions (algorithm and point multiple pairs) one file may hold. */
    public static final int MAX_VERSIONS = 16;

    public static long alignmentFor(long segmentLength) {
        return segmentLength >= PAGE_ALIGN_THRESHOLD ? PAGE_ALIGNMENT : LINE_ALIGNMENT;
    }

    public static long align(long offset, long alignment) {
        return (offset + alignment - 1) & -alignment;
    }
}
