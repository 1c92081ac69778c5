package io.ringstore.live;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * The JFR events of a live ring file: {@code jfr print --events io.ringstore.Switch rec.jfr} shows
 * them. Each is committed only when a recording enables it (they are on by default), so an idle
 * recording costs the watcher nothing; lookups emit none.
 */
final class RingEvents {
    private RingEvents() {}

    @Name("io.ringstore.Switch")
    @Label("Ring Switch")
    @Category("ringstore")
    @Description("A watched ring file switched to a newly published generation")
    @StackTrace(false)
    static final class Switch extends Event {
        @Label("Path")
        String path;

        @Label("From Generation")
        @Description("Unsigned 64-bit")
        long fromGeneration;

        @Label("To Generation")
        @Description("Unsigned 64-bit")
        long toGeneration;

        @Label("Switches")
        @Description("Switches of this watcher so far, this one included")
        long switches;
    }

    @Name("io.ringstore.Refusal")
    @Label("Ring Refusal")
    @Category("ringstore")
    @Description("A file published at a watched path was refused; the generation serving keeps serving")
    @StackTrace(false)
    static final class Refusal extends Event {
        @Label("Path")
        String path;

        @Label("Serving Generation")
        long servingGeneration;

        @Label("Reason")
        String reason;
    }

    @Name("io.ringstore.PolicyChange")
    @Label("Rollout Policy Change")
    @Category("ringstore")
    @Description("A ring router's rollout policy changed")
    @StackTrace(false)
    static final class PolicyChange extends Event {
        @Label("Path")
        String path;

        @Label("Before")
        String before;

        @Label("After")
        String after;

        @Label("Basis Points")
        @Description("The new rollout fraction, 0 to 10000")
        int basisPoints;
    }
}
