package io.ringstore.family;

import io.ringstore.internal.BackendRecord;
import io.ringstore.internal.PointGenerator;
import io.ringstore.internal.PointSorter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * Tie rule: who keeps a hash that several backends produce. Most families rank the backends (a
 * total order, lower keeps it: the first listed, the last listed, the smallest address, the name
 * that sorts first), which the builder packs with each point and views need; xmemcached's pick
 * depends on the hash itself ({@link #settle}).
 *
 * <p>Module-internal in what it takes (the module's backend records and generated points).
 * Immutable and thread-safe.
 */
@SuppressWarnings(
        "exports") // takes the module's BackendRecord and points: its callers are the module's builder and verifier
public final class TieRule {
    /** Each backend's rank, index i for backend i: 0 to n-1 each once. */
    @FunctionalInterface
    private interface Ranks {
        int[] of(List<BackendRecord> backends);
    }

    /** Which of the backends producing {@code hash} (in file order, each once) keeps it: its index there. */
    @FunctionalInterface
    private interface Pick {
        int of(long hash, List<BackendRecord> tied);
    }

    /** The first listed keeps a tie (nginx; C clients: libmemcached's host index, glibc's stable qsort; Envoy's first of equals). */
    static final TieRule FIRST_LISTED = new TieRule(b -> listed(b.size(), false), null);
    /** The last listed keeps a tie (Java's {@code TreeMap.put}: the last put wins). */
    static final TieRule LAST_LISTED = new TieRule(b -> listed(b.size(), true), null);
    /** The smallest socket address keeps a tie (pingora-ketama sorts its points by hash, then address). */
    static final TieRule SMALLEST_ADDRESS = new TieRule(
            b -> ranksOf(b, (x, y) -> b.get(x).address().compareTo(b.get(y).address())), null);

    private final Ranks ranks;
    /** Null for a rule that goes by rank alone. */
    private final Pick pick;

    private TieRule(Ranks ranks, Pick pick) {
        this.ranks = ranks;
        this.pick = pick;
    }

    /**
     * The server whose name sorts first (shorter, then bytewise) keeps a tie: nutcracker sorts a pool's
     * servers by name before it builds the continuum ({@code conf_validate_server}), and glibc's stable
     * qsort keeps equal points in that order, wherever the server is listed.
     */
    static TieRule nameOrder(PointText names) {
        return new TieRule(
                b -> ranksOf(
                        b,
                        Comparator.comparingInt(
                                        (Integer i) -> names.identity(b.get(i)).length())
                                .thenComparing(
                                        i -> names.identity(b.get(i)),
                                        (x, y) -> Arrays.compareUnsigned(
                                                x.getBytes(StandardCharsets.UTF_8),
                                                y.getBytes(StandardCharsets.UTF_8)))),
                null);
    }

    /**
     * grpc-java's: its ring is sorted stably ({@code Collections.sort}) from entries made in the order of
     * its {@code HashMap} of hosts ({@link PointText#hashMapOrder}), and its search finds the first of
     * equal hashes, so the host first in that order keeps a tie; ranked so among the backends that are
     * not {@code down} (a down one makes no entry), the down ones after them.
     */
    static TieRule hashMapOrder(PointText endpoints) {
        return new TieRule(
                b -> {
                    List<Integer> live = new ArrayList<>();
                    for (int i = 0; i < b.size(); i++) {
                        if (!b.get(i).down()) {
                            live.add(i);
                        }
                    }
                    int[] rank = new int[b.size()];
                    int r = 0;
                    for (int k :
                            endpoints.hashMapOrder(live.stream().map(b::get).toList())) {
                        rank[live.get(k)] = r++;
                    }
                    for (int i = 0; i < b.size(); i++) {
                        if (b.get(i).down()) {
                            rank[i] = r++;
                        }
                    }
                    return rank;
                },
                null);
    }

    /**
     * xmemcached's: each point holds a list of the sessions producing it, sorted by their text
     * ({@code sockStr}, {@code String.compareTo}); the pick is {@code list.get((int) (pointHash % list.size()))}.
     * Ranked last listed first, as its {@code TreeMap} puts them, before the pick.
     */
    static TieRule sessionText(PointText sessions) {
        return new TieRule(LAST_LISTED.ranks, (hash, tied) -> {
            List<String> texts = tied.stream().map(sessions::identity).toList();
            List<String> sorted = texts.stream().sorted().toList();
            return texts.indexOf(sorted.get((int) (hash % sorted.size())));
        });
    }

    /** {@return whether equal hashes go by the ranks alone, which views need} */
    boolean byRank() {
        return pick == null;
    }

    /**
     * {@return each backend's rank (index i for backend i, 0 to n-1 each once; lower keeps a shared hash)}
     *
     * @param backends the ring file's backends, in file order
     */
    public int[] ranks(List<BackendRecord> backends) {
        return ranks.of(backends);
    }

    /**
     * For a rule whose pick depends on the hash: in each run of equal hashes of {@code sorted} (points
     * packed with the ranks, in ring order), puts the point of the backend that keeps the hash first.
     * Nothing for a rule that goes by rank.
     *
     * @param sorted   a ring's points, in ring order
     * @param backends the ring file's backends, in file order
     */
    public void settle(PointGenerator.Sorted sorted, List<BackendRecord> backends) {
        if (pick == null) {
            return;
        }
        long[] packed = sorted.points();
        int n = sorted.count();
        for (int i = 0; i < n; ) {
            int j = PointSorter.sameHashEnd(packed, i, n);
            if (j - i > 1) {
                putKeeperFirst(packed, i, j, backends);
            }
            i = j;
        }
    }

    /** In the run {@code packed[from, to)} of one hash: the keeper's point to {@code from}. */
    private void putKeeperFirst(long[] packed, int from, int to, List<BackendRecord> backends) {
        List<Integer> first = new ArrayList<>(); // where each backend of the run has its first point
        for (int q = from; q < to; q++) {
            int b = PointSorter.backend(packed[q]);
            if (first.stream().noneMatch(at -> PointSorter.backend(packed[at]) == b)) {
                first.add(q);
            }
        }
        if (first.size() > 1) {
            first.sort(Comparator.comparingInt(q -> PointSorter.backend(packed[q])));
            List<BackendRecord> inFileOrder = first.stream()
                    .map(q -> backends.get(PointSorter.backend(packed[q])))
                    .toList();
            int w = first.get(pick.of(Integer.toUnsignedLong(PointSorter.hash(packed[from])), inFileOrder));
            long keeper = packed[w];
            packed[w] = packed[from];
            packed[from] = keeper;
        }
    }

    /** Ranks in list order, or reversed. */
    private static int[] listed(int n, boolean reversed) {
        int[] rank = new int[n];
        Arrays.setAll(rank, i -> reversed ? n - 1 - i : i);
        return rank;
    }

    /** The ranks of {@code backends} in the order {@code before} sorts their indexes (a stable sort). */
    private static int[] ranksOf(List<BackendRecord> backends, Comparator<Integer> before) {
        int n = backends.size();
        Integer[] order = new Integer[n];
        Arrays.setAll(order, i -> i);
        Arrays.sort(order, before);
        int[] rank = new int[n];
        for (int r = 0; r < n; r++) {
            rank[order[r]] = r;
        }
        return rank;
    }
}
