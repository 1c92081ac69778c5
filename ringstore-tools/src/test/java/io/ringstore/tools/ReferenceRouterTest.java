package io.ringstore.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.state.HostState;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.api.io.TempDir;

/**
 * The reference router of {@code examples/router}, end to end with real parts on loopback: 8 nginx
 * origins that answer with their own name, 4 router processes (child JVMs running the example, compiled
 * here against the library) sharing one ring file and its state file, and a bounded load generator in
 * this JVM. The scenarios run in order on the same origins and routers (the bounded-load one starts
 * its own routers, then the shared ones again).
 */
@Tag("nginx")
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(
        value = 300,
        unit = TimeUnit.SECONDS) // a hang detector: the bounded-load test takes 30-90 s, on a busy machine more
@EnabledIf(value = Origins.TESTS_RUN, disabledReason = Origins.MISSING)
class ReferenceRouterTest {
    private static final int ORIGINS = 8;
    private static final int ROUTERS = 4;
    /**
     * The origins' health settings, written in the backends file and stored in the ring file (flag
     * health), which every router process judges them by: a short fail_timeout, so that a stopped
     * origin's keys are back after 1 s rather than nginx's default 10 s.
     */
    private static final int MAX_FAILS = 1;

    private static final double FAIL_TIMEOUT_SECONDS = 1;
    private static final double C = 1.25;
    /** c for "no bound": capacity ⌈100 (m + 1) / 8⌉ is more than all requests in flight. */
    private static final double UNBOUNDED = 100;

    private static final List<String> UNIFORM = keys("/k/", 400);
    private static final List<String> SLOW = keys("/slow/", 1000);
    /** Requests in flight in the bounded-load runs: a mean of 8 per origin, where ⌈1.25 × 64 / 8⌉ is exactly 1.25 × 8. */
    private static final int IN_FLIGHT = 64;

    @TempDir
    static Path dir;

    private static Path classes;
    private static Origins origins;
    private static Path ring;
    private static List<RouterProcess> routers = List.of();
    /** URI → the address {@code ringstore lookup} answers for it. */
    private static Map<String, String> ringAnswer;

    private static HttpClient client;
    private static ExecutorService workers;

    @BeforeAll
    static void start() throws Exception {
        Origins.requireInstalled("the end-to-end router test");
        classes = compileExample();
        origins = Origins.start(dir.resolve("origins"), ORIGINS);
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < ORIGINS; i++) {
            text.append("server ")
                    .append(origins.address(i))
                    .append(" max_fails=")
                    .append(MAX_FAILS)
                    .append(" fail_timeout=")
                    .append(Math.round(FAIL_TIMEOUT_SECONDS))
                    .append("s;\n");
        }
        Path backends = CliRun.backends(dir, "origins.conf", text.toString());
        ring = dir.resolve("fleet.ring");
        CliRun.build(backends, ring);
        List<String> all = new ArrayList<>(UNIFORM);
        all.addAll(SLOW);
        ringAnswer = new HashMap<>();
        for (String line : CliRun.runWithInput(String.join("\n", all) + "\n", "lookup", ring.toString())
                .assertOk()
                .out()
                .lines()
                .toList()) {
            String[] f = line.split("\t");
            ringAnswer.put(f[0], f[1]);
        }
        assertEquals(all.size(), ringAnswer.size(), "ringstore lookup answered every key");
        workers = Executors.newVirtualThreadPerTaskExecutor();
        client = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .executor(workers)
                .build();
        routers = RouterProcess.startAll(classes, List.of(ring, ring, ring, ring), C);
    }

    @AfterAll
    static void stop() throws Exception {
        RouterProcess.stopAll(routers);
        if (origins != null) {
            origins.close();
        }
        if (client != null) {
            client.close();
            workers.close();
        }
    }

    @Test
    @Order(1)
    void withoutFaultsEveryRequestGoesWhereRingstoreLookupSays() throws Exception {
        List<Reply> replies = load(UNIFORM, 1, () -> false);
        for (Reply r : replies) {
            assertEquals(200, r.status, () -> "reply " + r);
            assertEquals(
                    ringAnswer.get(r.uri), r.backend, () -> "backend of " + r.uri + ", as ringstore lookup names it");
            assertEquals("origin" + origins.indexOf(r.backend), r.body, () -> "the origin named answered " + r);
        }
    }

    @Test
    @Order(2)
    void republishing100TimesUnderLoadFailsNoRequest() throws Exception {
        Path backends = dir.resolve("origins.conf");
        CompletableFuture<Void> republished = CompletableFuture.runAsync(() -> {
            for (int i = 0; i < 100; i++) {
                CliRun.build(backends, ring); // a new generation each time, published by rename
                try {
                    Thread.sleep(10);
                } catch (InterruptedException e) {
                    throw new RuntimeException(e);
                }
            }
        });
        List<String> uris = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            uris.addAll(UNIFORM);
        }
        List<Reply> replies = load(uris, 8, republished::isDone);
        republished.join();
        List<Reply> failed = replies.stream().filter(r -> r.status != 200).toList();
        System.out.printf(
                "reference router: %,d requests during 100 republishes, %d failed%n", replies.size(), failed.size());
        assertTrue(failed.isEmpty(), () -> failed.size() + " requests failed, e.g. " + failed.getFirst());
        assertTrue(replies.size() >= 1000, "load ran through the republishes: " + replies.size());
    }

    @Test
    @Order(3)
    void aStoppedOriginIsSkippedByEveryProcessAndOnlyItsKeysMoveUntilItIsBack() throws Exception {
        int stopped = 3;
        String address = origins.address(stopped);
        origins.stop(stopped);
        long start = System.nanoTime();
        List<Reply> replies = load(UNIFORM, 1, () -> false);
        double seconds = (System.nanoTime() - start) / 1e9;
        int failures = 0;
        int moved = 0;
        for (Reply r : replies) {
            assertEquals(200, r.status, () -> "reply " + r);
            failures += r.tries - 1;
            if (ringAnswer.get(r.uri).equals(address)) {
                assertNotEquals(address, r.backend, () -> "answered by the stopped origin? " + r);
                moved++;
            } else {
                assertEquals(ringAnswer.get(r.uri), r.backend, () -> "a key of another origin kept its backend: " + r);
            }
        }
        // Without the shared state each of the 4 processes would try the stopped origin itself; with it,
        // max_fails failures on the host take it out everywhere, and one probe per fail_timeout after that.
        long probes = (long) Math.floor(seconds / FAIL_TIMEOUT_SECONDS);
        System.out.printf(
                "reference router: origin stopped, %d of %d keys moved, %d connect failures on the host in %.1f s%n",
                moved, replies.size(), failures, seconds);
        assertTrue(moved > 0, "some keys belong to the stopped origin");
        assertTrue(
                failures >= MAX_FAILS && failures <= MAX_FAILS + probes,
                "connect failures host-wide: " + failures + " (max_fails " + MAX_FAILS + ", " + probes + " probes in "
                        + seconds + " s)");

        origins.start(stopped);
        Thread.sleep(Math.round(FAIL_TIMEOUT_SECONDS * 1000) + 300);
        for (Reply r : load(UNIFORM, 1, () -> false)) {
            assertEquals(200, r.status, () -> "reply " + r);
            assertEquals(
                    ringAnswer.get(r.uri),
                    r.backend,
                    () -> "after fail_timeout every key is back on its backend: " + r);
        }
    }

    @Test
    @Order(4)
    void aDrainFromTheCliReachesEveryProcess() throws Exception {
        String drained = origins.address(5);
        CliRun.run("state", ring.toString(), "drain", drained).assertOk();
        try {
            List<Reply> replies = load(UNIFORM, 4, () -> false);
            long moved = replies.stream()
                    .filter(r -> ringAnswer.get(r.uri).equals(drained))
                    .count();
            for (Reply r : replies) {
                assertEquals(200, r.status, () -> "reply " + r);
                assertNotEquals(drained, r.backend, () -> "a request reached the drained origin: " + r);
            }
            assertTrue(moved > 0, "some keys belong to the drained origin");
        } finally {
            CliRun.run("state", ring.toString(), "undrain", drained).assertOk();
        }
        assertTrue(
                load(UNIFORM, 1, () -> false).stream().anyMatch(r -> r.backend.equals(drained)),
                "undrained, it serves again");
    }

    /**
     * A Zipf(1.1) workload over 1,000 keys of slow origins (so that requests overlap), 64 at a time:
     * with the bound shared host-wide, the busiest origin stays within c × the mean in flight; the
     * same run with a state file per process (each bounding only its own quarter) and with no bound
     * are measured for comparison, and the share of requests served by their ring backend printed.
     *
     * <p>Nothing here depends on the machine's speed. An origin a router reported failed (on a busy
     * machine, requests to an origin holding many requests have been seen to time out after the
     * router's 30 s, in the no-bound and per-process runs) is skipped host-wide for fail_timeout, as it
     * must be: its keys move and the bound counts one origin fewer. So the origins with a failure reported in a run's window
     * are read from the state file, the guarantee below counts the fewest origins available in a sample
     * (as {@code SharedLoad}'s n does), and without a bound every request of an origin with no failure
     * must reach it, exactly. How often a sample is within the bound (or one more) depends on the schedule:
     * the bound is checked, then acquired (issue 20 makes it strict), and a router descheduled between
     * the two lets others in. What holds under any schedule is asserted instead: a chooser passes the
     * check only below ⌈c·(m+1)/n⌉ ≤ ⌈c·64/n⌉, and it races only the choosers between their own check
     * and acquire, at most one per carrier thread of a router (choose to acquire never parks a virtual
     * thread), so no sample exceeds ⌈c·64/n⌉ + routers × processors; no bound's busiest does.
     */
    @Test
    @Order(5)
    void boundedLoadSharedHostWideKeepsTheBusiestOriginWithinCTimesTheMean() throws Exception {
        List<String> workload = zipf(3000, 1.1, new SplittableRandom(12));
        Balance hostWide = balance(workload, C, List.of(ring, ring, ring, ring));
        RouterProcess.stopAll(routers);
        List<Path> ownRings = new ArrayList<>();
        for (int i = 0; i < ROUTERS; i++) {
            ownRings.add(Files.copy(
                    ring, Files.createDirectories(dir.resolve("process" + i)).resolve("fleet.ring")));
        }
        Balance perProcess = balance(workload, C, ownRings);
        Balance unbounded = balance(workload, UNBOUNDED, List.of(ring, ring, ring, ring));
        routers = RouterProcess.startAll(classes, List.of(ring, ring, ring, ring), C); // as before, for the next test
        System.out.printf(
                "reference router, Zipf(1.1), %d requests, %d in flight, %d routers, %d origins; busiest origin's in-flight / mean"
                        + " (median, p99 of samples) and affinity:%n",
                workload.size(), IN_FLIGHT, ROUTERS, ORIGINS);
        System.out.printf("  c=%.2f host-wide:   %s%n", C, hostWide);
        System.out.printf("  c=%.2f per process: %s%n", C, perProcess);
        System.out.printf("  no bound:          %s%n", unbounded);
        // A sample can exceed the bound by a request placed when more were in flight, or placed by another
        // thread or process between this one's check and its acquire: by one request, nearly always
        // (96-100 % of samples on an idle 2-core machine; 94.0 % once at a load average of 6-11, 99.5 % at
        // 17 with two CPU hogs): printed, not asserted, since that share depends on the schedule.
        // What holds under any schedule (see above):
        int racers = ROUTERS * Runtime.getRuntime().availableProcessors();
        long guaranteed = (long) Math.ceil(C * IN_FLIGHT / hostWide.fewestAvailable) + racers;
        assertTrue(
                hostWide.busiest <= guaranteed,
                "host-wide, no sample's busiest origin above ⌈c·" + IN_FLIGHT + "/n⌉ + " + racers + " = " + guaranteed
                        + ": " + hostWide);
        if (guaranteed
                < IN_FLIGHT) { // on a machine of few cores (2: ⌈1.25·64/8⌉ + 8 = 18), the guarantee is one no bound
            // breaks
            assertTrue(
                    unbounded.busiest > guaranteed,
                    "no bound's busiest origin goes above " + guaranteed + ": " + unbounded);
        }
        // An origin failed in the no-bound run moves its keys to the others, which spreads that run's load (and
        // its share within the bound over the origins left, 33.6 % once with 5 failed): compared as measured then.
        double margin = unbounded.failedOrigins.isEmpty() ? 0.5 : 0;
        assertTrue(
                hostWide.withinBound > unbounded.withinBound + margin,
                "the bound holds where no bound does not: " + hostWide + " vs " + unbounded);
        assertTrue(hostWide.p99 < unbounded.p99, "a bound lowers the peak: " + hostWide + " vs " + unbounded);
        // Without a bound every key goes to its ring backend, unless that backend was reported failed.
        assertEquals(
                List.of(),
                unbounded.movedOffHealthy,
                () -> "without a bound, requests of origins with no failure reported" + " went elsewhere: "
                        + unbounded);
    }

    /**
     * A router killed with {@code kill -9} while it holds requests in flight: the survivors' heartbeat
     * reaps its lease, so the host-wide counts come back to the requests really in flight (those of a
     * surviving router) without ever reading below them.
     */
    @Test
    @Order(6)
    void killNineOfARouterWithRequestsInFlightRecoversTheCounts() throws Exception {
        try (HostState view = HostState.inspect(HostState.statePath(ring), HostState.Options.DEFAULTS, false)
                .orElseThrow()) {
            int[] slots = new int[ORIGINS];
            for (int i = 0; i < ORIGINS; i++) {
                slots[i] = view.slot(origins.address(i));
            }
            RouterProcess victim = routers.get(0);
            RouterProcess survivor = routers.get(1);
            List<CompletableFuture<Reply>> held = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                String uri = "/hold/victim" + i;
                held.add(CompletableFuture.supplyAsync(() -> send(victim, uri), workers));
            }
            List<CompletableFuture<Reply>> kept = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                String uri = "/hold/survivor" + i;
                kept.add(CompletableFuture.supplyAsync(() -> send(survivor, uri), workers));
            }
            awaitTotal(view, slots, 9, "all 9 requests in flight");
            victim.process.destroyForcibly(); // SIGKILL
            assertTrue(victim.process.waitFor(10, TimeUnit.SECONDS), "the router was killed");
            long killed = System.nanoTime();
            long total;
            do {
                total = total(view, slots);
                assertTrue(
                        total >= 3 && total <= 9,
                        "host-wide in flight between the true 3 and the 9 before the kill: " + total);
                Thread.sleep(5);
            } while (total > 3 && System.nanoTime() - killed < TimeUnit.SECONDS.toNanos(20));
            double recovery = (System.nanoTime() - killed) / 1e9;
            System.out.printf(
                    "reference router: kill -9 with 6 requests in flight; host-wide in-flight back to the survivor's 3 in %.2f s%n",
                    recovery);
            assertEquals(3, total, "host-wide in flight after the dead router's lease was reaped");
            for (CompletableFuture<Reply> f : kept) {
                Reply r = f.get(20, TimeUnit.SECONDS);
                assertEquals(200, r.status, () -> "the survivor's requests completed: " + r);
            }
            for (CompletableFuture<Reply> f : held) {
                assertEquals(-1, f.get(20, TimeUnit.SECONDS).status, "the killed router's requests failed");
            }
            awaitTotal(view, slots, 0, "nothing in flight once the survivor's requests are done");
        }
    }

    private static long total(HostState view, int[] slots) {
        long total = 0;
        for (int slot : slots) {
            total += view.inFlight(slot);
        }
        return total;
    }

    private static void awaitTotal(HostState view, int[] slots, long expected, String what)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        long total;
        while ((total = total(view, slots)) != expected) {
            assertTrue(
                    System.nanoTime() < deadline, what + ": host-wide in flight " + total + ", expected " + expected);
            Thread.sleep(5);
        }
    }

    /**
     * What {@link #balance} measured: the busiest origin's in-flight over the mean, sample by sample, the
     * most any origin held in a sample, the fewest origins available in one, the affinity; the origins
     * with a failure reported within fail_timeout before the run's end (their keys may move), the
     * requests the routers retried on another origin, and the replies that left an origin with none.
     */
    record Balance(
            double median,
            double p99,
            double withinBound,
            double withinOneMore,
            int samples,
            long busiest,
            int fewestAvailable,
            double affinity,
            List<String> failedOrigins,
            long retried,
            List<Reply> movedOffHealthy) {
        @Override
        public String toString() {
            return String.format(
                    "median %.2f, p99 %.2f, busiest ≤ ⌈1.25·m/n⌉ in %.1f %% (≤ one more: %.1f %%) of %d samples, at most %d,"
                            + " affinity %.1f %%; %d origins reported failed %s, %d requests retried, %d moved off an origin with no failure%s",
                    median,
                    p99,
                    100 * withinBound,
                    100 * withinOneMore,
                    samples,
                    busiest,
                    100 * affinity,
                    failedOrigins.size(),
                    failedOrigins,
                    retried,
                    movedOffHealthy.size(),
                    movedOffHealthy.isEmpty() ? "" : " (e.g. " + movedOffHealthy.getFirst() + ")");
        }
    }

    /**
     * Runs {@code workload} through routers on {@code rings} with bound {@code c} while sampling, every
     * millisecond, each origin's requests in flight on the host (the sum over the state files of the
     * rings), as a router sees them. Samples with fewer than half the requests in flight (start, end)
     * are left out of the ratios and shares, not of the most an origin held or the fewest origins
     * available (not failed in any of the state files). A sample's bound is ⌈c·m/n⌉ over the n origins
     * available then, as {@code SharedLoad} counts it. Leaves no router running.
     */
    private static Balance balance(List<String> workload, double c, List<Path> rings) throws Exception {
        routers = RouterProcess.startAll(classes, rings, c);
        List<HostState> views = new ArrayList<>();
        try {
            List<int[]> slots = new ArrayList<>();
            for (Path r : rings.stream().distinct().toList()) {
                HostState view = HostState.inspect(HostState.statePath(r), HostState.Options.DEFAULTS, false)
                        .orElseThrow();
                views.add(view);
                int[] s = new int[ORIGINS];
                for (int i = 0; i < ORIGINS; i++) {
                    s[i] = view.slot(origins.address(i));
                    assertTrue(s[i] >= 0, "the routers track " + origins.address(i));
                }
                slots.add(s);
            }
            List<Double> ratios = new ArrayList<>();
            int withinBound = 0;
            int withinOneMore = 0;
            long busiest = 0;
            int fewestAvailable = ORIGINS;
            long failTimeoutNanos = Math.round(FAIL_TIMEOUT_SECONDS * 1e9);
            long started = System.nanoTime();
            CompletableFuture<List<Reply>> run = CompletableFuture.supplyAsync(() -> {
                try {
                    return load(workload, IN_FLIGHT, () -> false);
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            while (!run.isDone()) {
                long total = 0;
                long max = 0;
                int available = 0;
                long now = System.nanoTime();
                for (int o = 0; o < ORIGINS; o++) {
                    long n = 0;
                    boolean up = true;
                    for (int v = 0; v < views.size(); v++) {
                        n += views.get(v).inFlight(slots.get(v)[o]);
                        up &= views.get(v).peekAvailable(slots.get(v)[o], now, MAX_FAILS, failTimeoutNanos);
                    }
                    assertTrue(n <= workload.size(), "a count that wrapped below zero? " + n);
                    total += n;
                    max = Math.max(max, n);
                    available += up ? 1 : 0;
                }
                busiest = Math.max(busiest, max); // the guarantee holds in every sample
                fewestAvailable = Math.min(fewestAvailable, Math.max(1, available));
                if (total >= IN_FLIGHT / 2) {
                    ratios.add(max / (total / (double) ORIGINS));
                    long bound = (long) Math.ceil(
                            C * total / Math.max(1, available)); // n: the origins available, as SharedLoad counts
                    withinBound += max <= bound ? 1 : 0;
                    withinOneMore += max <= bound + 1 ? 1 : 0;
                }
                Thread.sleep(1);
            }
            List<Reply> replies = run.join();
            long window = System.nanoTime()
                    - started
                    + failTimeoutNanos; // a failure reported in it was in force during the run
            List<String> failedOrigins = new ArrayList<>();
            for (HostState view : views) {
                for (HostState.BackendState b : view.backends()) {
                    if (b.sinceFailure() != null
                            && b.sinceFailure().toNanos() <= window
                            && origins.indexOf(b.endpoint()) >= 0
                            && !failedOrigins.contains(b.endpoint())) {
                        failedOrigins.add(b.endpoint());
                    }
                }
            }
            assertTrue(replies.stream().allMatch(r -> r.status == 200), "every request answered");
            double affinity = replies.stream()
                            .filter(r -> r.backend.equals(ringAnswer.get(r.uri)))
                            .count()
                    / (double) replies.size();
            long retried = replies.stream().filter(r -> r.tries > 1).count();
            List<Reply> movedOffHealthy = replies.stream()
                    .filter(r ->
                            !r.backend.equals(ringAnswer.get(r.uri)) && !failedOrigins.contains(ringAnswer.get(r.uri)))
                    .toList();
            assertTrue(ratios.size() >= 50, "load overlapped long enough to sample: " + ratios.size() + " samples");
            ratios.sort(null);
            return new Balance(
                    ratios.get(ratios.size() / 2),
                    ratios.get(ratios.size() * 99 / 100),
                    withinBound / (double) ratios.size(),
                    withinOneMore / (double) ratios.size(),
                    ratios.size(),
                    busiest,
                    fewestAvailable,
                    affinity,
                    failedOrigins,
                    retried,
                    movedOffHealthy);
        } finally {
            views.forEach(HostState::close);
            RouterProcess.stopAll(routers);
        }
    }

    /** {@code count} keys of slow origins drawn from Zipf({@code s}) over the 1,000 of {@link #SLOW}. */
    private static List<String> zipf(int count, double s, SplittableRandom random) {
        double[] cumulative = new double[SLOW.size()];
        double sum = 0;
        for (int k = 0; k < cumulative.length; k++) {
            sum += Math.pow(k + 1, -s);
            cumulative[k] = sum;
        }
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            int k = java.util.Arrays.binarySearch(cumulative, random.nextDouble() * sum);
            keys.add(SLOW.get(k >= 0 ? k : -k - 1));
        }
        return keys;
    }

    // ---- the load generator ----------------------------------------------------------------------

    record Reply(String uri, int status, String backend, int tries, String body) {}

    /**
     * Sends {@code uris} in order, {@code concurrency} at a time, to the routers in turn (request i to
     * router i mod 4); stops early, after the requests under way, once {@code enough} says so.
     */
    private static List<Reply> load(List<String> uris, int concurrency, BooleanSupplier enough) throws Exception {
        Reply[] replies = new Reply[uris.size()];
        AtomicInteger next = new AtomicInteger();
        List<CompletableFuture<Void>> lanes = new ArrayList<>();
        for (int lane = 0; lane < concurrency; lane++) {
            lanes.add(CompletableFuture.runAsync(
                    () -> {
                        for (int i; !enough.getAsBoolean() && (i = next.getAndIncrement()) < replies.length; ) {
                            replies[i] = send(routers.get(i % routers.size()), uris.get(i));
                        }
                    },
                    workers));
        }
        CompletableFuture.allOf(lanes.toArray(CompletableFuture[]::new)).get(240, TimeUnit.SECONDS); // a hang detector
        List<Reply> sent = new ArrayList<>();
        for (Reply r : replies) {
            if (r != null) {
                sent.add(r);
            }
        }
        return sent;
    }

    private static Reply send(RouterProcess router, String uri) {
        try {
            HttpResponse<String> response = client.send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + router.port + uri))
                            .build(),
                    HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
            return new Reply(
                    uri,
                    response.statusCode(),
                    response.headers().firstValue("X-Backend").orElse("(none)"),
                    Integer.parseInt(response.headers().firstValue("X-Tries").orElse("0")),
                    response.body().strip());
        } catch (IOException e) {
            return new Reply(uri, -1, "(none)", 0, e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Reply(uri, -1, "(none)", 0, e.toString());
        }
    }

    private static List<String> keys(String prefix, int count) {
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            keys.add(prefix + i);
        }
        return keys;
    }

    // ---- the routers -----------------------------------------------------------------------------

    /** examples/router/Router.java compiled against the library on this test's class path. */
    private static Path compileExample() throws IOException {
        Path source = Path.of(System.getProperty("ringstore.repo", ".."), "examples", "router", "Router.java");
        Path out = Files.createDirectories(dir.resolve("router-classes"));
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        // Lint as the build does, less "try": a router that only opens a policy file watcher never names it.
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        try (StandardJavaFileManager files = javac.getStandardFileManager(diagnostics, null, StandardCharsets.UTF_8)) {
            boolean ok = javac.getTask(
                            null,
                            files,
                            diagnostics,
                            List.of(
                                    "-Xlint:all,-try",
                                    "-Werror",
                                    "-proc:none",
                                    "-d",
                                    out.toString(),
                                    "-cp",
                                    System.getProperty("java.class.path")),
                            null,
                            files.getJavaFileObjects(source))
                    .call();
            assertTrue(ok, () -> source + " does not compile against the library:\n" + diagnostics.getDiagnostics());
        }
        return out;
    }

    /** One router: the example in a child JVM on a free loopback port; it exits when its stdin closes. */
    static final class RouterProcess {
        final Process process;
        final int port;
        final Path log;

        private RouterProcess(Process process, int port, Path log) {
            this.process = process;
            this.port = port;
            this.log = log;
        }

        /** Starts one router per ring path (a path of its own gives a router a state file of its own), with bound {@code c}. */
        static List<RouterProcess> startAll(Path classes, List<Path> rings, double c) throws IOException {
            List<Process> started = new ArrayList<>();
            List<Path> logs = new ArrayList<>();
            String javaBin =
                    Path.of(System.getProperty("java.home"), "bin", "java").toString();
            for (int i = 0; i < rings.size(); i++) {
                Path log = Files.createTempFile(dir, "router", ".err");
                logs.add(log);
                started.add(new ProcessBuilder(
                                javaBin,
                                "-Xmx64m",
                                "-XX:+UseSerialGC",
                                "-XX:TieredStopAtLevel=1",
                                "--enable-native-access=ALL-UNNAMED",
                                "-cp",
                                classes + java.io.File.pathSeparator + System.getProperty("java.class.path"),
                                "Router",
                                rings.get(i).toString(),
                                "0",
                                "c=" + c)
                        .redirectError(log.toFile())
                        .start());
            }
            List<RouterProcess> routers = new ArrayList<>();
            try {
                for (int i = 0; i < started.size(); i++) {
                    Process p = started.get(i);
                    String line = new BufferedReader(
                                    new InputStreamReader(p.getInputStream(), StandardCharsets.US_ASCII))
                            .readLine();
                    if (line == null || !line.startsWith("LISTENING ")) {
                        throw new AssertionError(
                                "router " + i + " did not start: " + line + "\n" + Files.readString(logs.get(i)));
                    }
                    routers.add(
                            new RouterProcess(p, Integer.parseInt(line.substring("LISTENING ".length())), logs.get(i)));
                }
            } catch (IOException | RuntimeException | Error e) {
                started.forEach(Process::destroyForcibly);
                throw e;
            }
            return routers;
        }

        static void stopAll(List<RouterProcess> routers) throws InterruptedException, IOException {
            for (RouterProcess r : routers) {
                r.process.getOutputStream().close();
            }
            for (RouterProcess r : routers) {
                if (!r.process.waitFor(10, TimeUnit.SECONDS)) {
                    r.process.destroyForcibly();
                }
            }
        }
    }
}
