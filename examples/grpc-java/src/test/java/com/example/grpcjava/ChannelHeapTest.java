package com.example.grpcjava;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.LoadBalancerRegistry;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.ringstore.family.RingVersion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * A figure, not a timed check: the heap a channel's ring takes, for a ring past grpc-java's cap of
 * 4,096 (MIN = MAX = 1,048,576, the cap raised by {@code RingHashOptions.setRingSizeCap}), with
 * grpc-java's own {@code ring_hash} (a {@code RingEntry} object per entry, in every channel) and with
 * {@link RingFileLoadBalancerProvider} (the ring in the file's mapped pages, shared). Printed to the
 * test's output (target/surefire-reports); the one assertion is that the ring file's channels take
 * less heap than the stock ones.
 */
class ChannelHeapTest {
    private static final int CHANNELS = 3;
    private static final long RING = 1_048_576;

    @TempDir
    Path dir;

    @Test
    void aChannelsHeapWithEachPolicy() throws Exception {
        LoadBalancerRegistry.getDefaultRegistry().register(new RingFileLoadBalancerProvider());
        List<Server> servers = new ArrayList<>();
        List<Fleet.Server> fleet = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
            Server s = Loopback.server();
            servers.add(s);
            fleet.add(new Fleet.Server("127.0.0.1", s.getPort()).weight(1 + i % 4));
        }
        try {
            Path file = dir.resolve("big.ring");
            Fleet.publish(fleet, RingVersion.parse("grpc-java:" + RING + ":" + RING), file);
            String target = Loopback.fleet("heap", fleet);
            long stock = perChannel(() -> Loopback.ringHashChannel(target, RING, RING));
            long ours = perChannel(() -> Loopback.ringFileChannel(target, file));
            System.out.printf(
                    "heap per channel, ring of %,d entries (16 servers, weights 1-4): ring_hash %,d bytes,"
                            + " ringstore_ring_hash %,d bytes (ring file %,d bytes, mapped once per channel,"
                            + " its pages shared)%n",
                    RING, stock, ours, Files.size(file));
            assertTrue(ours < stock, "ringstore " + ours + " bytes a channel, ring_hash " + stock);
        } finally {
            for (Server s : servers) {
                s.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
            }
        }
    }

    /** The heap {@link #CHANNELS} channels hold after a call each, divided by their number. */
    private static long perChannel(Supplier<ManagedChannel> open) throws InterruptedException {
        List<ManagedChannel> channels = new ArrayList<>();
        ManagedChannel warmUp = open.get(); // classes loaded, threads started: not the channels' own
        Loopback.call(warmUp, "warm-up");
        long before = usedHeap();
        for (int i = 0; i < CHANNELS; i++) {
            ManagedChannel c = open.get();
            channels.add(c);
            Loopback.call(c, "key-" + i);
        }
        long after = usedHeap();
        for (ManagedChannel c : channels) {
            Loopback.close(c);
        }
        Loopback.close(warmUp);
        return (after - before) / CHANNELS;
    }

    private static long usedHeap() throws InterruptedException {
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            System.gc();
            Thread.sleep(100);
            used = Math.min(used, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
        }
        return used;
    }
}
