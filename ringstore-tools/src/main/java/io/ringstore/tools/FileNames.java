package io.ringstore.tools;

import io.ringstore.internal.TextLines;
import io.ringstore.tools.Command.FailedException;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * A file name given on the command line as the {@link Path} the JVM will open, or a refusal in one
 * line. The JVM decodes argv and encodes file names with {@code sun.jnu.encoding}, the locale's
 * charset: under {@code LC_ALL=POSIX} a non-ASCII name comes in as U+FFFD, which ASCII cannot encode
 * ({@code Path.of} throws), and under a UTF-8 locale bytes that are not UTF-8 come in as U+FFFD too,
 * which encodes to {@code EF BF BD}: another file. A name is taken only when its string encodes back
 * to the bytes the shell passed.
 */
final class FileNames {
    private FileNames() {}

    /**
     * The path {@code name} names, its argument's bytes being {@code raw} (null when unknown).
     * In-process callers pass their strings' UTF-8 ({@link ArgumentBytes#utf8}), which is taken as
     * the strings' own bytes: a string is what they meant.
     */
    static Path path(String name, byte[] raw) throws FailedException {
        Charset charset = jnuCharset();
        byte[] bytes = raw != null ? raw : name.getBytes(StandardCharsets.UTF_8);
        Path path;
        try {
            path = Path.of(name);
        } catch (InvalidPathException e) {
            throw new FailedException(shown(bytes) + ": a file name the locale's charset (" + charset
                    + ") cannot encode; run under a UTF-8 locale (LC_ALL=C.UTF-8)");
        }
        if (raw != null
                && !Arrays.equals(raw, name.getBytes(charset))
                && !Arrays.equals(raw, name.getBytes(StandardCharsets.UTF_8))) {
            throw new FailedException(
                    shown(bytes) + ": not a file name in the locale's charset (" + charset
                            + "): it would be read as " + TextLines.quote(TextLines.oneLine(name))
                            + ", another file; rename it, or run under a locale whose charset decodes it (a UTF-8 locale for UTF-8 names)");
        }
        return path;
    }

    /** The name's bytes in quotes, anything but printable ASCII as {@code \xNN}, cut as every quoted input is. */
    private static String shown(byte[] bytes) {
        return TextLines.quote(TextLines.printable(bytes));
    }

    private static Charset jnuCharset() {
        try {
            return Charset.forName(System.getProperty(
                    "sun.jnu.encoding", Charset.defaultCharset().name()));
        } catch (RuntimeException e) {
            return Charset.defaultCharset();
        }
    }
}
