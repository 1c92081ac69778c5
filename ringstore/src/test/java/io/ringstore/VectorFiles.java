package io.ringstore;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.GZIPInputStream;

/**
 * Reading the reference vectors under {@code shared/vectors}: locating them, streaming their
 * (possibly gzipped) lines, and the small formats of the pingora set (README.md there).
 *
 * <p>Text is read as ISO-8859-1 so that {@code line.getBytes(ISO_8859_1)} gives back the file's
 * exact bytes: keys are hashed as bytes, never re-encoded.
 */
public final class VectorFiles {
    /** System property naming the {@code shared/vectors} directory (set by the surefire config). */
    static final String PROPERTY = "ringstore.vectors";

    private VectorFiles() {}

    /**
     * The vector folder {@code <name>}: from {@value #PROPERTY} (or the environment variable
     * RINGSTORE_VECTORS) if set; else {@code ../shared/vectors/<name>} beside the repository (where
     * CI puts the authoritative copy); else the copy committed in {@code testdata/vectors/<name>}.
     */
    static Path directory(String name) {
        String property = System.getProperty(PROPERTY, System.getenv("RINGSTORE_VECTORS"));
        if (property != null && !property.isBlank()) {
            Path dir = Path.of(property).resolve(name);
            if (!Files.isDirectory(dir)) {
                fail("reference vectors not found: " + dir + " does not exist (from -D" + PROPERTY + "=" + property
                        + ")");
            }
            return dir;
        }
        Path repo = Path.of(System.getProperty("ringstore.repo", ".."))
                .toAbsolutePath()
                .normalize();
        for (Path dir : new Path[] {
            repo.resolveSibling("shared").resolve("vectors").resolve(name),
            repo.resolve("testdata").resolve("vectors").resolve(name)
        }) {
            if (Files.isDirectory(dir)) {
                return dir;
            }
        }
        return fail("reference vectors not found: neither ../shared/vectors/" + name + " nor testdata/vectors/" + name
                + " exists beside or in " + repo + " (set -D" + PROPERTY + "=<dir>)");
    }

    /** Lines of a text file, gunzipped when the name ends in {@code .gz}. */
    static BufferedReader open(Path file) throws IOException {
        InputStream in = Files.newInputStream(file);
        if (file.getFileName().toString().endsWith(".gz")) {
            in = new GZIPInputStream(in, 1 << 16);
        }
        return new BufferedReader(new InputStreamReader(in, StandardCharsets.ISO_8859_1), 1 << 16);
    }

    static byte[] bytes(String line) {
        return line.getBytes(StandardCharsets.ISO_8859_1);
    }

    /** A {@code buckets_<set>.txt} file ({@code ADDRESS WEIGHT} lines) as backends-file text, order kept. */
    static String backendsText(Path buckets) throws IOException {
        StringBuilder sb = new StringBuilder();
        try (BufferedReader r = open(buckets)) {
            int lineNo = 0;
            for (String line; (line = r.readLine()) != null; ) {
                lineNo++;
                if (line.isBlank()) {
                    continue;
                }
                String[] f = line.strip().split("\\s+");
                if (f.length != 2) {
                    fail(buckets + ":" + lineNo + ": expected 'ADDRESS WEIGHT', found '" + line + "'");
                }
                sb.append("server ")
                        .append(f[0])
                        .append(" weight=")
                        .append(f[1])
                        .append('\n');
            }
        }
        return sb.toString();
    }

    /** One backend that produced a colliding hash: its address as pingora prints it and its input position. */
    record Candidate(String address, int index) {
        boolean isIpv4() {
            return !address.startsWith("[");
        }
    }

    /**
     * One line of {@code collisions_<set>_<version>.tsv}.
     *
     * @param hash       the point hash (as the unsigned bits in an int)
     * @param candidates every point with that hash, in input order
     * @param survivor   the point pingora kept
     * @param line       line number in the file
     */
    record Collision(int hash, List<Candidate> candidates, Candidate survivor, int line) {
        /** Points that were dropped for this hash. */
        int dropped() {
            return candidates.size() - 1;
        }
    }

    /** {@code address#index}. */
    private static Candidate candidate(String text) {
        int mark = text.lastIndexOf('#');
        return new Candidate(text.substring(0, mark), Integer.parseInt(text.substring(mark + 1)));
    }

    /** The collisions of a file by hash; empty when the file does not exist (no hash collided). */
    static Map<Integer, Collision> collisions(Path file) {
        Map<Integer, Collision> byHash = new HashMap<>();
        if (!Files.exists(file)) {
            return byHash;
        }
        try (BufferedReader r = open(file)) {
            int lineNo = 0;
            for (String line; (line = r.readLine()) != null; ) {
                lineNo++;
                String[] f = line.split("\t", -1);
                if (f.length != 3) {
                    fail(file + ":" + lineNo + ": expected 'hash<TAB>candidates<TAB>survivor', found '" + line + "'");
                }
                List<Candidate> candidates = new ArrayList<>();
                for (String c : f[1].split(",")) {
                    candidates.add(candidate(c));
                }
                int hash = (int) Long.parseLong(f[0]);
                if (byHash.put(hash, new Collision(hash, List.copyOf(candidates), candidate(f[2]), lineNo)) != null) {
                    fail(file + ":" + lineNo + ": hash " + f[0] + " listed twice");
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return byHash;
    }
}
