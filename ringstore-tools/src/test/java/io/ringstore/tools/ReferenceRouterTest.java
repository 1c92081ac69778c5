package io.ringstore.tools;

import io.ringstore.state.HostState;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
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

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The reference router of {@code examples/router}, end to end with real parts on loopback: 8 nginx
 * origins that answer with their own name, 4 router processes (child JVMs running the example, compiled
 * here against the library) sharing one ring file and its state file, and a bounded load generator in
 * this JVM. The scenarios run in order on the same origins and routers (the bounded-load one starts
 * its own routers, then the shared ones again).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ReferenceRouterTest {
    private static final int ORIGINS = 8;
    private static final int ROUTERS = 4;
    /** nginx's defaults, which every backend read from a ring file has (the file keeps neither). */
    private static final int MAX_FAILS = 1;
    private static final double FAIL_TIMEOUT_SECONDS = 10;
    private static final double C = 1.25;
    /** c for "no bound": capacity ⌈100 (m + 1) / 8⌉ is more than all requests in flight. */
    private static final double UNBOUNDED = 100;
    private static final List<String> UNIFORM = keys("/k/", 400);
    private static final List<String> SLOW = keys("/slow/", 1000);

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
        if (!Origins.installed()) {
            String why = "no nginx with the echo module (" + Origins.NGINX + ", " + Origins.ECHO_MODULE + ")";
            if (Boolean.parseBoolean(System.getProperty("ringstore.requireNginx", "false"))) {
                fail(why + ", and ringstore.requireNginx=true requires the end-to-end router test to run");
            }
            assumeTrue(false, why + ": reference router test skipped");
        }
        classes = compileExample();
        origins = Origins.start(dir.resolve("origins"), ORIGINS);
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < ORIGINS; i++) {
            text.append("server ").append(origins.address(i)).append(";\n");
        }
        Path backends = CliRun.backends(dir, "origins.conf", text.toString());
        ring = dir.resolve("fleet.ring");
        CliRun.build(backends, ring);
        List<String> all = new ArrayList<>(UNIFORM);
        all.addAll(SLOW);
        ringAnswer = new HashMap<>();
        for (String line : CliRun.runWithInput(String.join("\n", all) + "\n", "lookup", ring.toString()).assertOk().out().lines().toList()) {
            String[] f = line.split("\t");
            ringAnswer.put(f[0], f[1]);
        }
        assertEquals(all.size(), ringAnswer.size(), "ringstore lookup answered every key");
        workers = Executors.newVirtualThreadPerTaskExecutor();
        client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).executor(workers).build();
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
            assertEquals(ringAnswer.get(r.uri), r.backend, () -> "backend of " + r.uri + ", as ringstore lookup names it");
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
        System.out.printf("reference router: %,d requests during 100 republishes, %d failed%n", replies.size(), failed.size());
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
        System.out.printf("reference router: origin stopped, %d of %d keys moved, %d connect failures on the host in %.1f s%n",
                moved, replies.size(), failures, seconds);
        assertTrue(moved > 0, "some keys belong to the stopped origin");
        assertTrue(failures >= MAX_FAILS && failures <= MAX_FAILS + probes, "connect failures host-wide: " + failures
                + " (max_fails " + MAX_FAILS + ", " + probes + " probes in " + seconds + " s)");

        origins.start(stopped);
        Thread.sleep(Math.round(FAIL_TIMEOUT_SECONDS * 1000) + 300);
        for (Reply r : load(UNIFORM, 1, () -> false)) {
            assertEquals(200, r.status, () -> "reply " + r);
            assertEquals(ringAnswer.get(r.uri), r.backend, () -> "after fail_timeout every key is back on its backend: " + r);
        }
    }

    @Test
    @Order(4)
    void aDrainFromTheCliReachesEveryProcess() throws Exception {
        String drained = origins.address(5);
        CliRun.run("state", ring.toString(), "drain", drained).assertOk();
        try {
            List<Reply> replies = load(UNIFORM, 4, () -> false);
            long moved = replies.stream().filter(r -> ringAnswer.get(r.uri).equals(drained)).count();
            for (Reply r : replies) {
                assertEquals(200, r.status, () -> "reply " + r);
                assertNotEquals(drained, r.backend, () -> "a request reached the drained origin: " + r);
            }
            assertTrue(moved > 0, "some keys belong to the drained origin");
        } finally {
            CliRun.run("state", ring.toString(), "undrain", drained).assertOk();
        }
        assertTrue(load(UNIFORM, 1, () -> false).stream().anyMatch(r -> r.backend.equals(drained)), "undrained, it serves again");
    }

    // ---- the load generator ----------------------------------------------------------------------

    record Reply(String uri, int status, String backend, int tries, String body) {
    }

    /**
     * Sends {@code uris} in order, {@code concurrency} at a time, to the routers in turn (request i to
     * router i mod 4); stops early, after the requests under way, once {@code enough} says so.
     */
    private static List<Reply> load(List<String> uris, int concurrency, BooleanSupplier enough) throws Exception {
        Reply[] replies = new Reply[uris.size()];
        AtomicInteger next = new AtomicInteger();
        List<CompletableFuture<Void>> lanes = new ArrayList<>();
        for (int lane = 0; lane < concurrency; lane++) {
            lanes.add(CompletableFuture.runAsync(() -> {
                for (int i; !enough.getAsBoolean() && (i = next.getAndIncrement()) < replies.length; ) {
                    replies[i] = send(routers.get(i % routers.size()), uris.get(i));
                }
            }, workers));
        }
        CompletableFuture.allOf(lanes.toArray(CompletableFuture[]::new)).get(100, TimeUnit.SECONDS);
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
            HttpResponse<String> response = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + router.port + uri)).build(),
                    HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
            return new Reply(uri, response.statusCode(), response.headers().firstValue("X-Backend").orElse("(none)"),
                    Integer.parseInt(response.headers().firstValue("X-Tries").orElse("0")), response.body().strip());
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
            boolean ok = javac.getTask(null, files, diagnostics,
                    List.of("-Xlint:all,-try", "-Werror", "-proc:none", "-d", out.toString(), "-cp", System.getProperty("java.class.path")),
                    null, files.getJavaFileObjects(source)).call();
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
            String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            for (int i = 0; i < rings.size(); i++) {
                Path log = Files.createTempFile(dir, "router", ".err");
                logs.add(log);
                started.add(new ProcessBuilder(javaBin, "-Xmx64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                        "--enable-native-access=ALL-UNNAMED",
                        "-cp", classes + java.io.File.pathSeparator + System.getProperty("java.class.path"),
                        "Router", rings.get(i).toString(), "0", "c=" + c)
                        .redirectError(log.toFile())
                        .start());
            }
            List<RouterProcess> routers = new ArrayList<>();
            try {
                for (int i = 0; i < started.size(); i++) {
                    Process p = started.get(i);
                    String line = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.US_ASCII)).readLine();
                    if (line == null || !line.startsWith("LISTENING ")) {
                        throw new AssertionError("router " + i + " did not start: " + line + "\n" + Files.readString(logs.get(i)));
                    }
                    routers.add(new RouterProcess(p, Integer.parseInt(line.substring("LISTENING ".length())), logs.get(i)));
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
