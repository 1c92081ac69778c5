package io.ringstore.state;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * Where a fault on a page of the state file is taken. A file truncated under its mapping makes a
 * read or write of a page past its new end fault (SIGBUS). HotSpot turns that into an {@link
 * InternalError}, but from compiled code it delivers it late, at the thread's next safepoint poll:
 * after the faulting method may have returned to its caller, which a router's code is (measured on
 * JDK 25: 299 of 300 such errors thrown outside the method that faulted, in C1 and C2 code alike; 0 in
 * the interpreter, which checks at once). So every call that reads or writes the mapping ends its
 * {@code try} with {@link #surface()}: a call that cannot be inlined (a method handle read from a
 * volatile field), whose return polls, so that an error pending from the accesses before it is thrown
 * there, inside the {@code try} that turns it into an answer without state (0 of 300 escaped, in the
 * interpreter, C1 and C2). About 2 ns a call.
 *
 * <p>The faulting access itself is skipped by the JVM, so between the fault and {@link #surface()} the
 * code runs on a value that was never read: nothing between them may act on what it read beyond
 * computing an answer that the error then discards (no log line, no loop bounded by it, no write
 * elsewhere chosen by it).
 */
final class MappedFaults {
    private MappedFaults() {}

    /** Read afresh at each call (volatile), so that no compiler can inline the call through it. */
    private static volatile MethodHandle poll;

    static {
        try {
            poll = MethodHandles.lookup().findStatic(MappedFaults.class, "nothing", MethodType.methodType(void.class));
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static void nothing() {}

    /**
     * Throws here the {@link InternalError} of a fault on a mapped page taken since the last safepoint
     * poll of this thread, if there is one; else does nothing.
     */
    static void surface() {
        try {
            poll.invokeExact();
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError(t); // nothing() throws nothing checked
        }
    }
}
