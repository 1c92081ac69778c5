package io.ringstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.family.RingVersion;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Envoy's {@code ring_hash_lb_test.cc} vectors ({@code vectors/envoy/}, README.md there) as ringstore
 * rings, for the families that build Envoy's ring ({@code envoy}, {@code envoy-murmur2}, {@code grpc}):
 * a test's hosts as a backends file, and the checks of its gauges, ring entries, lookups and
 * histograms.
 *
 * <p>A host's hashed key: with {@code key_source} {@code hostname} its host name, with
 * {@code metadata_hash_key} its {@code hash_key}, each given as the backend's name; else its address.
 *
 * <p>Locality-weighted tests: Envoy normalizes a host to {@code w · (lw / Σlw) / Σw(locality)} and
 * skips localities of weight 0. The backends file gives each host the integer weight
 * {@code w · lw · L / Σw(locality)}, L the least common multiple of the localities' sums, and marks
 * the hosts of weight-0 localities {@code down} (they leave the ring but keep their index); the test
 * asserts that this weight's normalization, {@code w' · 1.0 / Σw'}, is the very double Envoy's is, so
 * the ring is exactly Envoy's (it is, for every such test here).
 */
final class EnvoyVectors {
    private EnvoyVectors() {}

    /** The rows of {@code tests.tsv} that {@code filter} keeps. */
    static List<ProjectVectors.Row> tests(Predicate<ProjectVectors.Row> filter) {
        return ProjectVectors.rows("envoy/tests.tsv", filter);
    }

    /** The phases of a test ({@code a}, and {@code b} where the hosts change or the ring is rebuilt). */
    static List<String> phases(String test) {
        return ProjectVectors.rows("envoy/hosts.tsv", r -> r.get("test").equals(test)).stream()
                .map(r -> r.get("phase"))
                .distinct()
                .toList();
    }

    /** The backends file of a test's phase, hosts in {@code hosts_} order. */
    static String backends(ProjectVectors.Row test, String phase) {
        List<ProjectVectors.Row> hosts = ProjectVectors.rows(
                "envoy/hosts.tsv",
                r -> r.get("test").equals(test.get("test")) && r.get("phase").equals(phase));
        long[] weights = weights(test, hosts);
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < hosts.size(); i++) {
            ProjectVectors.Row h = hosts.get(i);
            assertEquals(i, h.integer("index"), h.toString());
            String name = switch (test.get("key_source")) {
                case "hostname" -> h.get("hostname");
                case "metadata_hash_key" -> h.get("hash_key");
                default -> null;
            };
            text.append("server ")
                    .append(h.get("address"))
                    .append(" weight=")
                    .append(Math.max(weights[i], 1))
                    .append(weights[i] == 0 ? " down" : "")
                    .append(';')
                    .append(name == null ? "" : "  # ringstore: name=" + name)
                    .append('\n');
        }
        return text.toString();
    }

    /** Each host's integer weight, 0 for a host Envoy skips (a locality of weight 0). */
    private static long[] weights(ProjectVectors.Row test, List<ProjectVectors.Row> hosts) {
        long[] w = new long[hosts.size()];
        if (!test.get("locality_weighted").equals("yes")) {
            for (int i = 0; i < w.length; i++) {
                w[i] = hosts.get(i).integer("weight");
            }
            return w;
        }
        Map<String, Long> localityWeight = new LinkedHashMap<>();
        for (ProjectVectors.Row l :
                ProjectVectors.rows("envoy/localities.tsv", r -> r.get("test").equals(test.get("test")))) {
            localityWeight.put(l.get("zone"), (long) l.integer("locality_weight"));
        }
        Map<String, Long> hostSum = new LinkedHashMap<>();
        for (ProjectVectors.Row h : hosts) {
            hostSum.merge(h.get("locality"), (long) h.integer("weight"), Long::sum);
        }
        long lcm = 1;
        for (long s : hostSum.values()) {
            lcm = lcm / gcd(lcm, s) * s;
        }
        long localitySum =
                localityWeight.values().stream().mapToLong(Long::longValue).sum();
        long total = 0;
        for (int i = 0; i < w.length; i++) {
            ProjectVectors.Row h = hosts.get(i);
            w[i] = h.integer("weight") * localityWeight.get(h.get("locality")) * (lcm / hostSum.get(h.get("locality")));
            total += w[i];
        }
        for (int i = 0; i < w.length; i++) { // the same double as Envoy's normalizeHostWeights
            ProjectVectors.Row h = hosts.get(i);
            long lw = localityWeight.get(h.get("locality"));
            if (lw != 0) {
                double envoy = h.integer("weight") * ((double) lw / localitySum) / hostSum.get(h.get("locality"));
                assertEquals(envoy, w[i] * 1.0 / total, h + ": the integer weight normalizes to Envoy's double");
            }
        }
        return w;
    }

    private static long gcd(long a, long b) {
        return b == 0 ? a : gcd(b, a % b);
    }

    /**
     * The gauges of a phase's ring: {@code size} (the entries), and the fewest and most entries of a
     * host Envoy visited (not a skipped one).
     */
    static void checkGauges(Ring ring, RingStore store, ProjectVectors.Row test, String phase) {
        String where = test.get("test") + " phase " + phase + " (" + ring.version() + ")";
        assertEquals(test.integer("expected_size"), ring.pointCount(), where + ": size");
        long[] perHost = new long[store.backendCount()];
        for (int p = 0; p < ring.pointCount(); p++) {
            perHost[ring.pointBackend(p)]++;
        }
        long min = Long.MAX_VALUE;
        long max = 0;
        for (Backend b : store.backends()) {
            if (!b.down()) {
                min = Math.min(min, perHost[b.index()]);
                max = Math.max(max, perHost[b.index()]);
            }
        }
        assertEquals(test.integer("expected_min_hashes_per_host"), min, where + ": min_hashes_per_host");
        assertEquals(test.integer("expected_max_hashes_per_host"), max, where + ": max_hashes_per_host");
    }

    /** A phase's ring entries of {@code rings.tsv} in order, hash (64 bits) and host; returns how many (0 if it lists none). */
    static int checkEntries(Ring ring, String test, String phase) {
        List<ProjectVectors.Row> rows = ProjectVectors.rows(
                "envoy/rings.tsv",
                r -> r.get("test").equals(test) && r.get("phase").equals(phase));
        if (rows.isEmpty()) {
            return 0;
        }
        assertEquals(rows.size(), ring.pointCount(), test + " phase " + phase + ": entries");
        assertTrue(ring.isWide(), "a 64-bit ring");
        for (ProjectVectors.Row row : rows) {
            int p = row.integer("position");
            assertEquals(row.unsigned("hash"), ring.pointHash(p), row.toString());
            assertEquals(row.integer("host_index"), ring.pointBackend(p), row + " (" + row.get("label_in_test") + ")");
        }
        return rows.size();
    }

    /**
     * A phase's lookups of {@code lookups.tsv}: {@code chooseHost(hash, attempt)} for attempts 0 to
     * {@code retry_count}, entry {@code (index + attempt) % size}, until the host is not rejected; when
     * every attempt is rejected, the last attempt's host. As {@link Ring#select(long, int, java.util.function.IntPredicate)} with an accept that
     * takes the last attempt's host whatever it is. Rows with retries only when {@code retries}
     * (Envoy's retry host predicate; gRPC has none). Returns how many rows were checked.
     */
    static int checkLookups(Ring ring, String test, String phase, boolean retries) {
        int checked = 0;
        for (ProjectVectors.Row row : ProjectVectors.rows(
                "envoy/lookups.tsv",
                r -> r.get("test").equals(test) && r.get("phase").equals(phase))) {
            long hash = row.unsigned("hash");
            int retry = row.integer("retry_count");
            if (retry > 0 && !retries) {
                continue;
            }
            String reject = row.get("reject");
            int[] calls = {0};
            int chosen = ring.select(hash, retry + 1, b -> calls[0]++ == retry || !rejected(reject, b));
            assertEquals(row.integer("expected_host_index"), chosen, row.toString());
            if (retry == 0) {
                assertEquals(row.integer("expected_host_index"), ring.lookupHash(hash), row + ": lookupHash");
            }
            checked++;
        }
        return checked;
    }

    private static boolean rejected(String reject, int backend) {
        return switch (reject) {
            case "none" -> false;
            case "all" -> true;
            default -> backend == Integer.parseInt(reject.substring("host:".length()));
        };
    }

    /** A test's histogram: hashes {@code i · (2^64-1 / samples)}, hits per host; returns how many hosts' counts were checked. */
    static int checkHistogram(Ring ring, int hosts, String test) {
        List<ProjectVectors.Row> rows =
                ProjectVectors.rows("envoy/histograms.tsv", r -> r.get("test").equals(test));
        if (rows.isEmpty()) {
            return 0;
        }
        long[] hits = hits(ring, hosts, rows.getFirst().integer("samples"));
        for (ProjectVectors.Row row : rows) {
            assertEquals(row.integer("expected_count"), hits[row.integer("host_index")], row.toString());
        }
        return rows.size();
    }

    /** Hits per host of {@code samples} hashes {@code i · (2^64-1 / samples)} (unsigned, the division first). */
    static long[] hits(Ring ring, int hosts, int samples) {
        long step = Long.divideUnsigned(-1L, samples);
        long[] hits = new long[hosts];
        for (long i = 0; i < samples; i++) {
            hits[ring.lookupHash(i * step)]++;
        }
        return hits;
    }

    /** The hosts that receive hits, as a list of indexes. */
    static List<Integer> receiving(long[] hits) {
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < hits.length; i++) {
            if (hits[i] > 0) {
                out.add(i);
            }
        }
        return out;
    }

    /** The ring of {@code version} over a test's phase, and its store (closed by the caller). */
    record Built(RingStore store, Ring ring) implements AutoCloseable {
        @Override
        public void close() {
            store.close();
        }
    }

    static Built build(RingFamilyContract contract, ProjectVectors.Row test, String phase, RingVersion version)
            throws Exception {
        RingStore store = contract.build(backends(test, phase), version);
        return new Built(store, store.ring(Set.of(), version));
    }
}
