package io.ringstore;

import io.ringstore.internal.TextLines;
import java.util.List;

/**
 * libketama (last.fm's C library, {@code libketama/ketama.c}), {@code libketama}: a backend's point
 * texts are {@code addr-k} with its address exactly as written (or its name), k from 0, four points an
 * MD5; the share rule K (float share, double product, one rounding to float); the first listed keeps a
 * tie (glibc's stable qsort, then the first of equal points); keys hashed with MD5's first word. A
 * {@code down} backend leaves the ring (it is not in the servers file). libketama keeps an address in
 * 22 bytes with its terminating zero, so a longer text is refused.
 */
final class LibketamaFamily extends ShareRuleFamily {
    /** {@code char addr[22]}: 21 characters and the zero. */
    static final int MAX_TEXT = 21;

    LibketamaFamily() {
        super("libketama", 3, KeyHash.MD5);
    }

    @Override
    String pointText(Backend backend, int i) {
        return identity(backend) + "-" + i;
    }

    private static String identity(Backend backend) {
        return backend.name() != null ? backend.name() : backend.address();
    }

    @Override
    public long[] points(long[] weights, RingVersion version) {
        return shareK(weights);
    }

    @Override
    public int[] tieRanks(List<Backend> backends) {
        return firstListed(backends);
    }

    @Override
    public String addressProblem(Backend backend) {
        String problem = super.addressProblem(backend);
        if (problem == null && identity(backend).length() > MAX_TEXT) {
            return "libketama keeps at most " + MAX_TEXT + " characters of a server (char addr[22]): "
                    + TextLines.quote(identity(backend)) + " has "
                    + identity(backend).length();
        }
        return problem;
    }
}
