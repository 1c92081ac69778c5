package io.ringstore.tools;

import java.io.IOException;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The bytes of the program arguments as the shell passed them. The JVM decodes argv into
 * {@code String[]} with {@code sun.jnu.encoding}, the locale's charset: under {@code LC_ALL=POSIX}
 * {@code /café} becomes {@code /caf??}, and invalid UTF-8 becomes U+FFFD even under a UTF-8 locale, so
 * a key given as an argument would be hashed as other bytes than the same key on stdin.
 *
 * <p>On Linux the raw bytes are in {@code /proc/self/cmdline}: NUL-separated, the launcher's and the
 * JVM's own options first, the program arguments last, so the last {@code args.length} entries are
 * matched to {@code args} by position. An entry that is ASCII must equal its decoded argument; if one
 * does not (arguments expanded by the launcher from an {@code @argfile}, say), or where there is no
 * {@code /proc}, each argument is encoded back with {@code sun.jnu.encoding}: exact when the locale's
 * charset could decode it (a UTF-8 locale and valid UTF-8), not otherwise, which is this fallback's
 * caveat.
 */
final class ArgumentBytes {
    private static final Path CMDLINE = Path.of("/proc/self/cmdline");

    private ArgumentBytes() {}

    /** The bytes of each of {@code args}, the program arguments of this process. */
    static byte[][] ofThisProcess(String[] args) {
        byte[][] raw = fromCmdline(args);
        return raw != null ? raw : encoded(args, platformCharset());
    }

    /** Each argument as UTF-8: for callers in process, whose arguments never went through a charset. */
    static byte[][] utf8(String[] args) {
        return encoded(args, StandardCharsets.UTF_8);
    }

    private static byte[][] encoded(String[] args, Charset charset) {
        byte[][] raw = new byte[args.length][];
        for (int i = 0; i < args.length; i++) {
            raw[i] = args[i].getBytes(charset);
        }
        return raw;
    }

    private static Charset platformCharset() {
        try {
            return Charset.forName(System.getProperty(
                    "sun.jnu.encoding", Charset.defaultCharset().name()));
        } catch (RuntimeException e) {
            return Charset.defaultCharset();
        }
    }

    /** The last {@code args.length} entries of /proc/self/cmdline, or null when absent or not matching. */
    private static byte[][] fromCmdline(String[] args) {
        byte[] cmdline;
        try {
            cmdline = Files.readAllBytes(CMDLINE); // a few KiB, bounded by the kernel's ARG_MAX
        } catch (IOException | RuntimeException e) {
            return null;
        }
        List<byte[]> entries = new ArrayList<>();
        int start = 0;
        for (int i = 0; i < cmdline.length; i++) {
            if (cmdline[i] == 0) {
                entries.add(Arrays.copyOfRange(cmdline, start, i));
                start = i + 1;
            }
        }
        if (entries.size() < args.length) {
            return null;
        }
        byte[][] raw = entries.subList(entries.size() - args.length, entries.size())
                .toArray(new byte[0][]); // no lambda: a fresh JVM would spin its class
        for (int i = 0; i < args.length; i++) {
            if (isAscii(raw[i]) && !args[i].equals(new String(raw[i], StandardCharsets.US_ASCII))) {
                return null;
            }
        }
        return raw;
    }

    private static boolean isAscii(byte[] bytes) {
        for (byte b : bytes) {
            if (b < 0) {
                return false;
            }
        }
        return true;
    }
}
