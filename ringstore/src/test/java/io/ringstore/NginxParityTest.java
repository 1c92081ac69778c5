package io.ringstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.builder.BackendList;
import io.ringstore.builder.RingBuilder;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.zip.CRC32;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.api.io.TempDir;

/**
 * Parity with nginx itself: the same backends are written once as an nginx {@code upstream} with
 * {@code hash $request_uri consistent} and once as a ringstore backends file; every request's
 * {@code $upstream_addr} in nginx's access log must be what ringstore's v1 ring answers for that URI.
 *
 * <p>Nothing listens on the backends' ports, so each request fails fast with 502; {@code max_fails=0} and
 * {@code proxy_next_upstream off} keep nginx from marking peers failed or trying another, so the logged
 * address is always the ring's first choice. Besides seeded random URIs, keys are forged (see
 * {@link CrcForge}) to hash exactly onto ring points, one below and one above them, at both ends of the
 * ring (wrap-around), and onto hashes that two backends produce (which nginx gives to the one listed first).
 * The points are generated here independently (java.util.zip.CRC32 over nginx's hash input), not read
 * from ringstore.
 *
 * <p>Needs Debian's nginx-light at {@code /usr/sbin/nginx} (or {@code -Dringstore.nginx=PATH}): skipped
 * without it, unless
 * {@code -Dringstore.requireNginx=true}, which turns its absence into a failure.
 */
@Tag("nginx")
@EnabledIf(value = NginxServer.TESTS_RUN, disabledReason = NginxServer.MISSING)
class NginxParityTest {
    private static final long SEED = 0x5EED_2B1F_A7C3L;
    private static final int RANDOM_URIS = 10_000;
    private static final int BIG_RANDOM_URIS = 1_000;
    private static final int SAMPLED_POINTS = 300;
    private static final int BIG_SAMPLED_POINTS = 100;
    private static final int CONNECTIONS = 8;
    private static final int POINTS_PER_WEIGHT = 160; // nginx's, written out here rather than taken from ringstore

    /** A {@code server} line: the address as written (nginx hashes the text) and its weight. */
    private record Server(String address, int weight) {
        String line(String nginxOnlyParameters) {
            return "server " + address + (weight == 1 ? "" : " weight=" + weight) + nginxOnlyParameters + ";";
        }
    }

    /** Loopback only, in odd spellings nginx accepts: leading zeros, no port (80), ::1 written many ways. */
    private static final List<Server> SMALL = List.of(
            new Server("127.0.0.1:9001", 3),
            new Server("127.000.000.002:8080", 2),
            new Server("127.0.0.3:08081", 1),
            new Server("127.0.0.4", 5),
            new Server("[::1]:9003", 4),
            new Server("[0:0:0:0:0:0:0:1]:9005", 1),
            new Server("[::1]:9006", 7),
            new Server("[0::1]:9007", 1),
            new Server("[::0:0:1]:9008", 2),
            new Server("[0000:0000:0000::0001]:9009", 1),
            new Server("[::0.0.0.1]:9010", 3),
            new Server("[::1]", 2),
            new Server("[::0001]:0009011", 1));

    /**
     * 20 backends, weights 60..155, 2150 × 160 = 344,000 points: about n²/2³³ ≈ 14 hashes are expected
     * to be produced by two backends.
     */
    private static final List<Server> BIG = bigUpstream();

    private static List<Server> bigUpstream() {
        List<Server> servers = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            String address = i < 16 ? "127.0.1." + (i + 1) + ":" + (7101 + i) : "[::1]:" + (7201 + i - 16);
            servers.add(new Server(address, 60 + 5 * i));
        }
        return List.copyOf(servers);
    }

    @TempDir
    static Path dir;

    private static NginxServer nginx;
    private static RingStore smallStore;
    private static RingStore bigStore;
    private static NginxPoints smallPoints;
    private static NginxPoints bigPoints;
    private static int totalCompared;
    private static int totalForged;
    private static long totalNanos;

    @BeforeAll
    static void startNginx() throws Exception {
        NginxServer.requireInstalled("the nginx parity test");
        smallStore = buildRing("small", SMALL);
        bigStore = buildRing("big", BIG);
        smallPoints = NginxPoints.of(SMALL);
        bigPoints = NginxPoints.of(BIG);
        nginx = NginxServer.start(dir.resolve("nginx"), 3, NginxParityTest::httpConfig);
        System.out.println("nginx parity: " + NginxServer.BINARY + " on 127.0.0.1:" + nginx.port(0) + " and :"
                + nginx.port(1) + "; IPv6 loopback [::1] "
                + (ipv6LoopbackUsable() ? "usable" : "NOT usable (its peers are still refused)"));
    }

    @AfterAll
    static void stopNginx() throws Exception {
        try {
            if (nginx != null) {
                nginx.close();
            }
        } finally {
            if (smallStore != null) {
                smallStore.close();
            }
            if (bigStore != null) {
                bigStore.close();
            }
        }
        if (totalCompared > 0) {
            System.out.printf(
                    "nginx parity total: %,d URIs compared with nginx, %,d of them forged, in %.1f s%n",
                    totalCompared, totalForged, totalNanos / 1e9);
        }
    }

    private static RingStore buildRing(String name, List<Server> servers) throws Exception {
        Path backends = dir.resolve(name + ".backends");
        StringBuilder text = new StringBuilder(
                        "# the servers of nginx's upstream '" + name + "' without nginx-only parameters\n")
                .append("upstream ")
                .append(name)
                .append(" {\n    hash $request_uri consistent;\n");
        for (Server s : servers) {
            text.append("    ").append(s.line("")).append('\n');
        }
        Files.writeString(backends, text.append("}\n"));
        Path ring = dir.resolve(name + ".ring");
        RingBuilder.of(BackendList.parse(backends)).build(ring);
        return RingStore.open(ring);
    }

    private static String httpConfig(int[] ports) {
        Path logs = dir.resolve("nginx");
        StringBuilder c = new StringBuilder("""
                log_format parity escape=none '$request_uri\\t$upstream_addr';
                keepalive_requests 1000000;
                proxy_next_upstream off;
                proxy_connect_timeout 1s;
                proxy_send_timeout 2s;
                proxy_read_timeout 2s;
                """);
        String[] names = {"small", "big"};
        List<List<Server>> upstreams = List.of(SMALL, BIG);
        for (int u = 0; u < 2; u++) {
            c.append("upstream ").append(names[u]).append(" {\n    hash $request_uri consistent;\n");
            for (Server s : upstreams.get(u)) {
                c.append("    ").append(s.line(" max_fails=0")).append('\n');
            }
            c.append("}\n");
        }
        String[] logNames = {"small", "big", "bigview"
        }; // the third: the big upstream again, for the view test's own log
        for (int u = 0; u < 3; u++) {
            c.append("""
                    server {
                        listen 127.0.0.1:%d;
                        access_log "%s" parity;
                        location / {
                            proxy_pass http://%s;
                        }
                    }
                    """.formatted(ports[u], logs.resolve(logNames[u] + ".log"), names[Math.min(u, 1)]));
        }
        return c.toString();
    }

    @Test
    void ringPointsAreTheOnesNginxGenerates() {
        assertSamePoints(smallStore.ring(Set.of()), smallPoints);
        assertSamePoints(bigStore.ring(Set.of()), bigPoints);
    }

    private static void assertSamePoints(Ring ring, NginxPoints expected) {
        assertEquals(expected.hashes.length, ring.pointCount(), "distinct points");
        for (int i = 0; i < expected.hashes.length; i++) {
            int at = i;
            assertEquals(Integer.toUnsignedLong(expected.hashes[i]), ring.pointHash(i), () -> "hash of point " + at);
            assertEquals(
                    expected.firstListed[i],
                    ring.pointBackend(i),
                    () -> "backend of point " + at + " (hash " + Integer.toHexString(expected.hashes[at]) + ")");
        }
    }

    @Test
    void randomAndForgedKeysGoWhereNginxSendsThem() throws Exception {
        SplittableRandom random = new SplittableRandom(SEED);
        Map<String, Request> requests = new LinkedHashMap<>();
        while (requests.size() < RANDOM_URIS) {
            add(requests, new Request(randomUri(random), null));
        }
        int[] h = smallPoints.hashes;
        List<Integer> targets = new ArrayList<>(List.of(0, -1)); // the smallest and largest hashes a key can have
        addAround(targets, h[0]);
        addAround(targets, h[h.length - 1]); // +1 wraps to the first point
        for (int i = 0; i < SAMPLED_POINTS; i++) {
            addAround(targets, h[random.nextInt(h.length)]);
        }
        forge(random, requests, targets, "/forged/");
        assertNginxAgrees("small", nginx.port(0), smallStore, requests);
    }

    @Test
    void collidingPointsGoToTheBackendNginxKeeps() throws Exception {
        int[] collisions = bigPoints.collisions;
        assertTrue(collisions.length > 0, "the big upstream should have hashes produced by two backends");
        SplittableRandom random = new SplittableRandom(SEED + 1);
        Map<String, Request> requests = new LinkedHashMap<>();
        while (requests.size() < BIG_RANDOM_URIS) {
            add(requests, new Request(randomUri(random), null));
        }
        int[] h = bigPoints.hashes;
        List<Integer> targets = new ArrayList<>();
        for (int c : collisions) {
            addAround(targets, c);
        }
        addAround(targets, h[0]);
        addAround(targets, h[h.length - 1]);
        for (int i = 0; i < BIG_SAMPLED_POINTS; i++) {
            addAround(targets, h[random.nextInt(h.length)]);
        }
        forge(random, requests, targets, "/collide/");
        System.out.println("nginx parity [big]: " + collisions.length + " hashes produced by two backends: "
                + Arrays.stream(collisions)
                        .mapToObj(c -> String.format("%08x", c))
                        .collect(Collectors.joining(" ")));
        assertNginxAgrees("big", nginx.port(1), bigStore, requests);
    }

    /**
     * A feature ring stored as a view (format 3) answers as nginx does for an upstream of the ring's
     * members alone. The ring file holds the big upstream's servers (feature {@code x}) after 24 other
     * servers listed first (no feature, never in nginx's upstream), whose points collide with the
     * members' about 27 times: at those hashes the ring of all servers keeps a non-member (listed
     * first), and the view must answer with the member nginx's members-only upstream keeps. Keys are
     * forged onto and around every such hash, and onto every collision among the members.
     */
    @Test
    void aViewOfTheMembersGoesWhereNginxSendsTheMembersUpstream() throws Exception {
        List<Server> others = new ArrayList<>();
        for (int i = 0; i < 24; i++) {
            others.add(new Server("127.0.2." + (i + 1) + ":" + (7301 + i), 80 + i));
        }
        List<Server> all = new ArrayList<>(others);
        all.addAll(BIG);
        NginxPoints allPoints = NginxPoints.of(all);
        java.util.Set<Integer> memberHashes =
                Arrays.stream(bigPoints.hashes).boxed().collect(Collectors.toSet());
        int[] lostToOthers = Arrays.stream(allPoints.collisions)
                .filter(memberHashes::contains)
                .toArray();
        assertTrue(lostToOthers.length > 0, "some member point should tie with a server listed before the members");

        Path backends = dir.resolve("view.backends");
        StringBuilder text = new StringBuilder();
        for (Server s : others) {
            text.append(s.line("")).append('\n');
        }
        for (Server s : BIG) {
            text.append(s.line("")).append(" # ringstore: features=x\n");
        }
        Files.writeString(backends, text);
        Path file = dir.resolve("view.ring");
        RingBuilder.of(BackendList.parse(backends))
                .views(io.ringstore.builder.Views.ALL)
                .build(file);
        try (RingStore store = RingStore.open(file)) {
            store.verify();
            Ring view = store.ring(Set.of("x"));
            assertEquals(RingFileLayout.Storage.VIEW, store.layout().storage(view));
            assertEquals(bigPoints.hashes.length, view.pointCount(), "the view has the members-only ring's points");

            SplittableRandom random = new SplittableRandom(SEED + 2);
            Map<String, Request> requests = new LinkedHashMap<>();
            while (requests.size() < BIG_RANDOM_URIS) {
                add(requests, new Request(randomUri(random), null));
            }
            List<Integer> targets = new ArrayList<>();
            for (int c : lostToOthers) {
                addAround(targets, c);
            }
            for (int c : bigPoints.collisions) {
                addAround(targets, c);
            }
            int[] h = bigPoints.hashes;
            addAround(targets, h[0]);
            addAround(targets, h[h.length - 1]);
            forge(random, requests, targets, "/view/");
            System.out.println("nginx parity [view]: " + lostToOthers.length
                    + " member hashes kept by a non-member in the ring of all servers");
            assertNginxAgrees("bigview", nginx.port(2), store, view, requests);
        }
    }

    /** A URI to send; {@code target} is the CRC-32 it was forged to have, or null for a random one. */
    private record Request(byte[] uri, Integer target) {}

    private static void add(Map<String, Request> requests, Request r) {
        requests.putIfAbsent(new String(r.uri, StandardCharsets.ISO_8859_1), r);
    }

    private static void addAround(List<Integer> targets, int hash) {
        targets.add(hash - 1);
        targets.add(hash);
        targets.add(hash + 1);
    }

    private static void forge(
            SplittableRandom random, Map<String, Request> requests, List<Integer> targets, String path) {
        for (int target : targets) {
            byte[] prefix =
                    (path + alphanumeric(random, 1 + random.nextInt(20)) + "?k=").getBytes(StandardCharsets.US_ASCII);
            byte[] key = CrcForge.forge(prefix, target);
            CRC32 crc = new CRC32();
            crc.update(key);
            assertEquals(target, (int) crc.getValue(), () -> "forged key " + printable(key) + " has the wrong CRC-32");
            add(requests, new Request(key, target));
        }
    }

    private static void assertNginxAgrees(String upstream, int port, RingStore store, Map<String, Request> requests)
            throws Exception {
        assertNginxAgrees(upstream, port, store, store.ring(Set.of()), requests);
    }

    private static void assertNginxAgrees(
            String upstream, int port, RingStore store, Ring ring, Map<String, Request> requests) throws Exception {
        long start = System.nanoTime();
        List<Request> sent = List.copyOf(requests.values());
        int[] statuses =
                NginxClient.getAll(port, sent.stream().map(Request::uri).toList(), CONNECTIONS, 60);
        Map<Integer, Integer> statusCounts = new TreeMap<>();
        List<String> refused = new ArrayList<>();
        for (int i = 0; i < statuses.length; i++) {
            statusCounts.merge(statuses[i], 1, Integer::sum);
            if (statuses[i] >= 400 && statuses[i] < 500 && refused.size() < 5) {
                refused.add(statuses[i] + " for " + printable(sent.get(i).uri));
            }
        }
        assertTrue(
                refused.isEmpty(),
                () -> "nginx refused requests (a URI the test should not have generated): " + refused);

        Map<String, String> logged = nginx.accessLog(upstream + ".log", sent.size());
        List<String> mismatches = new ArrayList<>();
        int mismatchCount = 0;
        int forged = 0;
        for (Request r : sent) {
            String key = new String(r.uri, StandardCharsets.ISO_8859_1);
            String fromNginx = logged.remove(key);
            String fromRingstore = store.backend(ring.lookup(r.uri)).upstreamAddress();
            if (r.target != null) {
                forged++;
            }
            if (!fromRingstore.equals(fromNginx)) {
                if (++mismatchCount <= 10) {
                    mismatches.add(String.format(
                            "%n  key %s crc32=%08x%s nginx=%s ringstore=%s",
                            printable(r.uri),
                            ring.hash(r.uri),
                            r.target == null ? "" : " (forged)",
                            fromNginx == null ? "(not logged)" : fromNginx,
                            fromRingstore));
                }
            }
        }
        long nanos = System.nanoTime() - start;
        System.out.printf(
                "nginx parity [%s: %d backends, %,d points]: %,d URIs compared (%,d forged onto, next to or between"
                        + " ring points) in %.1f s; statuses %s%n",
                upstream, store.backendCount(), ring.pointCount(), sent.size(), forged, nanos / 1e9, statusCounts);
        totalCompared += sent.size();
        totalForged += forged;
        totalNanos += nanos;
        assertTrue(
                logged.isEmpty(),
                () -> logged.size() + " logged URIs were never sent, e.g. "
                        + logged.keySet().stream()
                                .limit(3)
                                .map(k -> printable(k.getBytes(StandardCharsets.ISO_8859_1)))
                                .toList());
        int count = mismatchCount;
        assertTrue(
                mismatches.isEmpty(),
                () -> count + " of " + sent.size() + " URIs went elsewhere than ringstore says (first "
                        + mismatches.size() + "):" + String.join("", mismatches));
    }

    // ---- random URIs: bytes nginx takes raw in a request line, kept clear of what it would refuse ----

    private static final String ALPHANUMERIC = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    private static final String PUNCTUATION = "-._~!$&'()*+,;=:@";
    private static final String UNUSUAL = "\"<>\\^`{|}";
    private static final String NON_ASCII = "éüßж€Ω日本";

    /**
     * A path of segments that start with a letter or digit (so never "." or "..", which could climb above
     * the root and get a 400), then maybe a query; raw punctuation, unusual ASCII, UTF-8 and %XX escapes
     * (never of '.', '/' or NUL, which nginx decodes and could turn into dot segments or refuse).
     */
    private static byte[] randomUri(SplittableRandom r) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.write('/');
        int pathLength = randomLength(r);
        boolean segmentStart = true;
        while (b.size() < pathLength) {
            if (segmentStart) {
                b.write(ALPHANUMERIC.charAt(r.nextInt(ALPHANUMERIC.length())));
                segmentStart = false;
            } else if (r.nextInt(100) < 8) {
                b.write('/');
                segmentStart = true;
            } else {
                uriCharacter(r, b, false);
            }
        }
        if (r.nextBoolean()) {
            b.write('?');
            for (int n = randomLength(r) / 2; n > 0; n--) {
                uriCharacter(r, b, true);
            }
        }
        return b.toByteArray();
    }

    /** Mostly short, some long, a few of a few kilobytes (nginx's request line buffer is 8k). */
    private static int randomLength(SplittableRandom r) {
        int k = r.nextInt(100);
        return k < 70 ? 1 + r.nextInt(40) : k < 95 ? 40 + r.nextInt(260) : 300 + r.nextInt(2700);
    }

    private static void uriCharacter(SplittableRandom r, ByteArrayOutputStream b, boolean query) {
        int k = r.nextInt(100);
        if (k < 70) {
            b.write(ALPHANUMERIC.charAt(r.nextInt(ALPHANUMERIC.length())));
        } else if (k < 84) {
            b.write(PUNCTUATION.charAt(r.nextInt(PUNCTUATION.length())));
        } else if (k < 88) {
            b.write(UNUSUAL.charAt(r.nextInt(UNUSUAL.length())));
        } else if (k < 92) {
            b.writeBytes(String.valueOf(NON_ASCII.charAt(r.nextInt(NON_ASCII.length())))
                    .getBytes(StandardCharsets.UTF_8));
        } else if (k < 97) {
            int v;
            do {
                v = 1 + r.nextInt(255);
            } while (v == '.' || v == '/');
            String hex = String.format(r.nextBoolean() ? "%%%02x" : "%%%02X", v);
            b.writeBytes(hex.getBytes(StandardCharsets.US_ASCII));
        } else {
            b.write(query ? "/?.".charAt(r.nextInt(3)) : '~');
        }
    }

    private static String alphanumeric(SplittableRandom r, int length) {
        StringBuilder sb = new StringBuilder(length);
        for (int i = 0; i < length; i++) {
            sb.append(ALPHANUMERIC.charAt(r.nextInt(ALPHANUMERIC.length())));
        }
        return sb.toString();
    }

    /** ASCII as is, other bytes as \xHH, long keys shortened. */
    private static String printable(byte[] uri) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < uri.length && sb.length() < 160; i++) {
            int c = uri[i] & 0xFF;
            sb.append(c >= 0x20 && c < 0x7F ? String.valueOf((char) c) : String.format("\\x%02x", c));
        }
        return "'" + sb + "'" + (uri.length > 160 ? " (" + uri.length + " bytes)" : "");
    }

    private static boolean ipv6LoopbackUsable() {
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress(InetAddress.getByName("::1"), 0));
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * The points nginx's {@code ngx_http_upstream_update_chash} makes, generated here without ringstore:
     * for each server in listing order, weight × 160 points, point i = crc32(HOST "\0" PORT PREV), where
     * HOST/PORT split the server text at a ':' followed only by digits and PREV is the previous point's
     * hash as 4 little-endian bytes (0 at first). Sorted stably by hash, equal hashes keep the server
     * listed first.
     *
     * @param hashes      the distinct point hashes, ascending unsigned
     * @param firstListed for each, the index of the first-listed server producing it
     * @param collisions  hashes produced by two or more different servers
     */
    private record NginxPoints(int[] hashes, int[] firstListed, int[] collisions) {
        static NginxPoints of(List<Server> servers) {
            int total = servers.stream()
                    .mapToInt(s -> s.weight() * POINTS_PER_WEIGHT)
                    .sum();
            long[] packed = new long[total]; // (hash as signed-comparable) << 32 | server index
            int n = 0;
            CRC32 crc = new CRC32();
            ByteBuffer previous = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN);
            for (int s = 0; s < servers.size(); s++) {
                String text = servers.get(s).address();
                int colon = portColon(text);
                byte[] host = (colon < 0 ? text : text.substring(0, colon)).getBytes(StandardCharsets.US_ASCII);
                byte[] port = (colon < 0 ? "" : text.substring(colon + 1)).getBytes(StandardCharsets.US_ASCII);
                int hash = 0;
                for (int j = 0; j < servers.get(s).weight() * POINTS_PER_WEIGHT; j++) {
                    crc.reset();
                    crc.update(host);
                    crc.update(0);
                    crc.update(port);
                    crc.update(previous.putInt(0, hash).array());
                    hash = (int) crc.getValue();
                    packed[n++] = ((long) (hash ^ Integer.MIN_VALUE) << 32) | s;
                }
            }
            Arrays.sort(packed);
            int[] hashes = new int[total];
            int[] first = new int[total];
            List<Integer> collisions = new ArrayList<>();
            int distinct = 0;
            for (int i = 0; i < total; i++) {
                int hash = (int) (packed[i] >> 32) ^ Integer.MIN_VALUE;
                int server = (int) packed[i];
                if (distinct > 0 && hashes[distinct - 1] == hash) {
                    if (first[distinct - 1] != server && (collisions.isEmpty() || collisions.getLast() != hash)) {
                        collisions.add(hash);
                    }
                    continue;
                }
                hashes[distinct] = hash;
                first[distinct++] = server;
            }
            return new NginxPoints(
                    Arrays.copyOf(hashes, distinct),
                    Arrays.copyOf(first, distinct),
                    collisions.stream().mapToInt(Integer::intValue).toArray());
        }

        /** nginx's split: the ':' before a final run of digits, or -1 (no port, as in "127.0.0.4" or "[::1]"). */
        private static int portColon(String text) {
            for (int j = text.length() - 1; j >= 0; j--) {
                char c = text.charAt(j);
                if (c == ':') {
                    return j;
                }
                if (c < '0' || c > '9') {
                    return -1;
                }
            }
            return -1;
        }
    }
}
