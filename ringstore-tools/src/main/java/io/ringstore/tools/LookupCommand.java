package io.ringstore.tools;

import io.ringstore.Backend;
import io.ringstore.Ring;
import io.ringstore.RingFileException;
import io.ringstore.RingStore;
import io.ringstore.family.Failover;
import io.ringstore.family.Families;
import io.ringstore.family.RingFamily;
import io.ringstore.family.RingVersion;
import io.ringstore.live.RingRouter;
import io.ringstore.state.Availability;
import io.ringstore.state.HostState;
import io.ringstore.state.StateFileException;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.IntPredicate;

final class LookupCommand extends Command {
    @Override
    String name() {
        return "lookup";
    }

    @Override
    String description() {
        return "Prints KEY<TAB>ADDRESS for each KEY, or for each line of stdin when no KEY is given.\n"
                + "ADDRESS is written as the ring's family prints the backend it chose: nginx's $upstream_addr (v1),\n"
                + "pingora-ketama's SocketAddr (v2), ip:port with the family's default port (the others); '-' when the\n"
                + "ring has no backend. A key is the line's bytes without the line end (\\n or \\r\\n), or an argument's\n"
                + "bytes as the shell passed them, whatever the locale; at most " + MAX_KEY_LENGTH
                + " bytes, hashed by the family's key hash.\n"
                + "Servers marked 'down' are skipped as nginx skips them: from the key's point the next points are\n"
                + "tried, at most " + Ring.NGINX_MAX_POINTS
                + " in all (the key's and 20 more, as nginx's hash consistent does);\n"
                + "spymemcached and xmemcached try their rehash sequence instead.\n"
                + "When all of those are down the address is '-' (v1: nginx then picks a server by round robin, no\n"
                + "fixed answer), and stderr says how many keys that happened to. A family whose client builds its\n"
                + "ring without its down servers (libmemcached's auto-eject, Envoy's healthy hosts) never answers\n"
                + "one; the others keep a down server's points and go past it.\n"
                + "When the ring file has a state file beside it (RINGFILE.state, shared by the routers of this\n"
                + "host), a backend drained there, or failed host-wide (max_fails failures within fail_timeout),\n"
                + "is skipped as a down one is; --no-state ignores the state file. A state file that cannot be\n"
                + "used (corrupt, unreadable) is one line on stderr, and the answers are given without it.";
    }

    private static final AlgorithmOption ALGORITHM = AlgorithmOption.READ;
    static final Option FEATURES = Option.valued(
            "--features", "a,b", "the ring of backends having all these features (default: all backends)");
    private static final Option WATCH = Option.flag("--watch", """
            keep reading keys from stdin and answer each from the generation
            current at that moment, following new files published at the path
            (a file that fails validation is refused; the old one keeps serving)""");
    private static final Option SHOW_GENERATION =
            Option.flag("--show-generation", "with --watch: print KEY<TAB>ADDRESS<TAB>GENERATION");
    private static final Option NO_FAILOVER =
            Option.flag("--no-failover", "print the ring's own answer for each key, servers marked down included");
    private static final Option NO_STATE =
            Option.flag("--no-state", "ignore the state file (RINGFILE.state): skip only servers marked down");

    @Override
    List<Option> options() {
        return List.of(
                FEATURES, ALGORITHM.algorithm, ALGORITHM.pointMultiple, NO_FAILOVER, NO_STATE, WATCH, SHOW_GENERATION);
    }

    @Override
    List<String> forms() {
        return List.of(
                "RINGFILE [{--features}] [{--algorithm}] [{--point-multiple}] [{--no-failover}] [{--no-state}] [{--watch} [{--show-generation}]] [KEY...]");
    }

    @Override
    int run(Args args, InputStream in, PrintStream out, PrintStream err)
            throws UsageException, FailedException, RingFileException, IOException {
        if (args.positional.isEmpty()) {
            throw new UsageException("missing RINGFILE");
        }
        if (args.has(SHOW_GENERATION.name()) && !args.has(WATCH.name())) {
            throw new UsageException("--show-generation goes with --watch");
        }
        if (args.has(WATCH.name()) && args.positional.size() > 1) {
            throw new UsageException("--watch reads keys from stdin; give no KEY arguments");
        }
        try {
            return args.has(WATCH.name()) ? watch(args, in, out, err) : lookupOnce(args, in, out, err);
        } catch (OutputGone e) { // a reader that left (| head) is a normal end; a full disk is not
            if (Stdout.cannotWrite(out)) {
                throw new FailedException("cannot write the answers (stdout closed or disk full?)");
            }
            return Main.OK;
        }
    }

    /** Answers the KEY arguments, or each line of stdin, from the file as it is now. */
    private int lookupOnce(Args args, InputStream in, PrintStream out, PrintStream err)
            throws UsageException, FailedException, RingFileException, IOException {
        Path path = args.file(0);
        try (RingStore store = RingStore.open(path);
                HostState state = state(args, path, err)) {
            RingVersion version = ALGORITHM.select(args, store);
            Ring ring;
            try {
                ring = store.ring(features(args), version);
            } catch (IllegalArgumentException e) {
                throw new UsageException(e.getMessage());
            }
            Answers answers = new Answers(store, version, !args.has(NO_FAILOVER.name()), state);
            OutputStream o = new BufferedOutputStream(new StopWhenGone(out), 1 << 16);
            if (args.positional.size() > 1) {
                for (int i = 1; i < args.positional.size(); i++) {
                    byte[] k = args.positionalBytes.get(i); // the bytes the shell passed, as stdin keys are
                    if (k.length > MAX_KEY_LENGTH) {
                        o.flush();
                        throw keyTooLong("argument " + (i + 1));
                    }
                    answer(o, answers, k, k.length, answers.backend(ring, k, k.length));
                    o.write('\n');
                }
            } else {
                try {
                    readLines(
                            in,
                            (key, length) -> {
                                answer(o, answers, key, length, answers.backend(ring, key, length));
                                o.write('\n');
                            },
                            () -> flushWhenIdle(in, o));
                } finally {
                    o.flush(); // the answers before a refused line go out before its error
                }
            }
            o.flush();
            answers.reportGaveUp(err, prefix());
            if (Stdout.cannotWrite(out)) {
                throw new FailedException("cannot write the answers (stdout closed?)");
            }
            return Main.OK;
        }
    }

    /**
     * Answers stdin from whatever generation is current. A file rewritten in place under the mapping
     * (forbidden, but done: {@code cp b.ring fleet.ring}) makes lookups fault where its pages are gone;
     * such a key gets no answer line, the first fault of a generation one line on stderr, and answers
     * resume when a good file is published by rename and the watcher switches to it. Exit 1 at the end
     * if any key went unanswered.
     */
    private int watch(Args args, InputStream in, PrintStream out, PrintStream err)
            throws UsageException, FailedException, RingFileException, IOException {
        Path path = args.file(0);
        try (RingRouter opened = RingRouter.builder(path).jmx(false).open();
                WatchedState state = new WatchedState(args, path, err);
                RingRouter reopened = onVersion(args, opened)) {
            RingRouter watched = reopened != null ? reopened : opened;
            RingVersion version = watched.oldVersion();
            RingRouter.Route live;
            try {
                live = watched.route(features(args));
            } catch (IllegalArgumentException e) {
                throw new UsageException(e.getMessage());
            }
            boolean showGeneration = args.has(SHOW_GENERATION.name());
            boolean failover = !args.has(NO_FAILOVER.name());
            OutputStream o = new BufferedOutputStream(new StopWhenGone(out), 1 << 16);
            Answers[] answers = {null};
            long[] gaveUp = {0};
            RingStore[] faulted = {null};
            long[] unanswered = {0};
            long[] lineNumber = {0};
            LineSink sink = (key, length) -> {
                lineNumber[0]++;
                Ring ring = live.oldRing();
                RingStore store = ring.store();
                if (state.changed() && answers[0] != null) {
                    gaveUp[0] += answers[0].gaveUp;
                    answers[0] = null; // drained or given slots since the answers were made: look again
                }
                if (answers[0] == null || store != answers[0].store) {
                    if (answers[0] != null) {
                        gaveUp[0] += answers[0].gaveUp;
                    }
                    answers[0] = new Answers(store, version, failover, state.state);
                }
                int b;
                try {
                    b = answers[0].backend(ring, key, length);
                } catch (InternalError e) { // SIGBUS: the mapped file lost the page this lookup read
                    unanswered[0]++;
                    if (faulted[0] != store) {
                        faulted[0] = store;
                        o.flush();
                        err.println(prefix() + path + ": generation " + Long.toUnsignedString(store.generation())
                                + " shrank while mapped at stdin line " + lineNumber[0]
                                + " (rewritten in place? publish new files by rename only);"
                                + " keys it cannot answer get no answer line until a good file is published");
                    }
                    return;
                }
                answer(o, answers[0], key, length, b);
                if (showGeneration) {
                    o.write('\t');
                    o.write(Long.toUnsignedString(store.generation()).getBytes(StandardCharsets.US_ASCII));
                }
                o.write('\n');
            };
            try {
                readLines(in, sink, () -> flushWhenIdle(in, o));
            } finally {
                o.flush();
            }
            if (answers[0] != null) {
                answers[0].gaveUp += gaveUp[0];
                answers[0].reportGaveUp(err, prefix());
            }
            return unanswered[0] == 0 ? Main.OK : Main.FAILED; // the fault was reported when it happened
        }
    }

    /**
     * The router to follow the file with when the options name a version other than the file's
     * default, or null: {@code opened} (on the default) is closed then, so that only the version in
     * use holds back new files (a new file lacking it is refused).
     */
    private static RingRouter onVersion(Args args, RingRouter opened) throws UsageException, RingFileException {
        RingVersion version = ALGORITHM.select(args, opened.current());
        if (version.equals(opened.oldVersion())) {
            return null;
        }
        opened.close();
        return RingRouter.builder(opened.path())
                .versions(version, version)
                .jmx(false)
                .open();
    }

    /** The output is gone: reading more input would answer no one. */
    private static final class OutputGone extends IOException {
        private static final long serialVersionUID = 1L;

        OutputGone() {
            super("the output is gone");
        }
    }

    /**
     * Writes to stdout and stops the command once a write failed: a {@link PrintStream} never throws,
     * it only remembers, so without this check lookup would read all of an endless stdin for nothing.
     */
    private static final class StopWhenGone extends java.io.FilterOutputStream {
        private final PrintStream target;

        StopWhenGone(PrintStream target) {
            super(target);
            this.target = target;
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            target.write(b, off, len);
            check();
        }

        @Override
        public void flush() throws IOException {
            target.flush();
            check();
        }

        private void check() throws OutputGone {
            if (target.checkError()) {
                throw new OutputGone();
            }
        }
    }

    /** Answers interactive input (or a pipe held open) at once, and batches input that is already waiting. */
    private static void flushWhenIdle(InputStream in, OutputStream o) throws IOException {
        if (in.available() == 0) {
            o.flush();
        }
    }

    /**
     * The state file beside the ring for {@code --watch}: followed when replaced (or removed and made
     * again), and taken when it is made after the start (a router started later, or a first drain), so
     * that a drain is never ignored for having come after lookup. Looked at every
     * {@link #STATE_CHECK_NANOS}, when a key comes.
     */
    private final class WatchedState implements AutoCloseable {
        private final Args args;
        private final Path ring;
        private final PrintStream err;
        private final boolean wanted;
        /** The state file open, or null while there is none (or it cannot be used). */
        HostState state;

        private long directoryVersion;
        private long checkedAt = System.nanoTime();
        /** A state file made later was refused, and said so: not said again at every check. */
        private boolean refusalSaid;

        WatchedState(Args args, Path ring, PrintStream err) {
            this.args = args;
            this.ring = ring;
            this.err = err;
            this.wanted = !args.has(NO_STATE.name()) && !args.has(NO_FAILOVER.name());
            this.state = state(args, ring, err);
            this.directoryVersion = state == null ? 0 : state.directoryVersion();
        }

        /** {@return whether the answers must be made again: a state file taken, or its directory changed} */
        boolean changed() {
            if (!wanted || System.nanoTime() - checkedAt <= STATE_CHECK_NANOS) {
                return false;
            }
            checkedAt = System.nanoTime();
            if (state == null) {
                if (!Files.exists(HostState.statePath(ring))) {
                    return false;
                }
                state = state(args, ring, refusalSaid ? new PrintStream(OutputStream.nullOutputStream()) : err);
                refusalSaid = state == null;
                if (state == null) {
                    return false;
                }
                directoryVersion = state.directoryVersion();
                return true;
            }
            state.refresh();
            long seen = state.directoryVersion();
            if (seen == directoryVersion) {
                return false;
            }
            directoryVersion = seen;
            return true;
        }

        @Override
        public void close() {
            if (state != null) {
                state.close();
            }
        }
    }

    /** How often {@code --watch} looks whether the state file was replaced or its directory changed. */
    private static final long STATE_CHECK_NANOS = 100_000_000L;

    /**
     * The state file beside {@code ringFile}, opened to look only (no lease, no heartbeat; read-only when
     * this process may not write it), or null when there is none or {@code --no-state} /
     * {@code --no-failover} says not to read it. A state file that cannot be used (corrupt, unreadable,
     * on a full file system) is one line on {@code err}, and the answers are given without it, as with
     * {@code --no-state}: the state only narrows the choice, the ring alone still answers.
     */
    private HostState state(Args args, Path ringFile, PrintStream err) {
        if (args.has(NO_STATE.name()) || args.has(NO_FAILOVER.name())) {
            return null;
        }
        try {
            return StateCommand.look(HostState.statePath(ringFile), HostState.Options.DEFAULTS, new String[1])
                    .orElse(null);
        } catch (StateFileException e) {
            err.println(prefix() + e.getMessage()
                    + "; answering without the state file (as --no-state: drain and health not applied)");
            return null;
        }
    }

    /**
     * What one generation answers: each backend's address bytes, and which backend a key gets, with
     * nginx's failover past servers marked {@code down} (and, with a state file, drained or failed
     * host-wide) unless {@code --no-failover}. Counts the keys whose {@link Ring#NGINX_MAX_POINTS}
     * points were all skipped (printed '-').
     */
    private static final class Answers {
        final RingStore store;
        private final RingVersion version;
        /** Each backend's answer text, made when it first answers (one key of 2,048 backends prints one). */
        private final byte[][] addresses;

        private final IntPredicate up; // null: the ring's own answer
        private final boolean withState;
        long gaveUp;

        Answers(RingStore store, RingVersion version, boolean failover, HostState state) {
            this.store = store;
            this.version = version;
            this.addresses = new byte[store.backendCount()][];
            List<Backend> backends = store.backends();
            this.withState = failover && state != null;
            // Looked at, not probed: a failed backend past its fail_timeout counts as available (the
            // routers' next request probes it), and the check writes nothing. Each backend by the
            // health settings its ring file stores, as the routers judge it (max_conns: host-wide).
            Availability available = withState
                    ? state.availableBackends(
                            backends,
                            state.slots(backends.stream()
                                    .map(Backend::socketAddress)
                                    .toList()))
                    : Availability.of(backends);
            // Without state and without a server marked down, every key gets the ring's own answer.
            this.up = withState || failover && backends.stream().anyMatch(Backend::down) ? available.peeking() : null;
        }

        /**
         * The key's backend: hashed by the ring's family's key hash, past unusable backends by the family's failover.
         */
        int backend(Ring ring, byte[] key, int length) {
            if (up == null) {
                return ring.lookup(key, 0, length);
            }
            int b = ring.select(key, 0, length, Ring.NGINX_MAX_POINTS, up);
            if (b == Ring.GAVE_UP) {
                gaveUp++;
            }
            return b;
        }

        byte[] address(int b) {
            byte[] a = addresses[b];
            if (a == null) {
                a = store.backend(b).answer(version.family()).getBytes(StandardCharsets.US_ASCII);
                addresses[b] = a;
            }
            return a;
        }

        void reportGaveUp(PrintStream err, String prefix) {
            if (gaveUp > 0) {
                Failover failover = version.family().failover();
                RingFamily family = version.family();
                String tries = failover.rehashesKey()
                        ? "the " + failover.lookups(store.backendCount()) + " tries of " + family + "'s rehash sequence"
                        : "the " + Ring.NGINX_MAX_POINTS + " points "
                                + (family == Families.NGINX ? "nginx tries" : "tried");
                err.println(prefix + gaveUp + (gaveUp == 1 ? " key" : " keys") + " found only servers marked down"
                        + (withState ? ", drained or failed" : "") + " in " + tries + ", printed '-' ("
                        + whenAllAreDown(family) + ")");
            }
        }

        /** What the family's own client does about down servers, said where every server a key tried was down. */
        private static String whenAllAreDown(RingFamily family) {
            if (family == Families.NGINX) {
                return "nginx then picks a server by round robin";
            }
            if (family.downLeavesRing()) {
                return family + " builds its ring without its down servers: the state file's drained or failed"
                        + " backends were left";
            }
            return family + " keeps a down server's points and fails over past it "
                    + (family.failover().rehashesKey() ? "by its rehash sequence" : "to the next points")
                    + ": it has no answer when every try is down";
        }
    }

    static Set<String> features(Args args) throws UsageException {
        Set<String> set = new LinkedHashSet<>();
        String list = args.get(FEATURES.name());
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

    /** Writes KEY<TAB>ADDRESS of backend {@code b} (no line end). */
    private static void answer(OutputStream o, Answers answers, byte[] key, int length, int b) throws IOException {
        o.write(key, 0, length);
        o.write('\t');
        o.write(b < 0 ? NONE : answers.address(b));
    }

    /** Receives one key: the first {@code length} bytes of {@code key}. */
    private interface LineSink {
        void accept(byte[] key, int length) throws IOException;
    }

    /** Runs after each block read from the input. */
    private interface BlockDone {
        void run() throws IOException;
    }

    /**
     * The longest key, in bytes: a URI or header value as a proxy sees it. nginx refuses a request line
     * longer than its {@code large_client_header_buffers} (8 KiB by default); 64 KiB leaves room for
     * configurations that raise that, while a line without end (a binary file, {@code /dev/zero}) is
     * refused after 64 KiB rather than read into memory until the heap runs out.
     */
    static final int MAX_KEY_LENGTH = 64 * 1024;

    private static FailedException keyTooLong(String where) {
        return new FailedException(where + ": key longer than " + MAX_KEY_LENGTH
                + " bytes, the limit (binary input, or a line without end?)");
    }

    /**
     * Reads raw lines (no charset decoding, a trailing '\r' dropped) so a million keys stream in about
     * a second. Memory stays flat: one read buffer and one line of at most {@link #MAX_KEY_LENGTH} bytes
     * (and its '\r'); a longer line ends the run with its line number.
     */
    private static void readLines(InputStream in, LineSink sink, BlockDone blockDone)
            throws IOException, FailedException {
        byte[] buf = new byte[1 << 16];
        byte[] line = new byte[256];
        int len = 0;
        long lineNumber = 1;
        int n;
        while ((n = in.read(buf)) > 0) {
            for (int i = 0; i < n; i++) {
                byte c = buf[i];
                if (c == '\n') {
                    sink.accept(line, keyLength(line, len, lineNumber));
                    len = 0;
                    lineNumber++;
                } else {
                    if (len == line.length) {
                        if (len > MAX_KEY_LENGTH) { // room for the longest key and its '\r': this byte is one too many
                            throw keyTooLong("stdin line " + lineNumber);
                        }
                        line = Arrays.copyOf(line, Math.min(len * 2, MAX_KEY_LENGTH + 1));
                    }
                    line[len++] = c;
                }
            }
            blockDone.run();
        }
        if (len > 0) {
            sink.accept(line, keyLength(line, len, lineNumber));
        }
    }

    /** The key in the first {@code len} bytes of a line: without its '\r', at most {@link #MAX_KEY_LENGTH}. */
    private static int keyLength(byte[] line, int len, long lineNumber) throws FailedException {
        int keyLength = len > 0 && line[len - 1] == '\r' ? len - 1 : len;
        if (keyLength > MAX_KEY_LENGTH) {
            throw keyTooLong("stdin line " + lineNumber);
        }
        return keyLength;
    }
}
