package io.ringstore.migration;

import static io.ringstore.migration.RolloutPolicyTest.Z_1E4;
import static io.ringstore.migration.RolloutPolicyTest.assertWithinBinomial;
import static io.ringstore.migration.RolloutPolicyTest.chiSquareCritical;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.ringstore.Backend;
import io.ringstore.Ring;
import io.ringstore.RingFileException;
import io.ringstore.RingStore;
import io.ringstore.TestRings;
import io.ringstore.family.RingVersion;
import io.ringstore.live.RingRouter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.function.IntPredicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A router over a fixed store ({@link RingRouter#builder(RingStore)}) on a file holding v1 and v2:16 of
 * 24 backends, over a million seeded keys:
 * every answer is the chosen version's, the choice is stable and monotone and does not depend on the
 * ring, migrated keys spread over every backend and the whole hash line, a rollback takes effect on the
 * next lookup, and the counters are exact, also with threads changing the policy under lookups.
 */
class FixedStoreRouterTest {
    private static final RingVersion NEW = RingVersion.v2(16);
    private static final int BACKENDS = 24;

    @TempDir
    static Path dir;

    private static RingStore store;
    private static RingStore other;
    private static RolloutPolicyTest.Keys keys;
    private static int[] buckets;
    private static int[] oldAnswer;
    private static int[] newAnswer;

    @BeforeAll
    static void setUp() throws Exception {
        StringBuilder text = new StringBuilder();
        for (int b = 0; b < BACKENDS; b++) {
            text.append("server 127.0.")
                    .append(b / 8)
                    .append('.')
                    .append(10 + b)
                    .append(':')
                    .append(8000 + b)
                    .append(" weight=")
                    .append(1 + b % 3)
                    .append(b % 2 == 0 ? " features=ssd" : "")
                    .append('\n');
        }
        Path file = dir.resolve("both.ring");
        TestRings.build(file, text.toString(), RingVersion.V1, NEW);
        store = RingStore.open(file);
        // A different fleet and versions: the per-key choice must not depend on it.
        Path otherFile = dir.resolve("other.ring");
        TestRings.build(
                otherFile,
                "server 127.1.0.1:80\nserver 127.1.0.2:80\nserver 127.1.0.3:80 weight=5\n",
                RingVersion.v2(3),
                RingVersion.V1);
        other = RingStore.open(otherFile);

        keys = RolloutPolicyTest.Keys.generate(0x5EED_0002L, RolloutPolicyTest.KEY_COUNT);
        buckets = keys.buckets();
        Ring oldRing = store.ring(Set.of(), RingVersion.V1);
        Ring newRing = store.ring(Set.of(), NEW);
        oldAnswer = new int[keys.size()];
        newAnswer = new int[keys.size()];
        for (int i = 0; i < keys.size(); i++) {
            oldAnswer[i] = oldRing.lookup(keys.bytes, keys.offset(i), keys.length(i));
            newAnswer[i] = newRing.lookup(keys.bytes, keys.offset(i), keys.length(i));
        }
    }

    @AfterAll
    static void tearDown() {
        store.close();
        other.close();
    }

    private static RingRouter selector(RolloutPolicy policy) {
        return router(store, RingVersion.V1, NEW, policy);
    }

    private static RingRouter router(
            RingStore over, RingVersion oldVersion, RingVersion newVersion, RolloutPolicy policy) {
        try {
            return RingRouter.builder(over)
                    .versions(oldVersion, newVersion)
                    .policy(policy)
                    .open();
        } catch (RingFileException e) {
            throw new AssertionError("a fixed store is not opened again", e);
        }
    }

    /** Key {@code i}'s backend index through {@code route} (counted by the router), or -1. */
    private static int lookup(RingRouter.Route route, int i) {
        Backend b = route.backend(keys.bytes, keys.offset(i), keys.length(i));
        return b == null ? Ring.NO_BACKEND : b.index();
    }

    private static int count(IntPredicate bucketTest) {
        int n = 0;
        for (int b : buckets) {
            n += bucketTest.test(b) ? 1 : 0;
        }
        return n;
    }

    @Test
    void bothVersionsMustBeInTheFile() {
        IllegalArgumentException e = assertThrows(
                IllegalArgumentException.class,
                () -> router(store, RingVersion.V1, RingVersion.v2(32), RolloutPolicy.NONE));
        assertTrue(
                e.getMessage().contains("v2:32")
                        && e.getMessage().contains(store.path().toString()),
                e::getMessage);
        assertThrows(IllegalArgumentException.class, () -> router(other, RingVersion.V1, NEW, RolloutPolicy.NONE));
    }

    /** Over a fixed store the router never looks at the path, registers no MBean, and leaves the store open when closed. */
    @Test
    void aFixedStoreIsServedAsItIsAndLeftOpen() throws Exception {
        RingRouter router = selector(RolloutPolicy.NONE);
        assertSame(store, router.current());
        assertEquals(store.generation(), router.generation());
        assertEquals(store.path(), router.path());
        assertNull(router.mbeanName());
        assertFalse(router.checkNow(), "a fixed store is never switched");
        assertEquals(0, router.switches());
        RingRouter.Route route = router.route(Set.of());
        int before = oldAnswer[0];
        router.close();
        assertEquals(
                before,
                store.ring(Set.of(), RingVersion.V1).lookup(keys.bytes, keys.offset(0), keys.length(0)),
                "the store stays open: its owner closes it");
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> lookup(route, 0));
        assertTrue(e.getMessage().contains("closed"), e.getMessage());
    }

    @Test
    void everyLookupIsTheChosenVersionsAnswer() {
        RingRouter sel = selector(RolloutPolicy.everywhere(10));
        RingRouter.Route pair = sel.route(Set.of());
        assertEquals(RingVersion.V1, pair.oldRing().version());
        assertEquals(NEW, pair.newRing().version());
        for (int i = 0; i < keys.size(); i++) {
            boolean migrated = buckets[i] < 1000;
            int expected = migrated ? newAnswer[i] : oldAnswer[i];
            int got = lookup(pair, i);
            long newBefore = sel.newLookups();
            Backend selected = pair.select(keys.copy(i), 1, b -> true); // the key's own point, on the version chosen
            boolean selectedNew = sel.newLookups() != newBefore;
            if (got != expected || selectedNew != migrated || selected == null || selected.index() != expected) {
                fail("key " + i + " (bucket " + buckets[i] + "): answer " + got + ", expected " + expected);
            }
        }
        int migrated = count(b -> b < 1000);
        assertEquals(2L * migrated, sel.newLookups(), "lookup and select each count once");
        assertEquals(2L * (keys.size() - migrated), sel.oldLookups());
        assertWithinBinomial(migrated, keys.size(), 0.10, "keys at 10 %");
        sel.resetCounters();
        assertEquals(0, sel.oldLookups() + sel.newLookups());
    }

    @Test
    void featureRingsArePairedByVersion() {
        RingRouter sel = selector(RolloutPolicy.everywhere(50));
        RingRouter.Route ssd = sel.route(Set.of("ssd"));
        assertSame(store.ring(Set.of("ssd"), RingVersion.V1), ssd.oldRing());
        assertSame(store.ring(Set.of("ssd"), NEW), ssd.newRing());
        for (int i = 0; i < 100_000; i++) {
            int b = lookup(ssd, i);
            assertTrue(
                    store.backend(b).features().contains("ssd"),
                    () -> "backend without the feature: " + store.backend(b));
        }
    }

    /**
     * Along a sequence of rising fractions, some of them one 0.01 % step apart, no key goes from new back
     * to old, the migrated count is exactly the number of buckets below the rollout, and a selector on
     * another file (other backends, other versions) makes the same choice for every key.
     */
    @Test
    void choiceIsStableAndMonotoneAsTheRolloutRises() {
        double[] fractions = {0, 0.01, 0.02, 0.5, 1, 1.01, 5, 10, 10.01, 25, 50, 75, 99.98, 99.99, 100};
        RingRouter sel = selector(RolloutPolicy.NONE);
        RingRouter elsewhere = router(other, RingVersion.v2(3), RingVersion.V1, RolloutPolicy.NONE);
        boolean[] migrated = new boolean[keys.size()];
        for (double f : fractions) {
            sel.policy(sel.policy().withPercent(f));
            elsewhere.policy(RolloutPolicy.everywhere(f));
            int bp = sel.policy().basisPoints();
            boolean checkOther = f == 10 || f == 99.99;
            int n = 0;
            for (int i = 0; i < keys.size(); i++) {
                boolean now = sel.policy().migrates(keys.bytes, keys.offset(i), keys.length(i));
                if (migrated[i] && !now) {
                    fail("key " + i + " went back to the old version when the rollout rose to " + f + " %");
                }
                if (checkOther && now != elsewhere.policy().migrates(keys.bytes, keys.offset(i), keys.length(i))) {
                    fail("key " + i + " at " + f + " %: the choice depends on the file");
                }
                migrated[i] = now;
                n += now ? 1 : 0;
            }
            assertEquals(count(b -> b < bp), n, "keys migrated at " + f + " %");
        }
    }

    /**
     * At 10 % every backend of the old ring (and of the new one) sends about 10 % of its keys to the new
     * version, and so does every 1/64 arc of the hash line: a 2×k contingency chi-square test at alpha
     * 1e-4 plus an explicit 5-SD bound per group. A selector that migrated one arc of the line (the
     * lowest 10 % of ring hashes) fails the same test (by arcs by orders of magnitude), so the test can tell.
     */
    @Test
    void migratedKeysSpreadOverEveryBackendAndTheWholeLine() {
        RingRouter sel = selector(RolloutPolicy.everywhere(10));
        boolean[] migrated = new boolean[keys.size()];
        int[] arc = new int[keys.size()];
        boolean[] lowestArc = new boolean[keys.size()];
        for (int i = 0; i < keys.size(); i++) {
            migrated[i] = sel.policy().migrates(keys.bytes, keys.offset(i), keys.length(i));
            long h = Integer.toUnsignedLong(keys.ringHash(i));
            arc[i] = (int) (h >>> 26);
            lowestArc[i] = h < (long) (0.1 * 4294967296.0);
        }
        assertSpreadEvenly(migrated, oldAnswer, BACKENDS, "old ring's backends");
        assertSpreadEvenly(migrated, newAnswer, BACKENDS, "new ring's backends");
        assertSpreadEvenly(migrated, arc, 64, "arcs of the hash line");

        double byArc = chiSquare(lowestArc, arc, 64);
        double byBackend = chiSquare(lowestArc, oldAnswer, BACKENDS);
        assertTrue(
                byArc > 100 * chiSquareCritical(63, Z_1E4) && byBackend > chiSquareCritical(BACKENDS - 1, Z_1E4),
                "the test must reject a selector that migrates one arc; its chi-square is only " + byArc + " by arc, "
                        + byBackend + " by backend");
    }

    private static void assertSpreadEvenly(boolean[] migrated, int[] group, int groups, String what) {
        long[] n = new long[groups];
        long[] m = new long[groups];
        for (int i = 0; i < migrated.length; i++) {
            n[group[i]]++;
            m[group[i]] += migrated[i] ? 1 : 0;
        }
        for (int g = 0; g < groups; g++) {
            assertTrue(n[g] > 1000, what + ": group " + g + " has only " + n[g] + " keys");
            assertWithinBinomial(m[g], n[g], 0.10, what + ": group " + g + "'s migrated keys");
        }
        double chi = chiSquare(migrated, group, groups);
        double critical = chiSquareCritical(groups - 1, Z_1E4);
        assertTrue(
                chi < critical,
                what + ": migrated share differs between groups, chi-square " + chi + " >= " + critical);
    }

    /** Pearson's chi-square of the 2 × groups table (migrated or not, by group); df = groups - 1. */
    private static double chiSquare(boolean[] migrated, int[] group, int groups) {
        long[] n = new long[groups];
        long[] m = new long[groups];
        long total = 0;
        for (int i = 0; i < migrated.length; i++) {
            n[group[i]]++;
            if (migrated[i]) {
                m[group[i]]++;
                total++;
            }
        }
        double p = (double) total / migrated.length;
        double chi = 0;
        for (int g = 0; g < groups; g++) {
            double e1 = n[g] * p;
            double e0 = n[g] * (1 - p);
            chi += (m[g] - e1) * (m[g] - e1) / e1 + (n[g] - m[g] - e0) * (n[g] - m[g] - e0) / e0;
        }
        return chi;
    }

    /**
     * Since the choice ignores the ring, a rollout of p % changes the answer for p % of the keys the two
     * versions disagree on: the sampled share matches {@link RingDiff#movedAtRollout(double)}.
     */
    @Test
    void rolloutMovesTheDiffTimesTheFraction() {
        RingRouter sel = selector(RolloutPolicy.NONE);
        RingRouter.Route pair = sel.route(Set.of());
        RingDiff diff = RingDiff.between(pair.oldRing(), pair.newRing());
        for (double p : new double[] {10, 50, 100}) {
            sel.policy(RolloutPolicy.everywhere(p));
            int changed = 0;
            for (int i = 0; i < keys.size(); i++) {
                changed += lookup(pair, i) != oldAnswer[i] ? 1 : 0;
            }
            assertWithinBinomial(changed, keys.size(), diff.movedAtRollout(p), "keys changing backend at " + p + " %");
        }
    }

    @Test
    void outsideTheScopeEveryLookupIsOld() {
        RingRouter sel = selector(RolloutPolicy.in(100, Set.of("ams", "fra"), "lhr"));
        RingRouter.Route pair = sel.route(Set.of());
        for (int i = 0; i < keys.size(); i++) {
            if (lookup(pair, i) != oldAnswer[i]) {
                fail("key " + i + ": out of scope but not the old ring's answer");
            }
        }
        assertEquals(keys.size(), sel.oldLookups());
        assertEquals(0, sel.newLookups());
        sel.policy(RolloutPolicy.in(100, Set.of("ams", "fra"), "ams"));
        for (int i = 0; i < keys.size(); i++) {
            if (lookup(pair, i) != newAnswer[i]) {
                fail("key " + i + ": in scope at 100 % but not the new ring's answer");
            }
        }
        assertEquals(keys.size(), sel.newLookups());
    }

    @Test
    void rollbackTakesEffectOnTheNextLookup() {
        for (double from : new double[] {50, 100}) {
            RingRouter sel = selector(RolloutPolicy.in(from, Set.of("ams"), "ams"));
            RingRouter.Route pair = sel.route(Set.of());
            for (int i = 0; i < 1000; i++) {
                lookup(pair, i);
            }
            long newBefore = sel.newLookups();
            assertTrue(newBefore > 0, "some keys were on the new version");
            sel.policy(sel.policy().withPercent(0));
            for (int i = 0; i < keys.size(); i++) {
                if (lookup(pair, i) != oldAnswer[i]) {
                    fail("key " + i + " not on the old version after the rollback from " + from + " %");
                }
            }
            assertEquals(newBefore, sel.newLookups(), "no new-version lookup after the rollback");
            assertEquals(1000 - newBefore + keys.size(), sel.oldLookups());
        }
    }

    /**
     * Four threads look up 250,000 keys each, two passes, while a fifth changes the policy as fast as it
     * can (random fractions including 0 % and 100 %, scopes in and out). No lookup fails, every answer is
     * the old or the new ring's answer for its key, and the counters add up to the lookups exactly. Then
     * the changer rolls back and releases the lookers: every lookup after that is old.
     */
    @Test
    void lookupsWhileThePolicyChanges() throws Exception {
        // The router logs each policy change (INFO): thousands of lines would slow the changer more
        // than the lookups; the changes themselves are what this test is about.
        java.util.logging.Logger log = java.util.logging.Logger.getLogger(RingRouter.class.getName());
        java.util.logging.Level level = log.getLevel();
        log.setLevel(java.util.logging.Level.WARNING);
        try {
            RingRouter sel = selector(RolloutPolicy.everywhere(50));
            RingRouter.Route pair = sel.route(Set.of());
            int threads = 4;
            int slice = keys.size() / threads;
            int passes = 2;
            ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
            CountDownLatch lookedUp = new CountDownLatch(threads);
            CountDownLatch rolledBack = new CountDownLatch(1);
            List<Thread> lookers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int from = t * slice;
                lookers.add(Thread.ofPlatform().name("looker-" + t).start(() -> {
                    try {
                        for (int pass = 0; pass < passes; pass++) {
                            for (int i = from; i < from + slice; i++) {
                                int got = lookup(pair, i);
                                if (got != oldAnswer[i] && got != newAnswer[i]) {
                                    throw new AssertionError(
                                            "key " + i + ": answer " + got + " is neither the old ring's "
                                                    + oldAnswer[i] + " nor the new ring's " + newAnswer[i]);
                                }
                            }
                        }
                        lookedUp.countDown();
                        rolledBack.await();
                        for (int i = from; i < from + slice; i++) {
                            if (lookup(pair, i) != oldAnswer[i]) {
                                throw new AssertionError("key " + i + " not on the old version after the rollback");
                            }
                        }
                    } catch (Throwable e) {
                        errors.add(e);
                        lookedUp.countDown();
                    }
                }));
            }
            int[] changes = {0};
            Thread changer = Thread.ofPlatform().name("changer").start(() -> {
                SplittableRandom r = new SplittableRandom(3);
                try {
                    while (lookedUp.getCount() > 0) {
                        double percent = switch (r.nextInt(4)) {
                            case 0 -> 0;
                            case 1 -> 100;
                            default -> r.nextInt(RolloutPolicy.FULL + 1) / 100.0;
                        };
                        sel.policy(
                                r.nextBoolean()
                                        ? RolloutPolicy.everywhere(percent)
                                        : RolloutPolicy.in(percent, Set.of("ams"), r.nextBoolean() ? "ams" : "fra"));
                        changes[0]++;
                        Thread.yield();
                    }
                    lookedUp.await();
                    sel.policy(sel.policy().withPercent(0));
                    rolledBack.countDown();
                } catch (Throwable e) {
                    errors.add(e);
                    rolledBack.countDown();
                }
            });
            changer.join(30_000);
            for (Thread t : lookers) {
                t.join(30_000);
            }
            assertTrue(errors.isEmpty(), () -> "errors: " + errors);
            assertTrue(changes[0] > 10, "the policy changed " + changes[0] + " times during the lookups");
            long lookups = (long) threads * slice * (passes + 1);
            assertEquals(lookups, sel.oldLookups() + sel.newLookups(), "old + new lookups");
            assertTrue(sel.newLookups() > 0 && sel.oldLookups() > 0, "both versions answered");
        } finally {
            log.setLevel(level);
        }
    }

    /** With a fixed policy the counters under contention are exactly the keys' buckets times the passes. */
    @Test
    void countersAreExactUnderContention() throws Exception {
        RingRouter sel = selector(RolloutPolicy.everywhere(30));
        RingRouter.Route pair = sel.route(Set.of());
        int threads = 4;
        int passes = 2;
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        List<Thread> lookers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            lookers.add(Thread.ofPlatform().start(() -> {
                try {
                    for (int pass = 0; pass < passes; pass++) {
                        for (int i = 0; i < keys.size(); i += 2) {
                            pair.backend(keys.bytes, keys.offset(i), keys.length(i));
                        }
                    }
                } catch (Throwable e) {
                    errors.add(e);
                }
            }));
        }
        for (Thread t : lookers) {
            t.join(30_000);
        }
        assertTrue(errors.isEmpty(), () -> "errors: " + errors);
        long migratedKeys = 0;
        for (int i = 0; i < keys.size(); i += 2) {
            migratedKeys += buckets[i] < 3000 ? 1 : 0;
        }
        long perPass = (keys.size() + 1) / 2;
        assertEquals((long) threads * passes * migratedKeys, sel.newLookups());
        assertEquals((long) threads * passes * (perPass - migratedKeys), sel.oldLookups());
    }
}
