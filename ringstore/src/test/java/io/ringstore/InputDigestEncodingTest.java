package io.ringstore;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.ringstore.builder.BackendList;
import io.ringstore.builder.RingBuilder;
import io.ringstore.family.RingVersion;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The input digest hashes each version's digest encoding (FORMAT.md, inputDigest: tag, written
 * parameters, a zero byte), defined by the family code and parameters, not by a version's display
 * name; and the digests are the bytes files had before the encoding was defined.
 */
class InputDigestEncodingTest {
    private static final String BACKENDS =
            "server 10.0.0.1:80;\nserver [2001:db8::7]:8080 weight=3;  # ringstore: features=eu\nserver 10.0.0.2;\n";

    @Test
    void encodingIsTagWrittenParametersAndAZeroByte() {
        assertArrayEquals("v1\0".getBytes(StandardCharsets.US_ASCII), RingVersion.V1.digestEncoding());
        assertArrayEquals(
                "v2:16\0".getBytes(StandardCharsets.US_ASCII),
                RingVersion.v2(16).digestEncoding());
        assertArrayEquals(
                "v2:2147483647\0".getBytes(StandardCharsets.US_ASCII),
                RingVersion.v2(Integer.MAX_VALUE).digestEncoding());
    }

    /** Recorded by building {@link #BACKENDS} with the code of commit cc7d7f8, which hashed {@code RingVersion.toString()}. */
    @Test
    void digestsAreTheBytesOfFilesBuiltBefore(@TempDir Path dir) throws Exception {
        assertEquals(
                "5a5524ebf716e5420637817565d864629cc6f9c66cfabad5d86a51a9cf785cf6",
                digest(dir, List.of(RingVersion.V1)));
        assertEquals(
                "862f575de1c2a69767375d59b3bb17e10d0be29a158cdddccba498b90917ddcf",
                digest(dir, List.of(RingVersion.v2(16))));
        assertEquals(
                "8f32ce273cf423dc9f743f29ee3ab97b41c385f994f26960a6d08dd1f2d689be",
                digest(dir, List.of(RingVersion.V1, RingVersion.v2(1), RingVersion.v2(160))));
    }

    private static String digest(Path dir, List<RingVersion> versions) throws Exception {
        RingBuilder b = RingBuilder.of(BackendList.parse("digest", BACKENDS)).generation(1);
        versions.forEach(b::version);
        Path file =
                dir.resolve(versions.size() + "-" + versions.getFirst().name().replace(':', '-') + ".ring");
        b.build(file);
        try (RingStore store = RingStore.open(file)) {
            return HexFormat.of().formatHex(store.inputDigest());
        }
    }
}
