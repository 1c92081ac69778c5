package io.ringstore.tools;

import io.ringstore.Backend;
import io.ringstore.RingFileException;
import io.ringstore.RingStore;
import io.ringstore.internal.ServerAddress;
import io.ringstore.internal.ServerParameters;
import io.ringstore.internal.TextLines;
import io.ringstore.state.HostState;
import io.ringstore.state.HostState.BackendState;
import io.ringstore.state.HostState.LeaseState;
import io.ringstore.state.StateFileException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * {@code ringstore state}: the host's live state beside a ring file, as every router process shares
 * it, and the operator's drain. Opens the state file without a lease (it counts no request), but
 * reaps the leases of dead processes first, so the counts it shows are true.
 */
final class StateCommand extends Command {
    @Override
    String name() {
        return "state";
    }

    @Override
    String description() {
        return "Shows the live state every router on this host shares: per backend the drain flag, health\n"
                + "(failures counted host-wide, nginx max_fails/fail_timeout) and requests in flight; drains and\n"
                + "undrains a backend in every router from its next lookup. FILE is the ring file (its state\n"
                + "file is FILE.state beside it) or a state file itself (a name ending in .state).";
    }

    private static final Option JSON = json("""
            one JSON object (top-level keys: file, health, slots, read_only when opened read-only, leases, backends;
            an object with a value out of range has "corrupt": [its keys])""");
    private static final Option MAX_FAILS = Option.valued(
            "--max-fails",
            "N",
            "failures that make every backend failed in the health column (default: each backend's max_fails in the ring file, else 1)");
    private static final Option FAIL_TIMEOUT = Option.valued(
            "--fail-timeout",
            "SEC",
            "seconds every failed backend stays failed (default: each backend's fail_timeout in the ring file, else 10)");

    @Override
    List<Option> options() {
        return List.of(JSON, MAX_FAILS, FAIL_TIMEOUT);
    }

    @Override
    List<String> forms() {
        return List.of("FILE [{--max-fails}] [{--fail-timeout}] [{--json}]", "FILE drain ADDR", "FILE undrain ADDR");
    }

    /**
     * The health settings a backend is judged and shown by: nginx's max_fails, fail_timeout (seconds) and max_conns.
     */
    private record Rule(int maxFails, long failTimeoutSeconds, int maxConns) {
        static final Rule DEFAULTS = new Rule(
                ServerParameters.DEFAULT_MAX_FAILS,
                ServerParameters.DEFAULT_FAIL_TIMEOUT_SECONDS,
                ServerParameters.DEFAULT_MAX_CONNS);

        long failTimeoutNanos() {
            return Math.min(failTimeoutSeconds, Long.MAX_VALUE / 1_000_000_000L) * 1_000_000_000L;
        }
    }

    /**
     * Each endpoint's rule: the ring file's backends' (as routers use them), the options' max_fails and
     * fail_timeout for every endpoint when given; nginx's defaults for an endpoint the ring does not have.
     *
     * @param source what the rules come from, as {@code state} says it
     */
    private record Rules(Map<String, Rule> byEndpoint, Integer maxFails, Long failTimeoutSeconds, String source) {
        Rule of(String endpoint) {
            Rule r = byEndpoint.getOrDefault(endpoint, Rule.DEFAULTS);
            return new Rule(
                    maxFails != null ? maxFails : r.maxFails(),
                    failTimeoutSeconds != null ? failTimeoutSeconds : r.failTimeoutSeconds(),
                    r.maxConns());
        }
    }

    /**
     * Counts above this are shown as corrupt: no router holds 2^31 requests in flight, nor does a backend
     * fail that often between two successes; a cell at or near 2^32 is a forged or wrapped value.
     */
    static final long CREDIBLE_COUNT = Integer.MAX_VALUE;

    /**
     * {@return whether a count read from the state file is out of its possible range: negative, or above
     * {@link #CREDIBLE_COUNT}}
     */
    static boolean corrupt(long count) {
        return count < 0 || count > CREDIBLE_COUNT;
    }

    /** A count as text shows it: the number, and {@code (corrupt)} after it when it is out of range. */
    static String count(long count) {
        return corrupt(count) ? count + " (corrupt)" : String.valueOf(count);
    }

    /**
     * An endpoint (or path) as text shows it: control characters (C0, DEL, C1, Unicode format characters)
     * as {@code \xNN} of their UTF-8 bytes, so that nothing read from the file reaches the terminal as a
     * control sequence. (Bytes that are not UTF-8 arrive escaped the same way already, from HostState.)
     */
    static String printable(String endpoint) {
        StringBuilder sb = new StringBuilder(endpoint.length());
        for (int i = 0; i < endpoint.length(); ) {
            int c = endpoint.codePointAt(i);
            i += Character.charCount(c);
            if (c < 0x20
                    || (c >= 0x7f && c < 0xa0)
                    || Character.getType(c) == Character.FORMAT
                    || Character.isSurrogate((char) c)) {
                for (byte b : new String(Character.toChars(c)).getBytes(java.nio.charset.StandardCharsets.UTF_8)) {
                    sb.append(String.format("\\x%02x", b & 0xff));
                }
            } else {
                sb.appendCodePoint(c);
            }
        }
        return sb.toString();
    }

    /** What {@code state FILE} shows; {@code readOnly} says why the file was opened read-only, or is null. */
    private record Report(
            Path file, int slots, List<LeaseState> leases, List<BackendState> backends, Rules rules, String readOnly)
            implements Result {
        @Override
        public void text(PrintStream out) {
            out.printf("file: %s%n", printable(file.toString()));
            if (readOnly != null) {
                out.printf("read-only: %s%n", readOnly);
            }
            out.printf("health: %s%n", rules.source());
            out.printf("slots: %d in use of %d%n", backends.size(), slots);
            out.printf("leases: %d%n", leases.size());
            for (LeaseState l : leases) {
                out.printf(
                        "  lease %d: pid %d, %s, %s in flight%n",
                        l.lease(), l.pid(), l.alive() ? "alive" : "dead", count(l.inFlight()));
            }
            out.printf(
                    "%n  %-42s %-8s %-20s %14s %10s %10s %13s %10s%n",
                    "endpoint",
                    "drained",
                    "health",
                    "last_failure_s",
                    "in_flight",
                    "max_fails",
                    "fail_timeout",
                    "max_conns");
            for (BackendState b : backends) {
                Rule r = rules.of(b.endpoint());
                out.printf(
                        "  %-42s %-8s %-20s %14s %10s %10d %13s %10d%n",
                        printable(b.endpoint()),
                        b.drained() ? "yes" : "no",
                        health(b),
                        b.sinceFailure() == null
                                ? "-"
                                : String.valueOf(b.sinceFailure().toSeconds()),
                        count(b.inFlight()),
                        r.maxFails(),
                        r.failTimeoutSeconds() + "s",
                        r.maxConns());
            }
        }

        @Override
        public void json(Json j) {
            j.field("file", file.toString()).field("health", rules.source()).field("slots", slots);
            if (readOnly != null) {
                j.field("read_only", readOnly);
            }
            j.beginArray("leases");
            for (LeaseState l : leases) {
                j.begin()
                        .field("lease", l.lease())
                        .field("pid", l.pid())
                        .field("alive", l.alive())
                        .field("in_flight", l.inFlight());
                corruptKeys(j, corrupt(l.inFlight()) ? "in_flight" : null, null);
                j.end();
            }
            j.endArray().beginArray("backends");
            for (BackendState b : backends) {
                j.begin()
                        .field("endpoint", b.endpoint())
                        .field("drained", b.drained())
                        .field("failed", b.failed())
                        .field("fails", b.fails());
                if (b.sinceFailure() != null) {
                    j.field("last_failure_ms", b.sinceFailure().toMillis());
                }
                Rule r = rules.of(b.endpoint());
                j.field("in_flight", b.inFlight())
                        .field("max_fails", r.maxFails())
                        .field("fail_timeout", r.failTimeoutSeconds())
                        .field("max_conns", r.maxConns());
                corruptKeys(j, corrupt(b.fails()) ? "fails" : null, corrupt(b.inFlight()) ? "in_flight" : null);
                j.end();
            }
            j.endArray();
        }

        /** {@code "corrupt": [the keys whose values are out of range]}, only when there is one. */
        private static void corruptKeys(Json j, String first, String second) {
            if (first == null && second == null) {
                return;
            }
            j.beginArray("corrupt");
            for (String key : new String[] {first, second}) {
                if (key != null) {
                    j.value(key);
                }
            }
            j.endArray();
        }
    }

    /**
     * The endpoint routers track for {@code text}: an address as a backends file may write it
     * ({@code 192.0.2.16}, {@code [2001:0db8::10]:8080}), as {@code Backend.socketAddress()} spells it.
     */
    private static String endpoint(String text) throws UsageException {
        try {
            return ServerAddress.parse(text).socketAddress();
        } catch (IllegalArgumentException e) {
            throw new UsageException("ADDR " + TextLines.quote(text) + ": " + e.getMessage());
        }
    }

    @Override
    int run(Args args, InputStream in, PrintStream out, PrintStream err)
            throws UsageException, FailedException, StateFileException {
        List<String> p = args.positional;
        if (p.isEmpty()) {
            throw new UsageException("missing FILE");
        }
        boolean show = p.size() == 1;
        if (!show && (p.size() != 3 || !(p.get(1).equals("drain") || p.get(1).equals("undrain")))) {
            throw new UsageException(
                    p.size() == 2 && (p.get(1).equals("drain") || p.get(1).equals("undrain"))
                            ? "missing ADDR after " + p.get(1)
                            : "expected FILE, or FILE drain ADDR, or FILE undrain ADDR");
        }
        if (!show && (args.has(JSON.name()) || args.has(MAX_FAILS.name()) || args.has(FAIL_TIMEOUT.name()))) {
            throw new UsageException("drain and undrain take no option");
        }
        Integer maxFails =
                args.has(MAX_FAILS.name()) ? (int) args.getLong(MAX_FAILS.name(), 0, Integer.MAX_VALUE, 1) : null;
        Long failTimeout =
                args.has(FAIL_TIMEOUT.name()) ? args.getLong(FAIL_TIMEOUT.name(), 1, Integer.MAX_VALUE, 10) : null;
        HostState.Options options = HostState.Options.DEFAULTS;
        String addr = show ? null : endpoint(p.get(2));
        args.file(0); // the name as passed, or one line refusing it (FileNames): then Path.of below takes it as it is
        Path stateFile = stateFile(p.getFirst());
        if (!show && !Files.exists(stateFile) && !Files.isRegularFile(Path.of(p.getFirst()))) {
            // Neither the ring nor its state: a mistyped path would otherwise create a state file no router reads.
            throw new FailedException(p.getFirst()
                    + ": no such ring file (drain names the ring file the routers open, or its .state file)");
        }
        String[] readOnly = {null};
        Optional<HostState> opened =
                show ? look(stateFile, options, readOnly) : HostState.inspect(stateFile, options, true);
        try (HostState state =
                opened.orElseThrow(() -> new FailedException(stateFile + ": no state file (no router has opened "
                        + (stateFile.equals(Path.of(p.getFirst())) ? "its ring" : p.getFirst()) + " yet)"))) {
            if (show) {
                Rules rules = rules(p.getFirst(), maxFails, failTimeout);
                print(
                        new Report(
                                state.path(),
                                state.slotCount(),
                                state.leases(),
                                state.backends(
                                        e -> rules.of(e).maxFails(),
                                        e -> rules.of(e).failTimeoutNanos()),
                                rules,
                                readOnly[0]),
                        args,
                        out);
            } else {
                boolean drain = p.get(1).equals("drain");
                boolean was = drain ? state.drain(addr) : state.undrain(addr);
                out.println(
                        drain
                                ? (was
                                        ? addr + " was drained already"
                                        : "drained " + addr + ": every router skips it from its next lookup")
                                : (was ? "undrained " + addr : addr + " was not drained"));
            }
            return Main.OK;
        } catch (IllegalArgumentException | IllegalStateException e) { // an endpoint too long, a directory full
            throw new FailedException(e.getMessage());
        } catch (InternalError e) { // SIGBUS on a page of the state file (shrank since it was opened)
            throw new FailedException(stateFile
                    + ": a page of the mapped state file cannot be read (the file system is full, or the file "
                    + "shrank while in use)");
        }
    }

    /**
     * Opens the state file to look at: read-write when this process may write it (dead leases reaped once,
     * so the counts are true), else read-only (nothing reaped; each lease still told alive or dead), with
     * why in {@code readOnly[0]}. A file that cannot be read either way is refused with the read-write
     * open's reason.
     */
    static Optional<HostState> look(Path stateFile, HostState.Options options, String[] readOnly)
            throws StateFileException {
        try {
            return HostState.inspect(stateFile, options, false);
        } catch (StateFileException writable) {
            try {
                Optional<HostState> state = HostState.inspectReadOnly(stateFile, options);
                readOnly[0] = writable.reason()
                        + "; shown as read, dead leases not reaped (their requests in flight still counted)";
                return state;
            } catch (StateFileException e) {
                throw writable;
            }
        }
    }

    /**
     * The rules of the ring file {@code name} names (itself, or the one a {@code .state} file sits beside):
     * each backend's stored health settings, overridden by the options given.
     */
    private static Rules rules(String name, Integer maxFails, Long failTimeout) {
        String options = (maxFails == null ? "" : " --max-fails " + maxFails)
                + (failTimeout == null ? "" : " --fail-timeout " + failTimeout);
        Path ringFile = Path.of(name.endsWith(".state") ? name.substring(0, name.length() - ".state".length()) : name);
        Map<String, Rule> byEndpoint = new HashMap<>();
        String source;
        if (!Files.isRegularFile(ringFile)) {
            source = "nginx's defaults (max_fails=1 fail_timeout=10s max_conns=0: no ring file " + ringFile + ")";
        } else {
            try (RingStore store = RingStore.open(ringFile)) {
                for (Backend b : store.backends()) {
                    byEndpoint.put(b.socketAddress(), new Rule(b.maxFails(), b.failTimeoutSeconds(), b.maxConns()));
                }
                source =
                        "each backend's settings in " + ringFile + " (nginx's defaults for endpoints it does not have)";
            } catch (RingFileException e) {
                source = "nginx's defaults (the ring file is unreadable: " + e.getMessage() + ")";
            }
        }
        return new Rules(
                byEndpoint,
                maxFails,
                failTimeout,
                options.isEmpty() ? source : options.substring(1) + " for every backend; otherwise " + source);
    }

    /** A name ending in {@code .state} is the state file; any other, the ring file it sits beside. */
    private static Path stateFile(String name) throws FailedException {
        try {
            Path path = Path.of(name);
            return name.endsWith(".state") ? path : HostState.statePath(path);
        } catch (InvalidPathException e) {
            throw new FailedException(TextLines.quote(name) + ": not a valid path (" + e.getReason() + ")");
        }
    }

    private static String health(BackendState b) {
        if (corrupt(b.fails())) {
            return "corrupt (fails " + b.fails() + ")";
        }
        if (b.failed()) {
            return "failed";
        }
        return b.fails() > 0 ? "ok (" + b.fails() + " failures)" : "ok";
    }
}
