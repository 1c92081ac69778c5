package io.ringstore.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.Ring;
import io.ringstore.RingStore;
import io.ringstore.builder.HaproxyConfig;
import io.ringstore.builder.RingBuilder;
import io.ringstore.family.Families;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.zip.CRC32;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.api.io.TempDir;

/**
 * Parity with a real HAProxy 2.6 (Debian's {@code /usr/sbin/haproxy}), started once for the class in
 * front of 200 loopback origins that answer with their own {@code ip:port}: one backend per case, each
 * with {@code hash-type consistent} and one of the eight hashes ({@code sdbm}, {@code djb2}, {@code wt6},
 * {@code crc32}, each with and without {@code avalanche}, and a bare {@code hash-type consistent}),
 * {@code balance uri} or {@code balance hdr(X-Key)}, fleets of 1 to 200 servers with weights 1 to 256,
 * explicit ids (some of them large) and HAProxy's own numbering, {@code disabled}, {@code weight 0}
 * and {@code backup} servers; a frontend picks the backend by a request header. Each backend's ring is
 * built by {@code HaproxyConfig} from the same configuration text HAProxy runs ({@code build --from
 * haproxy}), and every request's answering origin must be what ringstore's lookup answers for the bytes
 * HAProxy hashes: the path up to the first {@code ?} for {@code balance uri}, the header's value for
 * {@code hdr}.
 *
 * <p>Besides seeded random keys, keys are forged to hash exactly onto a node, onto the midpoint between
 * two nodes (an even gap: equal distances, HAProxy takes the node before) and one past it (the last
 * position of the node before and the first of the node after, for an odd gap): found by hashing
 * candidates with a model of HAProxy's hashes and nodes written here, independently of ringstore (its
 * hashes from {@code src/hash.c}, {@code full_hash}, the nodes {@code full_hash(id * 4096 + j)} and the
 * automatic ids), which must agree with HAProxy too.
 */
@Tag("process")
@EnabledIf(value = HaproxyServer.TESTS_RUN, disabledReason = HaproxyServer.MISSING)
class HaproxyParityTest {
    private static final long SEED = 0x4A9_0C0_2026L;
    private static final int ORIGINS = 200;
    private static final int RANDOM_KEYS = 1_000;
    private static final int FORGE_CANDIDATES = 400_000;
    private static final int BATCH = 64;
    private static final String[] HASH_TYPES = {
        "sdbm", "sdbm avalanche", "djb2", "djb2 avalanche", "wt6", "wt6 avalanche", "crc32", "crc32 avalanche", ""
    };

    /** The tie backend's ids: 3 and 3 + 2^20 share their nodes; the third server is numbered (4). */
    private static final long[] TIE_IDS = {3, 3 + (1L << 20), 0};

    /** The failover backend: so many servers, this one not listening. */
    private static final int FAILOVER_SERVERS = 12;

    private static final int FAILOVER_DEAD = 5;
    private static String deadAddress;

    @TempDir
    static Path dir;

    private static HaproxyServer.Origins origins;
    private static HaproxyServer haproxy;
    private static String config;
    private static final List<Case> CASES = new ArrayList<>();
    /** Forged keys by kind, over all cases: on a node, on a midpoint, one past a midpoint. */
    private static final Map<String, Integer> FORGED = new LinkedHashMap<>();

    /** A server line as the test writes it. */
    private record Server(int origin, long id, int weight, boolean disabled, boolean backup) {}

    /** One backend: its name, hash-type arguments, whether it balances by uri (else hdr(X-Key)), its servers. */
    private record Case(String name, String hashType, boolean uri, List<Server> servers) {
        String function() {
            return hashType.isEmpty() ? "sdbm" : hashType.split(" ")[0];
        }

        boolean avalanche() {
            return hashType.isEmpty() || hashType.endsWith("avalanche");
        }
    }

    @BeforeAll
    static void start() throws Exception {
        if (!HaproxyServer.installed()) {
            HaproxyServer.requireInstalled("HaproxyParityTest");
        }
        SplittableRandom random = new SplittableRandom(SEED);
        int n = 0;
        for (String hashType : HASH_TYPES) {
            // per hash: a large fleet (weights 1-256, some explicit ids), a small one, a single server
            CASES.add(new Case("b" + n++, hashType, n % 2 == 0, fleet(random, 120 + random.nextInt(81), 256, true)));
            CASES.add(new Case("b" + n++, hashType, n % 2 == 0, fleet(random, 2 + random.nextInt(12), 4, false)));
            CASES.add(new Case("b" + n++, hashType, n % 2 == 1, fleet(random, 1, 3, false)));
        }
        StringBuilder cfg = new StringBuilder();
        cfg.append("""
                global
                    maxconn 2000
                defaults
                    mode http
                    timeout connect 2s
                    timeout client 20s
                    timeout server 20s
                    retries 0
                frontend fe
                    bind 127.0.0.1:%d
                    use_backend %[req.hdr(X-Backend)]
                """);
        origins = new HaproxyServer.Origins(ORIGINS);
        for (Case c : CASES) {
            cfg.append("backend ").append(c.name()).append('\n');
            cfg.append("    balance ").append(c.uri() ? "uri" : "hdr(X-Key)").append('\n');
            cfg.append("    hash-type consistent ").append(c.hashType()).append('\n');
            for (Server s : c.servers()) {
                cfg.append("    server s").append(s.origin()).append(' ').append(origins.address(s.origin()));
                if (s.id() > 0) {
                    cfg.append(" id ").append(s.id());
                }
                cfg.append(" weight ").append(s.weight());
                cfg.append(s.disabled() ? " disabled" : "").append(s.backup() ? " backup" : "");
                cfg.append('\n');
            }
        }
        // ids 2^20 apart: the two servers share every node
        cfg.append("backend tie\n    balance hdr(X-Key)\n    hash-type consistent sdbm\n");
        for (int i = 0; i < TIE_IDS.length; i++) {
            cfg.append("    server t").append(i).append(' ').append(origins.address(i));
            cfg.append(TIE_IDS[i] > 0 ? " id " + TIE_IDS[i] : "").append('\n');
        }
        // a server nothing listens on: HAProxy (no health checks) picks it, fails to connect, and
        // redispatches its last retry past it
        deadAddress = "127.0.0.1:" + HaproxyServer.freePort();
        cfg.append("backend failover\n    balance hdr(X-Key)\n    hash-type consistent djb2 avalanche\n");
        cfg.append("    option redispatch\n    retries 1\n");
        for (int i = 0; i < FAILOVER_SERVERS; i++) {
            String address = i == FAILOVER_DEAD ? deadAddress : origins.address(10 + i);
            cfg.append("    server f").append(i).append(' ').append(address);
            cfg.append(" weight ").append(1 + i % 4).append('\n');
        }
        String template = cfg.toString().replace("%[", "%%[");
        haproxy = HaproxyServer.start(dir, port -> {
            config = String.format(template, port);
            return config;
        });
    }

    /** {@code count} servers on distinct origins, weights 1 to {@code maxWeight}, a few ids, disabled, weight 0 and backup ones. */
    private static List<Server> fleet(SplittableRandom random, int count, int maxWeight, boolean odd) {
        List<Integer> all = new ArrayList<>();
        for (int i = 0; i < ORIGINS; i++) {
            all.add(i);
        }
        Set<Long> ids = new HashSet<>();
        List<Server> servers = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            int origin = all.remove(random.nextInt(all.size()));
            long id = 0;
            if (odd && random.nextInt(3) == 0) {
                do {
                    id = random.nextInt(4) == 0 ? 1 + random.nextInt(Integer.MAX_VALUE) : 1 + random.nextInt(300);
                } while (!ids.add(id));
            }
            int weight = 1 + random.nextInt(maxWeight);
            boolean disabled = odd && random.nextInt(40) == 0;
            boolean backup = odd && random.nextInt(60) == 0;
            if (odd && random.nextInt(50) == 0) {
                weight = 0;
            }
            servers.add(new Server(origin, id, weight, disabled, backup));
        }
        return servers;
    }

    @AfterAll
    static void stop() {
        if (haproxy != null) {
            haproxy.close();
        }
        if (origins != null) {
            origins.close();
        }
    }

    @Test
    void everyBackendSendsEachKeyWhereRingstoreDoes() throws Exception {
        SplittableRandom random = new SplittableRandom(SEED + 1);
        long compared = 0;
        int servers = 0;
        for (Case c : CASES) {
            Model model = new Model(c);
            List<String> keys = new ArrayList<>();
            for (int i = 0; i < RANDOM_KEYS; i++) {
                keys.add(randomKey(random, c.uri()));
            }
            if (c.servers().size() > 50) {
                keys.addAll(forged(model, c.uri()));
            }
            Path ring = dir.resolve(c.name() + ".ring");
            HaproxyConfig parsed = HaproxyConfig.parse("haproxy.cfg", config, c.name());
            RingBuilder.of(parsed.backends()).version(parsed.version()).build(ring);
            List<HaproxyServer.Request> requests = new ArrayList<>();
            for (String k : keys) {
                requests.add(
                        c.uri()
                                ? new HaproxyServer.Request(k, List.of("X-Backend: " + c.name()))
                                : new HaproxyServer.Request("/x", List.of("X-Backend: " + c.name(), "X-Key: " + k)));
            }
            List<String> answers = haproxy.send(requests, BATCH);
            try (RingStore store = RingStore.open(ring)) {
                Ring r = store.ring(Set.of(), parsed.version());
                for (int i = 0; i < keys.size(); i++) {
                    byte[] hashed = hashedBytes(keys.get(i), c.uri());
                    String where = c.name() + " (" + c.servers().size() + " servers, hash-type consistent "
                            + c.hashType() + ", balance " + (c.uri() ? "uri" : "hdr") + ") key "
                            + keys.get(i);
                    assertEquals(model.expected(hashed), answers.get(i), where + ": the model of HAProxy");
                    assertEquals(
                            answers.get(i),
                            store.backend(r.lookup(hashed)).answer(Families.HAPROXY),
                            where + ": ringstore");
                    compared++;
                }
            }
            servers += c.servers().size();
        }
        int forged = FORGED.values().stream().mapToInt(Integer::intValue).sum();
        System.out.printf(
                "HaproxyParityTest: %d backends, %d servers, %d keys compared with haproxy (forged: %s)%n",
                CASES.size(), servers, compared, FORGED);
        assertTrue(FORGED.getOrDefault("node", 0) >= 8, "keys forged onto nodes: " + FORGED);
        assertTrue(FORGED.getOrDefault("midpoint", 0) >= 4, "keys forged onto exact midpoints: " + FORGED);
        assertTrue(FORGED.getOrDefault("past midpoint", 0) >= 8, "keys forged one past a midpoint: " + FORGED);
    }

    /**
     * Two servers whose ids are 2^20 apart share their nodes, and HAProxy's tree splits each shared node
     * (eb32 keeps both, in insertion order): a key on it or below it goes to the first inserted
     * ({@code eb32_lookup_ge} finds the first of equal keys), a key above it nearer to it to the last
     * ({@code eb32_prev} from the next key is the last of them). A ring file keeps one server a node, so
     * {@code build --from haproxy} refuses such a backend, and ringstore built from a backends file
     * giving those ids (the first listed keeps a node) differs exactly on the keys above a shared node.
     */
    @Test
    void serversWithIdsTwoToTheTwentyApartSplitTheirNodesAsRingstoreSays() throws Exception {
        Exception refused = org.junit.jupiter.api.Assertions.assertThrows(
                io.ringstore.builder.BackendsFileException.class,
                () -> HaproxyConfig.parse("haproxy.cfg", config, "tie"));
        assertTrue(refused.getMessage().contains("ids 3 (server 't0'"), refused.getMessage());
        StringBuilder backends = new StringBuilder();
        for (int i = 0; i < TIE_IDS.length; i++) {
            backends.append("server ").append(origins.address(i)).append(';');
            backends.append(TIE_IDS[i] > 0 ? "  # ringstore: id=" + TIE_IDS[i] : "")
                    .append('\n');
        }
        Path ring = dir.resolve("tie.ring");
        RingBuilder.of(io.ringstore.builder.BackendList.parse("tie", backends.toString()))
                .version(io.ringstore.family.RingVersion.parse("haproxy:sdbm"))
                .build(ring);
        SplittableRandom random = new SplittableRandom(SEED + 2);
        List<String> keys = new ArrayList<>();
        List<HaproxyServer.Request> requests = new ArrayList<>();
        for (int i = 0; i < 2_000; i++) {
            String k = randomKey(random, false);
            keys.add(k);
            requests.add(new HaproxyServer.Request("/x", List.of("X-Backend: tie", "X-Key: " + k)));
        }
        List<String> answers = haproxy.send(requests, BATCH);
        int same = 0;
        int split = 0;
        try (RingStore store = RingStore.open(ring)) {
            Ring r = store.ring(Set.of());
            for (int i = 0; i < keys.size(); i++) {
                byte[] key = keys.get(i).getBytes(StandardCharsets.ISO_8859_1);
                int p = r.pointIndex(r.hash(key));
                String ours = store.backend(r.lookup(key)).answer(Families.HAPROXY);
                if (ours.equals(answers.get(i))) {
                    same++;
                    continue;
                }
                // a shared node's key (ringstore keeps the first server's), the key above it
                assertEquals(origins.address(0), ours, keys.get(i));
                assertEquals(origins.address(1), answers.get(i), keys.get(i));
                assertTrue(Long.compareUnsigned(r.hash(key), r.pointHash(p)) > 0, keys.get(i) + " above its node");
                split++;
            }
        }
        System.out.printf(
                "HaproxyParityTest: ids 2^20 apart: %d keys agree, %d above a shared node differ%n", same, split);
        assertTrue(split > 100 && same > 1000, same + " agree, " + split + " differ");
    }

    /**
     * Failover: a server HAProxy believes up (no health checks) refuses the connection, and HAProxy's
     * last retry ({@code option redispatch}, {@code retries 1}) asks {@code chash_get_server_hash} again
     * with that server to avoid, which walks on from the key's node ({@code eb32_next}) to the first
     * node of another server. ringstore's failover walk from the key's node, refusing that server,
     * must answer the same for every key: the keys of the dead server land where HAProxy sends them.
     */
    @Test
    void aServerThatRefusesIsWalkedPastAsHaproxyRedispatches() throws Exception {
        HaproxyConfig parsed = HaproxyConfig.parse("haproxy.cfg", config, "failover");
        Path ring = dir.resolve("failover.ring");
        RingBuilder.of(parsed.backends()).version(parsed.version()).build(ring);
        SplittableRandom random = new SplittableRandom(SEED + 3);
        List<String> keys = new ArrayList<>();
        List<HaproxyServer.Request> requests = new ArrayList<>();
        for (int i = 0; i < 1_500; i++) {
            String k = randomKey(random, false);
            keys.add(k);
            requests.add(new HaproxyServer.Request("/x", List.of("X-Backend: failover", "X-Key: " + k)));
        }
        List<String> answers = haproxy.send(requests, BATCH);
        int walked = 0;
        try (RingStore store = RingStore.open(ring)) {
            Ring r = store.ring(Set.of());
            int dead = -1;
            for (int b = 0; b < store.backendCount(); b++) {
                if (store.backend(b).answer(Families.HAPROXY).equals(deadAddress)) {
                    dead = b;
                }
            }
            assertEquals(FAILOVER_DEAD, dead);
            int refused = dead;
            for (int i = 0; i < keys.size(); i++) {
                byte[] key = keys.get(i).getBytes(StandardCharsets.ISO_8859_1);
                int chosen = r.select(key, 0, key.length, r.pointCount(), b -> b != refused);
                assertEquals(answers.get(i), store.backend(chosen).answer(Families.HAPROXY), keys.get(i));
                walked += r.lookup(key) == refused ? 1 : 0;
            }
        }
        System.out.printf(
                "HaproxyParityTest: failover: %d keys, %d walked past the refusing server%n", keys.size(), walked);
        assertTrue(walked > 50, "keys of the refusing server: " + walked);
    }

    /** What HAProxy hashes of a request: the target up to the first {@code ?} (balance uri), the header's value (hdr). */
    private static byte[] hashedBytes(String key, boolean uri) {
        int q = key.indexOf('?');
        String hashed = uri && q >= 0 ? key.substring(0, q) : key;
        return hashed.getBytes(StandardCharsets.ISO_8859_1);
    }

    private static String randomKey(SplittableRandom random, boolean uri) {
        StringBuilder b = new StringBuilder(uri ? "/" : "");
        int length = random.nextInt(uri ? 30 : 20) + 1;
        String chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~/";
        for (int i = 0; i < length; i++) {
            b.append(chars.charAt(random.nextInt(chars.length())));
        }
        if (uri && random.nextInt(4) == 0) {
            b.append("?q=").append(random.nextInt(1000)); // HAProxy stops hashing at '?'
        }
        return b.toString();
    }

    /** Keys whose hash (by the model) is a node, an exact midpoint of an even gap, or one past a midpoint. */
    private static List<String> forged(Model model, boolean uri) {
        long[] targets = model.targets();
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < FORGE_CANDIDATES; i++) {
            String key = (uri ? "/f/" : "f") + Integer.toString(i, 36);
            int h = model.keyHash(key.getBytes(StandardCharsets.ISO_8859_1));
            int at = Arrays.binarySearch(targets, Integer.toUnsignedLong(h) << 2);
            int found = at >= 0 ? at : -at - 1;
            if (found < targets.length && targets[found] >>> 2 == Integer.toUnsignedLong(h)) {
                int kind = (int) (targets[found] & 3);
                FORGED.merge(kind == 0 ? "node" : kind == 1 ? "midpoint" : "past midpoint", 1, Integer::sum);
                keys.add(key);
            }
        }
        return keys;
    }

    /** HAProxy 2.6's hashes, ids, nodes and nearest-node lookup, written from its source, not ringstore's. */
    private static final class Model {
        private final Case c;
        private final long[] nodes; // key << 32 | server index, in unsigned order
        private final Map<Integer, Integer> serverOfOrigin = new HashMap<>();

        Model(Case c) {
            this.c = c;
            long[] ids = new long[c.servers().size()];
            Set<Long> used = new HashSet<>();
            for (int i = 0; i < ids.length; i++) {
                ids[i] = c.servers().get(i).id();
                used.add(ids[i]);
            }
            long next = 1;
            for (int i = 0; i < ids.length; i++) {
                if (ids[i] == 0) {
                    while (used.contains(next)) {
                        next++;
                    }
                    ids[i] = next;
                    used.add(next);
                }
                next++;
            }
            List<Long> points = new ArrayList<>();
            for (int i = 0; i < ids.length; i++) {
                Server s = c.servers().get(i);
                if (s.disabled() || s.backup() || s.weight() == 0) {
                    continue;
                }
                for (int j = 0; j < s.weight() * 16; j++) {
                    int key = fullHash((int) ids[i] * 4096 + j);
                    points.add(Integer.toUnsignedLong(key) << 32 | (long) i);
                }
            }
            points.sort(Long::compareUnsigned); // by key, then server: HAProxy inserts servers in order
            nodes = points.stream().mapToLong(Long::longValue).toArray();
        }

        int keyHash(byte[] key) {
            int h = switch (c.function()) {
                case "sdbm" -> {
                    int x = 0;
                    for (byte b : key) {
                        x = (b & 0xFF) + (x << 6) + (x << 16) - x;
                    }
                    yield x;
                }
                case "djb2" -> {
                    int x = 5381;
                    for (byte b : key) {
                        x = x * 33 + (b & 0xFF);
                    }
                    yield x;
                }
                case "wt6" -> wt6(key);
                default -> {
                    CRC32 crc = new CRC32();
                    crc.update(key);
                    yield (int) crc.getValue();
                }
            };
            return c.avalanche() ? fullHash(h) : h;
        }

        /** The answering origin for a key, by {@code chash_get_server_hash}; "status 503" without a server. */
        String expected(byte[] key) {
            if (nodes.length == 0) {
                return "status 503";
            }
            long h = Integer.toUnsignedLong(keyHash(key));
            int next = firstAtOrAbove(h);
            if (next == nodes.length) {
                next = 0;
            }
            int prev = next == 0 ? nodes.length - 1 : next - 1;
            int dp = (int) h - (int) (nodes[prev] >>> 32);
            int dn = (int) (nodes[next] >>> 32) - (int) h;
            int chosen = Integer.compareUnsigned(dp, dn) <= 0 ? prev : next;
            return origins.address(c.servers().get((int) nodes[chosen]).origin());
        }

        private int firstAtOrAbove(long h) {
            int lo = 0;
            int hi = nodes.length;
            while (lo < hi) {
                int mid = (lo + hi) >>> 1;
                if (nodes[mid] >>> 32 < h) {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            return lo;
        }

        /** Sorted {@code hash << 2 | kind}: 0 a node, 1 the midpoint of an even gap, 2 one past a midpoint. */
        long[] targets() {
            List<Long> t = new ArrayList<>();
            for (int i = 0; i < nodes.length; i++) {
                long here = nodes[i] >>> 32;
                long after = i + 1 < nodes.length ? nodes[i + 1] >>> 32 : (nodes[0] >>> 32) + (1L << 32);
                t.add(here << 2);
                if (after - here >= 2) {
                    long mid = (here + after) / 2;
                    t.add((mid & 0xFFFF_FFFFL) << 2 | ((after - here) % 2 == 0 ? 1 : 2));
                    t.add(((mid + 1) & 0xFFFF_FFFFL) << 2 | 2);
                }
            }
            return t.stream().mapToLong(Long::longValue).sorted().toArray();
        }

        private static int wt6(byte[] key) {
            int h0 = 0xa53c965a;
            int h1 = 0x5ca6953a;
            int step0 = 6;
            int step1 = 18;
            for (byte b : key) {
                int t = b & 0xFF;
                h0 = ~(h0 ^ t);
                h1 = ~(h1 + t);
                t = (h1 << step0) | (h1 >>> (32 - step0)); // Java masks the shift count as x86 does
                h1 = (h0 << step1) | (h0 >>> (32 - step1));
                h0 = t;
                t = ((h0 >>> 16) ^ h1) & 0xffff;
                step0 = t & 0x1F;
                step1 = t >>> 11;
            }
            return h0 ^ h1;
        }

        private static int fullHash(int a) {
            a = (a + 0x7ed55d16) + (a << 12);
            a = (a ^ 0xc761c23c) ^ (a >>> 19);
            a = (a + 0x165667b1) + (a << 5);
            a = (a + 0xd3a2646c) ^ (a << 9);
            a = (a + 0xfd7046c5) + (a << 3);
            a = (a ^ 0xb55a4f09) ^ (a >>> 16);
            return a * (int) 3221225473L;
        }
    }
}
