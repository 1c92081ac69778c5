package io.ringstore.build;

import io.ringstore.Backend;
import io.ringstore.internal.BackendAccess;
import io.ringstore.internal.IoErrors;
import io.ringstore.internal.ServerAddress;
import io.ringstore.internal.TextLines;
import io.ringstore.internal.format.RingFileDescriptor;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The backends of a backends file, in file order, and the feature names they declare (in order of
 * first appearance).
 *
 * <p>Syntax, one backend per line, as nginx's {@code server} directive:
 * <pre>
 *   # comment
 *   upstream NAME {                        (optional, around everything)
 *       hash $request_uri consistent;       (optional, ignored: it is what ringstore builds)
 *       server ADDRESS [weight=N] [features=a,b,c];
 *   }
 * </pre>
 * ADDRESS is {@code IPv4[:port]} or {@code [IPv6][:port]}; the trailing {@code ;} is optional.
 */
public final class BackendList {
    /** The most backends a file can hold: a point stores its backend index in 16 bits. */
    public static final int MAX_BACKENDS = RingFileDescriptor.MAX_BACKENDS;
    /** The most feature names: the builder writes 2^F rings. */
    public static final int MAX_FEATURES = RingFileDescriptor.MAX_FEATURES;
    /** The largest weight accepted (nginx itself has no smaller limit that we rely on). */
    public static final long MAX_WEIGHT = RingFileDescriptor.MAX_WEIGHT;

    /**
     * The largest backends file read: 64 MiB, hundreds of times a file of 65,535 backends; a bound
     * so that a wrong path ({@code /dev/zero}, a log file) is refused instead of read for ever.
     */
    public static final int MAX_FILE_BYTES = 64 << 20;
    /** The longest line: 64 KiB, far above any real {@code server} line, below what an address may hold. */
    public static final int MAX_LINE_CHARS = 64 << 10;
    private static final char BYTE_ORDER_MARK = '\uFEFF';

    private static final Pattern FEATURE_NAME = Pattern.compile(RingFileDescriptor.FEATURE_NAME_REGEX);

    private final String source;
    private final List<Backend> backends;
    private final List<String> features;

    private BackendList(String source, List<Backend> backends, List<String> features) {
        this.source = source;
        this.backends = List.copyOf(backends);
        this.features = List.copyOf(features);
    }

    /**
     * Reads and parses a backends file (UTF-8, a leading byte order mark skipped). Only a regular
     * file of at most {@value #MAX_FILE_BYTES} bytes is read: a FIFO or a device would block or
     * never end.
     */
    public static BackendList parse(Path file) throws BackendsFileException {
        String name = file.toString();
        byte[] bytes;
        try {
            BasicFileAttributes attributes = Files.readAttributes(file, BasicFileAttributes.class);
            if (!attributes.isRegularFile()) {
                throw new BackendsFileException(name, 0, "cannot read: " + (attributes.isDirectory() ? "is a directory" : "not a regular file")
                        + " (a backends file must be a regular file)");
            }
            if (attributes.size() > MAX_FILE_BYTES) {
                throw tooLarge(name, attributes.size() + " bytes");
            }
            try (InputStream in = Files.newInputStream(file)) {
                bytes = in.readNBytes(MAX_FILE_BYTES + 1); // the file may have grown since
            }
        } catch (IOException e) {
            throw new BackendsFileException(name, 0, "cannot read: " + IoErrors.describe(e));
        }
        if (bytes.length > MAX_FILE_BYTES) {
            throw tooLarge(name, "more than " + MAX_FILE_BYTES + " bytes");
        }
        String text;
        try {
            text = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(java.nio.ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            throw new BackendsFileException(name, 0, "not UTF-8 text");
        }
        return parse(name, text);
    }

    private static BackendsFileException tooLarge(String source, String size) {
        return new BackendsFileException(source, 0, "too large for a backends file: " + size + " (at most " + MAX_FILE_BYTES
                + " bytes, " + (MAX_FILE_BYTES >> 20) + " MiB)");
    }

    /**
     * Parses backends-file text; {@code source} names it in errors. A leading byte order mark is
     * skipped; the text is at most {@value #MAX_FILE_BYTES} characters, each line at most
     * {@value #MAX_LINE_CHARS}.
     */
    public static BackendList parse(String source, String text) throws BackendsFileException {
        if (text.length() > MAX_FILE_BYTES) {
            throw tooLarge(source, text.length() + " characters");
        }
        if (!text.isEmpty() && text.charAt(0) == BYTE_ORDER_MARK) {
            text = text.substring(1);
        }
        List<Backend> backends = new ArrayList<>();
        List<String> features = new ArrayList<>();
        Map<String, Backend> endpoints = new HashMap<>();
        int upstreamLine = 0;   // line of 'upstream NAME {' while the block is open
        boolean upstreamClosed = false;
        String[] lines = text.split("\r?\n", -1);
        for (int i = 0; i < lines.length; i++) {
            int lineNo = i + 1;
            if (lines[i].length() > MAX_LINE_CHARS) {
                throw new BackendsFileException(source, lineNo, "line of " + lines[i].length() + " characters, longer than a backends-file line may be ("
                        + MAX_LINE_CHARS + ")");
            }
            String line = TextLines.content(lines[i]);
            if (line.isEmpty()) {
                continue;
            }
            if (upstreamClosed) {
                throw new BackendsFileException(source, lineNo, "text after the closing '}' of the upstream block");
            }
            if (line.endsWith(";")) {
                line = line.substring(0, line.length() - 1).strip();
                if (line.endsWith(";")) {
                    throw new BackendsFileException(source, lineNo, "more than one ';'");
                }
            }
            if (line.indexOf(';') >= 0) {
                throw new BackendsFileException(source, lineNo, "one directive per line: unexpected ';' before the end of the line");
            }
            String[] tokens = line.split("\\s+");
            switch (tokens[0]) {
                case "upstream" -> {
                    if (upstreamLine > 0 || !backends.isEmpty()) {
                        throw new BackendsFileException(source, lineNo, "'upstream' must come first and only once");
                    }
                    boolean ok = (tokens.length == 3 && tokens[2].equals("{"))
                            || (tokens.length == 2 && tokens[1].endsWith("{") && tokens[1].length() > 1);
                    if (!ok) {
                        throw new BackendsFileException(source, lineNo, "expected 'upstream NAME {'");
                    }
                    upstreamLine = lineNo;
                }
                case "}" -> {
                    if (upstreamLine == 0) {
                        throw new BackendsFileException(source, lineNo, "'}' without an open 'upstream NAME {'");
                    }
                    upstreamLine = 0;
                    upstreamClosed = true;
                }
                case "hash" -> {
                    if (tokens.length != 3 || !tokens[2].equals("consistent")) {
                        throw new BackendsFileException(source, lineNo, "only 'hash KEY consistent' is understood (ringstore builds consistent rings)");
                    }
                }
                case "server" -> {
                    if (backends.size() == MAX_BACKENDS) {
                        throw new BackendsFileException(source, lineNo, "more than " + MAX_BACKENDS + " backends (a point stores its backend in 16 bits)");
                    }
                    backends.add(parseServer(source, lineNo, tokens, features, backends, endpoints));
                }
                default -> throw new BackendsFileException(source, lineNo, "unknown directive " + TextLines.quote(tokens[0]) + " (expected 'server ADDRESS [weight=N] [features=a,b]')");
            }
        }
        if (upstreamLine > 0) {
            throw new BackendsFileException(source, upstreamLine, "the upstream block opened here is never closed with '}'");
        }
        if (backends.isEmpty()) {
            throw new BackendsFileException(source, 0, "no 'server' lines: a ring needs at least one backend");
        }
        return new BackendList(source, backends, features);
    }

    private static Backend parseServer(String source, int lineNo, String[] tokens, List<String> features,
                                       List<Backend> previous, Map<String, Backend> endpoints) throws BackendsFileException {
        if (tokens.length < 2) {
            throw new BackendsFileException(source, lineNo, "'server' needs an address");
        }
        ServerAddress address;
        try {
            address = ServerAddress.parse(tokens[1]);
        } catch (IllegalArgumentException e) {
            throw new BackendsFileException(source, lineNo, e.getMessage());
        }
        long weight = 1;
        boolean weightSeen = false;
        Set<String> own = new LinkedHashSet<>();
        boolean featuresSeen = false;
        for (int t = 2; t < tokens.length; t++) {
            String token = tokens[t];
            if (token.startsWith("weight=")) {
                if (weightSeen) {
                    throw new BackendsFileException(source, lineNo, "'weight=' given twice");
                }
                weightSeen = true;
                weight = parseWeight(source, lineNo, token.substring("weight=".length()));
            } else if (token.startsWith("features=")) {
                if (featuresSeen) {
                    throw new BackendsFileException(source, lineNo, "'features=' given twice");
                }
                featuresSeen = true;
                String list = token.substring("features=".length());
                if (list.isEmpty()) {
                    throw new BackendsFileException(source, lineNo, "'features=' needs at least one name");
                }
                for (String f : list.split(",", -1)) {
                    if (!FEATURE_NAME.matcher(f).matches()) {
                        throw new BackendsFileException(source, lineNo, "bad feature name " + TextLines.quote(f) + " (" + RingFileDescriptor.FEATURE_NAME_RULE + ")");
                    }
                    if (!own.add(f)) {
                        throw new BackendsFileException(source, lineNo, "feature " + TextLines.quote(f) + " listed twice");
                    }
                    if (!features.contains(f)) {
                        if (features.size() == MAX_FEATURES) {
                            throw new BackendsFileException(source, lineNo, "feature " + TextLines.quote(f) + " would be feature number "
                                    + (MAX_FEATURES + 1) + "; at most " + MAX_FEATURES + " are supported (2^F rings are built)");
                        }
                        features.add(f);
                    }
                }
            } else {
                String name = token.contains("=") ? token.substring(0, token.indexOf('=') + 1) : token;
                throw new BackendsFileException(source, lineNo, "unknown parameter " + TextLines.quote(name) + " (expected weight=N or features=a,b)");
            }
        }
        Backend same = endpoints.get(address.socketAddress());
        if (same != null) {
            throw new BackendsFileException(source, lineNo, "duplicate backend " + TextLines.quote(address.text())
                    + ": same address and port as line " + same.line() + " (" + TextLines.quote(same.address()) + ")");
        }
        int mask = 0;
        for (String f : own) {
            mask |= 1 << features.indexOf(f);
        }
        Backend backend = BackendAccess.create(previous.size(), address, weight, own, mask, lineNo);
        endpoints.put(address.socketAddress(), backend);
        return backend;
    }

    /** Decimal, leading zeros allowed (as nginx's {@code ngx_atoi}). */
    private static long parseWeight(String source, int lineNo, String digits) throws BackendsFileException {
        long w = TextLines.decimal(digits, MAX_WEIGHT);
        if (w < 0) {
            throw new BackendsFileException(source, lineNo, "weight " + TextLines.quote(digits) + " is not a positive whole number");
        }
        if (w > MAX_WEIGHT) {
            throw new BackendsFileException(source, lineNo, "weight " + TextLines.quote(digits) + " is too large (at most " + MAX_WEIGHT + ")");
        }
        if (w == 0) {
            throw new BackendsFileException(source, lineNo, "weight must be at least 1");
        }
        return w;
    }

    /** Builds a list in code (for tests and programs that do not read a file). */
    static BackendList of(String source, List<Backend> backends, List<String> features) {
        return new BackendList(source, backends, features);
    }

    /** The file name (or other source) given to the parser; used in error messages. */
    public String source() {
        return source;
    }

    public List<Backend> backends() {
        return backends;
    }

    public Backend backend(int index) {
        return backends.get(index);
    }

    public int size() {
        return backends.size();
    }

    /** Feature names in order of first appearance; feature i is bit i of a feature mask. */
    public List<String> features() {
        return features;
    }

    /** The feature set of a mask, in feature order. */
    Set<String> featureSet(int mask) {
        Set<String> set = new LinkedHashSet<>();
        for (int f = 0; f < features.size(); f++) {
            if ((mask & (1 << f)) != 0) {
                set.add(features.get(f));
            }
        }
        return Collections.unmodifiableSet(set);
    }
}
