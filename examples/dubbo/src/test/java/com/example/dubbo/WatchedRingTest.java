package com.example.dubbo;

import com.example.dubbo.Fixtures.Provider;
import org.apache.dubbo.rpc.Invocation;
import org.apache.dubbo.rpc.Invoker;
import org.apache.dubbo.rpc.cluster.loadbalance.ConsistentHashLoadBalance;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

/**
 * The ring file republished under a running load balance: each generation serves the next calls, each
 * placing them as Dubbo's consistent hashing over the providers that generation has.
 */
class WatchedRingTest {
    @TempDir
    Path dir;

    @Test
    void republishedFilesServeTheNextCalls() throws Exception {
        List<Provider> providers = new ArrayList<>(Fixtures.randomProviders(new SplittableRandom(50), 6));
        List<Provider> five = providers.subList(0, 5);
        Path file = Fixtures.ringFile(dir.resolve("providers.ring"), five, "dubbo", 1);
        List<Invoker<Identity>> six = Fixtures.invokers(providers, RingstoreLoadBalance.FILE + "=" + file);
        List<Invoker<Identity>> firstFive = six.subList(0, 5);
        List<String> keys = Fixtures.keys(50, 10_000);
        RingstoreLoadBalance ours = new RingstoreLoadBalance();
        try {
            // Generation 1, five providers; the sixth invoker is not in the file and gets no calls.
            assertSameAnswers(ours, six, firstFive, keys);

            // Generation 2 adds the sixth: it gets its share, as in Dubbo's ring of six.
            Fixtures.ringFile(file, providers, "dubbo", 2);
            awaitGeneration(ours.ring(file.toString()), 2);
            assertSameAnswers(ours, six, six, keys);

            // Generation 3 drops the first; it is still listed (its invoker not yet gone) and gets no calls.
            Fixtures.ringFile(file, providers.subList(1, 6), "dubbo", 3);
            awaitGeneration(ours.ring(file.toString()), 3);
            assertSameAnswers(ours, six, six.subList(1, 6), keys);
            assertEquals(3, ours.generationsIndexed(), "one index a generation");
            assertEquals(3, ours.placementsBuilt(), "the list again over each generation");
        } finally {
            ours.destroy();
        }
    }

    /** Every key through {@code listed} as Dubbo's consistent hashing over {@code expected} sends it. */
    private static void assertSameAnswers(RingstoreLoadBalance ours, List<Invoker<Identity>> listed,
                                          List<Invoker<Identity>> expected, List<String> keys) {
        ConsistentHashLoadBalance theirs = new ConsistentHashLoadBalance();
        for (String k : keys) {
            Invocation call = Fixtures.call("who", k);
            Invoker<Identity> got = ours.select(listed, listed.getFirst().getUrl(), call);
            assertSame(theirs.select(expected, expected.getFirst().getUrl(), call), got, k);
            SelectorParityTest.compared++;
        }
        if (expected.size() < listed.size()) {
            for (Invoker<Identity> i : listed) {
                if (!expected.contains(i)) {
                    for (String k : keys) {
                        assertNotSame(i, ours.select(listed, listed.getFirst().getUrl(), Fixtures.call("who", k)), k);
                    }
                }
            }
        }
    }

    /** Waits (at most 10 s; the router looks every 200 ms) until generation {@code g} serves. */
    private static void awaitGeneration(DubboRing ring, long g) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (ring.ring().store().generation() != g) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("generation " + g + " of " + ring.path() + " not serving after 10 s");
            }
            Thread.sleep(20);
        }
    }
}
