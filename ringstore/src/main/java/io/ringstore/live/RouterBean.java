package io.ringstore.live;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import javax.management.InstanceAlreadyExistsException;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import javax.management.StandardMBean;

/**
 * A {@link RingRouter} as its MBean shows it: each attribute a snapshot read through the router's own
 * methods, registered with the platform MBean server while the router is open.
 */
final class RouterBean implements RingRouterMXBean {
    /** The router's logger: the MBean is the router's part. */
    private static final System.Logger LOG = System.getLogger(RingRouter.class.getName());

    private final RingRouter router;

    private RouterBean(RingRouter router) {
        this.router = router;
    }

    /**
     * Registers {@code router}'s MBean under its path's name, or the first free {@code instance=N} when
     * another router watches the same path.
     *
     * @return the name registered
     * @throws IllegalStateException when the platform MBean server refuses it
     */
    static ObjectName register(RingRouter router, Path path) {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        String base = "io.ringstore:type=RingRouter,name=" + ObjectName.quote(path.toString());
        try {
            StandardMBean mbean = new StandardMBean(new RouterBean(router), RingRouterMXBean.class, true);
            for (int instance = 1; ; instance++) {
                ObjectName name = new ObjectName(instance == 1 ? base : base + ",instance=" + instance);
                try {
                    server.registerMBean(mbean, name);
                    return name;
                } catch (InstanceAlreadyExistsException taken) {
                    // another router on the same path: try the next instance number
                }
            }
        } catch (JMException e) {
            throw new IllegalStateException("cannot register the router's MBean for " + path + ": " + e, e);
        }
    }

    /** Unregisters the MBean named {@code name}; one already gone is only logged. */
    static void unregister(ObjectName name) {
        try {
            ManagementFactory.getPlatformMBeanServer().unregisterMBean(name);
        } catch (JMException e) {
            LOG.log(System.Logger.Level.DEBUG, "MBean " + name + " already unregistered", e);
        }
    }

    @Override
    public String getPath() {
        return router.path().toString();
    }

    @Override
    public String getGeneration() {
        return Long.toUnsignedString(router.generation());
    }

    @Override
    public String getLastSwitch() {
        return router.lastSwitch().toString();
    }

    @Override
    public long getSwitches() {
        return router.switches();
    }

    @Override
    public String getLastError() {
        String e = router.lastError();
        return e == null ? "" : e;
    }

    @Override
    public int getRetiredGenerations() {
        return router.retiredGenerations();
    }

    @Override
    public long getLookupRetries() {
        return router.lookupRetries();
    }

    @Override
    public String getOldVersion() {
        return router.oldVersion().toString();
    }

    @Override
    public String getNewVersion() {
        return router.newVersion().toString();
    }

    @Override
    public String getPolicy() {
        return router.policy().toString();
    }

    @Override
    public long getOldLookups() {
        return router.oldLookups();
    }

    @Override
    public long getNewLookups() {
        return router.newLookups();
    }
}
