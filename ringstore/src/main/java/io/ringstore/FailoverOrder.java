package io.ringstore;

import java.util.Arrays;
import java.util.BitSet;
import java.util.NoSuchElementException;
import java.util.PrimitiveIterator;
import java.util.function.IntPredicate;

/**
 * {@link Ring#backends}' failover order, each distinct backend once. A walking family's: the backends
 * of the points from the key's, read as the iterator goes (whether a backend came before is answered by
 * reading the earlier points again, up to {@link Ring#LINEAR_SEEN_POINTS}, then by a bit set). A
 * rehashing family's: the backends its tries land on, recorded when the order is made, this being the
 * predicate the ring's rehash sequence offers each try to (it accepts none).
 */
final class FailoverOrder implements PrimitiveIterator.OfInt, IntPredicate {
    private final Ring ring;
    private final int pointCount;
    /** The key's position for a walk; -1 for an empty ring, and for a rehashing family. */
    private final int start;

    private int walked; // points of the walk read so far, or tries handed out
    private BitSet seen; // backends of those points, once walked > LINEAR_SEEN_POINTS
    /** A rehashing family's distinct tries, in order; null for a walk. */
    private int[] tries;

    private int triesCount;
    private int next;

    FailoverOrder(Ring ring, byte[] key) {
        this.ring = ring;
        this.pointCount = ring.pointCount();
        long hash = ring.hash(key);
        boolean walks = ring.rehashSequence(hash, key, 0, key.length, this, null) == Ring.WALKS;
        this.start = walks ? ring.pointIndex(hash) : -1;
        this.next = advance();
    }

    /** A try of the rehash sequence: recorded if its backend is new; never accepted. */
    @Override
    public boolean test(int b) {
        if (tries == null) {
            tries = new int[8];
        }
        for (int i = 0; i < triesCount; i++) {
            if (tries[i] == b) {
                return false;
            }
        }
        if (triesCount == tries.length) {
            tries = Arrays.copyOf(tries, 2 * triesCount);
        }
        tries[triesCount++] = b;
        return false;
    }

    private int advance() {
        if (tries != null) {
            return walked < triesCount ? tries[walked++] : Ring.NO_BACKEND;
        }
        while (start >= 0 && walked < pointCount) {
            int b = backendAt(walked);
            boolean first = b >= 0 && !seenBefore(b);
            walked++;
            if (seen != null && b >= 0) {
                seen.set(b);
            }
            if (first) {
                return b;
            }
        }
        return Ring.NO_BACKEND;
    }

    private boolean seenBefore(int b) {
        if (seen == null && walked > Ring.LINEAR_SEEN_POINTS) {
            seen = new BitSet(ring.store().backendCount());
            for (int i = 0; i < walked; i++) {
                int earlier = backendAt(i);
                if (earlier >= 0) {
                    seen.set(earlier);
                }
            }
        }
        if (seen != null) {
            return seen.get(b);
        }
        for (int i = 0; i < walked; i++) {
            if (backendAt(i) == b) {
                return true;
            }
        }
        return false;
    }

    /** The backend of the walk's {@code i}-th point from the key's, wrapping. */
    private int backendAt(int i) {
        int p = start + i;
        return ring.pointBackend(p >= pointCount ? p - pointCount : p);
    }

    @Override
    public boolean hasNext() {
        return next >= 0;
    }

    @Override
    public int nextInt() {
        if (next < 0) {
            throw new NoSuchElementException();
        }
        int b = next;
        next = advance();
        return b;
    }
}
