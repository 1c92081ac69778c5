package io.ringstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.builder.BackendList;
import io.ringstore.builder.RingBuilder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.function.IntPredicate;
import java.util.function.IntUnaryOperator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.api.io.TempDir;

/**
 * nginx's failover in {@code hash $request_uri consistent}, compared with ringstore's
 * {@link Ring#select} on the same fleet, request by request, against nginx itself (loopback only).
 *
 * <p>What nginx 1.22 does ({@code ngx_http_upstream_get_chash_peer}, each request on its own): from the
 * key's point it takes the point's server unless that server is marked {@code down}, already tried by
 * this request, or failed {@code max_fails} times within {@code fail_timeout}; otherwise it moves to the
 * next point (wrapping). Its counter {@code hp->tries} starts at 0, grows by one per point passed and
 * is kept across the tries of one request; once it exceeds 20 nginx hands the request to round robin.
 * So a request looks at no more than 21 points: the key's own and the 20 after it
 * ({@link #NGINX_POINTS_LOOKED_AT}), and a second try starts over at the first try's point with the same
 * counter, which is {@code select} from the key's point with the tried backend also refused.
 *
 * <p>Three upstreams, each written once for nginx and once as a ringstore backends file (with the same
 * {@code down} flags), each with its own front port and access log ({@code $request_uri\t$upstream_addr}):
 * <ul>
 * <li><b>someDown</b> and <b>mostlyDown</b>: nothing listens on any backend and {@code proxy_next_upstream
 *     off}, so each request makes exactly one try (502) and logs the backend nginx chose. For every key
 *     ringstore's {@code select(hash, NGINX_MAX_POINTS, not down)} must name that backend. In mostlyDown
 *     about 90 % of the points belong to down servers, so many keys find only down servers in their 21
 *     points: there ringstore must answer {@link Ring#GAVE_UP} — exactly for the keys the test's own walk
 *     over the points says — while nginx's round robin picks some server that is not down (asserted,
 *     nothing more).
 * <li><b>refusing</b>: some backends are served by this nginx itself ({@code return 204}), the others are
 *     loopback ports where nothing listens, which refuse connections; {@code proxy_next_upstream error}
 *     and {@code proxy_next_upstream_tries 3} make nginx try the next backend after a refusal, logging
 *     "a, b" or "a, b, c". Every try must be ringstore's next choice: {@code select} with the down and
 *     the already tried backends refused.
 * </ul>
 * Every {@code server} has {@code max_fails=0}: nginx then never counts failures against a peer (a
 * refused or 502'd peer would otherwise be skipped by later requests for {@code fail_timeout}, which
 * makes a request's answer depend on the ones before it). What decides is only {@code down} and the
 * request's own tried set, as in ringstore's predicate, so the comparison is exact and independent of
 * the order requests arrive in.
 *
 * <p>Besides seeded random URIs, keys are forged ({@link CrcForge}) onto ring points chosen by what
 * follows them: for each length of the run of down points after a point (0 to 25, so across the edge
 * at 21), and, in the refusing upstream, for each offset at which the walk ends. The points come from
 * ringstore's ring, which {@link NginxParityTest} proves equal to the points nginx generates.
 *
 * <p>nginx's answers for someDown and mostlyDown are also kept in {@code testdata/vectors/nginx-failover}
 * (the backends file, and {@code uri<TAB>$upstream_addr}, or {@code round-robin} where all 21 points
 * are down), for the CLI's tests, which run without nginx; every run here checks them against nginx.
 *
 * <p>Needs Debian's nginx-light at {@code /usr/sbin/nginx} (or {@code -Dringstore.nginx=PATH}), as
 * {@link NginxParityTest} does.
 */
@Tag("nginx")
@EnabledIf(value = NginxServer.TESTS_RUN, disabledReason = NginxServer.MISSING)
class NginxFailoverParityTest {
    /** nginx gives up once {@code hp->tries > 20}: the key's point and the 20 after it. */
    private static final int NGINX_POINTS_LOOKED_AT = 21;
    /** {@code proxy_next_upstream_tries} in the refusing upstream. */
    private static final int NGINX_TRIES = 3;

    private static final long SEED = 0xFA11_0FE5_2B1FL;
    private static final int RANDOM_URIS = 3_000;
    private static final int FORGED_PER_KIND = 24;
    private static final int LONGEST_RUN_SOUGHT = 25;
    private static final int CONNECTIONS = 8;

    /** A {@code server} line: the address as written (nginx hashes the text), weight, and whether it is down. */
    private record Server(String address, int weight, boolean down) {
        String line(String nginxOnlyParameters) {
            return "server " + address + (weight == 1 ? "" : " weight=" + weight) + (down ? " down" : "")
                    + nginxOnlyParameters + ";";
        }
    }

    /** One upstream as nginx and ringstore each see it. */
    private record Upstream(String name, List<Server> servers, RingStore store, Ring ring) {
        boolean down(int backend) {
            return store.backend(backend).down();
        }
    }

    @TempDir
    static Path dir;

    private static NginxServer nginx;
    private static List<Server> refusingServers;
    private static Upstream someDown;
    private static Upstream mostlyDown;
    private static Upstream refusing;
    private static final Map<String, Integer> COUNTS = new LinkedHashMap<>();

    /** 12 servers on refusing loopback ports, 4 of them down. */
    private static final List<Server> SOME_DOWN = List.of(
            new Server("127.0.2.1:7401", 3, false),
            new Server("127.0.2.2:7402", 1, true),
            new Server("127.0.2.3:7403", 2, false),
            new Server("127.0.2.4:7404", 5, true),
            new Server("127.0.2.5:7405", 1, false),
            new Server("127.0.2.6:7406", 4, false),
            new Server("127.0.2.7:7407", 2, true),
            new Server("127.0.2.8:7408", 1, false),
            new Server("127.0.2.9:7409", 3, false),
            new Server("127.0.2.10:7410", 2, true),
            new Server("127.0.2.11:7411", 1, false),
            new Server("127.0.2.12", 2, false));

    /** 10 servers, 8 down, the 2 that are not down with 1/10 of the weight: runs of 21 down points are common. */
    private static final List<Server> MOSTLY_DOWN = List.of(
            new Server("127.0.4.1:7501", 2, true),
            new Server("127.0.4.2:7502", 1, false),
            new Server("127.0.4.3:7503", 3, true),
            new Server("127.0.4.4:7504", 2, true),
            new Server("127.0.4.5:7505", 2, true),
            new Server("127.0.4.6:7506", 3, true),
            new Server("127.0.4.7:7507", 1, false),
            new Server("127.0.4.8:7508", 2, true),
            new Server("127.0.4.9:7509", 3, true),
            new Server("127.0.4.10:7510", 1, true));

    /**
     * Ports: 0, 1, 2 the fronts of someDown, mostlyDown, refusing; 3, 4, 5 backends this nginx serves
     * itself (on 127.0.0.1, so they are in the refusing upstream with ports chosen at start).
     */
    private static final int PORTS = 6;

    private static final int FIRST_SERVED = 3;

    /**
     * The refusing upstream: 3 served backends (one of them down: nginx must not use it although it
     * answers), 6 refusing, 3 more down; weights so that about half the points are down.
     */
    private static List<Server> refusingUpstream(int[] ports) {
        return List.of(
                new Server("127.0.0.1:" + ports[FIRST_SERVED], 1, false),
                new Server("127.0.5.1:7601", 2, false),
                new Server("127.0.5.2:7602", 3, true),
                new Server("127.0.0.1:" + ports[FIRST_SERVED + 1], 1, false),
                new Server("127.0.5.3:7603", 1, false),
                new Server("127.0.5.4:7604", 4, true),
                new Server("127.0.5.5:7605", 2, false),
                new Server("127.0.0.1:" + ports[FIRST_SERVED + 2], 2, true),
                new Server("127.0.5.6:7606", 1, false),
                new Server("127.0.5.7:7607", 2, true),
                new Server("127.0.5.8:7608", 1, false),
                new Server("127.0.5.9:7609", 1, false));
    }

    @BeforeAll
    static void startNginx() throws Exception {
        NginxServer.requireInstalled("the nginx failover parity test");
        nginx = NginxServer.start(dir.resolve("nginx"), PORTS, NginxFailoverParityTest::httpConfig);
        someDown = upstream("someDown", SOME_DOWN);
        mostlyDown = upstream("mostlyDown", MOSTLY_DOWN);
        refusing = upstream("refusing", refusingServers);
    }

    @AfterAll
    static void stopNginx() throws Exception {
        try {
            if (nginx != null) {
                nginx.close();
            }
        } finally {
            for (Upstream u : Arrays.asList(someDown, mostlyDown, refusing)) {
                if (u != null) {
                    u.store.close();
                }
            }
        }
        if (!COUNTS.isEmpty()) {
            System.out.println("nginx failover parity: " + COUNTS);
        }
    }

    private static Upstream upstream(String name, List<Server> servers) throws Exception {
        Path backends = dir.resolve(name + ".backends");
        StringBuilder text =
                new StringBuilder("upstream ").append(name).append(" {\n    hash $request_uri consistent;\n");
        for (Server s : servers) {
            text.append("    ").append(s.line("")).append('\n');
        }
        Files.writeString(backends, text.append("}\n"));
        Path ringFile = dir.resolve(name + ".ring");
        RingBuilder.of(BackendList.parse(backends)).build(ringFile);
        RingStore store = RingStore.open(ringFile);
        for (int b = 0; b < servers.size(); b++) {
            assertEquals(servers.get(b).address(), store.backend(b).address(), "backend " + b);
            assertEquals(
                    servers.get(b).down(),
                    store.backend(b).down(),
                    "down flag of " + servers.get(b).address());
        }
        return new Upstream(name, servers, store, store.ring(Set.of()));
    }

    private static String httpConfig(int[] ports) {
        refusingServers = refusingUpstream(ports); // ports differ on each start attempt
        StringBuilder c = new StringBuilder("""
                log_format failover escape=none '$request_uri\\t$upstream_addr';
                keepalive_requests 1000000;
                proxy_connect_timeout 1s;
                proxy_send_timeout 2s;
                proxy_read_timeout 2s;
                """);
        List<String> names = List.of("someDown", "mostlyDown", "refusing");
        List<List<Server>> fleets = List.of(SOME_DOWN, MOSTLY_DOWN, refusingServers);
        for (int u = 0; u < names.size(); u++) {
            c.append("upstream ").append(names.get(u)).append(" {\n    hash $request_uri consistent;\n");
            for (Server s : fleets.get(u)) {
                c.append("    ").append(s.line(" max_fails=0")).append('\n');
            }
            c.append("}\n");
            String retries = names.get(u).equals("refusing")
                    ? "proxy_next_upstream error;\n        proxy_next_upstream_tries " + NGINX_TRIES + ";"
                    : "proxy_next_upstream off;";
            c.append("""
                    server {
                        listen 127.0.0.1:%d;
                        access_log "%s" failover;
                        location / {
                            %s
                            proxy_pass http://%s;
                        }
                    }
                    """.formatted(
                            ports[u], dir.resolve("nginx").resolve(names.get(u) + ".log"), retries, names.get(u)));
        }
        for (int p = FIRST_SERVED; p < PORTS; p++) {
            c.append("""
                    server {
                        listen 127.0.0.1:%d;
                        access_log off;
                        return 204;
                    }
                    """.formatted(ports[p]));
        }
        return c.toString();
    }

    // ---- the walk nginx makes, written here from nginx's source rather than taken from ringstore ----

    /** What nginx's walk gives up with: the request goes to round robin. */
    private static final int ROUND_ROBIN = -2;

    /**
     * The backend of the first of the {@value #NGINX_POINTS_LOOKED_AT} points from the key's point on
     * whose backend {@code usable} accepts, or {@link #ROUND_ROBIN}.
     */
    private static int nginxWalk(Ring ring, int hash, IntPredicate usable) {
        int start = ring.pointIndex(hash);
        for (int t = 0; t < NGINX_POINTS_LOOKED_AT; t++) {
            int b = ring.pointBackend((start + t) % ring.pointCount());
            if (usable.test(b)) {
                return b;
            }
        }
        return ROUND_ROBIN;
    }

    /** Points in a row from {@code position} on whose backend is down, at most {@code cap}. */
    private static int downRun(Upstream u, int position, int cap) {
        int n = 0;
        while (n < cap && u.down(u.ring.pointBackend((position + n) % u.ring.pointCount()))) {
            n++;
        }
        return n;
    }

    // ---- keys ----

    private record Key(byte[] uri, String kind) {
        String text() {
            return new String(uri, StandardCharsets.ISO_8859_1);
        }
    }

    private static final String ALPHANUMERIC = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

    /** Seeded random URIs, then for each kind of point (by {@code kindOf}) up to FORGED_PER_KIND keys forged onto such points. */
    private static List<Key> keys(Upstream u, IntUnaryOperator kindOf) {
        SplittableRandom random = new SplittableRandom(SEED ^ u.name.hashCode());
        Map<String, Key> keys = new LinkedHashMap<>();
        while (keys.size() < RANDOM_URIS) {
            StringBuilder uri = new StringBuilder("/").append(u.name).append('/');
            for (int n = 1 + random.nextInt(30); n > 0; n--) {
                uri.append(ALPHANUMERIC.charAt(random.nextInt(ALPHANUMERIC.length())));
            }
            keys.putIfAbsent(uri.toString(), new Key(uri.toString().getBytes(StandardCharsets.US_ASCII), "random"));
        }
        Ring ring = u.ring;
        int n = ring.pointCount();
        Map<Integer, Integer> forgedOfKind = new TreeMap<>();
        int offset = random.nextInt(n); // visit the points from a seeded place, so forged keys are spread over the ring
        for (int i = 0; i < n; i++) {
            int position = (offset + i) % n;
            int kind = kindOf.applyAsInt(position);
            if (forgedOfKind.merge(kind, 1, Integer::sum) > FORGED_PER_KIND) {
                continue;
            }
            // The point's own hash and the hash just after the previous point both land on this point.
            int previous = (int) ring.pointHash((position + n - 1) % n);
            for (int target : new int[] {(int) ring.pointHash(position), previous + 1}) {
                byte[] uri = CrcForge.forge(
                        ("/" + u.name + "/forged/" + kind + "/").getBytes(StandardCharsets.US_ASCII), target);
                keys.putIfAbsent(new String(uri, StandardCharsets.ISO_8859_1), new Key(uri, "forged"));
            }
        }
        return List.copyOf(keys.values());
    }

    /** Sends every key to the upstream's front port and returns nginx's {@code $upstream_addr} for each. */
    private static Map<String, String> askNginx(Upstream u, int port, List<Key> keys) throws Exception {
        NginxClient.getAll(port, keys.stream().map(Key::uri).toList(), CONNECTIONS, 60);
        return nginx.accessLog(u.name + ".log", keys.size());
    }

    private static void count(String what, int n) {
        COUNTS.merge(what, n, Integer::sum);
    }

    // ---- 1: servers marked down ----

    @Test
    void someServersDown() throws Exception {
        compareDown(someDown, 0);
    }

    @Test
    void mostServersDown() throws Exception {
        Edge edge = compareDown(mostlyDown, 1);
        assertTrue(
                edge.atLastPoint >= FORGED_PER_KIND,
                () -> "only " + edge.atLastPoint + " keys with 20 down points, then one up");
        assertTrue(
                edge.pastLastPoint >= FORGED_PER_KIND,
                () -> "only " + edge.pastLastPoint + " keys with 21 down points, then one up");
    }

    /**
     * How many keys were at the edge of nginx's walk: those whose first backend not down is at the 21st
     * point (nginx must still take it) and at the 22nd (nginx must not: round robin).
     */
    private record Edge(int atLastPoint, int pastLastPoint) {}

    /** Compares every key's backend, see {@link Edge}. */
    private static Edge compareDown(Upstream u, int port) throws Exception {
        List<Key> keys = keys(u, position -> downRun(u, position, LONGEST_RUN_SOUGHT));
        Map<String, String> logged = askNginx(u, nginx.port(port), keys);
        List<String> mismatches = new ArrayList<>();
        int gaveUp = 0;
        int forged = 0;
        int atLastPoint = 0;
        int edgeKeys = 0;
        int edgeContinued = 0;
        List<String> vectors = new ArrayList<>();
        for (Key k : keys) {
            int hash = (int) u.ring.hash(k.uri); // nginx's CRC-32, as the walk below computes it
            IntPredicate up = b -> !u.down(b);
            int walked = nginxWalk(u.ring, hash, up);
            int selected = u.ring.select(hash, Ring.NGINX_MAX_POINTS, up);
            String fromNginx = logged.get(k.text());
            forged += k.kind.equals("forged") ? 1 : 0;
            vectors.add(k.text() + "\t" + (walked == ROUND_ROBIN ? ROUND_ROBIN_VECTOR : fromNginx));
            if (walked == ROUND_ROBIN) {
                gaveUp++;
                if (selected != Ring.GAVE_UP) {
                    mismatches.add(k.text() + ": all 21 points are down, nginx went round robin to " + fromNginx
                            + ", ringstore did not give up but chose " + describe(u, selected));
                } else if (downAddress(u, fromNginx)) {
                    mismatches.add(k.text() + ": nginx's round robin chose a down server " + fromNginx);
                }
                int next =
                        u.ring.pointBackend((u.ring.pointIndex(hash) + NGINX_POINTS_LOOKED_AT) % u.ring.pointCount());
                if (!u.down(next)) {
                    edgeKeys++;
                    edgeContinued += u.store.backend(next).upstreamAddress().equals(fromNginx) ? 1 : 0;
                }
                continue;
            }
            String expected = u.store.backend(walked).upstreamAddress();
            int run = downRun(u, u.ring.pointIndex(hash), NGINX_POINTS_LOOKED_AT);
            atLastPoint += run == NGINX_POINTS_LOOKED_AT - 1 ? 1 : 0;
            if (!expected.equals(fromNginx) || selected != walked) {
                mismatches.add(String.format(
                        "%s crc32=%08x down run %d: nginx %s, ringstore %s, walk %s",
                        k.text(), hash, run, fromNginx, describe(u, selected), expected));
            }
        }
        count(u.name + " URIs compared", keys.size());
        count(u.name + " forged", forged);
        count(u.name + " GAVE_UP", gaveUp);
        count(u.name + " decided at the 21st point", atLastPoint);
        count(u.name + " GAVE_UP with the 22nd point up", edgeKeys);
        assertNoMismatch(u, keys.size(), mismatches);
        assertRecordedVectors(u, vectors);
        if (edgeKeys > 0) {
            // Keys whose 22nd point is up: had nginx looked at one point more than 21, all of them would
            // have gone there; its round robin (2 servers up, taken in turn) sends about half elsewhere.
            int edge = edgeKeys;
            assertTrue(
                    edgeContinued < edgeKeys,
                    () -> "all " + edge + " keys whose " + NGINX_POINTS_LOOKED_AT + " points are"
                            + " down and whose next point is up went to that point's server: nginx looks at more than "
                            + NGINX_POINTS_LOOKED_AT + " points");
        }
        return new Edge(atLastPoint, edgeKeys);
    }

    // ---- the answers recorded for tests without nginx (the CLI's) ----

    /** Where nginx's answers for someDown and mostlyDown are kept: {@code testdata/vectors/nginx-failover}. */
    private static final Path VECTORS = Path.of(System.getProperty("ringstore.repo", ".."))
            .resolve("testdata")
            .resolve("vectors")
            .resolve("nginx-failover");
    /** The answer recorded for a key whose 21 points are all down: nginx's round robin, which varies. */
    private static final String ROUND_ROBIN_VECTOR = "round-robin";
    /** Set to true to (re)write the recorded vectors from this run's nginx answers. */
    private static final String RECORD_PROPERTY = "ringstore.recordNginxVectors";

    /**
     * The upstream's backends file and {@code uri<TAB>answer} lines must be the ones recorded under
     * {@link #VECTORS}: so the recorded answers are checked against nginx on every run that has nginx.
     */
    private static void assertRecordedVectors(Upstream u, List<String> vectors) throws Exception {
        Path backends = VECTORS.resolve(u.name + ".backends");
        Path answers = VECTORS.resolve(u.name + ".tsv");
        String backendsText = Files.readString(dir.resolve(u.name + ".backends"));
        String answersText = String.join("\n", vectors) + "\n";
        if (Boolean.getBoolean(RECORD_PROPERTY)) {
            Files.createDirectories(VECTORS);
            Files.writeString(backends, backendsText);
            Files.writeString(answers, answersText, StandardCharsets.ISO_8859_1);
            System.out.println(
                    "nginx failover parity: recorded " + vectors.size() + " answers in " + answers.toAbsolutePath());
            return;
        }
        String how = " (after a deliberate change, rewrite with -D" + RECORD_PROPERTY + "=true)";
        assertTrue(Files.exists(answers), () -> answers.toAbsolutePath() + " is missing" + how);
        assertEquals(Files.readString(backends), backendsText, () -> backends + " is not this test's " + u.name + how);
        List<String> recorded = Files.readAllLines(answers, StandardCharsets.ISO_8859_1);
        assertEquals(recorded.size(), vectors.size(), () -> "keys in " + answers + how);
        for (int i = 0; i < recorded.size(); i++) {
            int line = i + 1;
            assertEquals(
                    recorded.get(i),
                    vectors.get(i),
                    () -> answers + ":" + line + " is not what nginx answers now" + how);
        }
    }

    private static boolean downAddress(Upstream u, String address) {
        for (int b = 0; b < u.store.backendCount(); b++) {
            if (u.down(b) && u.store.backend(b).upstreamAddress().equals(address)) {
                return true;
            }
        }
        return false;
    }

    private static String describe(Upstream u, int backend) {
        return backend == Ring.GAVE_UP
                ? "GAVE_UP"
                : backend == Ring.NO_BACKEND
                        ? "NO_BACKEND"
                        : u.store.backend(backend).upstreamAddress();
    }

    private static void assertNoMismatch(Upstream u, int compared, List<String> mismatches) {
        assertTrue(
                mismatches.isEmpty(),
                () -> mismatches.size() + " of " + compared + " keys of " + u.name + " differ (first 10):\n  "
                        + String.join("\n  ", mismatches.subList(0, Math.min(10, mismatches.size()))));
    }

    // ---- 2: a backend that refuses connections ----

    @Test
    void nextTryAfterRefusalIsRingstoresNextChoice() throws Exception {
        Upstream u = refusing;
        BitSet served = new BitSet();
        for (int b = 0; b < u.servers.size(); b++) {
            served.set(b, u.servers.get(b).address().startsWith("127.0.0.1:"));
        }
        // Kinds of points: where the walk ends (the offset of the point of the last try), so that keys
        // whose tries reach and pass nginx's 21st point are among the forged ones.
        List<Key> keys = keys(u, position -> lastOffset(u, served, position));
        Map<String, String> logged = askNginx(u, nginx.port(2), keys);
        List<String> mismatches = new ArrayList<>();
        int secondChoices = 0;
        int thirdChoices = 0;
        int roundRobin = 0;
        for (Key k : keys) {
            int hash = (int) u.ring.hash(k.uri); // nginx's CRC-32, as the walk below computes it
            List<String> fromNginx = List.of(logged.get(k.text()).split(", "));
            BitSet tried = new BitSet();
            for (int t = 0; t < NGINX_TRIES; t++) {
                IntPredicate usable = b -> !u.down(b) && !tried.get(b);
                int walked = nginxWalk(u.ring, hash, usable);
                int selected = u.ring.select(hash, Ring.NGINX_MAX_POINTS, usable);
                if (walked == ROUND_ROBIN) {
                    roundRobin++;
                    if (selected != Ring.GAVE_UP) {
                        mismatches.add(k.text() + " try " + (t + 1)
                                + ": no usable server in 21 points, ringstore chose " + describe(u, selected));
                    }
                    break; // nginx's round robin decides the rest
                }
                String expected = u.store.backend(walked).upstreamAddress();
                String nginxTry = t < fromNginx.size() ? fromNginx.get(t) : "(no try " + (t + 1) + ")";
                if (selected != walked || !expected.equals(nginxTry)) {
                    mismatches.add(String.format(
                            "%s crc32=%08x try %d: nginx %s, ringstore %s, walk %s",
                            k.text(), hash, t + 1, fromNginx, describe(u, selected), expected));
                    break;
                }
                secondChoices += t == 1 ? 1 : 0;
                thirdChoices += t == 2 ? 1 : 0;
                tried.set(walked);
                if (served.get(walked)) {
                    if (fromNginx.size() != t + 1) {
                        mismatches.add(k.text() + ": " + expected + " answers, yet nginx tried " + fromNginx);
                    }
                    break;
                }
            }
        }
        count("refusing URIs compared", keys.size());
        count("refusing second choices compared", secondChoices);
        count("refusing third choices compared", thirdChoices);
        count("refusing walks given up (round robin)", roundRobin);
        assertNoMismatch(u, keys.size(), mismatches);
        int seconds = secondChoices;
        assertTrue(seconds > 1000, () -> "only " + seconds + " second tries compared");
    }

    /**
     * The offset from {@code position} of the point where nginx's tries end for a key landing there
     * (a served backend, or the third try), or {@value #NGINX_POINTS_LOOKED_AT} when they go round robin.
     */
    private static int lastOffset(Upstream u, BitSet served, int position) {
        BitSet tried = new BitSet();
        int n = u.ring.pointCount();
        for (int t = 0; t < NGINX_POINTS_LOOKED_AT; t++) {
            int b = u.ring.pointBackend((position + t) % n);
            if (u.down(b) || tried.get(b)) {
                continue;
            }
            tried.set(b);
            if (served.get(b) || tried.cardinality() == NGINX_TRIES) {
                return t;
            }
        }
        return NGINX_POINTS_LOOKED_AT;
    }
}
