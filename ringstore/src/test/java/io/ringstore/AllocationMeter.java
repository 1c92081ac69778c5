package io.ringstore;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.function.IntToLongFunction;

/**
 * The current thread's allocated bytes, {@code com.sun.management.ThreadMXBean#getCurrentThreadAllocatedBytes},
 * found reflectively (the library module reads java.management, not jdk.management) and called through
 * an exactly typed method handle, which boxes nothing: reading the counter allocates nothing itself.
 *
 * @param bean           the thread bean
 * @param allocatedBytes its {@code getCurrentThreadAllocatedBytes}, typed {@code (Object)long}
 * @param overhead       bytes two back-to-back readings differ by (0 on HotSpot), which {@link #leastAllocated} subtracts
 */
record AllocationMeter(Object bean, MethodHandle allocatedBytes, long overhead) {
    /** Where {@link #leastAllocated} puts the calls' results, so that they are not optimised away. */
    private static volatile long sink;

    /** {@return a meter, or null when this JVM counts no allocated bytes per thread} */
    static AllocationMeter create() {
        try {
            Object bean = Class.forName("java.lang.management.ManagementFactory")
                    .getMethod("getThreadMXBean")
                    .invoke(null);
            Class<?> type = Class.forName("com.sun.management.ThreadMXBean");
            if (!type.isInstance(bean)
                    || !(boolean)
                            type.getMethod("isThreadAllocatedMemoryEnabled").invoke(bean)) {
                return null;
            }
            MethodHandle h = MethodHandles.publicLookup()
                    .findVirtual(type, "getCurrentThreadAllocatedBytes", MethodType.methodType(long.class))
                    .asType(MethodType.methodType(long.class, Object.class));
            AllocationMeter probe = new AllocationMeter(bean, h, 0);
            long overhead = Long.MAX_VALUE;
            for (int i = 0; i < 5; i++) {
                long a = probe.allocated();
                long b = probe.allocated();
                overhead = Math.min(overhead, b - a);
            }
            return new AllocationMeter(bean, h, overhead);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    /**
     * {@return the fewest bytes any round of {@code calls} calls of {@code call} allocated, after
     * {@code warmUp} calls; at most {@code rounds} rounds, stopping at the first under {@code limit}}
     * So a call that does not allocate once the JIT has compiled it passes however long compiling takes,
     * and one that allocates fails every round.
     */
    long leastAllocated(IntToLongFunction call, int warmUp, int calls, int rounds, long limit) {
        long sum = 0;
        for (int i = 0; i < warmUp; i++) {
            sum += call.applyAsLong(i);
        }
        long least = Long.MAX_VALUE;
        for (int round = 0; round < rounds && least >= limit; round++) {
            long before = allocated();
            for (int i = 0; i < calls; i++) {
                sum += call.applyAsLong(i);
            }
            long after = allocated();
            least = Math.min(least, after - before - overhead);
        }
        sink += sum;
        return least;
    }

    /** {@return bytes the current thread has allocated since it started} */
    long allocated() {
        try {
            return (long) allocatedBytes.invokeExact(bean);
        } catch (Throwable t) {
            throw new IllegalStateException("reading the allocation counter failed", t);
        }
    }
}
