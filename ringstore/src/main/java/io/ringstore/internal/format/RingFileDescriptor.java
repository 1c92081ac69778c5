package io.ringstore.internal.format;

import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Byte layout and limits of a ring file, declared once: {@link RingFileWriter} writes and
 * {@link RingFileReader} reads every field through these constants. FORMAT.md is the normative
 * description and names the same fields.
 *
 * <p>Every multi-byte field is little-endian and unaligned. Each {@code *_OFFSET} is the previous
 * offset plus the previous field's {@code *_LENGTH}, so fields cannot silently overlap.
 *
 * <pre>
 * File        := Header BackendTable FeatureTable RingIndex MetadataCrc Padding Segments
 * BackendTable:= Backend^backendCount            Backend := 10 bytes + address [+ 12 bytes health]
 * FeatureTable:= Feature^featureCount            Feature := nameLength u8, name bytes[nameLength]
 * RingIndex   := RingEntry^ringCount             ringCount = versionCount × 2^featureCount
 * MetadataCrc := u32 CRC-32C of every byte before it
 * Segment     := Point^pointCount, at an aligned offset
 *
 * Header (128 bytes)
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                     magic "RINGSTOR" (8)                       |  0
 *  +-------------------------------+-------------------------------+
 *  |   formatVersion u16           |   flags u16                   |  8
 *  +-------------------------------+-------------------------------+
 *  |                        headerLength u32                        | 12
 *  +---------------------------------------------------------------+
 *  |                        generation u64                          | 16
 *  +---------------------------------------------------------------+
 *  |                        fileLength u64                          | 24
 *  +---------------------------------------------------------------+
 *  |                   inputDigest SHA-256 (32)                     | 32
 *  +---------------------------------------------------------------+
 *  |                        backendCount u32                        | 64
 *  +-------------------------------+-------------------------------+
 *  |   featureCount u16            |   versionCount u16            | 68
 *  +-------------------------------+-------------------------------+
 *  |                        ringCount u32                           | 72
 *  +---------------------------------------------------------------+
 *  |                        segmentCount u32                        | 76
 *  +---------------------------------------------------------------+
 *  |  backendTableOffset u64 | backendTableLength u64               | 80
 *  |  featureTableOffset u64 | featureTableLength u64               | 96
 *  |  ringIndexOffset u64    | ringIndexLength u64                  | 112
 *  +---------------------------------------------------------------+ 128
 *
 * Backend                          RingEntry (40 bytes)
 *  +----------------------+ 0       +-----------------------------+ 0
 *  | weight u32           |         | featureMask u32             |
 *  +----------------------+ 4       +--------------+--------------+ 4
 *  | featureMask u32      |         | algorithm u8 | reserved (3) |
 *  | (v2: bits 16-31 are  |         |              |              |
 *  |  backend flags)      |         |              |              |
 *  +----------------------+ 8       +--------------+--------------+ 8
 *  | addressLength u16    |         | pointMultiple u32           |
 *  +----------------------+ 10      +-----------------------------+ 12
 *  | address (ASCII) ...  |         | pointCount u32              |
 *  +----------------------+ 10+n    +-----------------------------+ 16
 *  | flag health only:    |         | segmentOffset u64           |
 *  | maxFails u32         |         +-----------------------------+ 24
 *  | failTimeout u32 (s)  |
 *  | maxConns u32         |
 *  +----------------------+ 22+n
 * Point (6 bytes)
 *  +----------+------------+ 0      | segmentLength u64           |
 *  | hash u32 | backend u16|        +-----------------------------+ 32
 *  +----------+------------+ 6      | segmentCrc u32 (CRC-32C)    |
 *                                   +-----------------------------+ 36
 *                                   | ringPoints u32 (v3)         |
 *                                   +-----------------------------+ 40
 * </pre>
 */
public final class RingFileDescriptor {
    private RingFileDescriptor() {}

    public static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    public static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    public static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    public static final ValueLayout.OfByte U8 = ValueLayout.JAVA_BYTE;

    private static final int U8_LENGTH = 1;
    private static final int U16_LENGTH = 2;
    private static final int U32_LENGTH = 4;
    private static final int U64_LENGTH = 8;

    /** "RINGSTOR" in ASCII. */
    public static final byte[] MAGIC = {'R', 'I', 'N', 'G', 'S', 'T', 'O', 'R'};
    /** What a writer writes when no backend has a flag: the file bytes of such fleets never change. */
    public static final int FORMAT_VERSION = 1;
    /**
     * What a writer writes when a backend has a flag ({@link #BACKEND_FLAG_DOWN}): a version-1 reader
     * would take the flag for a feature, so it must refuse the file ("unsupported format version 2").
     */
    public static final int FORMAT_VERSION_BACKEND_FLAGS = 2;
    /**
     * What a writer writes when a ring is stored other than as its own strictly increasing points
     * ({@link #STORAGE_POINTS_WITH_TIES}, {@link #STORAGE_VIEW}): a version-2 reader would take the
     * storage byte for a non-zero reserved byte, so it must refuse the file by its version.
     */
    public static final int FORMAT_VERSION_VIEWS = 3;
    /**
     * What a writer writes when a ring has 64-bit points (Envoy's and gRPC's families): each point's
     * low word follows the segment's 6-byte points, and a two-parameter family's second parameter is in
     * the entry's ringPoints word; a version-3 reader must refuse the file by its version.
     */
    public static final int FORMAT_VERSION_WIDE = 4;

    public static final int MIN_SUPPORTED_VERSION = 1;
    public static final int MAX_SUPPORTED_VERSION = 4;
    /** Bytes of a point's low word in a 64-bit ring (after all of the segment's 6-byte points). */
    public static final int LOW_WORD_LENGTH = 4;

    // ---- Header ----
    public static final int MAGIC_OFFSET = 0;
    public static final int MAGIC_LENGTH = 8;
    public static final int FORMAT_VERSION_OFFSET = MAGIC_OFFSET + MAGIC_LENGTH;
    public static final int FORMAT_VERSION_LENGTH = U16_LENGTH;
    public static final int FLAGS_OFFSET = FORMAT_VERSION_OFFSET + FORMAT_VERSION_LENGTH;
    public static final int FLAGS_LENGTH = U16_LENGTH;
    public static final int HEADER_LENGTH_OFFSET = FLAGS_OFFSET + FLAGS_LENGTH;
    public static final int HEADER_LENGTH_LENGTH = U32_LENGTH;
    public static final int GENERATION_OFFSET = HEADER_LENGTH_OFFSET + HEADER_LENGTH_LENGTH;
    public static final int GENERATION_LENGTH = U64_LENGTH;
    public static final int FILE_LENGTH_OFFSET = GENERATION_OFFSET + GENERATION_LENGTH;
    public static final int FILE_LENGTH_LENGTH = U64_LENGTH;
    public static final int INPUT_DIGEST_OFFSET = FILE_LENGTH_OFFSET + FILE_LENGTH_LENGTH;
    /** SHA-256. */
    public static final int INPUT_DIGEST_LENGTH = 32;

    public static final int BACKEND_COUNT_OFFSET = INPUT_DIGEST_OFFSET + INPUT_DIGEST_LENGTH;
    public static final int BACKEND_COUNT_LENGTH = U32_LENGTH;
    public static final int FEATURE_COUNT_OFFSET = BACKEND_COUNT_OFFSET + BACKEND_COUNT_LENGTH;
    public static final int FEATURE_COUNT_LENGTH = U16_LENGTH;
    public static final int VERSION_COUNT_OFFSET = FEATURE_COUNT_OFFSET + FEATURE_COUNT_LENGTH;
    public static final int VERSION_COUNT_LENGTH = U16_LENGTH;
    public static final int RING_COUNT_OFFSET = VERSION_COUNT_OFFSET + VERSION_COUNT_LENGTH;
    public static final int RING_COUNT_LENGTH = U32_LENGTH;
    public static final int SEGMENT_COUNT_OFFSET = RING_COUNT_OFFSET + RING_COUNT_LENGTH;
    public static final int SEGMENT_COUNT_LENGTH = U32_LENGTH;
    public static final int BACKEND_TABLE_OFFSET_OFFSET = SEGMENT_COUNT_OFFSET + SEGMENT_COUNT_LENGTH;
    public static final int BACKEND_TABLE_OFFSET_LENGTH = U64_LENGTH;
    public static final int BACKEND_TABLE_LENGTH_OFFSET = BACKEND_TABLE_OFFSET_OFFSET + BACKEND_TABLE_OFFSET_LENGTH;
    public static final int BACKEND_TABLE_LENGTH_LENGTH = U64_LENGTH;
    public static final int FEATURE_TABLE_OFFSET_OFFSET = BACKEND_TABLE_LENGTH_OFFSET + BACKEND_TABLE_LENGTH_LENGTH;
    public static final int FEATURE_TABLE_OFFSET_LENGTH = U64_LENGTH;
    public static final int FEATURE_TABLE_LENGTH_OFFSET = FEATURE_TABLE_OFFSET_OFFSET + FEATURE_TABLE_OFFSET_LENGTH;
    public static final int FEATURE_TABLE_LENGTH_LENGTH = U64_LENGTH;
    public static final int RING_INDEX_OFFSET_OFFSET = FEATURE_TABLE_LENGTH_OFFSET + FEATURE_TABLE_LENGTH_LENGTH;
    public static final int RING_INDEX_OFFSET_LENGTH = U64_LENGTH;
    public static final int RING_INDEX_LENGTH_OFFSET = RING_INDEX_OFFSET_OFFSET + RING_INDEX_OFFSET_LENGTH;
    public static final int RING_INDEX_LENGTH_LENGTH = U64_LENGTH;
    /** 128; the backend table starts here. */
    public static final int HEADER_LENGTH = RING_INDEX_LENGTH_OFFSET + RING_INDEX_LENGTH_LENGTH;

    // ---- Backend record ----
    public static final int BACKEND_WEIGHT_OFFSET = 0;
    public static final int BACKEND_WEIGHT_LENGTH = U32_LENGTH;
    public static final int BACKEND_FEATURES_OFFSET = BACKEND_WEIGHT_OFFSET + BACKEND_WEIGHT_LENGTH;
    public static final int BACKEND_FEATURES_LENGTH = U32_LENGTH;
    public static final int BACKEND_ADDRESS_LENGTH_OFFSET = BACKEND_FEATURES_OFFSET + BACKEND_FEATURES_LENGTH;
    public static final int BACKEND_ADDRESS_LENGTH_LENGTH = U16_LENGTH;
    public static final int BACKEND_ADDRESS_OFFSET = BACKEND_ADDRESS_LENGTH_OFFSET + BACKEND_ADDRESS_LENGTH_LENGTH;
    /**
     * The backend record's featureMask u32 holds the feature bits below this bit (at most
     * {@link #MAX_FEATURES} features) and, from format version 2, backend flags at and above it.
     */
    public static final int BACKEND_FLAGS_SHIFT = 16;
    /** Feature bits of a backend's featureMask field. */
    public static final int BACKEND_FEATURE_BITS = (1 << BACKEND_FLAGS_SHIFT) - 1;
    /** nginx's {@code down}: the backend keeps its points; failover skips it. */
    public static final int BACKEND_FLAG_DOWN = 1 << BACKEND_FLAGS_SHIFT;
    /** The backend has a name: its address field is the address, a zero byte, then the name (printable ASCII). */
    public static final int BACKEND_FLAG_NAMED = 1 << (BACKEND_FLAGS_SHIFT + 1);
    /**
     * The backend has health settings other than nginx's defaults: {@link #BACKEND_HEALTH_LENGTH} bytes
     * follow its address field (max_fails, fail_timeout in seconds, max_conns).
     */
    public static final int BACKEND_FLAG_HEALTH = 1 << (BACKEND_FLAGS_SHIFT + 2);
    /** Every flag defined; a reader refuses any other bit at or above {@link #BACKEND_FLAGS_SHIFT}. */
    public static final int BACKEND_FLAGS_KNOWN = BACKEND_FLAG_DOWN | BACKEND_FLAG_NAMED | BACKEND_FLAG_HEALTH;
    /** 10: a backend record is this plus its address length (plus the health fields with flag health). */
    public static final int BACKEND_FIXED_LENGTH = BACKEND_ADDRESS_OFFSET;

    // ---- Backend health fields (flag health), from the end of the address field ----
    public static final int HEALTH_MAX_FAILS_OFFSET = 0;
    public static final int HEALTH_MAX_FAILS_LENGTH = U32_LENGTH;
    /** Seconds, as nginx's {@code fail_timeout} (a whole number of seconds). */
    public static final int HEALTH_FAIL_TIMEOUT_OFFSET = HEALTH_MAX_FAILS_OFFSET + HEALTH_MAX_FAILS_LENGTH;

    public static final int HEALTH_FAIL_TIMEOUT_LENGTH = U32_LENGTH;
    public static final int HEALTH_MAX_CONNS_OFFSET = HEALTH_FAIL_TIMEOUT_OFFSET + HEALTH_FAIL_TIMEOUT_LENGTH;
    public static final int HEALTH_MAX_CONNS_LENGTH = U32_LENGTH;
    /** 12: the health fields after a backend's address field, with flag health. */
    public static final int BACKEND_HEALTH_LENGTH = HEALTH_MAX_CONNS_OFFSET + HEALTH_MAX_CONNS_LENGTH;
    /** The largest value of each health field (nginx reads them into an {@code ngx_int_t}/{@code time_t}; ours are ints). */
    public static final long MAX_HEALTH_VALUE = Integer.MAX_VALUE;

    // ---- Feature record ----
    public static final int FEATURE_NAME_LENGTH_OFFSET = 0;
    public static final int FEATURE_NAME_LENGTH_LENGTH = U8_LENGTH;
    public static final int FEATURE_NAME_OFFSET = FEATURE_NAME_LENGTH_OFFSET + FEATURE_NAME_LENGTH_LENGTH;
    /** 1: a feature record is this plus its name length. */
    public static final int FEATURE_FIXED_LENGTH = FEATURE_NAME_OFFSET;

    // ---- Ring index entry ----
    public static final int ENTRY_FEATURE_MASK_OFFSET = 0;
    public static final int ENTRY_FEATURE_MASK_LENGTH = U32_LENGTH;
    public static final int ENTRY_ALGORITHM_OFFSET = ENTRY_FEATURE_MASK_OFFSET + ENTRY_FEATURE_MASK_LENGTH;
    public static final int ENTRY_ALGORITHM_LENGTH = U8_LENGTH;
    /** How the ring is stored ({@code STORAGE_*}); from format version 3, reserved (0) before. */
    public static final int ENTRY_STORAGE_OFFSET = ENTRY_ALGORITHM_OFFSET + ENTRY_ALGORITHM_LENGTH;

    public static final int ENTRY_STORAGE_LENGTH = U8_LENGTH;
    /** A u16, 0. */
    public static final int ENTRY_RESERVED1_OFFSET = ENTRY_STORAGE_OFFSET + ENTRY_STORAGE_LENGTH;

    public static final int ENTRY_RESERVED1_LENGTH = U16_LENGTH;
    public static final int ENTRY_POINT_MULTIPLE_OFFSET = ENTRY_RESERVED1_OFFSET + ENTRY_RESERVED1_LENGTH;
    public static final int ENTRY_POINT_MULTIPLE_LENGTH = U32_LENGTH;
    public static final int ENTRY_POINT_COUNT_OFFSET = ENTRY_POINT_MULTIPLE_OFFSET + ENTRY_POINT_MULTIPLE_LENGTH;
    public static final int ENTRY_POINT_COUNT_LENGTH = U32_LENGTH;
    public static final int ENTRY_SEGMENT_OFFSET_OFFSET = ENTRY_POINT_COUNT_OFFSET + ENTRY_POINT_COUNT_LENGTH;
    public static final int ENTRY_SEGMENT_OFFSET_LENGTH = U64_LENGTH;
    public static final int ENTRY_SEGMENT_LENGTH_OFFSET = ENTRY_SEGMENT_OFFSET_OFFSET + ENTRY_SEGMENT_OFFSET_LENGTH;
    public static final int ENTRY_SEGMENT_LENGTH_LENGTH = U64_LENGTH;
    /** CRC-32C of the segment's bytes. */
    public static final int ENTRY_SEGMENT_CRC_OFFSET = ENTRY_SEGMENT_LENGTH_OFFSET + ENTRY_SEGMENT_LENGTH_LENGTH;

    public static final int ENTRY_SEGMENT_CRC_LENGTH = U32_LENGTH;
    /**
     * The ring's own point count (its distinct hashes) when that differs from the segment's: for
     * {@link #STORAGE_POINTS_WITH_TIES} and {@link #STORAGE_VIEW}; 0 for {@link #STORAGE_POINTS}
     * (reserved, 0, before format version 3).
     */
    public static final int ENTRY_RING_POINTS_OFFSET = ENTRY_SEGMENT_CRC_OFFSET + ENTRY_SEGMENT_CRC_LENGTH;

    public static final int ENTRY_RING_POINTS_LENGTH = U32_LENGTH;
    /** 40. */
    public static final int ENTRY_LENGTH = ENTRY_RING_POINTS_OFFSET + ENTRY_RING_POINTS_LENGTH;

    // ---- Ring storage (the entry's storage byte) ----

    /** The segment holds the ring's points, one per hash, strictly increasing: formats 1 and 2 know only this. */
    public static final int STORAGE_POINTS = 0;
    /**
     * The segment holds every point of every member, equal hashes included, sorted by (hash, tie rank):
     * the ring's point at a hash is the first stored there. Views of the version read this segment.
     */
    public static final int STORAGE_POINTS_WITH_TIES = 1;
    /**
     * The ring stores no points: it reads its version's mask-0 segment (stored with ties), keeping the
     * points whose backend is a member. A lookup walks from the key's point to the first member point.
     */
    public static final int STORAGE_VIEW = 2;
    /**
     * As {@link #STORAGE_POINTS_WITH_TIES}, the points followed by the segment's <em>feature bits</em>:
     * for each block of {@value #FEATURE_BITS_BLOCK_POINTS} points, one u64 a feature of the file, bit j
     * of feature i's word set when point 64·block + j's backend has feature i. A view of this segment
     * finds its first member point from the key's by ANDing its features' words, a block at a time,
     * instead of reading points one by one. FORMAT.md, "Feature bits".
     */
    public static final int STORAGE_POINTS_WITH_FEATURE_BITS = 3;
    /**
     * As {@link #STORAGE_POINTS_WITH_FEATURE_BITS}, the same words in another order: by feature, then by
     * block (feature i's word of block b at {@code 8 · (i · B + b)} after the points, B blocks), so that
     * the words one feature's views read lie together, B · 8 bytes (a 48th of the points' bytes) rather
     * than one word in every block of all the features' words. What writers write since issue 32:
     * a view then reads a word from a table small enough to stay in the cache and the TLB.
     * FORMAT.md, "Feature bits".
     */
    public static final int STORAGE_POINTS_WITH_FEATURE_BITS_BY_FEATURE = 4;
    /** The highest storage code a reader of this release knows. */
    public static final int MAX_STORAGE = STORAGE_POINTS_WITH_FEATURE_BITS_BY_FEATURE;

    /** Points a block of feature bits covers: one u64 word per feature. */
    public static final int FEATURE_BITS_BLOCK_POINTS = 64;
    /** Bytes of one feature's word in a block. */
    public static final int FEATURE_BITS_WORD_LENGTH = U64_LENGTH;

    /** {@return the bytes of the feature bits after {@code points} points of a file of {@code features} features} */
    public static long featureBitsLength(long points, int features) {
        return (points + FEATURE_BITS_BLOCK_POINTS - 1)
                / FEATURE_BITS_BLOCK_POINTS
                * FEATURE_BITS_WORD_LENGTH
                * features;
    }

    /** {@return whether a ring of {@code storage} keeps the points of equal hashes (storage 1, 3 and 4): what views read} */
    public static boolean keepsTies(int storage) {
        return storage == STORAGE_POINTS_WITH_TIES || hasFeatureBits(storage);
    }

    /** {@return whether a segment of {@code storage} has feature bits after its points (storage 3 and 4)} */
    public static boolean hasFeatureBits(int storage) {
        return storage == STORAGE_POINTS_WITH_FEATURE_BITS || storage == STORAGE_POINTS_WITH_FEATURE_BITS_BY_FEATURE;
    }

    /**
     * {@return the byte offset, from the first byte of the feature bits, of feature {@code feature}'s word
     * of block {@code block}: by block for storage 3, by feature for storage 4}
     *
     * @param storage  3 or 4
     * @param blocks   the blocks of the segment's bits: ⌈points / 64⌉
     * @param features the file's features
     * @param block    0 ≤ block &lt; blocks
     * @param feature  0 ≤ feature &lt; features
     */
    public static long featureWordOffset(int storage, long blocks, int features, long block, int feature) {
        return FEATURE_BITS_WORD_LENGTH
                * (storage == STORAGE_POINTS_WITH_FEATURE_BITS_BY_FEATURE
                        ? feature * blocks + block
                        : block * features + feature);
    }

    /** The CRC-32C after the ring index, over every byte before it. */
    public static final int METADATA_CRC_LENGTH = U32_LENGTH;

    // ---- Points ----
    public static final int POINT_HASH_OFFSET = 0;
    public static final int POINT_HASH_LENGTH = U32_LENGTH;
    public static final int POINT_BACKEND_OFFSET = POINT_HASH_OFFSET + POINT_HASH_LENGTH;
    public static final int POINT_BACKEND_LENGTH = U16_LENGTH;
    /** 6. */
    public static final int POINT_LENGTH = POINT_BACKEND_OFFSET + POINT_BACKEND_LENGTH;

    // ---- Limits ----

    /** The most backends a file can hold: a point stores its backend index in 16 bits. */
    public static final int MAX_BACKENDS = 0xFFFF;
    /** The most feature names: a file holds 2^F rings per version, and masks are 32 bits. */
    public static final int MAX_FEATURES = 16;
    /** The most versions (algorithm and point multiple pairs) one file may hold. */
    public static final int MAX_VERSIONS = 16;
    /** The largest weight (nginx itself has no smaller limit that we rely on); the field is a u32. */
    public static final long MAX_WEIGHT = Integer.MAX_VALUE;
    /** The most points one ring may hold: a Java array of packed points must fit while building. */
    public static final long MAX_POINTS_PER_RING = Integer.MAX_VALUE - 8;
    /** The longest address: its length is a u16. */
    public static final int MAX_ADDRESS_LENGTH = 0xFFFF;
    /** The longest feature name; its length is a u8, which would allow up to 255. */
    public static final int MAX_FEATURE_NAME_LENGTH = 64;
    /** What a feature name is made of, and its length. */
    public static final String FEATURE_NAME_REGEX = "[A-Za-z0-9_.-]{1," + MAX_FEATURE_NAME_LENGTH + "}";
    /** {@link #FEATURE_NAME_REGEX} in words, for error messages. */
    public static final String FEATURE_NAME_RULE = "1-" + MAX_FEATURE_NAME_LENGTH + " of A-Z a-z 0-9 _ . -";

    // ---- Alignment (a writer's choice; readers do not check it) ----

    /**
     * Segments of at least this many bytes start on a page boundary; smaller ones on a cache line, so
     * that many small feature rings do not pay up to a page of padding each.
     */
    public static final long PAGE_ALIGN_THRESHOLD = 1024 * 1024;

    public static final long PAGE_ALIGNMENT = 4096;
    public static final long LINE_ALIGNMENT = 64;

    public static long alignmentFor(long segmentLength) {
        return segmentLength >= PAGE_ALIGN_THRESHOLD ? PAGE_ALIGNMENT : LINE_ALIGNMENT;
    }

    public static long align(long offset, long alignment) {
        return (offset + alignment - 1) & -alignment;
    }
}
