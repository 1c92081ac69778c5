package io.ringstore;

import io.ringstore.internal.BackendAccess;
import io.ringstore.internal.ServerAddress;
import io.ringstore.internal.ServerParameters;
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
            public Backend create(
                    int index,
                    ServerAddress address,
                    long weight,
                    Set<String> features,
                    int featureMask,
                    ServerParameters parameters,
                    int line) {
                return new Backend(index, address, weight, features, featureMask, parameters, line);
            }

            @Override
            public int featureMask(Backend backend) {
                return backend.featureMask;
            }

            @Override
            public ServerAddress address(Backend backend) {
                return backend.address;
            }
        });
    }

    private final int index;
    private final ServerAddress address;
    private final long weight;
    private final Set<String> features;
    private final int featureMask;
    private final ServerParameters parameters;
    private final int line;
    /** Made on first use (a one-shot lookup of a 2,048-backend file prints one): racy, a String is safe so. */
    private String upstreamAddress;

    private String socketAddress;

    private Backend(
            int index,
            ServerAddress address,
            long weight,
            Set<String> features,
            int featureMask,
            ServerParameters parameters,
            int line) {
        this.index = index;
        this.address = address;
        this.weight = weight;
        // Most fleets have no features: one shared empty set, not a copy a backend (2,048 of them on open).
        this.features = features.isEmpty() ? Set.of() : Collections.unmodifiableSet(new LinkedHashSet<>(features));
        this.featureMask = featureMask;
        this.parameters = parameters;
        this.line = line;
    }

    /** {@return position in the backend table (and in the backends file): what lookups return} */
    public int index() {
        return index;
    }

    /** {@return the address exactly as written in the backends file (the text nginx hashes)} */
    public String address() {
        return address.text();
    }

    /** {@return weight as written (default 1)} */
    public long weight() {
        return weight;
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
        return parameters.down();
    }

    /**
     * {@return nginx's {@code max_fails=} (default 1; 0: failures are not counted)} From a backends file, and
     * stored in the ring file (flag health, FORMAT.md) when any of the three health settings is not the
     * default: a backend read from a ring file has the backends file's values. It changes no ring.
     */
    public int maxFails() {
        return parameters.maxFails();
    }

    /**
     * {@return nginx's {@code fail_timeout=} in seconds (default 10); stored like {@link #maxFails()}}
     */
    public long failTimeoutSeconds() {
        return parameters.failTimeoutSeconds();
    }

    /**
     * {@return nginx's {@code max_conns=} (default 0: no limit); stored like {@link #maxFails()}}
     */
    public int maxConns() {
        return parameters.maxConns();
    }

    /**
     * {@return the backend's name ({@code # ringstore: name=NAME}), its hashed identity in the families
     * that hash one instead of the address (twemproxy's server name, Envoy's {@code hash_key},
     * spymemcached's host name); null without one. Stored in the ring file}
     */
    public String name() {
        return parameters.name();
    }

    /** {@return the address as nginx writes {@code $upstream_addr}: {@code 127.0.0.1:80}, {@code [::1]:9001}} */
    public String upstreamAddress() {
        String a = upstreamAddress;
        if (a == null) {
            a = address.upstreamAddress();
            upstreamAddress = a;
        }
        return a;
    }

    /** {@return the address as Rust's {@code SocketAddr} prints it (pingora-ketama's answers)} */
    public String socketAddress() {
        String a = socketAddress;
        if (a == null) {
            a = address.socketAddress();
            socketAddress = a;
        }
        return a;
    }

    /** {@return the line of the backends file this came from; 0 when read from a ring file} */
    public int line() {
        return line;
    }

    @Override
    public String toString() {
        return address.text() + " weight=" + weight
                + (features.isEmpty() ? "" : " features=" + String.join(",", features))
                + (parameters.down() ? " down" : "") + (parameters.name() == null ? "" : " name=" + parameters.name());
    }
}
