package io.ringstore;

/**
 * The C clients whose point counts are shares of the ring's total weight (libketama, libmemcached,
 * twemproxy): a {@code down} server leaves the ring, which is rebuilt from the others (their counts
 * change with it, as auto-eject does), and no feature ring can be a view, since a backend's count
 * depends on every member's weight.
 */
abstract class ShareRuleFamily extends KetamaFamily {
    ShareRuleFamily(String name, int code, KeyHash keyHash) {
        super(name, code, keyHash);
    }

    @Override
    public final boolean downLeavesRing() {
        return true;
    }

    /** A backend's count depends on every member's weight: no views. */
    @Override
    public final boolean viewable() {
        return false;
    }
}
