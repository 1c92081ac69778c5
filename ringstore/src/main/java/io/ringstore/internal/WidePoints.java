package io.ringstore.internal;

/**
 * A 64-bit ring's points in ring order (Envoy's and gRPC's rings): unsigned 64-bit hashes, strictly
 * increasing, each with its backend. Made by {@link #sorted}: every generated point, sorted by hash
 * then tie rank, one kept per hash (the lowest rank). What the writer stores as the high words in
 * 6-byte points and the low words after them (FORMAT.md, "64-bit rings").
 *
 * @param hashes   the hashes, first {@code count} entries used
 * @param backends each point's backend
 * @param count    the points kept
 * @param dropped  the points another backend's point of the same hash displaced
 */
public record WidePoints(long[] hashes, int[] backends, int count, long dropped) {
    /**
     * Sorts {@code n} generated points (unsigned hash order, then rank) and keeps the first of each hash.
     * A merge sort of indices: 64-bit rings are small (Envoy caps them at 8,388,608 entries).
     *
     * @param hashes   each point's hash
     * @param ranks    each point's backend's tie rank (lower keeps a shared hash)
     * @param backends each point's backend
     * @param n        how many points
     * @return the ring's points
     */
    public static WidePoints sorted(long[] hashes, int[] ranks, int[] backends, int n) {
        int[] order = new int[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        int[] scratch = new int[n];
        mergeSort(order, scratch, 0, n, hashes, ranks);
        long[] h = new long[n];
        int[] b = new int[n];
        int kept = 0;
        for (int i = 0; i < n; i++) {
            int p = order[i];
            if (kept > 0 && h[kept - 1] == hashes[p]) {
                continue; // a lower rank holds it
            }
            h[kept] = hashes[p];
            b[kept] = backends[p];
            kept++;
        }
        return new WidePoints(h, b, kept, n - kept);
    }

    private static boolean before(int x, int y, long[] hashes, int[] ranks) {
        int c = Long.compareUnsigned(hashes[x], hashes[y]);
        return c < 0 || (c == 0 && (ranks[x] < ranks[y] || (ranks[x] == ranks[y] && x < y)));
    }

    private static void mergeSort(int[] a, int[] tmp, int from, int to, long[] hashes, int[] ranks) {
        if (to - from < 24) {
            for (int i = from + 1; i < to; i++) {
                int v = a[i];
                int j = i - 1;
                while (j >= from && before(v, a[j], hashes, ranks)) {
                    a[j + 1] = a[j];
                    j--;
                }
                a[j + 1] = v;
            }
            return;
        }
        int mid = (from + to) >>> 1;
        mergeSort(a, tmp, from, mid, hashes, ranks);
        mergeSort(a, tmp, mid, to, hashes, ranks);
        if (!before(a[mid], a[mid - 1], hashes, ranks)) {
            return;
        }
        System.arraycopy(a, from, tmp, from, to - from);
        int i = from;
        int j = mid;
        for (int k = from; k < to; k++) {
            if (j >= to || (i < mid && !before(tmp[j], tmp[i], hashes, ranks))) {
                a[k] = tmp[i++];
            } else {
                a[k] = tmp[j++];
            }
        }
    }
}
