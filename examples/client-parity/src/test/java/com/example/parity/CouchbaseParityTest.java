package com.example.parity;

import com.couchbase.client.core.node.StandardMemcachedHashingStrategy;
import com.couchbase.client.core.topology.KetamaRing;
import com.couchbase.client.core.topology.KetamaRingNode;
import com.couchbase.client.core.util.HostAndPort;
import com.example.parity.Fleets.Server;
import io.ringstore.Ring;
import io.ringstore.RingStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * ringstore's {@code couchbase} ring against the Couchbase Java SDK's own {@code KetamaRing} (core-io
 * 3.13.1, {@code StandardMemcachedHashingStrategy}) over nodes whose KV authority is the host as the
 * backends file writes it (an IPv6 literal compressed or not, the name of a {@code name=} backend) and
 * the KV port, 11210 where the file writes none. {@code HostAndPort} turns any host with a {@code :}
 * into the JDK's text of the address ({@code 0:0:0:0:0:0:0:1}), whatever way it was written. For each
 * fleet of {@link Fleets#all}: every point ({@code toMap()}) and each key's node ({@code get(bytes)}).
 */
class CouchbaseParityTest {
    static final int KEYS = 100_000;

    @TempDir
    Path dir;

    /** A KV node: its authority and nothing else, all the ring asks of it. */
    record Node(int index, HostAndPort ketamaAuthority) implements KetamaRingNode {
    }

    @Test
    void everyPointAndKeyAsTheSdksKetamaRing() throws Exception {
        List<String> keys = Fleets.keys(12, KEYS);
        long compared = 0;
        List<String> failures = new ArrayList<>();
        for (Map.Entry<String, List<Server>> fleet : Fleets.all(31).entrySet()) {
            List<Node> nodes = new ArrayList<>();
            for (Server s : fleet.getValue()) {
                nodes.add(new Node(nodes.size(), new HostAndPort(s.host(), s.port(11210))));
            }
            KetamaRing<Node> theirs = KetamaRing.create(nodes, StandardMemcachedHashingStrategy.INSTANCE);
            String what = "couchbase over " + fleet.getKey();
            try (RingStore store = RingStore.open(Fleets.ringFile(dir, fleet.getKey(), fleet.getValue(), "couchbase"))) {
                Ring ring = Fleets.ring(store);
                List<String> disagree = new ArrayList<>();
                for (String key : keys) {
                    byte[] bytes = key.getBytes(StandardCharsets.UTF_8);
                    if (ring.lookup(bytes) != theirs.get(bytes).index()) {
                        disagree.add(key);
                    }
                }
                compared += keys.size();
                System.out.printf("%s: %d keys, %d disagreements%n", what, keys.size(), disagree.size());
                if (!disagree.isEmpty()) {
                    failures.add(disagree.size() + " of " + keys.size() + " keys disagree, " + what + " (the first: "
                            + disagree.subList(0, Math.min(3, disagree.size())) + ")");
                    continue;
                }
                NavigableMap<Long, Node> points = theirs.toMap();
                assertEquals(points.size(), ring.pointCount(), what + ": points");
                int p = 0;
                for (Map.Entry<Long, Node> e : points.entrySet()) {
                    assertEquals(e.getKey(), ring.pointHash(p), what + ": point " + p);
                    assertEquals(e.getValue().index(), ring.pointBackend(p), what + ": point " + p + "'s node");
                    p++;
                }
            }
        }
        System.out.println("couchbase: " + compared + " keys compared with KetamaRing");
        assertEquals(List.of(), failures);
    }
}
