package io.ringstore.internal;

/** Arithmetic over feature masks: a ring of mask m has as members the backends whose mask covers m. */
public final class FeatureMasks {
    private FeatureMasks() {}

    /**
     * Turns per-mask values (index: a backend's own feature mask) into per-ring totals (index: a
     * ring's mask, the sum over every mask that covers it), in place: one feature at a time, so
     * O(F × 2^F) rather than O(backends × 2^F).
     */
    public static void sumOverSupersets(long[] perMask) {
        for (int bit = 1; bit < perMask.length; bit <<= 1) {
            for (int mask = 0; mask < perMask.length; mask++) {
                if ((mask & bit) == 0) {
                    perMask[mask] += perMask[mask | bit];
                }
            }
        }
    }
}
