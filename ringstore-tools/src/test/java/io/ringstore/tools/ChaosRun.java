package io.ringstore.tools;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

/**
 * A chaos run of the reference router ({@code examples/router}): {@value #ROUTERS} router processes
 * (the last two each in its own PID namespace, {@code unshare --pid --fork --mount-proc}), {@value
 * #ORIGINS} nginx origins on loopback and a load generator of a bounded number of lanes in this JVM,
 * for a {@link Schedule}'s duration, while events of the schedule happen: republishes (some of them
 * corrupt files, truncated to a length of their own so that each one's refusal can be told apart in
 * the logs), a drain and an undrain every second, an origin stopped and started, router 2 killed with
 * SIGKILL and restarted, router 3 paused with SIGSTOP, and the ring's directory (a small tmpfs) filled
 * up for a while during republishes.
 *
 * <p>{@link #run} returns a {@link Report}: requests answered and failed (and which failures were on a
 * router being killed, the only ones allowed), the in-flight counts of {@code ringstore state --json}
 * once the load has stopped (all must come back to zero), the most ring files each router process had
 * mapped at once (from {@code /proc/PID/maps}), temporary or lock files left in the ring's directory,
 * and how often each router logged each refused file. {@link Report#problems()} lists what broke a
 * rule; an empty list is a passing run.
 *
 * <p>Every wait has a deadline; nothing depends on the machine's speed except the load's volume.
 */
final class ChaosRun {
    static final int ROUTERS = 4;
    static final int ORIGINS = 8;
    /** The router killed and restarted (in its own PID namespace). */
    static final int KILLED = 2;
    /** The router paused (in its own PID namespace). */
    static final int PAUSED = 3;
    /** How long a corrupt file stays at the path at least, so that every running router sees it. */
    private static final long CORRUPT_MILLIS = 1200;

    private static final String RING_NAME = "fleet.ring";
    private static final Pattern IN_FLIGHT =
            Pattern.compile("\"endpoint\"\\s*:\\s*\"([^\"]*)\".*?\"in_flight\"\\s*:\\s*(-?\\d+)");
    private static final Pattern REAPED_ALIVE = Pattern.compile("lease \\d+ of this process was reaped while it ran");
    private static final Pattern LOCK_BROKEN = Pattern.compile("broke the directory lock held by pid (\\d+)");
    private static final Pattern REFUSED_LENGTH =
            Pattern.compile(": refused, still serving generation \\d+: .*?file is (\\d+) bytes");

    /**
     * What happens during a run. Times are fractions of the duration where so named.
     *
     * @param duration      how long the load and the events run
     * @param republishes   ring files published in that time, evenly spaced
     * @param corruptEvery  every so many-th publication is a corrupt file (truncated)
     * @param killEvery     router {@value #KILLED} is killed with SIGKILL and restarted this often
     * @param pauseEvery    router {@value #PAUSED} is paused this often (the first at half the period)
     * @param pauseFor      for this long
     * @param originDown    origin 0 is stopped from this fraction of the duration …
     * @param originUp      … until this one
     * @param fullFrom      the ring's directory is filled up from this fraction …
     * @param fullUntil     … until this one
     * @param lanes         requests in flight from the load generator at most
     */
    record Schedule(
            Duration duration,
            int republishes,
            int corruptEvery,
            Duration killEvery,
            Duration pauseEvery,
            Duration pauseFor,
            double originDown,
            double originUp,
            double fullFrom,
            double fullUntil,
            int lanes) {
        /** The issue's schedule scaled to {@code duration}: 200 republishes per 10 minutes (at least 30), every 5th corrupt. */
        static Schedule of(Duration duration) {
            int republishes = (int) Math.max(30, 200 * duration.toMillis() / 600_000);
            return new Schedule(
                    duration,
                    republishes,
                    5,
                    Duration.ofSeconds(30),
                    Duration.ofSeconds(60),
                    Duration.ofSeconds(5),
                    0.15,
                    0.30,
                    0.55,
                    0.75,
                    8);
        }
    }

    /** One router process's life: from its first LISTENING line to its end. */
    static final class Incarnation {
        final int router;
        final int number;
        final Process process;
        /** The router JVM's pid as this host's namespace sees it (for a namespaced router, unshare's child). */
        final long pid;

        final int port;
        final Path log;
        final long startedMillis;
        volatile long endedMillis = Long.MAX_VALUE;
        volatile boolean killed;
        final List<long[]> pauses = new CopyOnWriteArrayList<>();
        volatile int maxMapped;

        Incarnation(int router, int number, Process process, long pid, int port, Path log) {
            this.router = router;
            this.number = number;
            this.process = process;
            this.pid = pid;
            this.port = port;
            this.log = log;
            this.startedMillis = System.currentTimeMillis();
        }

        String name() {
            return "router" + router + "#" + number;
        }

        /** Whether it ran, unpaused, from {@code from} to {@code to}. */
        boolean ranThrough(long from, long to) {
            if (startedMillis > from || endedMillis < to) {
                return false;
            }
            for (long[] p : pauses) {
                if (p[0] < to && p[1] > from) {
                    return false;
                }
            }
            return true;
        }
    }

    /** A corrupt file published at the ring's path: the length it was cut to, and when it was there. */
    record Corrupt(int length, long publishedMillis, long[] replacedMillis) {}

    /**
     * The figures of a run and the rules it broke.
     *
     * @param problems each a broken rule, one line; empty for a passing run
     */
    record Report(
            Schedule schedule,
            Instant started,
            long seconds,
            long ok,
            long failed,
            long failedOnKilled,
            List<String> failures,
            int republished,
            int buildsRefusedFull,
            int corruptPublished,
            int corruptSkipped,
            int drains,
            int kills,
            int restartAttempts,
            long longestRestartMillis,
            int pauses,
            String tmpfs,
            Map<String, Long> finalInFlight,
            long inFlightZeroMillis,
            Map<String, Integer> maxMapped,
            List<String> leftovers,
            Map<Integer, Map<String, Integer>> refusalsLogged,
            int refusalsExpected,
            int refusalsSeen,
            List<String> unexpectedExits,
            List<String> reapedAlive,
            List<String> liveLocksBroken,
            List<String> eventErrors,
            List<String> problems) {
        String text() {
            StringBuilder b = new StringBuilder();
            b.append(String.format(
                    "chaos run, %s, %d s (%d routers, 2 in own PID namespaces, %d nginx origins, %d load lanes)%n",
                    started, seconds, ROUTERS, ORIGINS, schedule.lanes()));
            b.append(String.format(
                    "  requests: %,d ok, %,d failed (%,d on a router being killed, %,d otherwise)%n",
                    ok, failed, failedOnKilled, failed - failedOnKilled));
            failures.stream()
                    .limit(5)
                    .forEach(f -> b.append("    e.g. ").append(f).append('\n'));
            b.append(String.format(
                    "  republishes: %d good, %d corrupt (refused), %d builds refused on the full directory, %d corrupt not written (full)%n",
                    republished, corruptPublished, buildsRefusedFull, corruptSkipped));
            b.append(String.format(
                    "  drains+undrains: %d; SIGKILL+restart: %d (%d start attempts, the longest restart %.1f s); SIGSTOP 5 s: %d; tmpfs: %s%n",
                    drains, kills, restartAttempts, longestRestartMillis / 1000.0, pauses, tmpfs));
            b.append(String.format(
                    "  in flight at the end (state --json): %s, all zero %d ms after the load stopped%n",
                    finalInFlight.values(), inFlightZeroMillis));
            b.append("  ring files mapped at most, per process: ")
                    .append(maxMapped)
                    .append('\n');
            b.append("  temp/lock files left in the ring's directory: ")
                    .append(leftovers)
                    .append('\n');
            b.append(String.format(
                    "  refused files logged: %d refusal lines for %d corrupt files; by routers that ran through a file's window: %d of %d expected%n",
                    refusalsLogged.values().stream()
                            .mapToInt(m -> m.values().stream()
                                    .mapToInt(Integer::intValue)
                                    .sum())
                            .sum(),
                    corruptPublished,
                    refusalsSeen,
                    refusalsExpected));
            b.append(String.format(
                    "  leases of live routers reaped: %d; directory locks broken while their holder lived: %d%n",
                    reapedAlive.size(), liveLocksBroken.size()));
            b.append("  router exits not caused by the run: ")
                    .append(unexpectedExits)
                    .append('\n');
            b.append("  event errors: ").append(eventErrors).append('\n');
            b.append("  problems: ").append(problems.isEmpty() ? "none" : "").append('\n');
            problems.forEach(p -> b.append("    ").append(p).append('\n'));
            return b.toString();
        }
    }

    private final Path dir;
    private final Schedule schedule;
    private final Path ringDir;
    private final Path ring;
    private final Path backends;
    private Path classes;
    private Origins origins;
    private String tmpfs = "not mounted";
    private boolean mounted;
    private final Incarnation[] current = new Incarnation[ROUTERS];
    private final List<Incarnation> all = new CopyOnWriteArrayList<>();
    private final AtomicInteger incarnations = new AtomicInteger();
    private volatile boolean stopping;

    private final AtomicLong ok = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final AtomicLong failedOnKilled = new AtomicLong();
    private final List<String> failures = new CopyOnWriteArrayList<>();
    private final List<String> eventErrors = new CopyOnWriteArrayList<>();
    private final List<Corrupt> corrupts = new CopyOnWriteArrayList<>();
    private final AtomicInteger republished = new AtomicInteger();
    private final AtomicInteger buildsRefusedFull = new AtomicInteger();
    private final AtomicInteger corruptSkipped = new AtomicInteger();
    private final AtomicInteger drains = new AtomicInteger();
    private final AtomicInteger kills = new AtomicInteger();
    private final AtomicInteger restartAttempts = new AtomicInteger();
    private final AtomicInteger pauses = new AtomicInteger();
    private volatile boolean full;
    private final AtomicLong generation = new AtomicLong();
    private final List<String> mappedTooMany = new CopyOnWriteArrayList<>();
    private volatile long lastPublished;
    private volatile boolean corruptAtPath;
    private final AtomicLong longestRestartMillis = new AtomicLong();

    private ChaosRun(Path dir, Schedule schedule) {
        this.dir = dir;
        this.schedule = schedule;
        this.ringDir = dir.resolve("ring");
        this.ring = ringDir.resolve(RING_NAME);
        this.backends = dir.resolve("origins.conf");
    }

    /** Runs {@code schedule} with everything under {@code dir}; leaves no process running and nothing mounted. */
    static Report run(Path dir, Schedule schedule) throws Exception {
        ChaosRun run = new ChaosRun(dir, schedule);
        try {
            return run.run();
        } finally {
            run.shutdown();
        }
    }

    private Report run() throws Exception {
        Instant started = Instant.now();
        Files.createDirectories(ringDir);
        mountTmpfs();
        classes = compileRouter();
        origins = Origins.start(dir.resolve("origins"), ORIGINS);
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < ORIGINS; i++) {
            text.append("server ").append(origins.address(i)).append(";\n");
        }
        Files.writeString(backends, text);
        CliRun.build(backends, ring, "--generation", Long.toString(generation.incrementAndGet()));
        for (int r = 0; r < ROUTERS; r++) {
            current[r] = startRouter(r);
        }
        ExecutorService events = Executors.newVirtualThreadPerTaskExecutor();
        HttpClient client = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5))
                .executor(events)
                .build();
        long start = System.currentTimeMillis();
        long end = start + schedule.duration().toMillis();
        List<java.util.concurrent.Future<?>> tasks = new ArrayList<>();
        for (int lane = 0; lane < schedule.lanes(); lane++) {
            SplittableRandom random = new SplittableRandom(lane);
            tasks.add(events.submit(() -> load(client, random, end)));
        }
        tasks.add(events.submit(guarded("republish", () -> republish(start, end))));
        tasks.add(events.submit(guarded("drain", () -> drainEverySecond(end))));
        tasks.add(events.submit(guarded("kill", () -> killEvery(start, end))));
        tasks.add(events.submit(guarded("pause", () -> pauseEvery(start, end))));
        tasks.add(events.submit(guarded("origin", () -> originDownAndUp(start))));
        tasks.add(events.submit(guarded("fill", () -> fillUp(start))));
        tasks.add(events.submit(guarded("maps", () -> sampleMaps(start, end))));
        for (java.util.concurrent.Future<?> t : tasks) {
            t.get(schedule.duration().toMillis() + 300_000, TimeUnit.MILLISECONDS); // a hang detector
        }
        long loadStopped = System.currentTimeMillis();
        stopping = true;
        client.close();
        events.close();
        Map<String, Long> inFlight = Map.of();
        long zeroAfter = -1;
        long deadline = loadStopped + 60_000;
        while (System.currentTimeMillis() < deadline) {
            inFlight = inFlight();
            if (!inFlight.isEmpty() && inFlight.values().stream().allMatch(v -> v == 0)) {
                zeroAfter = System.currentTimeMillis() - loadStopped;
                break;
            }
            Thread.sleep(200);
        }
        List<String> unexpected = new ArrayList<>();
        for (Incarnation i : all) {
            if (!i.killed && !i.process.isAlive()) {
                unexpected.add(i.name() + " exited " + i.process.exitValue() + ": " + lastLines(i.log, 3));
            }
        }
        stopRouters();
        List<String> leftovers = new ArrayList<>();
        try (var files = Files.list(ringDir)) {
            files.map(p -> p.getFileName().toString())
                    .filter(n -> !n.equals(RING_NAME) && !n.equals(RING_NAME + ".state"))
                    .sorted()
                    .forEach(leftovers::add);
        }
        return report(started, start, loadStopped, inFlight, zeroAfter, leftovers, unexpected);
    }

    private Report report(
            Instant started,
            long start,
            long loadStopped,
            Map<String, Long> inFlight,
            long zeroAfter,
            List<String> leftovers,
            List<String> unexpected)
            throws IOException {
        List<String> problems = new ArrayList<>();
        long failedOther = failed.get() - failedOnKilled.get();
        if (failedOther > 0) {
            problems.add(failedOther + " requests failed on routers not being killed, e.g. "
                    + failures.stream()
                            .filter(f -> !f.startsWith("[killed]"))
                            .findFirst()
                            .orElse("?"));
        }
        if (ok.get() == 0) {
            problems.add("no request was answered");
        }
        if (zeroAfter < 0) {
            problems.add("in flight after the load stopped did not come back to zero within 60 s: " + inFlight);
        }
        Map<String, Integer> maxMapped = new TreeMap<>();
        for (Incarnation i : all) {
            maxMapped.merge("router" + i.router, i.maxMapped, Math::max);
            if (i.maxMapped > 2) {
                problems.add(i.name() + " had " + i.maxMapped + " ring files mapped at once (at most 2)");
            }
        }
        mappedTooMany.forEach(m -> problems.add("more than 2 ring files mapped: " + m));
        if (!leftovers.isEmpty()) {
            problems.add("left in the ring's directory: " + leftovers);
        }
        // refusals: incarnation → length → lines
        Map<Integer, Map<String, Integer>> logged = new TreeMap<>();
        Map<String, Map<Integer, Integer>> byIncarnation = new LinkedHashMap<>();
        Map<Long, String> livePids =
                new TreeMap<>(Map.of(ProcessHandle.current().pid(), "this JVM's in-process ringstore state/build"));
        all.stream().filter(i -> !i.killed).forEach(i -> livePids.put(i.pid, i.name()));
        List<String> reapedAlive = new ArrayList<>();
        List<String> liveLocksBroken = new ArrayList<>();
        for (Incarnation i : all) {
            Map<Integer, Integer> counts = new TreeMap<>();
            for (String line : Files.readAllLines(i.log, StandardCharsets.UTF_8)) {
                if (REAPED_ALIVE.matcher(line).find()) {
                    reapedAlive.add(i.name() + (i.pauses.isEmpty() ? "" : " (paused " + i.pauses.size() + "×)") + ": "
                            + line.strip());
                }
                Matcher broken = LOCK_BROKEN.matcher(line);
                if (broken.find() && livePids.containsKey(Long.parseLong(broken.group(1)))) {
                    liveLocksBroken.add(i.name() + " broke the lock of live pid " + broken.group(1) + " ("
                            + livePids.get(Long.parseLong(broken.group(1))) + ")");
                }
                Matcher m = REFUSED_LENGTH.matcher(line);
                if (m.find()) {
                    counts.merge(Integer.parseInt(m.group(1)), 1, Integer::sum);
                }
            }
            byIncarnation.put(i.name(), counts);
            counts.forEach((length, n) ->
                    logged.computeIfAbsent(length, k -> new TreeMap<>()).put(i.name(), n));
        }
        reapedAlive.forEach(r -> problems.add("a live router's lease was reaped (its in-flight counts lost): " + r));
        liveLocksBroken.forEach(
                r -> problems.add("the state file's directory lock was broken while its holder lived: " + r));
        int expected = 0;
        int seen = 0;
        Set<Integer> lengths = new java.util.HashSet<>();
        for (Corrupt c : corrupts) {
            lengths.add(c.length());
            long replaced = c.replacedMillis()[0] == 0 ? loadStopped : c.replacedMillis()[0];
            for (Incarnation i : all) {
                int n = byIncarnation.get(i.name()).getOrDefault(c.length(), 0);
                if (n > 1) {
                    problems.add(
                            i.name() + " logged the corrupt file of " + c.length() + " bytes " + n + " times (once)");
                }
                if (replaced - c.publishedMillis() >= 1000 && i.ranThrough(c.publishedMillis(), replaced)) {
                    expected++;
                    seen += n == 1 ? 1 : 0;
                    if (n == 0) {
                        problems.add(i.name() + " ran through the corrupt file of " + c.length() + " bytes ("
                                + (replaced - c.publishedMillis()) + " ms at the path) and never logged its refusal");
                    }
                }
            }
        }
        for (Map.Entry<String, Map<Integer, Integer>> e : byIncarnation.entrySet()) {
            for (int length : e.getValue().keySet()) {
                if (!lengths.contains(length)) {
                    problems.add(
                            e.getKey() + " logged a refusal of a " + length + "-byte file that was never published");
                }
            }
        }
        if (corrupts.isEmpty()) {
            problems.add("no corrupt file was published");
        }
        for (String u : unexpected) {
            problems.add("a router died on its own: " + u);
        }
        for (String e : eventErrors) {
            problems.add("event failed: " + e);
        }
        return new Report(
                schedule,
                started,
                (loadStopped - start) / 1000,
                ok.get(),
                failed.get(),
                failedOnKilled.get(),
                List.copyOf(failures),
                republished.get(),
                buildsRefusedFull.get(),
                corrupts.size(),
                corruptSkipped.get(),
                drains.get(),
                kills.get(),
                restartAttempts.get(),
                longestRestartMillis.get(),
                pauses.get(),
                tmpfs,
                inFlight,
                zeroAfter,
                maxMapped,
                leftovers,
                logged,
                expected,
                seen,
                unexpected,
                reapedAlive,
                liveLocksBroken,
                List.copyOf(eventErrors),
                problems);
    }

    // ---- load ------------------------------------------------------------------------------------

    /** One lane: requests one after another to a router picked at random (not one being killed), until {@code end}. */
    private void load(HttpClient client, SplittableRandom random, long end) {
        while (System.currentTimeMillis() < end) {
            Incarnation target = current[random.nextInt(ROUTERS)];
            if (target == null || target.killed) {
                continue;
            }
            String uri = (random.nextInt(4) == 0 ? "/slow/" : "/k/") + random.nextInt(1000);
            String outcome;
            try {
                HttpResponse<String> response = client.send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + target.port + uri))
                                .timeout(Duration.ofSeconds(60))
                                .build(),
                        HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
                String backend = response.headers().firstValue("X-Backend").orElse("(none)");
                if (response.statusCode() == 200
                        && response.body().strip().equals("origin" + origins.indexOf(backend))) {
                    ok.incrementAndGet();
                    continue;
                }
                outcome = response.statusCode() + " from " + backend + ": "
                        + response.body().strip();
            } catch (IOException e) {
                outcome = e.toString();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            failed.incrementAndGet();
            boolean killed = target.killed;
            if (killed) {
                failedOnKilled.incrementAndGet();
            }
            if (failures.size() < 20) {
                failures.add((killed ? "[killed] " : "") + target.name() + " " + uri + " at +"
                        + (System.currentTimeMillis() - target.startedMillis) + " ms: " + outcome);
            }
        }
    }

    // ---- events ----------------------------------------------------------------------------------

    private interface Event {
        void run() throws Exception;
    }

    private Runnable guarded(String name, Event e) {
        return () -> {
            try {
                e.run();
            } catch (Exception | AssertionError x) {
                eventErrors.add(name + ": " + x);
            }
        };
    }

    private static void sleepUntil(long millis) throws InterruptedException {
        long d = millis - System.currentTimeMillis();
        if (d > 0) {
            Thread.sleep(d);
        }
    }

    private void republish(long start, long end) throws Exception {
        long period = schedule.duration().toMillis() / schedule.republishes();
        Corrupt atPath = null;
        for (int i = 0; i < schedule.republishes(); i++) {
            sleepUntil(start + i * period);
            if (System.currentTimeMillis() >= end) {
                break;
            }
            if (i % schedule.corruptEvery() == schedule.corruptEvery() - 1) {
                if (atPath == null) { // one corrupt file at a time: each one stays until a good one replaces it
                    atPath = publishCorrupt(8 + corrupts.size() % 200);
                }
                continue;
            }
            // an explicit generation: the file replaced may be a corrupt one, whose generation build cannot read
            CliRun build = CliRun.run(
                    "build",
                    backends.toString(),
                    "-o",
                    ring.toString(),
                    "--generation",
                    Long.toString(generation.incrementAndGet()));
            if (build.exit() == Main.OK) {
                lastPublished = System.currentTimeMillis();
                republished.incrementAndGet();
                corruptAtPath = false;
                if (atPath != null) {
                    atPath.replacedMillis()[0] = System.currentTimeMillis();
                    atPath = null;
                }
            } else if (full) {
                buildsRefusedFull.incrementAndGet();
                if (!build.stderr().contains("No space left on device")) {
                    eventErrors.add("a build on the full directory failed without saying so: "
                            + build.stderr().strip());
                }
            } else {
                eventErrors.add("build failed: " + build.stderr().strip());
            }
        }
        if (atPath != null) { // end on a good file, so that a router restarted later can start
            CliRun.build(backends, ring, "--generation", Long.toString(generation.incrementAndGet()));
            corruptAtPath = false;
            atPath.replacedMillis()[0] = System.currentTimeMillis();
        }
    }

    /** Publishes by rename the serving file's first {@code length} bytes; null when the directory is full. */
    private Corrupt publishCorrupt(int length) throws IOException, InterruptedException {
        byte[] good = Files.readAllBytes(ring);
        Path tmp = ringDir.resolve(".chaos-corrupt.tmp");
        try {
            Files.write(tmp, java.util.Arrays.copyOf(good, length));
        } catch (IOException e) {
            Files.deleteIfExists(tmp);
            corruptSkipped.incrementAndGet();
            return null;
        }
        Files.move(tmp, ring, StandardCopyOption.ATOMIC_MOVE);
        lastPublished = System.currentTimeMillis();
        corruptAtPath = true;
        Corrupt c = new Corrupt(length, System.currentTimeMillis(), new long[1]);
        corrupts.add(c);
        Thread.sleep(CORRUPT_MILLIS);
        return c;
    }

    private void drainEverySecond(long end) throws Exception {
        String drained = null;
        for (int i = 0; System.currentTimeMillis() < end; i++) {
            if (drained != null) {
                expectOk(CliRun.run("state", ring.toString(), "undrain", drained), "undrain " + drained);
            }
            drained = origins.address(1 + i % (ORIGINS - 1)); // origin 0 is the one stopped
            expectOk(CliRun.run("state", ring.toString(), "drain", drained), "drain " + drained);
            drains.incrementAndGet();
            Thread.sleep(1000);
        }
        if (drained != null) {
            expectOk(CliRun.run("state", ring.toString(), "undrain", drained), "undrain " + drained);
        }
    }

    private void expectOk(CliRun run, String what) {
        if (run.exit() != Main.OK) {
            eventErrors.add(what + (full ? " (directory full)" : "") + ": exit " + run.exit() + ": "
                    + run.stderr().strip());
        }
    }

    private void killEvery(long start, long end) throws Exception {
        long period = schedule.killEvery().toMillis();
        for (long at = start + period; at < end; at += period) {
            sleepUntil(at);
            Incarnation victim = current[KILLED];
            victim.killed = true;
            signal("KILL", victim.pid);
            victim.process.destroyForcibly();
            if (!victim.process.waitFor(30, TimeUnit.SECONDS)) {
                throw new AssertionError(victim.name() + " did not end within 30 s of SIGKILL");
            }
            victim.endedMillis = System.currentTimeMillis();
            kills.incrementAndGet();
            current[KILLED] = startRouterRetrying(KILLED);
        }
    }

    private void pauseEvery(long start, long end) throws Exception {
        long period = schedule.pauseEvery().toMillis();
        for (long at = start + period / 2; at + schedule.pauseFor().toMillis() < end; at += period) {
            sleepUntil(at);
            Incarnation paused = current[PAUSED];
            long[] window = {System.currentTimeMillis(), Long.MAX_VALUE};
            paused.pauses.add(window);
            signal("STOP", paused.pid);
            try {
                Thread.sleep(schedule.pauseFor().toMillis());
            } finally {
                signal("CONT", paused.pid);
                window[1] = System.currentTimeMillis();
            }
            pauses.incrementAndGet();
        }
    }

    private void originDownAndUp(long start) throws Exception {
        long d = schedule.duration().toMillis();
        sleepUntil(start + Math.round(schedule.originDown() * d));
        origins.stop(0);
        sleepUntil(start + Math.round(schedule.originUp() * d));
        origins.start(0);
    }

    private void fillUp(long start) throws Exception {
        if (!mounted) {
            return;
        }
        long d = schedule.duration().toMillis();
        sleepUntil(start + Math.round(schedule.fullFrom() * d));
        Path filler = ringDir.resolve("filler");
        try (OutputStream out = Files.newOutputStream(filler)) {
            byte[] block = new byte[4096];
            while (true) {
                out.write(block);
            }
        } catch (IOException expected) {
            full = true; // No space left on device
        }
        try {
            sleepUntil(start + Math.round(schedule.fullUntil() * d));
        } finally {
            Files.delete(filler);
            full = false;
        }
    }

    private void sampleMaps(long start, long end) throws InterruptedException {
        while (System.currentTimeMillis() < end) {
            for (Incarnation i : current) {
                if (i == null || i.killed) {
                    continue;
                }
                try {
                    Set<String> inodes = new java.util.HashSet<>();
                    List<String> mapped = new ArrayList<>();
                    for (String line : Files.readAllLines(Path.of("/proc", Long.toString(i.pid), "maps"))) {
                        String[] f = line.trim().split("\\s+", 6);
                        if (f.length == 6 && f[5].startsWith(ring.toString()) && !f[5].startsWith(ring + ".state")) {
                            if (inodes.add(f[3] + ":" + f[4])) {
                                mapped.add("inode " + f[4] + " " + f[5]);
                            }
                        }
                    }
                    if (inodes.size() > 2 && inodes.size() > i.maxMapped) {
                        mappedTooMany.add(i.name() + " at +" + (System.currentTimeMillis() - start)
                                + " ms (last publication at +" + (lastPublished - start) + " ms"
                                + (full ? ", directory full" : "") + "): " + mapped);
                    }
                    i.maxMapped = Math.max(i.maxMapped, inodes.size());
                } catch (IOException gone) {
                    // being killed
                }
            }
            Thread.sleep(100);
        }
    }

    private static void signal(String signal, long pid) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid))
                .redirectErrorStream(true)
                .start();
        String out = new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
            throw new IOException("kill -" + signal + " " + pid + ": " + out.strip());
        }
    }

    /** {@code ringstore state --json}: endpoint → in flight on the host. */
    private Map<String, Long> inFlight() {
        CliRun state = CliRun.run("state", ring.toString(), "--json");
        Map<String, Long> counts = new TreeMap<>();
        if (state.exit() != Main.OK) {
            eventErrors.add(
                    "state --json: exit " + state.exit() + ": " + state.stderr().strip());
            return counts;
        }
        String json = state.out();
        int backendsAt = json.indexOf("\"backends\"");
        Matcher m = IN_FLIGHT.matcher(backendsAt < 0 ? "" : json.substring(backendsAt));
        while (m.find()) {
            counts.put(m.group(1), Long.parseLong(m.group(2)));
        }
        return counts;
    }

    // ---- routers, tmpfs ----------------------------------------------------------------------------

    private void mountTmpfs() throws IOException, InterruptedException {
        Process p = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", ringDir.toString())
                .redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        if (p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0) {
            mounted = true;
            tmpfs = "16 MiB (the 256-lease state file takes 4.7 MiB), filled up from "
                    + Math.round(schedule.fullFrom() * 100) + " to " + Math.round(schedule.fullUntil() * 100)
                    + " % of the run";
        } else {
            tmpfs = "not mounted (" + out + "): the full-directory phase is skipped";
            System.err.println("chaos run: cannot mount a tmpfs on " + ringDir + ": " + out
                    + "; the full-directory phase is skipped");
        }
    }

    private Path compileRouter() throws IOException {
        Path source = Path.of(System.getProperty("ringstore.repo", ".."), "examples", "router", "Router.java");
        Path out = Files.createDirectories(dir.resolve("router-classes"));
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        try (StandardJavaFileManager files = javac.getStandardFileManager(diagnostics, null, StandardCharsets.UTF_8)) {
            boolean compiled = javac.getTask(
                            null,
                            files,
                            diagnostics,
                            List.of("-proc:none", "-d", out.toString(), "-cp", System.getProperty("java.class.path")),
                            null,
                            files.getJavaFileObjects(source))
                    .call();
            if (!compiled) {
                throw new AssertionError(
                        source + " does not compile against the library:\n" + diagnostics.getDiagnostics());
            }
        }
        return out;
    }

    /**
     * Starts router {@code r} again, retrying while it cannot: a router does not start on a corrupt file
     * (it has no generation to serve), and one published just before the directory filled up stays at
     * the path until a build succeeds again. Gives up a minute after a good file is back.
     */
    private Incarnation startRouterRetrying(int r) throws Exception {
        long began = System.currentTimeMillis();
        long deadline = began + 60_000;
        while (true) {
            restartAttempts.incrementAndGet();
            try {
                Incarnation i = startRouter(r);
                longestRestartMillis.accumulateAndGet(System.currentTimeMillis() - began, Math::max);
                return i;
            } catch (IOException | AssertionError e) {
                if (corruptAtPath) {
                    deadline = System.currentTimeMillis() + 60_000;
                }
                if (System.currentTimeMillis() > deadline) {
                    throw e;
                }
                Thread.sleep(500);
            }
        }
    }

    private Incarnation startRouter(int r) throws IOException, InterruptedException {
        int number = incarnations.incrementAndGet();
        Path log = dir.resolve("router" + r + "-" + number + ".err");
        List<String> command = new ArrayList<>();
        boolean namespaced = r >= ROUTERS - 2;
        if (namespaced) {
            command.addAll(List.of("unshare", "--pid", "--fork", "--mount-proc", "--kill-child"));
        }
        command.addAll(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx64m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "--enable-native-access=ALL-UNNAMED",
                "-XX:-UsePerfData", // each namespaced JVM is pid 1: their /tmp/hsperfdata_root/1 would collide
                "-cp",
                classes + File.pathSeparator + System.getProperty("java.class.path"),
                "Router",
                ring.toString(),
                "0"));
        Process p = new ProcessBuilder(command).redirectError(log.toFile()).start();
        BufferedReader stdout =
                new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.US_ASCII));
        String line = stdout.readLine();
        while (line != null && !line.startsWith("LISTENING ")) {
            line = stdout.readLine(); // a JVM warning
        }
        if (line == null || !line.startsWith("LISTENING ")) {
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
            throw new AssertionError("router " + r + " did not start: " + line + ": " + lastLines(log, 5));
        }
        long pid = p.pid();
        if (namespaced) {
            pid = p.toHandle()
                    .children()
                    .findFirst()
                    .orElseThrow(() -> new AssertionError("unshare of router " + r + " has no child"))
                    .pid();
        }
        Incarnation i =
                new Incarnation(r, number, p, pid, Integer.parseInt(line.substring("LISTENING ".length())), log);
        all.add(i);
        return i;
    }

    private static String lastLines(Path log, int n) {
        try {
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            return String.join(" | ", lines.subList(Math.max(0, lines.size() - n), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    private void stopRouters() throws InterruptedException, IOException {
        for (Incarnation i : current) {
            if (i != null && i.process.isAlive()) {
                i.process.getOutputStream().close();
            }
        }
        for (Incarnation i : current) {
            if (i != null && !i.process.waitFor(20, TimeUnit.SECONDS)) {
                i.process.destroyForcibly();
            }
        }
        for (Incarnation i : current) {
            if (i != null) {
                i.endedMillis = Math.min(i.endedMillis, System.currentTimeMillis());
            }
        }
    }

    private void shutdown() throws Exception {
        for (Incarnation i : all) {
            if (i.process.isAlive()) {
                try {
                    signal("CONT", i.pid);
                } catch (IOException gone) {
                    // ended meanwhile
                }
                i.process.destroyForcibly();
                ProcessHandle.of(i.pid).ifPresent(ProcessHandle::destroyForcibly);
            }
        }
        if (origins != null) {
            origins.close();
        }
        if (mounted) {
            Process p = new ProcessBuilder("umount", "-l", ringDir.toString())
                    .redirectErrorStream(true)
                    .start();
            p.getInputStream().readAllBytes();
            p.waitFor(30, TimeUnit.SECONDS);
        }
    }
}
