package io.ringstore;

import io.ringstore.family.RingFamily;
import io.ringstore.internal.BackendAccess;
import io.ringstore.internal.BackendRecord;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * One backend of a ring file or backends file. Immutable.
 */
public final class Backend {
    static {
        BackendAccess.register(new BackendAccess.Operations() {
            @Override
            public Backend create(int index, BackendRecord record, Set<String> features, int line) {
                return new Backend(index, record, features, line);
            }

            @Override
            public BackendRecord record(Backend backend) {
                return backend.record;
            }
        });
    }

    private final int index;
    /** Address, weight, feature mask, down flag, name and health settings: what the file stores and the families read. */
    private final BackendRecord record;

    private final Set<String> features;
    private final int line;
    /** Made on first use (a one-shot lookup of a 2,048-backend file prints one): racy, a String is safe so. */
    private String upstreamAddress;

    private String socketAddress;

    private Backend(int index, BackendRecord record, Set<String> features, int line) {
        this.index = index;
        this.record = record;
        // Most fleets have no features: one shared empty set, not a copy a backend (2,048 of them on open).
        this.features = features.isEmpty() ? Set.of() : Collections.unmodifiableSet(new LinkedHashSet<>(features));
        this.line = line;
    }

    /** {@return position in the backend table (and in the backends file): what lookups return} */
    public int index() {
        return index;
    }

    /** {@return the address exactly as written in the backends file (the text nginx hashes)} */
    public String address() {
        return record.address().text();
    }

    /** {@return weight as written (default 1)} */
    public long weight() {
        return record.weight();
    }

    /** {@return the features this server has, as the backends file lists them; unmodifiable} */
    public Set<String> features() {
        return features;
    }

    /**
     * Marked {@code down} (nginx's {@code server ... down}): it keeps its points in every ring, and
     * failover ({@link Ring#select}) skips it, as nginx does. Stored in the ring file.
     *
     * @return whether the server is marked {@code down}
     */
    public boolean down() {
        return record.parameters().down();
    }

    /**
     * {@return nginx's {@code max_fails=} (default 1; 0: failures are not counted)} From a backends file, and
     * stored in the ring file (flag health, FORMAT.md) when any of the three health settings is not the
     * default: a backend read from a ring file has the backends file's values. It changes no ring.
     */
    public int maxFails() {
        return record.parameters().maxFails();
    }

    /**
     * {@return nginx's {@code fail_timeout=} in seconds (default 10); stored like {@link #maxFails()}}
     */
    public long failTimeoutSeconds() {
        return record.parameters().failTimeoutSeconds();
    }

    /**
     * {@return nginx's {@code max_conns=} (default 0: no limit); stored like {@link #maxFails()}}
     */
    public int maxConns() {
        return record.parameters().maxConns();
    }

    /**
     * {@return the backend's name ({@code # ringstore: name=NAME}), its hashed identity in the families
     * that hash one instead of the address (twemproxy's server name, Envoy's {@code hash_key},
     * spymemcached's host name); null without one. Stored in the ring file}
     */
    public String name() {
        return record.parameters().name();
    }

    /** {@return the address as nginx writes {@code $upstream_addr}: {@code 127.0.0.1:80}, {@code [::1]:9001}} */
    public String upstreamAddress() {
        String a = upstreamAddress;
        if (a == null) {
            a = record.address().upstreamAddress();
            upstreamAddress = a;
        }
        return a;
    }

    /** {@return the address as Rust's {@code SocketAddr} prints it (pingora-ketama's answers)} */
    public String socketAddress() {
        String a = socketAddress;
        if (a == null) {
            a = record.address().socketAddress();
            socketAddress = a;
        }
        return a;
    }

    /**
     * {@return this backend as {@code family}'s original prints the backend it chose: nginx's
     * {@code $upstream_addr}, Rust's {@code SocketAddr} for pingora, {@code ip:port} for the memcached
     * clients and Envoy}
     *
     * @param family a ring family
     */
    public String answer(RingFamily family) {
        return family.addresses().answer(record);
    }

    /** {@return the line of the backends file this came from; 0 when read from a ring file} */
    public int line() {
        return line;
    }

    @Override
    public String toString() {
        return record.address().text() + " weight=" + record.weight()
                + (features.isEmpty() ? "" : " features=" + String.join(",", features))
                + (record.parameters().down() ? " down" : "")
                + (record.parameters().name() == null
                        ? ""
                        : " name=" + record.parameters().name());
    }
}
