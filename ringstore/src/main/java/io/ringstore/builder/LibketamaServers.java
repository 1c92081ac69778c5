package io.ringstore.builder;

import io.ringstore.Backend;
import io.ringstore.internal.ServerAddress;
import io.ringstore.internal.ServerParameters;
import io.ringstore.internal.TextLines;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A libketama servers file, read as libketama reads it ({@code RJ/ketama} {@code libketama/ketama.c},
 * {@code read_server_definitions} and {@code read_server_line}): one server a line,
 * {@code ADDRESS<TAB>MEMORY}, the memory being the server's weight.
 * <pre>
 *   #------ Server -------	-Mem-#           (a '#' in the first column: a comment)
 *   10.0.1.1:11211	600
 *                                           (an empty line)
 *   10.0.1.2:11211	300
 * </pre>
 * The address is kept exactly as written, since libketama hashes that text ({@code "%s-%d"}); it is an
 * IP address, with or without a port ({@code 10.0.1.1}, {@code 10.0.1.1:11211}, {@code [::1]:11211}):
 * a host name is refused (a ring must not depend on DNS), and a unix socket. libketama splits a line at
 * tabs and spaces, so either separates the two; a line may end in {@code \r\n}.
 *
 * <p>Refused, each naming its line, where libketama would read something else than the line says or
 * fail: a line that is not {@code ADDRESS MEMORY} (a memory that is not a whole number, or 0; text after
 * it, even a blank: libketama takes the memory token's last character for the newline and drops it,
 * reading {@code 600 x} as 60); a server on the last line without a line end (the same: {@code 600}
 * read as 60); a line of blanks or a lone {@code \r} (libketama skips only empty lines; it takes such a
 * line for a server without memory); a comment not in the first column; a line of more than
 * {@value #MAX_LINE_BYTES} bytes and its line end (libketama reads 126 bytes at a time and
 * takes the rest for another line); a byte order mark; the same address and port twice; no server.
 * An address of more than 21 characters, which libketama cannot hold, is refused by the build of a
 * {@code libketama} ring, with its line.
 */
public final class LibketamaServers {
    /** The longest line, its line end left out: {@code fgets(sline, 127, fi)} reads 126 bytes, the line end one of them. */
    static final int MAX_LINE_BYTES = 125;

    private LibketamaServers() {}

    /**
     * Reads a libketama servers file (a regular file of at most {@value BackendList#MAX_FILE_BYTES}
     * bytes; its bytes, as libketama reads them: comments may hold any).
     *
     * @param file the servers file; errors name it as given
     * @return the servers, in file order, each with its memory as weight
     * @throws BackendsFileException when the file cannot be read or a line is not one libketama reads as written
     */
    public static BackendList parse(Path file) throws BackendsFileException {
        return parse(file.toString(), BackendList.read(file));
    }

    /**
     * Reads the bytes of a libketama servers file.
     *
     * @param source  what errors call the input (a file name)
     * @param content the file's bytes
     * @return the servers, in file order, each with its memory as weight
     * @throws BackendsFileException as {@link #parse(Path)}
     */
    public static BackendList parse(String source, byte[] content) throws BackendsFileException {
        if (content.length >= 3
                && (content[0] & 0xff) == 0xef
                && (content[1] & 0xff) == 0xbb
                && (content[2] & 0xff) == 0xbf) {
            throw new BackendsFileException(
                    source,
                    1,
                    "the file starts with a byte order mark, which libketama reads as part of the first line: remove it");
        }
        String text = new String(content, StandardCharsets.ISO_8859_1); // one char a byte, as libketama's C strings
        List<Backend> backends = new ArrayList<>();
        List<String> features = new ArrayList<>();
        Map<Object, Backend> endpoints = new HashMap<>();
        int lineNo = 0;
        for (int start = 0; start < text.length(); ) {
            int newline = text.indexOf('\n', start);
            boolean ended = newline >= 0;
            String line = text.substring(start, ended ? newline : text.length());
            start = ended ? newline + 1 : text.length();
            lineNo++;
            if (line.length() > MAX_LINE_BYTES) {
                throw new BackendsFileException(
                        source,
                        lineNo,
                        "line of " + line.length() + " bytes: libketama reads " + (MAX_LINE_BYTES + 1)
                                + " bytes at a time, the line end one of them (fgets(sline, 127, fi)), and would take the rest for another line");
            }
            if (line.isEmpty() || line.charAt(0) == '#') {
                continue;
            }
            if (backends.size() == BackendList.MAX_BACKENDS) {
                throw new BackendsFileException(
                        source,
                        lineNo,
                        "more than " + BackendList.MAX_BACKENDS + " servers (a point stores its backend in 16 bits)");
            }
            Server server = server(source, lineNo, line, ended);
            ServerAddress address = BackendList.parseAddress(source, lineNo, server.address());
            BackendList.addBackend(
                    source,
                    lineNo,
                    lineNo,
                    address,
                    server.memory(),
                    List.of(),
                    ServerParameters.DEFAULTS,
                    features,
                    backends,
                    endpoints);
        }
        if (backends.isEmpty()) {
            throw new BackendsFileException(
                    source, 0, "no servers: a ring needs at least one (a line is ADDRESS<TAB>MEMORY)");
        }
        return BackendList.of(source, backends, features);
    }

    private record Server(String address, long memory) {}

    /** {@code [blanks] ADDRESS blanks MEMORY [\r]}, then the line end. */
    private static Server server(String source, int lineNo, String line, boolean ended) throws BackendsFileException {
        String body = line.endsWith("\r") ? line.substring(0, line.length() - 1) : line;
        int i = skip(body, 0, true);
        if (i == body.length()) {
            throw new BackendsFileException(
                    source,
                    lineNo,
                    (body.isEmpty() ? "a blank line ending in \\r (a CRLF file?)" : "a line of blanks")
                            + ": libketama skips only empty lines, and takes this one for a server without memory");
        }
        if (body.charAt(i) == '#') {
            throw new BackendsFileException(
                    source,
                    lineNo,
                    "a comment after blanks: libketama reads a comment only with '#' in the first column");
        }
        int addressEnd = skip(body, i, false);
        String address = body.substring(i, addressEnd);
        int memoryStart = skip(body, addressEnd, true);
        if (memoryStart == body.length()) {
            throw new BackendsFileException(
                    source,
                    lineNo,
                    "server " + TextLines.quote(TextLines.printable(address.getBytes(StandardCharsets.ISO_8859_1)))
                            + " without a memory: libketama's lines are ADDRESS<TAB>MEMORY");
        }
        int memoryEnd = skip(body, memoryStart, false);
        String memory = body.substring(memoryStart, memoryEnd);
        long value = TextLines.decimal(memory, BackendList.MAX_WEIGHT);
        if (value < 0) {
            throw new BackendsFileException(
                    source,
                    lineNo,
                    "memory " + TextLines.quote(TextLines.printable(memory.getBytes(StandardCharsets.ISO_8859_1)))
                            + " is not a whole number (libketama's lines are ADDRESS<TAB>MEMORY)");
        }
        if (memoryEnd < body.length()) {
            throw new BackendsFileException(
                    source,
                    lineNo,
                    "text after the memory " + memory + ": libketama takes the memory's last character"
                            + " for the line end and would read " + dropLast(memory)
                            + "; end the line after the number");
        }
        if (!ended && !line.endsWith("\r")) { // with a last '\r', that is the character libketama drops
            throw new BackendsFileException(
                    source,
                    lineNo,
                    "the last line has no line end: libketama takes the memory's last character"
                            + " for it and would read " + memory + " as " + dropLast(memory)
                            + "; end the file with a newline");
        }
        if (value == 0) {
            throw new BackendsFileException(source, lineNo, "memory 0: libketama refuses a server without memory");
        }
        if (value > BackendList.MAX_WEIGHT) {
            throw new BackendsFileException(
                    source,
                    lineNo,
                    "memory " + memory + " is too large for a weight (at most " + BackendList.MAX_WEIGHT + ")");
        }
        return new Server(address, value);
    }

    /** The memory as libketama reads it when its last character is not the line end: one digit fewer (0 when none is left). */
    private static String dropLast(String digits) {
        return digits.length() == 1 ? "0" : digits.substring(0, digits.length() - 1);
    }

    /** {@return the first index from {@code from} whose character is not a blank ({@code blanks}) or is one} */
    private static int skip(String body, int from, boolean blanks) {
        int i = from;
        while (i < body.length() && isBlank(body.charAt(i)) == blanks) {
            i++;
        }
        return i;
    }

    private static boolean isBlank(char c) {
        return c == ' ' || c == '\t';
    }
}
