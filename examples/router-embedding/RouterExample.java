import io.ringstore.Backend;
import io.ringstore.Ring;
import io.ringstore.builder.BackendList;
import io.ringstore.builder.BuildResult;
import io.ringstore.builder.RingBuilder;
import io.ringstore.family.RingVersion;
import io.ringstore.live.PolicyFileWatcher;
import io.ringstore.live.RingListener;
import io.ringstore.live.RingRouter;
import io.ringstore.migration.RolloutPolicy;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * A router embedding ringstore: a fleet from "service discovery", a ring file with two versions, one
 * {@link RingRouter} following the file and a rollout policy file, lookups from byte[] and ByteBuffer,
 * nginx's failover past down and unhealthy servers, and a republished fleet taken over live.
 *
 * <pre>
 * mvn -q -DskipTests -pl ringstore package
 * java -cp ringstore/target/classes examples/router-embedding/RouterExample.java [DIRECTORY]
 * </pre>
 */
public class RouterExample {
    static final RingVersion OLD = RingVersion.V1;          // nginx's ring: what serves today
    static final RingVersion NEW = RingVersion.v2(16);      // pingora's, 16 points per weight unit
    static final List<String> KEYS = List.of("/index.html", "/video/42.mp4", "/img/logo.png", "/api/v1/cart", "/video/35.mp4");

    public static void main(String[] args) throws Exception {
        Path dir = args.length > 0 ? Path.of(args[0]) : Files.createTempDirectory("router-example");
        Path ringFile = dir.resolve("fleet.ring");
        Path policyFile = dir.resolve("rollout.properties");

        // 1. The fleet, as service discovery would give it, built into one file holding both versions.
        BackendList fleet = BackendList.builder()
                .add("10.0.0.1:8080", 4, List.of("eu", "ssd"))
                .add("10.0.0.2:8080", 4, List.of("eu"))
                .add("10.0.0.3:8080", 2, List.of("eu", "ssd"))
                .down("10.0.0.4:8080", 2, List.of("eu"))   // drained: keeps its points, nginx skips it
                .add("10.0.1.1:8080", 4, List.of("us", "ssd"))
                .add("10.0.1.2:8080", 4, List.of("us"))
                .build();
        publish(fleet, ringFile);

        // 2. The rollout policy: half the keys on the new version, in every data centre.
        Files.writeString(policyFile, "percent = 50\nscope = all\n");

        // 3. One router per ring file, for the life of the process. The listener runs on the watcher's thread.
        CountDownLatch switched = new CountDownLatch(1);
        RingListener listener = new RingListener() {
            @Override
            public void switched(Path path, long from, long to) {
                System.out.println("listener: switched generation " + from + " -> " + to);
                switched.countDown();
            }

            @Override
            public void refused(Path path, long serving, String reason) {
                System.out.println("listener: refused a file, generation " + serving + " keeps serving: " + reason);
            }

            @Override
            public void policyChanged(Path path, RolloutPolicy before, RolloutPolicy after) {
                System.out.println("listener: policy " + before + " -> " + after);
            }
        };
        try (RingRouter router = RingRouter.builder(ringFile).versions(OLD, NEW).listener(listener).pollMillis(100).open();
             PolicyFileWatcher policy = PolicyFileWatcher.watch(policyFile, router, "ams", 1000);
             RingRouter.Route eu = router.route(Set.of("eu"))) {       // once per feature set, not per request
            if (policy.lastError() != null) {                           // the router keeps its policy
                System.out.println("policy file refused: " + policy.lastError());
            }
            System.out.println("router: " + router.mbeanName() + " serving generation " + router.generation());

            // 4. Per request: the key as the server has it, no copy. Same bytes, same answer, whatever the form.
            String[] before = new String[KEYS.size()];
            for (int k = 0; k < KEYS.size(); k++) {
                byte[] key = KEYS.get(k).getBytes(StandardCharsets.UTF_8);
                Backend fromBytes = eu.backend(key);
                Backend fromBuffer = eu.backend(ByteBuffer.allocateDirect(key.length).put(key).flip());
                before[k] = fromBytes.address();
                System.out.println("lookup " + KEYS.get(k) + " " + version(router, key) + " -> " + fromBytes.address()
                        + " (direct ByteBuffer: " + fromBuffer.address() + ")" + (fromBytes.down() ? " down" : ""));
            }

            // 5. Service discovery adds a server: publish the new fleet (atomically, by rename); the router
            //    verifies the file and switches; lookups in flight never fail or block.
            BackendList grown = BackendList.builder()
                    .add("10.0.0.1:8080", 4, List.of("eu", "ssd"))
                    .add("10.0.0.2:8080", 4, List.of("eu"))
                    .add("10.0.0.3:8080", 2, List.of("eu", "ssd"))
                    .down("10.0.0.4:8080", 2, List.of("eu"))
                    .add("10.0.0.5:8080", 2, List.of("eu", "ssd"))  // new
                    .add("10.0.1.1:8080", 4, List.of("us", "ssd"))
                    .add("10.0.1.2:8080", 4, List.of("us"))
                    .build();
            publish(grown, ringFile);
            if (!switched.await(10, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the router did not switch: " + router.lastError());
            }
            for (int k = 0; k < KEYS.size(); k++) {
                Backend now = eu.backend(KEYS.get(k).getBytes(StandardCharsets.UTF_8));
                System.out.println("after switch " + KEYS.get(k) + " -> " + now.address() + (now.down() ? " down" : "")
                        + (now.address().equals(before[k]) ? "" : " (moved from " + before[k] + ")"));
            }

            // 6. backend(key) is the ring's own answer, a server marked down included. nginx's answer is
            //    select(): walk at most 21 points from the key's, skipping servers marked down in the file
            //    and servers this router found unhealthy (and, on a retry, those already tried).
            Set<String> unhealthy = ConcurrentHashMap.newKeySet();   // health state by address: survives switches
            Predicate<Backend> usable = b -> !b.down() && !unhealthy.contains(b.address());
            for (String k : KEYS) {
                failover(router, eu, k.getBytes(StandardCharsets.UTF_8), usable, unhealthy);
            }
            byte[] key = KEYS.get(1).getBytes(StandardCharsets.UTF_8);
            unhealthy.add(eu.select(key, Ring.NGINX_MAX_POINTS, usable).address());   // its server stops answering
            failover(router, eu, key, usable, unhealthy);
            for (Backend b : router.current().backends()) {
                unhealthy.add(b.address());                                          // and then every server
            }
            failover(router, eu, key, usable, unhealthy);

            System.out.println("counters: " + router.oldLookups() + " lookups on " + OLD + ", " + router.newLookups() + " on " + NEW
                    + "; generation " + router.generation() + ", " + router.switches() + " switch");
        }
    }

    /** Builds beside the target and renames over it; the generation goes up by one. */
    static void publish(BackendList fleet, Path ringFile) throws Exception {
        BuildResult r = RingBuilder.of(fleet).version(OLD).version(NEW).build(ringFile);
        System.out.println("published generation " + r.generation() + ": " + r.backends() + " backends, versions " + r.versions());
    }

    /** The version the router's policy sends {@code key} to (for printing; a lookup needs not know). */
    static RingVersion version(RingRouter router, byte[] key) {
        return router.policy().migrates(key, 0, key.length) ? router.newVersion() : router.oldVersion();
    }

    static void failover(RingRouter router, RingRouter.Route route, byte[] key, Predicate<Backend> usable, Set<String> unhealthy) {
        Backend b = route.select(key, Ring.NGINX_MAX_POINTS, usable);
        // null: nothing usable within 21 points, where nginx falls back to round robin over the upstream.
        System.out.println("failover " + new String(key, StandardCharsets.UTF_8) + " " + version(router, key)
                + " unhealthy " + unhealthy.stream().sorted().toList() + " -> " + (b == null ? "none in 21 points: round robin" : b.address()));
    }
}
