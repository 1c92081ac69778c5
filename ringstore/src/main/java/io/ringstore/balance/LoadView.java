package io.ringstore.balance;

/**
 * What {@link BoundedLoad} reads about the backends of one pool (the backends one ring draws from):
 * which can take a request and how many requests each has in flight, counted host-wide by whoever
 * implements it (the shared state file, or a plain array in a test).
 *
 * <p>Backends are the ring's backend indexes ({@link io.ringstore.RingStore#backend(int)}). Every method
 * is called on the lookup path, once per request or once per candidate, so an implementation must be
 * a plain read: no locks, no allocation, no I/O. The values may change between calls (other threads
 * and processes place and finish requests meanwhile); {@link BoundedLoad} tolerates that, and
 * tolerates nonsense (negative counts, totals smaller than a backend's count) without failing: they
 * only make the bound looser or tighter for that request.
 */
public interface LoadView {
    /**
     * {@return whether {@code backend} may take a new request: not drained by the operator, not failed}
     *
     * @param backend a backend index of the pool
     */
    boolean available(int backend);

    /**
     * {@return requests in flight on {@code backend} now}
     *
     * @param backend a backend index of the pool
     */
    long inFlight(int backend);

    /** {@return requests in flight now on all backends of the pool: the m of the capacity bound} */
    long totalInFlight();

    /**
     * {@return how many backends of the pool are {@linkplain #available(int) available}: the n of the capacity bound}
     */
    int availableBackends();

    /**
     * Counts one more request in flight to {@code backend}, host-wide, so that {@link #inFlight} and
     * {@link #totalInFlight} read after it include it: the reservation of {@link BoundedLoad#chooseAndAcquire}.
     * A read-only view (the default) refuses.
     *
     * @param backend a backend index of the pool
     * @throws UnsupportedOperationException the view only reads
     */
    default void acquire(int backend) {
        throw new UnsupportedOperationException("a read-only load view: use BoundedLoad.choose, not chooseAndAcquire");
    }

    /**
     * Counts one request fewer in flight to {@code backend}: a reservation {@link #acquire(int)} made that
     * is given back, or a request done. A read-only view (the default) refuses.
     *
     * @param backend a backend index of the pool
     * @throws UnsupportedOperationException the view only reads
     */
    default void release(int backend) {
        throw new UnsupportedOperationException("a read-only load view: use BoundedLoad.choose, not chooseAndAcquire");
    }
}
