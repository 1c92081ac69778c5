package io.ringstore;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * The current thread's allocated bytes, {@code com.sun.management.ThreadMXBean#getCurrentThreadAllocatedBytes},
 * found reflectively (the library module reads java.management, not jdk.management) and called through
 * an exactly typed method handle, which boxes nothing: reading the counter allocates nothing itself.
 *
 * @param bean           the thread bean
 * @param allocatedBytes its {@code getCurrentThreadAllocatedBytes}, typed {@code (Object)long}
 * @param overhead       bytes two back-to-back readings differ by (0 on HotSpot), subtracted by callers
 */
record AllocationMeter(Object bean, MethodHandle allocatedBytes, long overhead) {
    /** {@return a meter, or null when this JVM counts no allocated bytes per thread} */
    static AllocationMeter create() {
        try {
            Object bean = Class.forName("java.lang.management.ManagementFactory").getMethod("getThreadMXBean").invoke(null);
            Class<?> type = Class.forName("com.sun.management.ThreadMXBean");
            if (!type.isInstance(bean) || !(boolean) type.getMethod("isThreadAllocatedMemoryEnabled").invoke(bean)) {
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

    /** {@return bytes the current thread has allocated since it started} */
    long allocated() {
        try {
            return (long) allocatedBytes.invokeExact(bean);
        } catch (Throwable t) {
            throw new IllegalStateException("reading the allocation counter failed", t);
        }
    }
}
