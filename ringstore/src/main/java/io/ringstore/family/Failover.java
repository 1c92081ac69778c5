package io.ringstore.family;

import io.ringstore.internal.hash.Md5;
import java.util.function.IntUnaryOperator;

/**
 * How a family's lookup goes on past a backend it cannot use, as its client does, in the terms a
 * ring's lookup runs it: a number of <em>lookups</em> (the key's, then each try's), each walking up to
 * a number of points from where its hash lands. A walk is one lookup walking on from the key's point;
 * a rehash sequence is a lookup per try, one point each, the key hashed again with the try number.
 *
 * <ul>
 *   <li>{@link #WALK}: to the next point of another hash, wrapping (nginx's and pingora's).</li>
 *   <li>{@link #NEXT_ENTRY}: to the next ring entry, wrapping, whoever's it is (Envoy's retry
 *       {@code (index + attempt) % size}, gRPC's and grpc-java's); a ring of one entry per hash makes
 *       it the walk.</li>
 *   <li>A rehash sequence ({@code KetamaIterator}): spymemcached's 7 tries, each adding the MD5 of
 *       {@code try + key}; xmemcached's {@code nextHash}, one try a server.</li>
 * </ul>
 *
 * <p>Immutable and thread-safe; {@link #rehash} allocates nothing.
 */
public final class Failover {
    /** nginx's and pingora's walk. */
    static final Failover WALK = new Failover("walk", null, 0);
    /** Envoy's, gRPC's and grpc-java's next entry (grpc-java's from where its search lands: {@link Landing#NEXT_OR_LAST}). */
    static final Failover NEXT_ENTRY = new Failover("next entry", null, 0);
    /** spymemcached's {@code KetamaIterator}: 7 tries in all, try t hashing {@code (t - 1) + key} ({@code numTries} counts from 0). */
    static final Failover SPYMEMCACHED = new Failover("rehash", backends -> 7, -1);
    /** xmemcached's {@code nextHash}: the first lookup, then one try a server, try t hashing {@code t + key}. */
    static final Failover XMEMCACHED = new Failover("rehash", backends -> backends + 1, 0);

    private final String name;
    /** How many lookups a rehash sequence makes in all, for a file of so many backends; null for a walk. */
    private final IntUnaryOperator tries;
    /** Added to the try number before it prefixes the key. */
    private final int prefixOffset;

    private Failover(String name, IntUnaryOperator tries, int prefixOffset) {
        this.name = name;
        this.tries = tries;
        this.prefixOffset = prefixOffset;
    }

    /**
     * {@return how many lookups a key's failover makes at most: 1 for a walk (it walks on from the
     * key's point), the length of a rehash sequence, the first lookup included}
     *
     * @param backends the backends of the ring's file
     */
    public int lookups(int backends) {
        return tries == null ? 1 : tries.applyAsInt(backends);
    }

    /**
     * {@return how many points each lookup walks: all of {@code maxPoints} for a walk, 1 for a rehash
     * sequence (each try is a lookup afresh, which {@code maxPoints} does not shorten)}
     *
     * @param maxPoints how many points the caller lets a walk look at
     */
    public int pointsPerLookup(int maxPoints) {
        return tries == null ? maxPoints : 1;
    }

    /** {@return whether lookups after the first hash the key's bytes again (a rehash sequence): a caller keeps them} */
    public boolean rehashesKey() {
        return tries != null;
    }

    /**
     * The hash of lookup {@code attempt} (1, 2, …) of a rehash sequence, from the previous lookup's hash
     * and the key.
     *
     * @param previous the previous lookup's hash (the key's hash for lookup 1)
     * @param key      the key's bytes
     * @param offset   where the key starts
     * @param length   the key's length
     * @param attempt  the lookup's number, from 1
     * @return the hash to look up
     * @throws UnsupportedOperationException for a walk, which makes one lookup
     */
    public int rehash(int previous, byte[] key, int offset, int length, int attempt) {
        if (tries == null) {
            throw new UnsupportedOperationException("a " + name + " makes one lookup");
        }
        return previous + Md5.le32WithDecimalPrefix(attempt + prefixOffset, key, offset, length);
    }

    /** {@return its name: {@code walk}, {@code next entry}, {@code rehash}} */
    @Override
    public String toString() {
        return name;
    }
}
