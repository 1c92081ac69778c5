package io.ringstore.family;

import io.ringstore.internal.BackendRecord;
import io.ringstore.internal.ServerAddress;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Point text: the text whose hash gives a backend's point i, its identity (as its client writes the
 * server) then a separator then i ({@code 10.0.1.1:11211-0}). Also what the tie rules that go by a
 * server's identity compare (twemproxy's names, xmemcached's {@code sockStr}): the texts
 * {@code identity + separator + i}, a backend without a port having {@code defaultPort}.
 */
record PointText(Identity identity, int defaultPort, String separator) {
    /** How a client writes a server: from the backend and its port ({@code defaultPort} when none is written). */
    @FunctionalInterface
    interface Identity {
        String of(BackendRecord backend, int port);
    }

    /** {@return how {@code backend}'s client writes it} */
    String identity(BackendRecord backend) {
        return identity.of(backend, backend.address().port(defaultPort));
    }

    /** {@return the text of {@code backend}'s point i without i: its identity and the separator} */
    String prefix(BackendRecord backend) {
        return identity(backend) + separator;
    }

    // ---- the clients' identities ----

    /** The name, or the address exactly as written (libketama's servers file). */
    static String asWritten(BackendRecord b, int port) {
        return b.name() != null ? b.name() : b.address().text();
    }

    /** The name or the IP as written, then {@code :port} unless the port is memcached's (libmemcached). */
    static String hostUnlessMemcachedPort(BackendRecord b, int port) {
        return port == Families.MEMCACHED_PORT ? host(b) : host(b) + ":" + port;
    }

    /** The name or the IP, then {@code :port}, after a {@code /} (libmemcached's spy distribution). */
    static String slashHostPort(BackendRecord b, int port) {
        return "/" + host(b) + ":" + port;
    }

    /**
     * The name or the IP as written (an IPv6 address without brackets, zero runs compressed as
     * written), then {@code :port}: the Dubbo and Couchbase texts of files built before issue 30, which
     * {@code verify} still takes ({@link PointSource#legacy}). IPv4 and named backends as today.
     */
    static String legacyHostPort(BackendRecord b, int port) {
        return host(b) + ":" + port;
    }

    /**
     * Dubbo's {@code URL.getAddress()}: the name, or the IP as written (an IPv6 address in its brackets,
     * as a URL writes it: Dubbo keeps the URL's host as it is, zero runs and brackets included), then
     * {@code :port}: {@code 10.0.0.1:20880}, {@code [2001:db8::a]:20880}.
     */
    static String dubboAddress(BackendRecord b, int port) {
        if (b.name() == null && b.address().isIpv6()) {
            return "[" + b.address().hostText() + "]:" + port;
        }
        return host(b) + ":" + port;
    }

    /**
     * Couchbase's KV authority ({@code HostAndPort}): the name, or the IP, then {@code :port}; an IPv6
     * address as the JDK prints it ({@code 0:0:0:0:0:0:0:1}, {@code 2001:db8:0:0:0:0:0:a}: every group,
     * no zero run), since {@code HostAndPort} takes a host with a {@code :} through
     * {@code InetSocketAddress.getHostString()} (an IPv4-mapped one becoming its IPv4 address).
     */
    static String couchbaseAuthority(BackendRecord b, int port) {
        if (b.name() == null && b.address().isIpv6()) {
            return javaHostAddress(b) + ":" + port;
        }
        return host(b) + ":" + port;
    }

    /**
     * The server's name alone, else {@code host} for memcached's port and {@code host:port} otherwise
     * (nutcracker's {@code conf_add_server}).
     */
    static String twemproxyName(BackendRecord b, int port) {
        if (b.name() != null) {
            return b.name();
        }
        return port == Families.MEMCACHED_PORT
                ? b.address().hostText()
                : b.address().hostText() + ":" + port;
    }

    /**
     * {@code String.valueOf(InetSocketAddress)} of a resolved address, as the Java clients build their
     * texts: {@code /10.0.1.1:11211}, or {@code cache1/10.0.1.1:11211} with a name (the host name the
     * client resolved); IPv6 as this JDK prints it ({@code /[0:0:0:0:0:0:0:1]:11211} since JDK 14).
     */
    static String javaSocketAddress(BackendRecord b, int port) {
        return socketAddress(b, port).toString();
    }

    /** {@return the resolved {@code InetSocketAddress} a Java client holds for {@code backend}: its IP, the name it resolved} */
    static InetSocketAddress socketAddress(BackendRecord b, int port) {
        try {
            return new InetSocketAddress(
                    InetAddress.getByAddress(b.name(), b.address().ipBytes()), port); // no lookup: the bytes are given
        } catch (UnknownHostException e) {
            throw new IllegalStateException("an address of 4 or 16 bytes is always accepted", e);
        }
    }

    /**
     * {@return the indexes of {@code backends} in the order grpc-java's ring builder visits them (a
     * backend without a port having {@code defaultPort}): the
     * iteration order of a {@code new HashMap<EquivalentAddressGroup, Long>()} into which they are put in
     * file order} An {@code EquivalentAddressGroup} of one address hashes as {@code List.of(address)}
     * ({@code 31 + address.hashCode()}); the map is a JDK {@code HashMap} of keys of that hash, so its
     * capacity, its buckets and their order are the JDK's own. Within a bucket the map keeps insertion
     * order (file order); only a bucket of more than 8 hosts in a table of 64 or more becomes a tree,
     * whose order grpc-java's keys' identity hash codes decide (no two runs of grpc-java share it), and
     * here their file order.
     */
    int[] hashMapOrder(List<BackendRecord> backends) {
        record Key(int hash, int index) implements Comparable<Key> {
            @Override
            public int hashCode() {
                return hash;
            }

            @Override
            public int compareTo(Key other) {
                return Integer.compare(index, other.index);
            }
        }
        Map<Key, Boolean> map = new HashMap<>();
        for (int i = 0; i < backends.size(); i++) {
            BackendRecord b = backends.get(i);
            map.put(
                    new Key(
                            List.of(socketAddress(b, b.address().port(defaultPort)))
                                    .hashCode(),
                            i),
                    true);
        }
        return map.keySet().stream().mapToInt(Key::index).toArray();
    }

    /** {@link #javaSocketAddress} without its one leading {@code /} (spymemcached strips it). */
    static String javaSocketAddressStripped(BackendRecord b, int port) {
        String s = javaSocketAddress(b, port);
        return s.startsWith("/") ? s.substring(1) : s;
    }

    /** The IP as Java prints it, then {@code :port} unless memcached's (xmemcached's {@code cwNginxUpstreamConsistent}). */
    static String ipUnlessMemcachedPort(BackendRecord b, int port) {
        String ip = javaHostAddress(b);
        return port == Families.MEMCACHED_PORT ? ip : ip + ":" + port;
    }

    /** The IP as Java's {@code getHostAddress()} prints it: {@code 10.0.0.1}, {@code 0:0:0:0:0:0:0:1}. */
    private static String javaHostAddress(BackendRecord b) {
        try {
            return InetAddress.getByAddress(b.address().ipBytes()).getHostAddress();
        } catch (UnknownHostException e) {
            throw new IllegalStateException("an address of 4 or 16 bytes is always accepted", e);
        }
    }

    /** The name (Envoy's {@code hash_key}), else the address as Envoy prints it ({@code 10.0.0.1:80}, {@code [::1]:80}). */
    static String envoyHost(BackendRecord b, int port) {
        return b.name() != null ? b.name() : b.address().endpointText(ServerAddress.DEFAULT_PORT);
    }

    /** The backend's name, or the IP as written: the host part of the memcached clients' texts. */
    private static String host(BackendRecord b) {
        return b.name() != null ? b.name() : b.address().hostText();
    }
}
