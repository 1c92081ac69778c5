package io.ringstore.state;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import net.openhft.chronicle.testframework.process.JavaProcessBuilder;

/**
 * A child JVM acting as a router for the multi-process state tests: lines from its stdout, commands to
 * its stdin, its stderr read by a thread as it comes (a full pipe would stop its logging heartbeat)
 * into {@link #err}.
 *
 * @param hold what the child holds: the {@code hold} requests of {@link #holdRequests}
 */
record RouterChild(Process process, int hold, BufferedReader out, PrintStream in, StringBuffer err) {
    /** The backends every child tracks: 0 and 1 held, 2 churned. */
    static final List<String> ENDPOINTS = List.of("10.0.0.1:80", "10.0.0.2:80", "10.0.0.3:80");

    /** Starts {@code main}'s main with the ring path and {@code hold} as arguments, with {@code jvm} options. */
    static RouterChild start(Class<?> main, Path ring, int hold, String... jvm) {
        List<String> args = new ArrayList<>(List.of("-Xmx64m"));
        args.addAll(List.of(jvm));
        Process p = JavaProcessBuilder.create(main)
                .withJvmArguments(args.toArray(String[]::new))
                .withProgramArguments(ring.toString(), String.valueOf(hold))
                .start();
        StringBuffer err = new StringBuffer();
        Thread.ofPlatform().daemon().start(() -> {
            try (BufferedReader r =
                    new BufferedReader(new InputStreamReader(p.getErrorStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    err.append(line).append('\n');
                }
            } catch (IOException e) {
                err.append(e).append('\n');
            }
        });
        return new RouterChild(
                p,
                hold,
                new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.US_ASCII)),
                new PrintStream(p.getOutputStream(), true, StandardCharsets.US_ASCII),
                err);
    }

    /**
     * In a child: tracks {@link #ENDPOINTS} and acquires {@code hold} requests on backend 0 and twice
     * that on backend 1, never released; {@return the slots}
     */
    static int[] holdRequests(HostState state, int hold) {
        int[] slots = state.track(ENDPOINTS);
        for (int i = 0; i < hold; i++) {
            state.acquire(slots[0]);
            state.acquire(slots[1]);
            state.acquire(slots[1]);
        }
        return slots;
    }

    /** Reads the child's next line, which must be {@code line}. */
    void expect(String line) throws IOException {
        expectMatching(java.util.regex.Pattern.quote(line));
    }

    /** {@return the child's next line, which must match {@code regex}} */
    String expectMatching(String regex) throws IOException {
        String got = out.readLine();
        if (got == null || !got.matches(regex)) {
            throw new AssertionError("child " + process.pid() + ": expected " + regex + ", got " + got + " (exit "
                    + (process.isAlive() ? "none" : process.exitValue()) + "); stderr:\n" + stderr());
        }
        return got;
    }

    void send(String line) {
        in.println(line);
    }

    /** {@return how many lines of its stderr contain {@code text}} */
    long lines(String text) {
        return err.toString().lines().filter(l -> l.contains(text)).count();
    }

    /** {@return its stderr without the log lines of System.Logger (a few KB at most)} */
    String stderr() {
        String s = err.toString()
                .lines()
                .filter(l ->
                        !l.startsWith("WARNING: ") && !l.startsWith("INFO: ") && !l.matches("\\w{3} \\d\\d, \\d{4} .*"))
                .collect(Collectors.joining("\n"));
        return s.length() > 4000 ? s.substring(0, 4000) + "..." : s;
    }
}
