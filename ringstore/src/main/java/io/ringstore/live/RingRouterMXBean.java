package io.ringstore.live;

/**
 * What a {@link RingRouter} shows in JMX ({@code jconsole}, {@code jcmd}), registered with the
 * platform MBean server as {@code io.ringstore:type=RingRouter,name="<path>"} while the router is
 * open. Read-only: every attribute is a snapshot.
 */
public interface RingRouterMXBean {
    /** {@return the watched path} */
    String getPath();

    /** {@return the generation serving, unsigned, as text (a u64 at 2^63 or more does not fit a long's sign)} */
    String getGeneration();

    /** {@return when the generation serving started serving, ISO-8601} */
    String getLastSwitch();

    /** {@return the number of switches to a new generation so far} */
    long getSwitches();

    /** {@return why the last file seen was refused; empty when the newest file is serving} */
    String getLastError();

    /** {@return replaced generations still mapped, in their grace period} */
    int getRetiredGenerations();

    /** {@return lookups answered again on the current generation because theirs was unmapped under them} */
    long getLookupRetries();

    /** {@return the version keys leave, as text ({@code v1}, {@code v2:K})} */
    String getOldVersion();

    /** {@return the version keys move to, as text} */
    String getNewVersion();

    /** {@return the rollout policy in force, as text} */
    String getPolicy();

    /** {@return lookups answered by the old version since the router opened (or its counters were reset)} */
    long getOldLookups();

    /** {@return lookups answered by the new version since the router opened (or its counters were reset)} */
    long getNewLookups();
}
