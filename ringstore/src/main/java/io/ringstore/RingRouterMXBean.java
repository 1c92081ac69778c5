package io.ringstore;

/**
 * What a {@link RingRouter} shows in JMX ({@code jconsole}, {@code jcmd}), registered with the
 * platform MBean server as {@code io.ringstore:type=RingRouter,name="<path>"} while the router is
 * open. Read-only: every attribute is a snapshot.
 */
public interface RingRouterMXBean {
    /** The watched path. */
    String getPath();

    /** The generation serving, unsigned, as text (a u64 at 2^63 or more does not fit a long's sign). */
    String getGeneration();

    /** When the generation serving started serving, ISO-8601. */
    String getLastSwitch();

    long getSwitches();

    /** Why the last file seen was refused; empty when the newest file is serving. */
    String getLastError();

    /** Replaced generations still mapped, in their grace period. */
    int getRetiredGenerations();

    /** Lookups answered again on the current generation because theirs was unmapped under them. */
    long getLookupRetries();

    String getOldVersion();

    String getNewVersion();

    /** The rollout policy in force, as text. */
    String getPolicy();

    /** Lookups answered by the old version since the router opened (or its counters were reset). */
    long getOldLookups();

    /** Lookups answered by the new version since the router opened (or its counters were reset). */
    long getNewLookups();
}
