package io.ringstore;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.ringstore.family.Families;
import io.ringstore.family.RingFamily;
import io.ringstore.family.RingVersion;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Apache Dubbo's {@code ConsistentHashLoadBalance} ({@code dubbo[:K]}) against the family contract.
 * Dubbo publishes no vector with values (vectors/dubbo/README.md), so the family is checked against a
 * model written here from the rule of rings.md §6, with the JDK's MessageDigest and TreeMap as
 * Dubbo's selector uses them (not Dubbo's code): per provider in list order, for i in 0..K/4-1,
 * {@code md5(host:port + i)}, its four little-endian words put in the map (the last put wins); a key
 * goes to {@code ceilingEntry(LE32(md5(key), 0))}, else {@code firstEntry()}. And on the text rule's
 * own consequence, two providers whose texts are the same strings.
 */
class DubboFamilyTest extends RingFamilyContract {
    @Override
    RingFamily family() {
        return Families.DUBBO;
    }

    @Override
    String expectedName() {
        return "dubbo";
    }

    @Override
    int expectedCode() {
        return 11;
    }

    /**
     * Recorded by {@link SeededFleets#checksum} when this test was added (branch h/contract on 95f3c34), a
     * regression guard; recorded again when IPv6 providers' texts became Dubbo's {@code [v6]:port} (issue
     * 30: the seeded fleets have IPv6 servers, whose points the old text {@code v6:port} gave).
     */
    @Override
    Map<RingVersion, String> goldenChecksums() {
        Map<RingVersion, String> m = new LinkedHashMap<>();
        m.put(RingVersion.parse("dubbo"), "f9ae2dfe9442f69a5ef98d462899be4005cbcc8d48db526f4f0a605f5112eba4");
        m.put(RingVersion.parse("dubbo:10"), "40642207bdf78e900c9503ab7eaca0e8f6f504c9c5bc77f3afe03156776134af");
        return m;
    }

    /** {@code hash.nodes} points a provider, no weights. */
    @Override
    boolean monotone() {
        return true;
    }

    /** {@code TreeMap.put}: the last put wins, the provider listed last. */
    @Override
    Comparator<Backend> tieOrder() {
        return Comparator.comparingInt(Backend::index).reversed();
    }

    /** The model: Dubbo's selector as rings.md §6 states it, over providers given as {@code host:port} texts. */
    static TreeMap<Long, String> modelRing(List<String> providers, int replicaNumber) throws Exception {
        TreeMap<Long, String> ring = new TreeMap<>();
        for (String address : providers) {
            for (int i = 0; i < replicaNumber / 4; i++) {
                byte[] digest = MessageDigest.getInstance("MD5").digest((address + i).getBytes(StandardCharsets.UTF_8));
                for (int h = 0; h < 4; h++) {
                    ring.put(le32(digest, h), address);
                }
            }
        }
        return ring;
    }

    static long le32(byte[] digest, int word) {
        return ((long) (digest[3 + word * 4] & 0xFF) << 24)
                | ((long) (digest[2 + word * 4] & 0xFF) << 16)
                | ((long) (digest[1 + word * 4] & 0xFF) << 8)
                | (digest[word * 4] & 0xFF);
    }

    static String modelSelect(TreeMap<Long, String> ring, String key) throws Exception {
        long hash = le32(MessageDigest.getInstance("MD5").digest(key.getBytes(StandardCharsets.UTF_8)), 0);
        Map.Entry<Long, String> e = ring.ceilingEntry(hash);
        return (e != null ? e : ring.firstEntry()).getValue();
    }

    /**
     * Seeded provider lists (1 to 40, some without a port: Dubbo's 20880) under {@code dubbo},
     * {@code dubbo:10} (2 digests, 8 points) and {@code dubbo:4}: every point and 5,000 keys' providers
     * as the model's. Catches a separator in the text ({@code host:port-i}), a count rounded other than
     * down to whole digests, the default port, and the first listed keeping a tie.
     */
    @Test
    void agreesWithTheModel() throws Exception {
        SplittableRandom random = new SplittableRandom(0xD0BB0);
        for (String name : List.of("dubbo", "dubbo:10", "dubbo:4")) {
            RingVersion v = RingVersion.parse(name);
            for (int size : new int[] {1, 3, 40}) {
                StringBuilder text = new StringBuilder();
                List<String> providers = new java.util.ArrayList<>();
                while (providers.size() < size) {
                    String ip =
                            "10." + random.nextInt(256) + "." + random.nextInt(256) + "." + (1 + random.nextInt(254));
                    boolean port = random.nextInt(4) != 0;
                    String address = port ? ip + ":" + (20000 + random.nextInt(2000)) : ip;
                    if (providers.contains(port ? address : ip + ":20880")) {
                        continue;
                    }
                    providers.add(port ? address : ip + ":20880");
                    text.append("server ").append(address).append(";\n");
                }
                TreeMap<Long, String> model = modelRing(providers, v.pointMultiple());
                try (RingStore store = build(text.toString(), v)) {
                    Ring ring = store.ring(Set.of(), v);
                    assertEquals(model.size(), ring.pointCount(), v + " over " + size);
                    int p = 0;
                    for (Map.Entry<Long, String> e : model.entrySet()) {
                        assertEquals(e.getKey(), ring.pointHash(p), v + " point " + p);
                        assertEquals(
                                e.getValue(),
                                store.backend(ring.pointBackend(p)).answer(family()),
                                v + " point " + p);
                        p++;
                    }
                    for (int k = 0; k < 5_000; k++) {
                        String key = Long.toString(random.nextLong());
                        assertEquals(
                                modelSelect(model, key),
                                store.backend(ring.lookup(key.getBytes(StandardCharsets.UTF_8)))
                                        .answer(family()),
                                v + " key " + key);
                    }
                }
            }
        }
    }

    /**
     * rings.md §6: the text has no separator, so 10.0.0.1:2088's digests 10 to 19 ({@code "10.0.0.1:208810"}
     * …) are 10.0.0.1:20881's digests 0 to 9: 40 shared points, each kept by the provider listed last;
     * the ring has 320 - 40 points. Catches a separator and the first listed keeping a tie.
     */
    @Test
    void providersWhoseTextsCollide() throws Exception {
        RingVersion v = RingVersion.parse("dubbo");
        for (List<String> order :
                List.of(List.of("10.0.0.1:2088", "10.0.0.1:20881"), List.of("10.0.0.1:20881", "10.0.0.1:2088"))) {
            try (RingStore store = build("server " + order.get(0) + ";\nserver " + order.get(1) + ";\n", v)) {
                Ring ring = store.ring(Set.of(), v);
                assertEquals(280, ring.pointCount(), order.toString());
                TreeMap<Long, String> model = modelRing(order, 160);
                for (int i = 0; i < 10; i++) {
                    byte[] digest = MessageDigest.getInstance("MD5")
                            .digest(("10.0.0.1:20881" + i).getBytes(StandardCharsets.UTF_8));
                    for (int h = 0; h < 4; h++) {
                        int hash = (int) le32(digest, h);
                        assertEquals(
                                Integer.toUnsignedLong(hash),
                                ring.pointHash(ring.pointIndex(hash)),
                                order + " digest " + i);
                        assertEquals(
                                order.get(1),
                                store.backend(ring.lookupHash(hash)).answer(family()),
                                order + ": the last listed keeps it");
                        assertEquals(order.get(1), model.get(Integer.toUnsignedLong(hash)), "the model agrees");
                    }
                }
            }
        }
    }

    /**
     * IPv6 providers: Dubbo hashes {@code URL.getAddress()}, the URL's host as it is written, in its
     * brackets and with its zero runs ({@code [2001:db8::a]:20880}, {@code [2001:db8:0:0:1:0:0:1]:20880}).
     * Every point as the model's over those texts. Catches the text without brackets and a host
     * rewritten to another form (examples/client-parity checks it against Dubbo's own selector).
     */
    @Test
    void ipv6ProvidersAreHashedInBracketsAsWritten() throws Exception {
        RingVersion v = RingVersion.parse("dubbo");
        List<String> providers = List.of("[2001:db8::a]:20880", "[2001:db8:0:0:1:0:0:1]:20880", "10.0.0.1:20880");
        TreeMap<Long, String> model = modelRing(providers, 160);
        try (RingStore store =
                build("server [2001:db8::a]:20880;\nserver [2001:db8:0:0:1:0:0:1];\nserver 10.0.0.1:20880;\n", v)) {
            Ring ring = store.ring(Set.of(), v);
            assertEquals(model.size(), ring.pointCount());
            int p = 0;
            for (Map.Entry<Long, String> e : model.entrySet()) {
                assertEquals(e.getKey(), ring.pointHash(p), "point " + p);
                assertEquals(providers.indexOf(e.getValue()), ring.pointBackend(p), "point " + p);
                p++;
            }
        }
    }
}
