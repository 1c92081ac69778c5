package io.ringstore.internal.format;

import static io.ringstore.internal.format.RingFileDescriptor.*;

import io.ringstore.family.Families;
import io.ringstore.family.RingFamily;
import io.ringstore.family.RingVersion;
import io.ringstore.family.WeightRule;
import io.ringstore.internal.BackendRecord;
import io.ringstore.internal.FeatureMasks;
import io.ringstore.internal.ServerAddress;
import io.ringstore.internal.ServerParameters;
import io.ringstore.internal.TextLines;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.zip.CRC32C;

/**
 * Reads and validates a ring file's metadata (header, tables, ring index, metadata CRC) in
 * O(backends + rings); every count is checked against the file size before use. Segments are left to
 * the caller's {@code verify}.
 */
public final class RingFileReader {
    private static final Pattern FEATURE_NAME = Pattern.compile(FEATURE_NAME_REGEX);

    private final Path path;
    private final MemorySegment f;
    private final long size;

    private RingFileReader(Path path, MemorySegment f) {
        this.path = path;
        this.f = f;
        this.size = f.byteSize();
    }

    /**
     * Parses the mapped file {@code f} (at least {@link RingFileDescriptor#HEADER_LENGTH} bytes);
     * {@code path} names it in errors; the ring families ({@link Families}) judge its codes and parameters.
     */
    public static ParsedRingFile read(Path path, MemorySegment f) throws RingFormatException {
        return new RingFileReader(path, f).parse();
    }

    /**
     * CRC-32C of mapped bytes, read through a heap buffer: if the file is truncated under the mapping,
     * the copy raises an {@link InternalError}, where the CRC intrinsic reading the mapping directly
     * would crash the JVM with SIGBUS (seen on JDK 25).
     */
    public static int crc32c(MemorySegment seg) {
        CRC32C crc = new CRC32C();
        byte[] chunk = new byte[(int) Math.min(seg.byteSize(), 1 << 20)];
        MemorySegment chunkSegment = MemorySegment.ofArray(chunk);
        for (long off = 0; off < seg.byteSize(); off += chunk.length) {
            int n = (int) Math.min(chunk.length, seg.byteSize() - off);
            // Segment to segment: the copy to an array switches on the array's type by a pattern switch,
            // whose bootstrap a fresh JVM spins (the AOT cache does not keep it), 3-4 ms of a lookup.
            MemorySegment.copy(seg, off, chunkSegment, 0, n);
            crc.update(chunk, 0, n);
        }
        return (int) crc.getValue();
    }

    /** The name FORMAT.md gives a storage code. */
    public static String storageName(int storage) {
        return switch (storage) {
            case STORAGE_POINTS -> "points";
            case STORAGE_POINTS_WITH_TIES -> "points with ties";
            case STORAGE_VIEW -> "view";
            case STORAGE_POINTS_WITH_FEATURE_BITS -> "points with ties and feature bits";
            case STORAGE_POINTS_WITH_FEATURE_BITS_BY_FEATURE -> "points with ties and feature bits by feature";
            default -> "storage " + storage;
        };
    }

    public static String hex(int v) {
        return String.format("0x%08x", v);
    }

    private RingFormatException bad(long offset, String reason) {
        return new RingFormatException(path, offset, reason);
    }

    private long u32(long at) {
        return Integer.toUnsignedLong(f.get(U32, at));
    }

    private int u16(long at) {
        return Short.toUnsignedInt(f.get(U16, at));
    }

    private long u64(long at, String what) throws RingFormatException {
        long v = f.get(U64, at);
        if (v < 0 || v > size) {
            throw bad(
                    at,
                    what + " " + Long.toUnsignedString(v) + " is beyond the file's " + size
                            + " bytes (corrupt header?)");
        }
        return v;
    }

    /** Reads a u64 field that must be {@code expected}; {@code why} says, after the name, what it must be. */
    private long u64Expected(long at, String what, long expected, String why) throws RingFormatException {
        long v = u64(at, what);
        expect(at, v, expected, what + why);
        return v;
    }

    private void expect(long at, long actual, long expected, String what) throws RingFormatException {
        if (actual != expected) {
            throw bad(at, what + ": expected " + expected + ", found " + actual);
        }
    }

    private ParsedRingFile parse() throws RingFormatException {
        byte[] magic = f.asSlice(MAGIC_OFFSET, MAGIC_LENGTH).toArray(U8);
        if (!Arrays.equals(magic, MAGIC)) {
            throw bad(
                    MAGIC_OFFSET,
                    "bad magic: expected \"RINGSTOR\", found \"" + TextLines.printable(magic)
                            + "\" (not a ring file?)");
        }
        int version = u16(FORMAT_VERSION_OFFSET);
        if (version < MIN_SUPPORTED_VERSION || version > MAX_SUPPORTED_VERSION) {
            throw bad(
                    FORMAT_VERSION_OFFSET,
                    "unsupported format version " + version + " (this reader supports " + MIN_SUPPORTED_VERSION + " to "
                            + MAX_SUPPORTED_VERSION + ")");
        }
        expect(
                FLAGS_OFFSET,
                u16(FLAGS_OFFSET),
                0,
                "flags (none are defined in format versions " + MIN_SUPPORTED_VERSION + " to " + MAX_SUPPORTED_VERSION
                        + ")");
        expect(HEADER_LENGTH_OFFSET, u32(HEADER_LENGTH_OFFSET), HEADER_LENGTH, "header length");
        long fileLength = f.get(U64, FILE_LENGTH_OFFSET);
        if (fileLength != size) {
            throw bad(
                    FILE_LENGTH_OFFSET,
                    "header says the file is " + Long.toUnsignedString(fileLength) + " bytes, it is " + size
                            + (size < fileLength ? " (truncated?)" : " (extended or overwritten?)"));
        }
        long generation = f.get(U64, GENERATION_OFFSET);
        byte[] digest = f.asSlice(INPUT_DIGEST_OFFSET, INPUT_DIGEST_LENGTH).toArray(U8);
        long backendCount = u32(BACKEND_COUNT_OFFSET);
        if (backendCount < 1 || backendCount > MAX_BACKENDS) {
            throw bad(BACKEND_COUNT_OFFSET, "backend count " + backendCount + " is outside 1-" + MAX_BACKENDS);
        }
        int featureCount = u16(FEATURE_COUNT_OFFSET);
        if (featureCount > MAX_FEATURES) {
            throw bad(FEATURE_COUNT_OFFSET, "feature count " + featureCount + " is more than " + MAX_FEATURES);
        }
        int versionCount = u16(VERSION_COUNT_OFFSET);
        if (versionCount < 1 || versionCount > MAX_VERSIONS) {
            throw bad(VERSION_COUNT_OFFSET, "version count " + versionCount + " is outside 1-" + MAX_VERSIONS);
        }
        long ringCount = u32(RING_COUNT_OFFSET);
        expect(RING_COUNT_OFFSET, ringCount, (long) versionCount << featureCount, "ring count (versions × 2^features)");
        long segmentCount = u32(SEGMENT_COUNT_OFFSET);
        if (segmentCount > ringCount) {
            throw bad(
                    SEGMENT_COUNT_OFFSET,
                    "segment count " + segmentCount + " is more than the ring count " + ringCount);
        }
        long backendsAt = u64Expected(BACKEND_TABLE_OFFSET_OFFSET, "backend table offset", HEADER_LENGTH, "");
        long backendsLength = u64(BACKEND_TABLE_LENGTH_OFFSET, "backend table length");
        long featuresAt = u64Expected(
                FEATURE_TABLE_OFFSET_OFFSET,
                "feature table offset",
                backendsAt + backendsLength,
                " (end of backend table)");
        long featuresLength = u64(FEATURE_TABLE_LENGTH_OFFSET, "feature table length");
        long indexAt = u64Expected(
                RING_INDEX_OFFSET_OFFSET, "ring index offset", featuresAt + featuresLength, " (end of feature table)");
        long indexLength = u64Expected(
                RING_INDEX_LENGTH_OFFSET,
                "ring index length",
                ringCount * ENTRY_LENGTH,
                " (ring count × " + ENTRY_LENGTH + ")");
        long metadataEnd = indexAt + indexLength;
        if (metadataEnd + METADATA_CRC_LENGTH > size) {
            throw bad(
                    Math.min(metadataEnd, size),
                    "metadata ends at " + (metadataEnd + METADATA_CRC_LENGTH) + ", past the file's end at " + size
                            + " (truncated?)");
        }
        int crc = crc32c(f.asSlice(0, metadataEnd));
        int storedCrc = f.get(U32, metadataEnd);
        if (crc != storedCrc) {
            throw bad(
                    metadataEnd,
                    "metadata checksum mismatch: stored CRC-32C " + hex(storedCrc) + ", computed " + hex(crc)
                            + " over bytes 0-" + metadataEnd + " (corrupted header or tables?)");
        }
        List<String> features = parseFeatures(featuresAt, featuresLength, featureCount);
        List<BackendRecord> backends = parseBackends(backendsAt, backendsLength, (int) backendCount, features, version);
        long segmentsStart = metadataEnd + METADATA_CRC_LENGTH;
        List<RingVersion> versions = new ArrayList<>();
        List<ParsedRingFile.Entry> entries =
                parseIndex(indexAt, (int) ringCount, featureCount, segmentsStart, segmentCount, versions, version);
        checkPointTotals(backends, featureCount, indexAt, entries);
        return new ParsedRingFile(
                version,
                HEADER_LENGTH,
                generation,
                digest,
                List.copyOf(backends),
                features,
                List.copyOf(versions),
                metadataEnd,
                storedCrc,
                entries,
                (int) segmentCount);
    }

    private List<BackendRecord> parseBackends(long at, long length, int count, List<String> features, int formatVersion)
            throws RingFormatException {
        int featureCount = features.size();
        if (length < (long) count * BACKEND_FIXED_LENGTH) {
            throw bad(
                    BACKEND_TABLE_LENGTH_OFFSET,
                    "backend table of " + length + " bytes cannot hold " + count + " backends");
        }
        if (length > Integer.MAX_VALUE - 16) {
            throw bad(
                    BACKEND_TABLE_LENGTH_OFFSET,
                    "backend table of " + length + " bytes is over the 2 GiB this reader reads (corrupt header?)");
        }
        // The table read from one heap copy: plain array reads cost little from the first call on, where a
        // mapped segment's reads go through var handles that a fresh JVM interprets (2,048 backends: ~5 reads each).
        Table t = new Table(f.asSlice(at, length).toArray(U8), at);
        List<BackendRecord> list = new ArrayList<>(count);
        Set<Object> endpoints = new HashSet<>(count * 2);
        long end = at + length;
        long p = at;
        for (int i = 0; i < count; i++) {
            if (p + BACKEND_FIXED_LENGTH > end) {
                throw bad(p, "backend " + i + " runs past the end of the backend table at " + end);
            }
            long weight = t.u32(p + BACKEND_WEIGHT_OFFSET);
            if (weight < 1 || weight > MAX_WEIGHT) {
                throw bad(
                        p + BACKEND_WEIGHT_OFFSET,
                        "backend " + i + " weight " + weight + " is outside 1-" + MAX_WEIGHT);
            }
            int field = (int) t.u32(p + BACKEND_FEATURES_OFFSET);
            int flags = formatVersion >= FORMAT_VERSION_BACKEND_FLAGS ? field & ~BACKEND_FEATURE_BITS : 0;
            if ((flags & ~BACKEND_FLAGS_KNOWN) != 0) {
                throw bad(
                        p + BACKEND_FEATURES_OFFSET,
                        "backend " + i + " flags " + hex(flags) + " have bits no format version "
                                + formatVersion + " flag uses (only down, " + hex(BACKEND_FLAG_DOWN) + ", named, "
                                + hex(BACKEND_FLAG_NAMED)
                                + ", and health, " + hex(BACKEND_FLAG_HEALTH) + ", are defined)");
            }
            int mask = field & ~flags;
            if ((mask >>> featureCount) != 0) {
                throw bad(
                        p + BACKEND_FEATURES_OFFSET,
                        "backend " + i + " feature mask " + hex(mask) + " names features beyond the " + featureCount
                                + " declared");
            }
            int len = t.u16(p + BACKEND_ADDRESS_LENGTH_OFFSET);
            if (len == 0 || p + BACKEND_FIXED_LENGTH + len > end) {
                throw bad(
                        p + BACKEND_ADDRESS_LENGTH_OFFSET,
                        "backend " + i + " address length " + len + " is 0 or runs past the backend table");
            }
            ServerParameters parameters = ServerParameters.DEFAULTS.withDown((flags & BACKEND_FLAG_DOWN) != 0);
            long recordLength = BACKEND_FIXED_LENGTH + len;
            if ((flags & BACKEND_FLAG_HEALTH) != 0) {
                long h = p + recordLength;
                if (h + BACKEND_HEALTH_LENGTH > end) {
                    throw bad(
                            h,
                            "backend " + i + " is flagged health but its " + BACKEND_HEALTH_LENGTH
                                    + " health bytes run past the backend table at " + end);
                }
                parameters = new ServerParameters(
                        parameters.down(),
                        (int) health(t, h + HEALTH_MAX_FAILS_OFFSET, i, "max_fails"),
                        health(t, h + HEALTH_FAIL_TIMEOUT_OFFSET, i, "fail_timeout"),
                        (int) health(t, h + HEALTH_MAX_CONNS_OFFSET, i, "max_conns"));
                recordLength += BACKEND_HEALTH_LENGTH;
            }
            String text =
                    new String(t.bytes, (int) (p - at) + BACKEND_ADDRESS_OFFSET, len, StandardCharsets.ISO_8859_1);
            String name = null;
            if ((flags & BACKEND_FLAG_NAMED) != 0) {
                int zero = text.indexOf('\0');
                name = zero < 0 ? "" : text.substring(zero + 1);
                if (zero < 0 || name.isEmpty() || !name.chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
                    throw bad(
                            p + BACKEND_ADDRESS_OFFSET,
                            "backend " + i + " is flagged named but its address field holds no zero byte"
                                    + " followed by 1 or more printable ASCII characters");
                }
                text = text.substring(0, zero);
            }
            ServerAddress address = name == null
                    ? ServerAddress.parseIpv4(text, t.bytes, (int) (p - at) + BACKEND_ADDRESS_OFFSET, len)
                    : null;
            if (address == null) {
                try {
                    address = ServerAddress.parse(text);
                } catch (IllegalArgumentException e) {
                    throw bad(p + BACKEND_ADDRESS_OFFSET, "backend " + i + ": " + e.getMessage());
                }
            }
            if (!endpoints.add(address.endpointKey())) {
                throw bad(p + BACKEND_ADDRESS_OFFSET, "backend " + i + " '" + text + "' is a duplicate");
            }
            list.add(new BackendRecord(address, weight, mask, parameters.withName(name)));
            p += recordLength;
        }
        if (p != end) {
            throw bad(p, "backend table has " + (end - p) + " bytes after its " + count + " backends");
        }
        return list;
    }

    /** A health field of backend {@code i} (flag health), at most {@link RingFileDescriptor#MAX_HEALTH_VALUE}. */
    private long health(Table t, long at, int i, String field) throws RingFormatException {
        long value = t.u32(at);
        if (value > MAX_HEALTH_VALUE) {
            throw bad(at, "backend " + i + " " + field + " " + value + " is more than " + MAX_HEALTH_VALUE);
        }
        return value;
    }

    /** A table's bytes on the heap, read by file offset (little-endian, as the file). */
    private record Table(byte[] bytes, long at) {
        long u32(long offset) {
            int i = (int) (offset - at);
            return (bytes[i] & 0xFFL)
                    | (bytes[i + 1] & 0xFFL) << 8
                    | (bytes[i + 2] & 0xFFL) << 16
                    | (bytes[i + 3] & 0xFFL) << 24;
        }

        int u16(long offset) {
            int i = (int) (offset - at);
            return (bytes[i] & 0xFF) | (bytes[i + 1] & 0xFF) << 8;
        }
    }

    private List<String> parseFeatures(long at, long length, int count) throws RingFormatException {
        List<String> names = new ArrayList<>(count);
        long end = at + length;
        long p = at;
        for (int i = 0; i < count; i++) {
            if (p >= end) {
                throw bad(p, "feature " + i + " runs past the end of the feature table at " + end);
            }
            int len = Byte.toUnsignedInt(f.get(U8, p + FEATURE_NAME_LENGTH_OFFSET));
            if (len == 0 || p + FEATURE_FIXED_LENGTH + len > end) {
                throw bad(p, "feature " + i + " name length " + len + " is 0 or runs past the feature table");
            }
            String name = new String(f.asSlice(p + FEATURE_NAME_OFFSET, len).toArray(U8), StandardCharsets.ISO_8859_1);
            if (!FEATURE_NAME.matcher(name).matches() || names.contains(name)) {
                throw bad(
                        p + FEATURE_NAME_OFFSET,
                        "feature " + i + " name '" + TextLines.printable(name.getBytes(StandardCharsets.ISO_8859_1))
                                + "' is invalid or repeated");
            }
            names.add(name);
            p += FEATURE_FIXED_LENGTH + len;
        }
        if (p != end) {
            throw bad(p, "feature table has " + (end - p) + " bytes after its " + count + " names");
        }
        return List.copyOf(names);
    }

    private List<ParsedRingFile.Entry> parseIndex(
            long at,
            int ringCount,
            int featureCount,
            long segmentsStart,
            long segmentCount,
            List<RingVersion> versions,
            int formatVersion)
            throws RingFormatException {
        List<ParsedRingFile.Entry> entries = new ArrayList<>(ringCount);
        int masks = 1 << featureCount;
        Map<Long, ParsedRingFile.Entry> byOffset = new HashMap<>();
        for (int i = 0; i < ringCount; i++) {
            long e = at + (long) i * ENTRY_LENGTH;
            int mask = f.get(U32, e + ENTRY_FEATURE_MASK_OFFSET);
            expect(
                    e + ENTRY_FEATURE_MASK_OFFSET,
                    mask,
                    i % masks,
                    "ring " + i + " feature mask (entries are in mask order)");
            int code = Byte.toUnsignedInt(f.get(U8, e + ENTRY_ALGORITHM_OFFSET));
            RingFamily family = Families.forCode(code).orElse(null);
            if (family == null) {
                throw bad(
                        e + ENTRY_ALGORITHM_OFFSET,
                        "ring " + i + " algorithm " + code + " is unknown (expected "
                                + TextLines.list(Families.all().stream()
                                        .map(known -> known.code() + " = " + known)
                                        .toList())
                                + ")");
            }
            int storage = Byte.toUnsignedInt(f.get(U8, e + ENTRY_STORAGE_OFFSET));
            long ringPoints = u32(e + ENTRY_RING_POINTS_OFFSET);
            if (formatVersion < FORMAT_VERSION_VIEWS) {
                if (storage != 0 || f.get(U16, e + ENTRY_RESERVED1_OFFSET) != 0 || ringPoints != 0) {
                    throw bad(e + ENTRY_STORAGE_OFFSET, "ring " + i + " reserved bytes are not zero");
                }
            } else {
                if (storage > MAX_STORAGE) {
                    throw bad(
                            e + ENTRY_STORAGE_OFFSET,
                            "ring " + i + " storage " + storage
                                    + " is unknown (expected 0 = points, 1 = points with ties, 2 = view, 3 = points with ties and feature bits"
                                    + " or 4 = points with ties and feature bits by feature)");
                }
                if (f.get(U16, e + ENTRY_RESERVED1_OFFSET) != 0) {
                    throw bad(e + ENTRY_RESERVED1_OFFSET, "ring " + i + " reserved bytes are not zero");
                }
            }
            boolean wide = family.pointBits() == 64;
            int parameters = family.parameters().count();
            if (storage != STORAGE_POINTS && !wide && !family.viewable()) {
                throw bad(
                        e + ENTRY_STORAGE_OFFSET,
                        "ring " + i + " storage " + storage + ": algorithm " + code
                                + " rings are stored as their points (0), as a backend's points there depend on the other members or ties on the hash");
            }
            int parameter2 = 0;
            if (wide || parameters == 2) {
                if (formatVersion < FORMAT_VERSION_WIDE) {
                    throw bad(
                            e + ENTRY_ALGORITHM_OFFSET,
                            "ring " + i + " algorithm " + code + " needs format version " + FORMAT_VERSION_WIDE
                                    + " (64-bit points), the file is version " + formatVersion);
                }
                if (storage != STORAGE_POINTS) {
                    throw bad(
                            e + ENTRY_STORAGE_OFFSET,
                            "ring " + i + " storage " + storage + ": a 64-bit ring is stored as its points (0)");
                }
                if (parameters == 2) {
                    if (ringPoints > Integer.MAX_VALUE) {
                        throw bad(
                                e + ENTRY_RING_POINTS_OFFSET,
                                "ring " + i + " second parameter " + ringPoints + " is more than " + Integer.MAX_VALUE);
                    }
                    parameter2 = (int) ringPoints;
                    ringPoints = 0;
                }
            }
            long multiple = u32(e + ENTRY_POINT_MULTIPLE_OFFSET);
            if (multiple > Integer.MAX_VALUE) {
                throw bad(
                        e + ENTRY_POINT_MULTIPLE_OFFSET,
                        "ring " + i + " point multiple " + multiple + " is more than " + Integer.MAX_VALUE);
            }
            RingVersion version;
            try {
                version = new RingVersion(family, Arrays.copyOf(new int[] {(int) multiple, parameter2}, parameters));
            } catch (IllegalArgumentException problem) {
                throw bad(e + ENTRY_POINT_MULTIPLE_OFFSET, "ring " + i + ": " + problem.getMessage());
            }
            int v = i / masks;
            if (i % masks == 0) {
                if (versions.contains(version)) {
                    throw bad(e + ENTRY_ALGORITHM_OFFSET, "ring " + i + " repeats version " + version.name());
                }
                versions.add(version);
            } else if (!versions.get(v).equals(version)) {
                throw bad(
                        e + ENTRY_ALGORITHM_OFFSET,
                        "ring " + i + " is " + version.name() + " but its version block is "
                                + versions.get(v).name());
            }
            long points = u32(e + ENTRY_POINT_COUNT_OFFSET);
            long offset = f.get(U64, e + ENTRY_SEGMENT_OFFSET_OFFSET);
            long length = f.get(U64, e + ENTRY_SEGMENT_LENGTH_OFFSET);
            int crc = f.get(U32, e + ENTRY_SEGMENT_CRC_OFFSET);
            if (points > MAX_POINTS_PER_RING) {
                throw bad(
                        e + ENTRY_POINT_COUNT_OFFSET,
                        "ring " + i + " point count " + points + " is more than " + MAX_POINTS_PER_RING);
            }
            int stride = wide ? POINT_LENGTH + LOW_WORD_LENGTH : POINT_LENGTH;
            // A view's segment is its version's mask-0 ring's, whose length is checked here and which the
            // view must repeat (below).
            if (storage == STORAGE_VIEW) {
                // checked against its base
            } else if (hasFeatureBits(storage)) {
                expect(
                        e + ENTRY_SEGMENT_LENGTH_OFFSET,
                        length,
                        points * stride + featureBitsLength(points, featureCount),
                        "ring " + i + " segment length (points × " + stride + " + ⌈points / 64⌉ × 8 × " + featureCount
                                + " features)");
            } else {
                expect(
                        e + ENTRY_SEGMENT_LENGTH_OFFSET,
                        length,
                        points * stride,
                        "ring " + i + " segment length (points × " + stride + ")");
            }
            if (storage == STORAGE_POINTS) {
                expect(
                        e + ENTRY_RING_POINTS_OFFSET,
                        ringPoints,
                        0,
                        "ring " + i + " ring point count of a ring stored as its points");
                ringPoints = points;
            } else if (ringPoints < 1 || ringPoints > points) {
                throw bad(
                        e + ENTRY_RING_POINTS_OFFSET,
                        "ring " + i + " ring point count " + ringPoints + " is outside 1-" + points
                                + " (the points of the segment it "
                                + (storage == STORAGE_VIEW ? "views" : "is stored in") + ")");
            }
            if (storage == STORAGE_VIEW) {
                ParsedRingFile.Entry base = i % masks == 0 ? null : entries.get(i - i % masks);
                if (base == null
                        || !keepsTies(base.storage())
                        || base.offset() != offset
                        || base.length() != length
                        || base.pointCount() != points
                        || base.crc() != crc) {
                    throw bad(
                            e + ENTRY_STORAGE_OFFSET,
                            "ring " + i + " is a view but "
                                    + (base == null
                                            ? "is its version's mask-0 ring, which views read"
                                            : "does not name its version's mask-0 ring stored with ties (offset "
                                                    + base.offset() + "), which views read"));
                }
            }
            if (points == 0) {
                expect(e + ENTRY_SEGMENT_OFFSET_OFFSET, offset, 0, "ring " + i + " segment offset of an empty ring");
                expect(
                        e + ENTRY_SEGMENT_CRC_OFFSET,
                        Integer.toUnsignedLong(crc),
                        0,
                        "ring " + i + " segment checksum of an empty ring");
            } else if (offset < segmentsStart || offset > size || length > size - offset) {
                throw bad(
                        e + ENTRY_SEGMENT_OFFSET_OFFSET,
                        "ring " + i + " segment [" + offset + ", +" + length + ") is outside the segment area ["
                                + segmentsStart + ", " + size + ") (truncated or corrupt index?)");
            }
            ParsedRingFile.Entry entry = new ParsedRingFile.Entry(
                    mask, version, offset, length, (int) points, crc, storage, (int) ringPoints);
            if (points > 0) {
                ParsedRingFile.Entry same = byOffset.putIfAbsent(offset, entry);
                if (same != null && (same.length() != length || same.crc() != crc)) {
                    throw bad(
                            e + ENTRY_SEGMENT_OFFSET_OFFSET,
                            "ring " + i + " shares offset " + offset
                                    + " with another ring but not its length and checksum");
                }
                if (same != null && storage != STORAGE_VIEW && same.storage() != storage) {
                    throw bad(
                            e + ENTRY_STORAGE_OFFSET,
                            "ring " + i + " shares the segment at " + offset + " with a ring stored as "
                                    + storageName(same.storage()) + " but is stored as " + storageName(storage));
                }
            }
            entries.add(entry);
        }
        long[] starts = new long[byOffset.size()];
        int k = 0;
        for (long offset : byOffset.keySet()) {
            starts[k++] = offset;
        }
        Arrays.sort(starts);
        for (int s = 1; s < starts.length; s++) {
            ParsedRingFile.Entry prev = byOffset.get(starts[s - 1]);
            if (prev.offset() + prev.length() > starts[s]) {
                throw bad(
                        at, "segments at " + prev.offset() + " (+" + prev.length() + ") and " + starts[s] + " overlap");
            }
        }
        // Bytes past the last segment would be read by no one: refused, so that a file has one length.
        long end = starts.length == 0
                ? segmentsStart
                : starts[starts.length - 1]
                        + byOffset.get(starts[starts.length - 1]).length();
        if (end != size) {
            throw bad(
                    end,
                    (size - end) + " bytes after the " + (starts.length == 0 ? "metadata checksum" : "last segment")
                            + ", which ends at " + end + " (the file must end there)");
        }
        // The distinct non-empty segments are the offsets just checked for overlap.
        expect(
                SEGMENT_COUNT_OFFSET,
                byOffset.size(),
                segmentCount,
                "segment count (distinct non-empty segments in the index)");
        return List.copyOf(entries);
    }

    /**
     * What a builder can write, in points: every version's backends together make at most
     * {@link RingFileDescriptor#MAX_POINTS_PER_RING} (weight × point multiple, summed), and a non-empty
     * ring has at least one member (a backend having all its features). Which backends its points name
     * is verify's to check, segment by segment. Without
     * this a file could open whose expected shares overflow a long, or whose rings no backend can be a
     * member of. O(backends + 2^F × F): the weight of every mask's members by one pass over subsets.
     */
    private void checkPointTotals(
            List<BackendRecord> backends, int featureCount, long indexAt, List<ParsedRingFile.Entry> entries)
            throws RingFormatException {
        int masks = 1 << featureCount;
        long[] memberWeight = new long[masks]; // at most 65535 × 2^31: no overflow
        for (BackendRecord b : backends) {
            memberWeight[b.featureMask()] += b.weight();
        }
        FeatureMasks.sumOverSupersets(memberWeight);
        for (int i = 0; i < entries.size(); i++) {
            ParsedRingFile.Entry e = entries.get(i);
            long at = indexAt + (long) i * ENTRY_LENGTH;
            RingVersion v = e.version();
            WeightRule weights = v.family().weights();
            if (e.mask() == 0 && weights.bound(v, memberWeight[0], backends.size()) > MAX_POINTS_PER_RING) {
                throw bad(
                        at + ENTRY_POINT_MULTIPLE_OFFSET,
                        "ring " + i + " (" + v.name() + "): the backends' weights total "
                                + memberWeight[0]
                                + (v.parameters().length == 1
                                                && v.family().pointBits() == 32
                                                && weights.bound(v, 1, 1) == v.pointMultiple()
                                        ? ", × " + v.pointMultiple() + " points each"
                                        : ", and its points")
                                + " is more than a ring can hold (" + MAX_POINTS_PER_RING + ")");
            }
            if (e.pointCount() > 0 && memberWeight[e.mask()] == 0) {
                throw bad(
                        at + ENTRY_POINT_COUNT_OFFSET,
                        "ring " + i + " has " + e.pointCount() + " points but no backend has all its features "
                                + "(mask " + hex(e.mask()) + ")");
            }
        }
    }
}
