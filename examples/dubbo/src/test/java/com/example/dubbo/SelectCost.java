package com.example.dubbo;

import com.example.dubbo.Fixtures.Provider;
import org.apache.dubbo.rpc.Invocation;
import org.apache.dubbo.rpc.Invoker;
import org.apache.dubbo.rpc.cluster.LoadBalance;
import org.apache.dubbo.rpc.cluster.loadbalance.ConsistentHashLoadBalance;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * A measuring program, not a test: the time and the heap bytes of one {@code select} of
 * {@link RingstoreLoadBalance} and of Dubbo's {@link ConsistentHashLoadBalance}, over stand-in invokers
 * (no network), for a steady invoker list and for a list that changes on every call (a provider gone
 * and back: Dubbo builds its ring again each time). Run with the test classpath:
 * {@code java -cp target/classes:target/test-classes:$(cat cp.txt) com.example.dubbo.SelectCost [providers] [K]}.
 */
public final class SelectCost {
    private SelectCost() {
    }

    public static void main(String[] args) throws Exception {
        int providers = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        int k = args.length > 1 ? Integer.parseInt(args[1]) : 160;
        Path dir = Files.createTempDirectory("select-cost");
        Path file = Fixtures.ringFile(dir.resolve("cost.ring"), Fixtures.randomProviders(new SplittableRandom(1), providers), "dubbo:" + k, 1);
        List<Provider> fleet = Fixtures.randomProviders(new SplittableRandom(1), providers);
        List<Invoker<Identity>> all = Fixtures.invokers(fleet, "hash.nodes=" + k + "&" + RingstoreLoadBalance.FILE + "=" + file);
        List<Invoker<Identity>> without = new ArrayList<>(all);
        without.remove(providers / 2);
        List<Invocation> calls = Fixtures.keys(7, 4096).stream().map(key -> Fixtures.call("who", key)).toList();
        RingstoreLoadBalance ours = new RingstoreLoadBalance();
        System.out.printf("%d providers, dubbo:%d, keys of 1 to 200 characters%n", providers, k);
        for (int round = 0; round < 3; round++) {
            measure("ringstore, steady list", ours, all, all, calls, 2_000_000);
            measure("consistenthash, steady list", new ConsistentHashLoadBalance(), all, all, calls, 2_000_000);
            measure("ringstore, list changing every call", ours, all, without, calls, 200_000);
            measure("consistenthash, list changing every call", new ConsistentHashLoadBalance(), all, without, calls, 2_000);
        }
        ours.destroy();
    }

    private static void measure(String what, LoadBalance lb, List<Invoker<Identity>> a, List<Invoker<Identity>> b,
                                List<Invocation> calls, int n) {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long sink = 0;
        long bytes0 = mx.getCurrentThreadAllocatedBytes();
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            List<Invoker<Identity>> list = (i & 1) == 0 ? a : b;
            sink += lb.select(list, list.getFirst().getUrl(), calls.get(i & 4095)).hashCode();
        }
        long t1 = System.nanoTime();
        long bytes1 = mx.getCurrentThreadAllocatedBytes();
        System.out.printf("%-42s %9.0f ns/call %8.0f bytes/call  (%d)%n", what, (t1 - t0) / (double) n, (bytes1 - bytes0) / (double) n, sink & 1);
    }
}
