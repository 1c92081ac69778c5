package io.ringstore;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * The other projects' published vectors, transcribed under {@code src/test/resources/vectors/<project>/}
 * (README.md there gives each file's source and columns): TSV with one header line, {@code #} lines
 * comments. Read as ISO-8859-1, so a field's {@link Row#bytes} are the file's own bytes.
 */
final class ProjectVectors {
    private ProjectVectors() {}

    /** One data row: where it is ({@code file:line}) and its fields by column name. */
    record Row(String where, Map<String, String> fields) {
        /** {@return the field of {@code column}; fails naming the row when the file has no such column} */
        String get(String column) {
            String value = fields.get(column);
            if (value == null) {
                fail(where + ": no column " + column + " (columns " + fields.keySet() + ")");
            }
            return value;
        }

        long unsigned(String column) {
            return Long.parseUnsignedLong(get(column));
        }

        int integer(String column) {
            return Integer.parseInt(get(column));
        }

        byte[] bytes(String column) {
            return get(column).getBytes(StandardCharsets.ISO_8859_1);
        }

        @Override
        public String toString() {
            return where;
        }
    }

    /** {@return every data row of {@code path} (e.g. {@code libketama/servers.tsv}), in file order} */
    static List<Row> rows(String path) {
        String resource = "/vectors/" + path;
        try (InputStream in = ProjectVectors.class.getResourceAsStream(resource)) {
            if (in == null) {
                return fail("vector file not found on the test class path: " + resource);
            }
            BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.ISO_8859_1));
            List<Row> rows = new ArrayList<>();
            String[] header = null;
            int lineNo = 0;
            for (String line; (line = r.readLine()) != null; ) {
                lineNo++;
                if (line.startsWith("#") || line.isEmpty()) {
                    continue;
                }
                String[] f = line.split("\t", -1);
                if (header == null) {
                    header = f;
                    continue;
                }
                if (f.length != header.length) {
                    fail(path + ":" + lineNo + ": " + f.length + " fields, the header has " + header.length);
                }
                Map<String, String> fields = new LinkedHashMap<>();
                for (int i = 0; i < f.length; i++) {
                    fields.put(header[i], f[i]);
                }
                rows.add(new Row(path + ":" + lineNo, fields));
            }
            return rows;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@return the rows of {@code path} that {@code filter} keeps} */
    static List<Row> rows(String path, Predicate<Row> filter) {
        return rows(path).stream().filter(filter).toList();
    }
}
