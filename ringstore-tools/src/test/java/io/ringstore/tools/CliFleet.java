package io.ringstore.tools;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * A small backends file described in the test itself, so expected counts (rings, shared segments,
 * empty rings, points) are derived here from the input and not from the code under test.
 */
final class CliFleet {
    record Server(String address, int weight, List<String> features) {
        String line() {
            return "    server " + address + (weight != 1 ? " weight=" + weight : "")
                    + (features.isEmpty() ? "" : " features=" + String.join(",", features)) + ";";
        }
    }

    /**
     * Features ssd, gpu, hdd: {gpu} and {ssd,gpu} select the same single backend (one shared segment);
     * hdd never occurs with ssd or gpu (three empty rings). A port-less IPv4 and an IPv6 backend.
     */
    static final List<Server> FEATURED = List.of(
            new Server("127.0.0.1:8080", 2, List.of("ssd")),
            new Server("127.0.0.2:8080", 1, List.of("ssd", "gpu")),
            new Server("127.0.0.3", 1, List.of()),
            new Server("[::1]:9001", 3, List.of("ssd")),
            new Server("127.0.0.4:8081", 1, List.of("hdd")));

    private CliFleet() {}

    /** The fleet in backends-file syntax, inside an upstream block. */
    static String text(List<Server> servers) {
        StringBuilder sb = new StringBuilder("# test fleet\nupstream pool {\n    hash $request_uri consistent;\n");
        servers.forEach(s -> sb.append(s.line()).append('\n'));
        return sb.append("}\n").toString();
    }

    /** Feature names in order of first appearance. */
    static List<String> features(List<Server> servers) {
        Set<String> names = new LinkedHashSet<>();
        servers.forEach(s -> names.addAll(s.features()));
        return List.copyOf(names);
    }

    /** Indexes of the servers having every feature in {@code wanted}. */
    static Set<Integer> members(List<Server> servers, Set<String> wanted) {
        Set<Integer> set = new TreeSet<>();
        for (int i = 0; i < servers.size(); i++) {
            if (servers.get(i).features().containsAll(wanted)) {
                set.add(i);
            }
        }
        return set;
    }

    /** Every subset of the fleet's features, as the feature sets of its rings. */
    static List<Set<String>> featureSubsets(List<Server> servers) {
        List<String> names = features(servers);
        List<Set<String>> subsets = new ArrayList<>();
        for (int mask = 0; mask < 1 << names.size(); mask++) {
            Set<String> subset = new LinkedHashSet<>();
            for (int f = 0; f < names.size(); f++) {
                if ((mask & (1 << f)) != 0) {
                    subset.add(names.get(f));
                }
            }
            subsets.add(subset);
        }
        return subsets;
    }

    /** Distinct non-empty member sets over all feature subsets: the segments of one version. */
    static Set<Set<Integer>> distinctMemberSets(List<Server> servers) {
        Set<Set<Integer>> sets = new LinkedHashSet<>();
        for (Set<String> subset : featureSubsets(servers)) {
            Set<Integer> m = members(servers, subset);
            if (!m.isEmpty()) {
                sets.add(m);
            }
        }
        return sets;
    }

    static long emptyRings(List<Server> servers) {
        return featureSubsets(servers).stream()
                .filter(f -> members(servers, f).isEmpty())
                .count();
    }

    /** Points one version generates before equal hashes are dropped: weight × point multiple per member, per segment. */
    static long rawPoints(List<Server> servers, int pointMultiple) {
        long total = 0;
        for (Set<Integer> set : distinctMemberSets(servers)) {
            for (int i : set) {
                total += (long) servers.get(i).weight() * pointMultiple;
            }
        }
        return total;
    }
}
