package com.example.grpcjava;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.LoadBalancerRegistry;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.ringstore.family.RingVersion;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * Real channels to real servers on loopback (127.0.0.1, 127.0.0.2 and ::1 where
 * there is one): a channel whose policy is grpc-java's own
 * {@code ring_hash_experimental} and one whose policy is {@link RingFileLoadBalancerProvider} over the
 * fleet's {@code grpc-java} ring file send every RPC (the request hash from a header) to the same
 * server; with a server stopped, both go on to the same next server; a file published again (weights
 * changed) places the calls as a channel given the new weights does.
 */
class ChannelParityTest {
    @TempDir
    Path dir;

    private final List<Server> servers = new ArrayList<>();
    private final List<ManagedChannel> channels = new ArrayList<>();

    @BeforeAll
    static void register() {
        LoadBalancerRegistry.getDefaultRegistry().register(new RingFileLoadBalancerProvider());
    }

    @AfterEach
    void stop() throws InterruptedException {
        for (ManagedChannel c : channels) {
            Loopback.close(c);
        }
        for (Server s : servers) {
            s.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        }
    }

    /** Starts a server for each weight, on the loopback addresses in turn; their fleet with those weights. */
    private List<Fleet.Server> start(int[] weights, String... ips) throws Exception {
        List<Fleet.Server> fleet = new ArrayList<>();
        for (int i = 0; i < weights.length; i++) {
            String ip = ips.length == 0 ? "127.0.0.1" : ips[i % ips.length];
            Server s = Loopback.server(ip);
            servers.add(s);
            fleet.add(new Fleet.Server(ip, s.getPort()).weight(weights[i]));
        }
        return fleet;
    }

    private ManagedChannel keep(ManagedChannel c) {
        channels.add(c);
        return c;
    }

    @Test
    void everyCallGoesWhereRingHashSendsIt() throws Exception {
        List<Fleet.Server> fleet = start(
                new int[] {1, 2, 3, 5, 8, 13, 1, 4, 2},
                "127.0.0.1",
                Loopback.hasIpv6Loopback() ? "::1" : "127.0.0.3",
                "127.0.0.2");
        Path file = dir.resolve("fleet.ring");
        Fleet.publish(fleet, RingVersion.parse("grpc-java"), file);
        String target = Loopback.fleet("parity", fleet);
        ManagedChannel stock = keep(Loopback.ringHashChannel(target, 1024, 4096));
        ManagedChannel ours = keep(Loopback.ringFileChannel(target, file));
        SplittableRandom random = new SplittableRandom(0xCA11);
        Map<String, Integer> perServer = new HashMap<>();
        for (int k = 0; k < 3_000; k++) {
            String key = Fleet.key(random).strip();
            String expected = Loopback.call(stock, key);
            assertEquals(expected, Loopback.call(ours, key), "key " + key);
            perServer.merge(expected, 1, Integer::sum);
        }
        assertEquals(fleet.size(), perServer.size(), "every server took calls: " + perServer);
    }

    @Test
    void aStoppedServersCallsGoOnToTheSameNextServer() throws Exception {
        List<Fleet.Server> fleet = start(new int[] {1, 1, 1, 1, 1});
        Path file = dir.resolve("fleet.ring");
        Fleet.publish(fleet, RingVersion.parse("grpc-java:64:256"), file);
        String target = Loopback.fleet("failover", fleet);
        ManagedChannel stock = keep(Loopback.ringHashChannel(target, 64, 256));
        ManagedChannel ours = keep(Loopback.ringFileChannel(target, file));
        SplittableRandom random = new SplittableRandom(0x5709);
        List<String> keys = new ArrayList<>();
        for (int k = 0; k < 500; k++) {
            keys.add("user-" + random.nextInt(1_000_000));
        }
        String stopped = Loopback.id("127.0.0.1", servers.get(2).getPort());
        int onStopped = 0;
        for (String key : keys) {
            String before = Loopback.call(stock, key);
            assertEquals(before, Loopback.call(ours, key), key);
            onStopped += before.equals(stopped) ? 1 : 0;
        }
        assertTrue(onStopped > 0, "no key on the server to be stopped");
        servers.get(2).shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
        for (String key : keys) {
            String expected = settled(stock, key);
            assertTrue(!expected.equals(stopped), key + " still answered by the stopped server");
            assertEquals(expected, settled(ours, key), key + " with " + stopped + " stopped");
        }
    }

    /**
     * A call that, right after a server stopped, may still be picked onto its closing connection
     * (UNAVAILABLE: GOAWAY) before the channel sees the subchannel fail, on the stock channel as on
     * ours: tried again until the channel has seen it, at most 10 s.
     */
    private static String settled(ManagedChannel channel, String key) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            try {
                return Loopback.call(channel, key);
            } catch (StatusRuntimeException e) {
                if (e.getStatus().getCode() != Status.Code.UNAVAILABLE || System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(20);
            }
        }
    }

    @Test
    void followsAFilePublishedAgain() throws Exception {
        List<Fleet.Server> fleet = start(new int[] {1, 1, 1, 1});
        Path file = dir.resolve("fleet.ring");
        Fleet.publish(fleet, RingVersion.parse("grpc-java"), file);
        ManagedChannel ours = keep(Loopback.ringFileChannel(Loopback.fleet("republished-ours", fleet), file));
        List<Fleet.Server> heavier = new ArrayList<>(fleet);
        heavier.set(0, fleet.get(0).weight(10));
        ManagedChannel stock = keep(Loopback.ringHashChannel(Loopback.fleet("republished-stock", heavier), 1024, 4096));
        List<String> keys = new ArrayList<>();
        for (int k = 0; k < 400; k++) {
            keys.add("session-" + k);
        }
        assertTrue(differences(stock, ours, keys) > 0, "the new weights move keys");
        Fleet.publish(heavier, RingVersion.parse("grpc-java"), file);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (differences(stock, ours, keys) > 0) {
            assertTrue(System.nanoTime() < deadline, "the published file placed no call within 20 s");
            Thread.sleep(100);
        }
    }

    private static int differences(ManagedChannel stock, ManagedChannel ours, List<String> keys) {
        int d = 0;
        for (String key : keys) {
            d += Loopback.call(stock, key).equals(Loopback.call(ours, key)) ? 0 : 1;
        }
        return d;
    }
}
