package io.ringstore.live;

import static io.ringstore.TestRings.builder;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.Backend;
import io.ringstore.MemoryTempDir;
import io.ringstore.Ring;
import io.ringstore.RingStore;
import io.ringstore.family.RingVersion;
import io.ringstore.migration.RolloutPolicy;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The router's handle: rollout between two versions of whichever generation serves, a policy file, a
 * switch and the counters together; refusals (a version or feature in use, a lower generation);
 * old generations unmapped under readers; the listener, JFR events and the MBean.
 */
class RingRouterTest {
    private static final String A = """
            server 10.0.0.1:80
            server 10.0.0.2:80 weight=2 features=x
            server 10.0.0.3:80 features=x
            server 10.0.0.4:80
            """;
    private static final String B = """
            server 10.1.0.1:80 features=x
            server 10.1.0.2:80
            server 10.1.0.3:80 weight=3 features=x
            """;
    private static final RingVersion V2_8 = RingVersion.v2(8);
    private static final int KEYS = 500;

    @TempDir(factory = MemoryTempDir.class)
    Path dir;

    private Path path;
    private byte[][] keys;

    @BeforeEach
    void keys() {
        path = dir.resolve("fleet.ring");
        keys = new byte[KEYS][];
        for (int k = 0; k < KEYS; k++) {
            keys[k] = ("/router/" + k).getBytes(StandardCharsets.US_ASCII);
        }
    }

    private void publish(String text, long generation, RingVersion... versions) throws Exception {
        builder(text, versions).generation(generation).build(path);
    }

    /** What {@code text}'s ring of {@code version} answers for each key, from a separately built file. */
    private String[] answers(String text, RingVersion version, Set<String> features) throws Exception {
        Path copy = dir.resolve("expected.ring");
        builder(text, version).build(copy);
        try (RingStore store = RingStore.open(copy)) {
            Ring ring = store.ring(features, version);
            String[] out = new String[KEYS];
            for (int k = 0; k < KEYS; k++) {
                out[k] = store.backend(ring.lookup(keys[k])).address();
            }
            return out;
        }
    }

    /** Everything a listener is told, one line each. */
    private static final class Told implements RingListener {
        final List<String> lines = new CopyOnWriteArrayList<>();

        @Override
        public void switched(Path path, long from, long to) {
            lines.add("switched " + from + " " + to);
        }

        @Override
        public void refused(Path path, long serving, String reason) {
            lines.add("refused " + serving + " " + reason);
        }

        @Override
        public void policyChanged(Path path, RolloutPolicy before, RolloutPolicy after) {
            lines.add("policy " + after.basisPoints());
        }
    }

    @Test
    void theRolloutFollowsThePolicyFileAcrossASwitchAndCountsEachVersion() throws Exception {
        publish(A, 1, RingVersion.V1, V2_8);
        String[] a1 = answers(A, RingVersion.V1, Set.of("x"));
        String[] a2 = answers(A, V2_8, Set.of("x"));
        String[] b1 = answers(B, RingVersion.V1, Set.of("x"));
        String[] b2 = answers(B, V2_8, Set.of("x"));
        Path policyPath = dir.resolve("rollout.policy");
        Files.writeString(policyPath, "percent = 0\nscope = all\n");
        Told told = new Told();
        try (RingRouter router = RingRouter.builder(path)
                        .versions(RingVersion.V1, V2_8)
                        .pollMillis(0)
                        .jmx(false)
                        .listener(told)
                        .open();
                PolicyFileWatcher policy = PolicyFileWatcher.watch(policyPath, router, "ams", 0)) {
            RingRouter.Route x = router.route(Set.of("x"));
            assertAnswers(x, a1, a2, 0, "generation 1 at 0 %");
            assertEquals(KEYS, router.oldLookups());
            assertEquals(0, router.newLookups());

            replace(policyPath, "percent = 100\nscope = all\n");
            assertTrue(policy.checkNow());
            assertAnswers(x, a1, a2, RolloutPolicy.FULL, "generation 1 at 100 %");
            assertEquals(KEYS, router.newLookups());

            publish(B, 2, RingVersion.V1, V2_8);
            assertTrue(router.checkNow(), () -> "refused: " + router.lastError());
            assertAnswers(x, b1, b2, RolloutPolicy.FULL, "generation 2 at 100 %");

            replace(policyPath, "percent = 37.5\nscope = ams,fra\n");
            assertTrue(policy.checkNow());
            router.resetCounters();
            long migrated = assertAnswers(x, b1, b2, 3750, "generation 2 at 37.5 %");
            assertEquals(migrated, router.newLookups());
            assertEquals(KEYS - migrated, router.oldLookups());
            assertTrue(migrated > KEYS / 5 && migrated < KEYS / 2, "about 37.5 % migrated: " + migrated);

            // The file's 0 % names the local data centre: a policy other than the builder's NONE, so a change.
            assertEquals(List.of("policy 0", "policy 10000", "switched 1 2", "policy 3750"), told.lines);
        }
    }

    /** Looks every key up; each answer must be the new version's when the key migrates at {@code basisPoints}, else the old one's. Returns how many migrated. */
    private long assertAnswers(
            RingRouter.Route route, String[] oldAnswers, String[] newAnswers, int basisPoints, String when) {
        long migrated = 0;
        for (int k = 0; k < KEYS; k++) {
            boolean migrates = RolloutPolicy.bucket(keys[k], 0, keys[k].length) < basisPoints;
            migrated += migrates ? 1 : 0;
            assertEquals(
                    (migrates ? newAnswers : oldAnswers)[k],
                    route.backend(keys[k]).address(),
                    when + ": key " + k);
        }
        return migrated;
    }

    private void replace(Path target, String text) throws Exception {
        Path tmp = Files.createTempFile(dir, ".policy-", ".tmp");
        Files.writeString(tmp, text);
        Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    @Test
    void aNewGenerationLackingAVersionOrAFeatureInUseIsRefused() throws Exception {
        publish(A, 1, RingVersion.V1, V2_8);
        try (RingRouter router = RingRouter.builder(path)
                .versions(RingVersion.V1, V2_8)
                .pollMillis(0)
                .jmx(false)
                .open()) {
            RingRouter.Route x = router.route(Set.of("x"));
            publish(B, 2, RingVersion.V1);
            assertFalse(router.checkNow());
            assertTrue(router.lastError().contains("version v2"), router.lastError());

            publish(B.replace(" features=x", ""), 3, RingVersion.V1, V2_8);
            assertFalse(router.checkNow());
            assertTrue(router.lastError().contains("unknown feature 'x'"), router.lastError());
            assertEquals(1, router.generation());
            assertNotNull(x.backend(keys[0]));

            x.close();
            publish(B.replace(" features=x", ""), 4, RingVersion.V1, V2_8);
            assertTrue(router.checkNow(), () -> "refused for a closed route: " + router.lastError());
            assertEquals(4, router.generation());
        }
        publish(A, 5, RingVersion.V1);
        IllegalArgumentException e = assertThrows(
                IllegalArgumentException.class,
                () -> RingRouter.builder(path)
                        .versions(RingVersion.V1, V2_8)
                        .pollMillis(0)
                        .jmx(false)
                        .open());
        assertTrue(e.getMessage().contains("version v2"), e.getMessage());
    }

    @Test
    void aLowerGenerationIsRefusedUnlessAllowed() throws Exception {
        publish(A, 5, RingVersion.V1);
        Told told = new Told();
        try (RingRouter router =
                RingRouter.builder(path).pollMillis(0).jmx(false).listener(told).open()) {
            publish(B, 3, RingVersion.V1);
            assertFalse(router.checkNow());
            String reason = router.lastError();
            assertEquals(
                    "generation 3 is lower than generation 5 serving (an old file copied into place? publish with a higher"
                            + " generation, or allow older generations)",
                    reason);
            assertEquals(List.of("refused 5 " + reason), told.lines);
            assertEquals(5, router.generation());
            publish(B, 6, RingVersion.V1);
            assertTrue(router.checkNow(), "a higher generation is switched to");
        }
        publish(A, 7, RingVersion.V1);
        try (RingRouter router = RingRouter.builder(path)
                .pollMillis(0)
                .jmx(false)
                .allowOlderGeneration(true)
                .open()) {
            publish(B, 3, RingVersion.V1);
            assertTrue(router.checkNow(), () -> "allowed, yet refused: " + router.lastError());
            assertEquals(3, router.generation());
        }
    }

    /**
     * Thirty republishes of a ~1 MB file under four readers, with no grace period (each replaced
     * generation is unmapped at its switch, so readers racing it are answered again on the new one):
     * no lookup fails, and after every switch at most two ring files are mapped (one, in fact), the
     * replaced files deleted and unmapped without any garbage collection.
     */
    @Tag("slow") // waits out several grace periods: the full lane runs it
    @Test
    void replacedGenerationsAreUnmappedAtOnceAfterTheirGracePeriodAndNoLookupFails() throws Exception {
        StringBuilder big = new StringBuilder();
        for (int i = 0; i < 1000; i++) {
            big.append("server 10.2.")
                    .append(i / 250)
                    .append('.')
                    .append(i % 250)
                    .append(":80\n");
        }
        String fleet = big.toString();
        publish(fleet, 1, RingVersion.V1);
        assertTrue(Files.size(path) > 900_000, "about 1 MB: " + Files.size(path));
        try (RingRouter router =
                RingRouter.builder(path).pollMillis(0).graceMillis(0).jmx(false).open()) {
            RingRouter.Route all = router.route(Set.of());
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong lookups = new AtomicLong();
            AtomicLong failures = new AtomicLong();
            AtomicReference<String> firstFailure = new AtomicReference<>();
            List<Thread> readers = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                Thread reader = new Thread(() -> {
                    long n = 0;
                    while (!stop.get()) {
                        try {
                            Backend b = all.backend(keys[(int) (n % KEYS)]);
                            if (b == null || !b.address().startsWith("10.2.")) {
                                failures.incrementAndGet();
                                firstFailure.compareAndSet(null, "answer " + b);
                            }
                        } catch (Throwable e) {
                            failures.incrementAndGet();
                            firstFailure.compareAndSet(null, e.toString());
                        }
                        n++;
                    }
                    lookups.addAndGet(n);
                });
                readers.add(reader);
                reader.start();
            }
            int maxMapped = 0;
            try {
                for (long g = 2; g <= 31; g++) {
                    publish(fleet, g, RingVersion.V1);
                    assertTrue(router.checkNow(), () -> "refused: " + router.lastError());
                    assertEquals(0, router.retiredGenerations());
                    maxMapped = Math.max(maxMapped, ringMappings());
                }
            } finally {
                stop.set(true);
                for (Thread reader : readers) {
                    reader.join(10_000);
                }
            }
            System.out.printf(
                    "30 republishes: %d lookups, %d retried on the new generation, at most %d ring mappings%n",
                    lookups.get(), router.lookupRetries(), maxMapped);
            assertEquals(0, failures.get(), () -> failures.get() + " failed lookups; first: " + firstFailure.get());
            assertTrue(lookups.get() > 0);
            assertTrue(maxMapped >= 1 && maxMapped <= 2, "ring files mapped: " + maxMapped);
        }
        assertEquals(0, ringMappings(), "closing the router unmaps its generation");
    }

    /** Mappings of files in the test directory, from /proc/self/maps (Linux). */
    private int ringMappings() throws Exception {
        return (int) Files.readAllLines(Path.of("/proc/self/maps")).stream()
                .filter(l -> l.contains(dir.toString()))
                .count();
    }

    @Test
    void aReplacedGenerationStaysUsableDuringItsGracePeriod() throws Exception {
        publish(A, 1, RingVersion.V1);
        try (RingRouter router = RingRouter.builder(path)
                .pollMillis(0)
                .graceMillis(3_600_000)
                .jmx(false)
                .open()) {
            RingStore first = router.current();
            publish(B, 2, RingVersion.V1);
            assertTrue(router.checkNow());
            assertEquals(1, router.retiredGenerations());
            assertTrue(first.ring(Set.of()).lookup(keys[0]) >= 0, "mapped until its grace period passes");
        }
    }

    @Test
    void switchesRefusalsAndPolicyChangesAreJfrEvents() throws Exception {
        publish(A, 1, RingVersion.V1, V2_8);
        Path jfr = dir.resolve("events.jfr");
        try (Recording recording = new Recording()) {
            for (String name : List.of("io.ringstore.Switch", "io.ringstore.Refusal", "io.ringstore.PolicyChange")) {
                recording.enable(name);
            }
            recording.start();
            try (RingRouter router = RingRouter.builder(path)
                    .versions(RingVersion.V1, V2_8)
                    .pollMillis(0)
                    .jmx(false)
                    .open()) {
                publish(B, 2, RingVersion.V1, V2_8);
                assertTrue(router.checkNow());
                publish(B, 1, RingVersion.V1, V2_8);
                assertFalse(router.checkNow());
                router.policy(RolloutPolicy.everywhere(12.5));
            }
            recording.stop();
            recording.dump(jfr);
        }
        Map<String, List<RecordedEvent>> byName = RecordingFile.readAllEvents(jfr).stream()
                .collect(Collectors.groupingBy(e -> e.getEventType().getName()));
        RecordedEvent sw = byName.get("io.ringstore.Switch").getFirst();
        assertEquals(path.toString(), sw.getString("path"));
        assertEquals(1, sw.getLong("fromGeneration"));
        assertEquals(2, sw.getLong("toGeneration"));
        RecordedEvent refusal = byName.get("io.ringstore.Refusal").getFirst();
        assertEquals(2, refusal.getLong("servingGeneration"));
        assertTrue(refusal.getString("reason").contains("lower than generation 2"), refusal.getString("reason"));
        RecordedEvent policy = byName.get("io.ringstore.PolicyChange").getFirst();
        assertEquals(1250, policy.getInt("basisPoints"));
        assertTrue(policy.getString("after").startsWith("12.50 %"), policy.getString("after"));
    }

    @Test
    void theRouterIsAnMBeanWhileOpen() throws Exception {
        publish(A, 1, RingVersion.V1, V2_8);
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        ObjectName name;
        try (RingRouter router = RingRouter.builder(path)
                        .versions(RingVersion.V1, V2_8)
                        .pollMillis(0)
                        .open();
                RingRouter twin = RingRouter.builder(path).pollMillis(0).open()) {
            name = router.mbeanName();
            assertEquals(
                    new ObjectName("io.ringstore:type=RingRouter,name=" + ObjectName.quote(path.toString())), name);
            assertEquals(
                    name + ",instance=2", twin.mbeanName().toString(), "a second router on the path gets its own name");
            RingRouter.Route all = router.route(Set.of());
            router.policy(RolloutPolicy.everywhere(100));
            for (int k = 0; k < 10; k++) {
                all.backend(keys[k]);
            }
            assertEquals("1", server.getAttribute(name, "Generation"));
            assertEquals(10L, server.getAttribute(name, "NewLookups"));
            assertEquals(0L, server.getAttribute(name, "OldLookups"));
            assertEquals("v2:8", server.getAttribute(name, "NewVersion"));
            assertEquals("", server.getAttribute(name, "LastError"));

            publish(B, 2, RingVersion.V1, V2_8);
            assertTrue(router.checkNow());
            assertEquals("2", server.getAttribute(name, "Generation"));
            assertEquals(1L, server.getAttribute(name, "Switches"));
            assertEquals(router.lastSwitch().toString(), server.getAttribute(name, "LastSwitch"));
            publish(B, 3, RingVersion.V1);
            assertFalse(router.checkNow());
            assertTrue(((String) server.getAttribute(name, "LastError")).contains("version v2:8"));
        }
        assertFalse(server.isRegistered(name), "unregistered on close");
    }

    @Test
    void everyKeyFormAndFailoverGiveTheRingsAnswer() throws Exception {
        publish(A, 1, RingVersion.V1, V2_8);
        try (RingRouter router = RingRouter.builder(path)
                        .versions(RingVersion.V1, V2_8)
                        .policy(RolloutPolicy.everywhere(50))
                        .pollMillis(0)
                        .jmx(false)
                        .open();
                Arena arena = Arena.ofConfined()) {
            RingRouter.Route all = router.route(Set.of());
            RingStore store = router.current();
            for (int k = 0; k < KEYS; k++) {
                byte[] key = keys[k];
                Ring ring =
                        store.ring(Set.of(), RolloutPolicy.bucket(key, 0, key.length) < 5000 ? V2_8 : RingVersion.V1);
                Backend want = store.backend(ring.lookup(key));
                MemorySegment nativeKey = arena.allocate(key.length);
                MemorySegment.copy(MemorySegment.ofArray(key), 0, nativeKey, 0, key.length);
                ByteBuffer direct =
                        ByteBuffer.allocateDirect(key.length).put(key).flip();
                assertSame(want, all.backend(key));
                assertSame(want, all.backend(ByteBuffer.wrap(key)));
                assertSame(want, all.backend(direct));
                assertSame(want, all.backend(nativeKey));
                assertSame(want, all.select(key, Ring.NGINX_MAX_POINTS, b -> true));

                // Failover: refuse the ring's own answer; the walk goes on to the next point's backend.
                int next = ring.select(ring.hash(key), Ring.NGINX_MAX_POINTS, b -> b != want.index());
                Backend failover = all.select(nativeKey, Ring.NGINX_MAX_POINTS, b -> b != want);
                assertSame(next < 0 ? null : store.backend(next), failover);
                assertNull(all.select(direct, Ring.NGINX_MAX_POINTS, b -> false), "nothing accepted: null");
            }
            assertEquals(7L * KEYS, router.oldLookups() + router.newLookups());
        }
    }

    @Test
    void lookupsAfterCloseThrow() throws Exception {
        publish(A, 1, RingVersion.V1);
        RingRouter router = RingRouter.builder(path).pollMillis(0).jmx(false).open();
        RingRouter.Route all = router.route(Set.of());
        assertNotNull(all.backend(keys[0]));
        router.close();
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> all.backend(keys[0]));
        assertNull(router.mbeanName());
        assertTrue(e.getMessage() != null, "a closed router says why");
    }
}
