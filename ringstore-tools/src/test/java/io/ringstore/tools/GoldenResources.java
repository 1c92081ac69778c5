package io.ringstore.tools;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** The files under {@code golden/} that tests read as a user's files, and the digests they record. */
final class GoldenResources {
    private GoldenResources() {}

    /** {@return {@code golden/NAME} copied into {@code dir} under its own name} */
    static Path copy(String name, Path dir) throws IOException {
        Path to = dir.resolve(name);
        try (InputStream in = GoldenResources.class.getResourceAsStream("/golden/" + name)) {
            if (in == null) {
                throw new IOException("no test resource golden/" + name);
            }
            Files.write(to, in.readAllBytes());
        }
        return to;
    }

    /** {@return the SHA-256 of {@code bytes} in lower-case hex} */
    static String sha256(byte[] bytes) throws NoSuchAlgorithmException {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    }
}
