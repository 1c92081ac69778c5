package io.ringstore.tools;

import io.ringstore.Ring;
import io.ringstore.RingFileException;
import io.ringstore.RingStore;
import io.ringstore.RingVersion;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.Set;

final class LookupCommand extends Command {
    @Override
    String name() {
        return "lookup";
    }

    @Override
    String description() {
        return "Prints KEY<TAB>ADDRESS for each KEY, or for each line of stdin when no KEY is given.\n"
                + "ADDRESS is written as nginx writes $upstream_addr (v1) or as pingora-ketama's SocketAddr (v2);\n"
                + "'-' when the ring has no backend. A key is the line's bytes without the line end (\\n or \\r\\n).";
    }

    @Override
    String synopsis() {
        return "RINGFILE [--features a,b] [--algorithm v1|v2[:K]] [--point-multiple K] [KEY...]";
    }

    @Override
    String options() {
        return """
                  --features a,b        the ring of backends having all these features (default: all backends)
                  --algorithm V         v1 or v2 (or v2:K) when the file holds several versions (default: the first)
                  --point-multiple K    which v2 ring, when the file holds several
                """;
    }

    @Override
    Set<String> valueOptions() {
        return Set.of("--features", Versions.ALGORITHM, Versions.POINT_MULTIPLE);
    }

    @Override
    Set<String> flagOptions() {
        return Set.of();
    }

    @Override
    int run(Args args, InputStream in, PrintStream out, PrintStream err) throws UsageException, FailedException {
        if (args.positional.isEmpty()) {
            throw new UsageException("missing RINGFILE");
        }
        try (RingStore store = RingStore.open(Path.of(args.positional.getFirst()))) {
            RingVersion version = Versions.select(args, store);
            Ring ring;
            try {
                ring = store.ring(features(args), version);
            } catch (IllegalArgumentException e) {
                throw new UsageException(e.getMessage());
            }
            byte[][] answers = new byte[store.backendCount()][];
            for (int i = 0; i < answers.length; i++) {
                answers[i] = Versions.address(store.backend(i), version).getBytes(StandardCharsets.US_ASCII);
            }
            OutputStream o = new BufferedOutputStream(out, 1 << 16);
            if (args.positional.size() > 1) {
                for (String key : args.positional.subList(1, args.positional.size())) {
                    byte[] k = key.getBytes(StandardCharsets.UTF_8);
                    answer(o, ring, answers, k, k.length);
                }
            } else {
                streamStdin(in, o, ring, answers);
            }
            o.flush();
            if (out.checkError()) {
                throw new FailedException("cannot write the answers (stdout closed?)");
            }
            return Main.OK;
        } catch (RingFileException e) {
            throw new FailedException(e.getMessage());
        } catch (IOException e) {
            throw new FailedException("I/O error: " + e.getMessage());
        }
    }

    static Set<String> features(Args args) throws UsageException {
        Set<String> set = new LinkedHashSet<>();
        String list = args.get("--features");
        if (list != null && !list.isEmpty()) {
            for (String f : list.split(",", -1)) {
                if (f.isEmpty() || !set.add(f)) {
                    throw new UsageException("bad --features list '" + list + "' (comma-separated names, each once)");
                }
            }
        }
        return set;
    }

    private static final byte[] NONE = {'-'};

    private static void answer(OutputStream o, Ring ring, byte[][] answers, byte[] key, int length) throws IOException {
        int b = ring.lookup(key, 0, length);
        o.write(key, 0, length);
        o.write('\t');
        o.write(b < 0 ? NONE : answers[b]);
        o.write('\n');
    }

    /** Reads raw lines (no charset decoding) so a million keys stream in about a second. */
    private static void streamStdin(InputStream in, OutputStream o, Ring ring, byte[][] answers) throws IOException {
        byte[] buf = new byte[1 << 16];
        byte[] line = new byte[256];
        int len = 0;
        int n;
        while ((n = in.read(buf)) > 0) {
            for (int i = 0; i < n; i++) {
                byte c = buf[i];
                if (c == '\n') {
                    answer(o, ring, answers, line, len > 0 && line[len - 1] == '\r' ? len - 1 : len);
                    len = 0;
                } else {
                    if (len == line.length) {
                        line = Arrays.copyOf(line, len * 2);
                    }
                    line[len++] = c;
                }
            }
        }
        if (len > 0) {
            answer(o, ring, answers, line, line[len - 1] == '\r' ? len - 1 : len);
        }
    }
}
