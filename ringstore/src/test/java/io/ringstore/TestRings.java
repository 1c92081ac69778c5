package io.ringstore;

import io.ringstore.builder.BackendList;
import io.ringstore.builder.BackendsFileException;
import io.ringstore.builder.BuildResult;
import io.ringstore.builder.RingBuilder;
import io.ringstore.family.RingVersion;
import io.ringstore.internal.format.RingFileDescriptor;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.BitSet;
import java.util.List;
import java.util.stream.Stream;
import java.util.zip.CRC32C;

/** Small helpers shared by the library tests: parse text, build a file, inspect a ring's points. */
public final class TestRings {
    private TestRings() {}

    /** Parses backends-file text under the source name {@code "test"}. */
    public static BackendList parse(String text) throws BackendsFileException {
        return BackendList.parse("test", text);
    }

    /** Parses {@code text} and builds {@code versions} (V1 when none) into {@code target}. */
    public static BuildResult build(Path target, String text, RingVersion... versions)
            throws BackendsFileException, RingFileException, IOException {
        return builder(text, versions).build(target);
    }

    public static RingBuilder builder(String text, RingVersion... versions) throws BackendsFileException {
        RingBuilder builder = RingBuilder.of(parse(text));
        for (RingVersion v : versions) {
            builder.version(v);
        }
        return builder;
    }

    /** Temporary files a build may have left in {@code dir}. */
    public static List<Path> tempFiles(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.getFileName().toString().endsWith(".tmp"))
                    .toList();
        }
    }

    /** The backend of every point of {@code ring}, as a set of indexes. */
    public static BitSet pointBackends(Ring ring) {
        BitSet set = new BitSet();
        for (int i = 0; i < ring.pointCount(); i++) {
            set.set(ring.pointBackend(i));
        }
        return set;
    }

    /** Recomputes the metadata CRC-32C of a ring file's bytes, after the ring index its header names. */
    public static void fixMetadataChecksum(byte[] bytes) {
        ByteBuffer header = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        int metadataEnd = (int) (header.getLong(RingFileDescriptor.RING_INDEX_OFFSET_OFFSET)
                + header.getLong(RingFileDescriptor.RING_INDEX_LENGTH_OFFSET));
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, metadataEnd);
        header.putInt(metadataEnd, (int) crc.getValue());
    }
}
