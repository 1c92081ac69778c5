package com.example.dubbo;

import com.example.dubbo.Fixtures.Provider;
import io.ringstore.Ring;
import io.ringstore.RingStore;
import org.apache.dubbo.common.URL;
import org.apache.dubbo.rpc.Invocation;
import org.apache.dubbo.rpc.Invoker;
import org.apache.dubbo.rpc.RpcException;
import org.apache.dubbo.rpc.cluster.loadbalance.ConsistentHashLoadBalance;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link RingstoreLoadBalance} against Dubbo 3.3.5's own {@link ConsistentHashLoadBalance}, both asked
 * to select among the same invokers for the same calls (stand-in invokers: a load balance reads only
 * their URLs), without a network.
 */
class SelectorParityTest {
    @TempDir
    Path dir;

    /** Calls compared over the whole class, for the report. */
    static long compared;

    @AfterAll
    static void report() {
        System.out.println("calls compared with ConsistentHashLoadBalance.select: " + compared + ", disagreements: 0");
    }

    @Test
    void everyKeyLandsAsConsistentHash() throws Exception {
        SplittableRandom random = new SplittableRandom(30);
        List<Provider> five = Fixtures.randomProviders(random, 5);
        assertSameAnswers(five, "dubbo", "", 100_000);

        List<Provider> named = new ArrayList<>(Fixtures.randomProviders(random, 8));
        named.set(1, named.get(1).named("provider-b.example"));
        named.set(6, named.get(6).named("provider-g"));
        assertSameAnswers(named, "dubbo", "", 20_000);

        assertSameAnswers(five, "dubbo:4", "hash.nodes=4", 20_000);
        assertSameAnswers(five, "dubbo:82", "hash.nodes=82", 20_000); // 20 digests, as Dubbo's replicaNumber / 4
        assertSameAnswers(five, "dubbo:1000", "hash.nodes=1000", 20_000);
        assertSameAnswers(Fixtures.randomProviders(random, 30), "dubbo", "", 20_000);
        assertSameAnswers(List.of(new Provider("10.1.1.1", 20880)), "dubbo", "", 1_000); // one invoker: Dubbo's shortcut
    }

    @Test
    void argumentsMakeTheKeyAsDubbo() throws Exception {
        List<Provider> providers = Fixtures.randomProviders(new SplittableRandom(31), 6);
        Path file = Fixtures.ringFile(dir.resolve("args.ring"), providers, "dubbo", 1);
        // Arguments 1 and 0 in that order, 5 beyond the arguments and skipped: "7" + key.
        List<Invoker<Identity>> invokers = Fixtures.invokers(providers, "hash.arguments=1,0,5&" + RingstoreLoadBalance.FILE + "=" + file);
        RingstoreLoadBalance ours = new RingstoreLoadBalance();
        ConsistentHashLoadBalance theirs = new ConsistentHashLoadBalance();
        URL url = invokers.getFirst().getUrl();
        try (RingStore store = RingStore.open(file)) {
            Ring ring = store.ring(Set.of());
            int n = 0;
            for (String k : Fixtures.keys(31, 10_000)) {
                Object second = switch (n++ % 4) {
                    case 0 -> n;
                    case 1 -> null;
                    case 2 -> List.of(k.length(), "é");
                    default -> (double) n / 3;
                };
                Invocation call = Fixtures.call("who2", k, second);
                Invoker<Identity> expected = theirs.select(invokers, url, call);
                assertSame(expected, ours.select(invokers, url, call), k);
                // And it is the file's own lookup of String.valueOf(second) + k.
                byte[] key = (String.valueOf(second) + k).getBytes(StandardCharsets.UTF_8);
                assertEquals(DubboRing.dubboAddress(store.backend(ring.lookup(key))), expected.getUrl().getAddress(), k);
                compared++;
            }
            Invocation noArguments = Fixtures.call("who2");
            assertSame(theirs.select(invokers, url, noArguments), ours.select(invokers, url, noArguments)); // key ""
        } finally {
            ours.destroy();
        }
    }

    /**
     * One load balance over one file, the invoker list changing as providers go and come back and as
     * its order changes: every call as Dubbo's consistent hashing over that list, which rebuilds its
     * ring for each list; this one indexes the file once.
     */
    @Test
    void aProviderGoneCostsNoNewRing() throws Exception {
        List<Provider> providers = Fixtures.randomProviders(new SplittableRandom(32), 6);
        Path file = Fixtures.ringFile(dir.resolve("gone.ring"), providers, "dubbo", 1);
        List<Invoker<Identity>> all = Fixtures.invokers(providers, RingstoreLoadBalance.FILE + "=" + file);
        RingstoreLoadBalance ours = new RingstoreLoadBalance();
        List<List<Invoker<Identity>>> lists = new ArrayList<>();
        lists.add(all);
        for (int i = 0; i < all.size(); i++) { // each provider gone
            List<Invoker<Identity>> without = new ArrayList<>(all);
            without.remove(i);
            lists.add(without);
        }
        lists.add(List.of(all.get(2), all.get(4))); // four gone
        List<Invoker<Identity>> reversed = new ArrayList<>(all);
        Collections.reverse(reversed);
        lists.add(reversed);
        lists.add(all); // all back
        long walked = 0;
        try {
            List<String> keys = Fixtures.keys(32, 10_000);
            for (List<Invoker<Identity>> list : lists) {
                ConsistentHashLoadBalance theirs = new ConsistentHashLoadBalance(); // what Dubbo builds for this list
                long before = ours.walkedPast();
                for (String k : keys) {
                    Invocation call = Fixtures.call("who", k);
                    Invoker<Identity> got = ours.select(list, list.getFirst().getUrl(), call);
                    assertSame(theirs.select(list, list.getFirst().getUrl(), call), got, k);
                    assertTrue(list.contains(got));
                    compared++;
                }
                walked += ours.walkedPast() - before;
            }
            assertEquals(1, ours.generationsIndexed(), "the file is indexed once, whatever the lists");
            assertEquals(lists.size(), ours.placementsBuilt(), "one placement a list, no ring");
            assertTrue(walked > 10_000, "keys of the providers gone walked on: " + walked);
            System.out.println(lists.size() + " invoker lists: Dubbo built " + lists.size() + " rings of " + 6 * 160
                    + " points at most; ringstore indexed the file once, " + walked + " calls walked past a provider gone");
        } finally {
            ours.destroy();
        }
    }

    /**
     * A real MD5 tie: two loopback ports whose Dubbo points share a hash. The file keeps the last listed;
     * Dubbo's ring of a list keeps the last listed <em>of that list</em>: the other provider when the
     * kept one is gone, or when the list has them the other way round.
     */
    @Test
    void tiesGoToTheLastListedAsDubbosTreeMap() throws Exception {
        long[] tie = Fixtures.tiedPorts(30_000);
        Provider a = new Provider("127.0.0.1", (int) tie[0]);
        Provider b = new Provider("127.0.0.1", (int) tie[1]);
        List<Provider> providers = List.of(a, new Provider("127.0.0.1", 20880), new Provider("127.0.0.1", 20881), b);
        Path file = Fixtures.ringFile(dir.resolve("tie.ring"), providers, "dubbo", 1);
        List<Invoker<Identity>> all = Fixtures.invokers(providers, RingstoreLoadBalance.FILE + "=" + file);
        Invoker<Identity> ia = all.get(0);
        Invoker<Identity> ib = all.get(3);
        // Keys whose hash lands on the tied point.
        List<String> onTie = new ArrayList<>();
        try (RingStore store = RingStore.open(file)) {
            Ring ring = store.ring(Set.of());
            int pos = ring.pointIndex(tie[2]);
            assertEquals(tie[2], ring.pointHash(pos));
            assertEquals(3, ring.pointBackend(pos), "the file keeps the last listed");
            for (String k : Fixtures.keys(33, 400_000)) {
                if (ring.pointIndex(ring.hash(k.getBytes(StandardCharsets.UTF_8))) == pos) {
                    onTie.add(k);
                }
            }
        }
        assertTrue(onTie.size() > 20, "keys on the tied point: " + onTie.size());
        RingstoreLoadBalance ours = new RingstoreLoadBalance();
        List<Invoker<Identity>> withoutB = List.of(all.get(0), all.get(1), all.get(2));
        List<Invoker<Identity>> reversed = new ArrayList<>(all);
        Collections.reverse(reversed);
        try {
            for (List<Invoker<Identity>> list : List.of(all, withoutB, reversed)) {
                ConsistentHashLoadBalance theirs = new ConsistentHashLoadBalance();
                for (String k : onTie) {
                    Invocation call = Fixtures.call("who", k);
                    assertSame(theirs.select(list, list.getFirst().getUrl(), call), ours.select(list, list.getFirst().getUrl(), call), k);
                    compared++;
                }
                for (String k : Fixtures.keys(34, 5_000)) {
                    Invocation call = Fixtures.call("who", k);
                    assertSame(theirs.select(list, list.getFirst().getUrl(), call), ours.select(list, list.getFirst().getUrl(), call), k);
                    compared++;
                }
            }
            Invocation call = Fixtures.call("who", onTie.getFirst());
            assertSame(ib, ours.select(all, all.getFirst().getUrl(), call));
            assertSame(ia, ours.select(withoutB, withoutB.getFirst().getUrl(), call), "B gone: A's point at the same hash, not the next point");
            assertSame(ia, ours.select(reversed, reversed.getFirst().getUrl(), call), "A listed last keeps the hash");
            System.out.println("tie of 127.0.0.1:" + tie[0] + " and :" + tie[1] + " at " + tie[2] + ": " + onTie.size() + " keys on it");
        } finally {
            ours.destroy();
        }
    }

    @Test
    void invokersTheFileDoesNotKnowGetNoCalls() throws Exception {
        List<Provider> providers = Fixtures.randomProviders(new SplittableRandom(35), 5);
        Path file = Fixtures.ringFile(dir.resolve("known.ring"), providers, "dubbo", 1);
        List<Provider> more = new ArrayList<>(providers);
        more.add(new Provider("10.9.9.9", 20880));
        List<Invoker<Identity>> invokers = Fixtures.invokers(more, RingstoreLoadBalance.FILE + "=" + file);
        List<Invoker<Identity>> known = invokers.subList(0, 5);
        RingstoreLoadBalance ours = new RingstoreLoadBalance();
        ConsistentHashLoadBalance theirs = new ConsistentHashLoadBalance();
        try {
            for (String k : Fixtures.keys(35, 5_000)) {
                Invocation call = Fixtures.call("who", k);
                assertSame(theirs.select(known, known.getFirst().getUrl(), call), ours.select(invokers, invokers.getFirst().getUrl(), call), k);
                compared++;
            }
            RpcException none = assertThrows(RpcException.class,
                    () -> ours.select(List.of(invokers.get(5), invokers.get(5)), invokers.get(5).getUrl(), Fixtures.call("who", "k")));
            assertTrue(none.getMessage().contains("none of the 2 invokers [10.9.9.9:20880, 10.9.9.9:20880] is a provider of"), none.getMessage());
        } finally {
            ours.destroy();
        }
    }

    @Test
    void misconfigurationsFailTheCallInOneLine() throws Exception {
        List<Provider> providers = Fixtures.randomProviders(new SplittableRandom(36), 3);
        Path file = Fixtures.ringFile(dir.resolve("k160.ring"), providers, "dubbo", 1);
        Path couchbase = Fixtures.ringFile(dir.resolve("couchbase.ring"), providers, "couchbase", 1);
        RingstoreLoadBalance ours = new RingstoreLoadBalance();
        try {
            String noFile = message(ours, Fixtures.invokers(providers, ""));
            assertEquals("loadbalance=ringstore needs the parameter ringstore.file (the ring file)", noFile);
            String nodes = message(ours, Fixtures.invokers(providers, "hash.nodes=80&ringstore.file=" + file));
            assertTrue(nodes.endsWith("has hash.nodes=80 but " + file + " is a dubbo:160 ring: build it with --algorithm dubbo:80"), nodes);
            // 163 nodes are 40 digests, as 160 are.
            assertEquals("OK", message(ours, Fixtures.invokers(providers, "hash.nodes=163&ringstore.file=" + file)));
            String family = message(ours, Fixtures.invokers(providers, "ringstore.file=" + couchbase));
            assertTrue(family.contains("no dubbo ring (the file has [couchbase]): build it with --algorithm dubbo or dubbo:K"), family);
            String missing = message(ours, Fixtures.invokers(providers, "ringstore.file=" + dir.resolve("absent.ring")));
            assertTrue(missing.startsWith("ringstore.file=" + dir.resolve("absent.ring") + ": "), missing);
        } finally {
            ours.destroy();
        }
    }

    /** The message of the call's failure, or "OK". */
    private static String message(RingstoreLoadBalance lb, List<Invoker<Identity>> invokers) {
        try {
            lb.select(invokers, invokers.getFirst().getUrl(), Fixtures.call("who", "k"));
            return "OK";
        } catch (RpcException e) {
            assertTrue(e.getMessage().indexOf('\n') < 0, e.getMessage());
            return e.getMessage();
        }
    }

    /**
     * Heap bytes a call: a steady list and string keys cost the load balance no allocation of its own
     * (Dubbo's consistent hashing makes a key string, its bytes, a digest and a map entry, about 480
     * bytes a call). Bytes are counted, not time; the bound leaves room for a JIT that does not remove
     * the list's iterator.
     */
    @Test
    void steadyCallsAllocateNothingOfTheirOwn() throws Exception {
        List<Provider> providers = Fixtures.randomProviders(new SplittableRandom(38), 5);
        Path file = Fixtures.ringFile(dir.resolve("alloc.ring"), providers, "dubbo", 1);
        List<Invoker<Identity>> invokers = Fixtures.invokers(providers, RingstoreLoadBalance.FILE + "=" + file);
        URL url = invokers.getFirst().getUrl();
        List<Invocation> calls = Fixtures.keys(38, 1024).stream().map(k -> Fixtures.call("who", k)).toList();
        RingstoreLoadBalance ours = new RingstoreLoadBalance();
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        try {
            long sink = 0;
            for (int i = 0; i < 300_000; i++) {
                sink += ours.select(invokers, url, calls.get(i & 1023)).hashCode();
            }
            int n = 100_000;
            long before = mx.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < n; i++) {
                sink += ours.select(invokers, url, calls.get(i & 1023)).hashCode();
            }
            double perCall = (mx.getCurrentThreadAllocatedBytes() - before) / (double) n;
            System.out.printf("ringstore select: %.1f heap bytes a call (%d)%n", perCall, sink & 1);
            assertTrue(perCall < 64, "bytes a call: " + perCall);
        } finally {
            ours.destroy();
        }
    }

    @Test
    void keyBytesAreGetBytes() throws Exception {
        SplittableRandom random = new SplittableRandom(37);
        KeyBytes kb = KeyBytes.ofThisThread();
        for (int t = 0; t < 20_000; t++) {
            char[] cs = new char[random.nextInt(t % 100 == 0 ? 30_000 : 40)];
            for (int i = 0; i < cs.length; i++) {
                int kind = random.nextInt(6);
                cs[i] = (char) switch (kind) {
                    case 0 -> random.nextInt(0x80);
                    case 1 -> 0x80 + random.nextInt(0x780);
                    case 2 -> 0xD800 + random.nextInt(0x800); // surrogates, paired or not
                    default -> random.nextInt(0x10000);
                };
            }
            String s = new String(cs);
            kb.of(new int[] {0}, new Object[] {s});
            assertArrayEquals(s.getBytes(), Arrays.copyOf(kb.bytes(), kb.length()), s);
            kb.trim();
        }
        MessageDigest.getInstance("MD5"); // the JDK has it
    }

    /** Builds {@code providers}' file of {@code version} and compares both load balances over {@code keys} keys. */
    private void assertSameAnswers(List<Provider> providers, String version, String parameters, int keys) throws Exception {
        Path file = Fixtures.ringFile(dir.resolve(version.replace(':', '-') + "-" + providers.size() + ".ring"), providers, version, 1);
        List<Invoker<Identity>> invokers = Fixtures.invokers(providers,
                (parameters.isEmpty() ? "" : parameters + "&") + RingstoreLoadBalance.FILE + "=" + file);
        RingstoreLoadBalance ours = new RingstoreLoadBalance();
        ConsistentHashLoadBalance theirs = new ConsistentHashLoadBalance();
        URL url = invokers.getFirst().getUrl();
        int[] perInvoker = new int[invokers.size()];
        try {
            for (String k : Fixtures.keys(keys, keys)) {
                Invocation call = Fixtures.call("who", k);
                Invoker<Identity> expected = theirs.select(invokers, url, call);
                assertSame(expected, ours.select(invokers, url, call), () -> version + " " + k);
                perInvoker[invokers.indexOf(expected)]++;
                compared++;
            }
        } finally {
            ours.destroy();
        }
        for (int c : perInvoker) {
            assertTrue(c > 0, version + ": every provider has keys " + Arrays.toString(perInvoker));
        }
    }
}
