package io.ringstore.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Where twemproxy put each key: every memcached behind it is flushed, each key is {@code set} through
 * the pool (value: the key's index in decimal), then every memcached is asked directly, with multi-key
 * {@code get}s, for all the keys. A key held by one memcached was sent there; {@link #holders} says how
 * many hold it (1 unless something is wrong), {@link #owner} which one (its index in the list given).
 */
public final class KeyPlacement {
    private final int[] owner;
    private final int[] holders;
    private final int servers;

    private KeyPlacement(int[] owner, int[] holders, int servers) {
        this.owner = owner;
        this.holders = holders;
        this.servers = servers;
    }

    /**
     * Sets {@code keys} through {@code proxy} and finds which of {@code servers} (the memcached
     * processes behind it, in any order) holds each. Fails if a memcached returns a key with a value
     * other than the one set for it.
     */
    public static KeyPlacement find(Twemproxy proxy, List<Memcached> servers, List<byte[]> keys) throws IOException {
        List<MemcachedClient> clients = new ArrayList<>();
        try {
            for (Memcached m : servers) {
                MemcachedClient c = m.client();
                clients.add(c);
                c.flushAll();
            }
            List<byte[]> values = new ArrayList<>(keys.size());
            for (int i = 0; i < keys.size(); i++) {
                values.add(Integer.toString(i).getBytes(StandardCharsets.US_ASCII));
            }
            try (MemcachedClient pool = proxy.client()) {
                pool.setAll(keys, values);
            }
            int[] owner = new int[keys.size()];
            Arrays.fill(owner, -1);
            int[] holders = new int[keys.size()];
            for (int s = 0; s < clients.size(); s++) {
                byte[][] found = clients.get(s).getAll(keys);
                for (int i = 0; i < keys.size(); i++) {
                    if (found[i] == null) {
                        continue;
                    }
                    if (!Arrays.equals(found[i], values.get(i))) {
                        throw new IOException(
                                servers.get(s) + " holds key #" + i + " " + MemcachedClient.printable(keys.get(i))
                                        + " with value " + MemcachedClient.printable(found[i]) + ", set as "
                                        + MemcachedClient.printable(values.get(i)));
                    }
                    if (holders[i]++ == 0) {
                        owner[i] = s;
                    }
                }
            }
            return new KeyPlacement(owner, holders, servers.size());
        } finally {
            for (MemcachedClient c : clients) {
                c.close();
            }
        }
    }

    /** How many keys were placed. */
    public int size() {
        return owner.length;
    }

    /** The index (in the list given to {@link #find}) of the first memcached holding key {@code i}, or -1 if none does. */
    public int owner(int i) {
        return owner[i];
    }

    /** How many memcached hold key {@code i}. */
    public int holders(int i) {
        return holders[i];
    }

    /** Keys held per memcached, in the order given to {@link #find} (a key held twice counts at its first holder only). */
    public int[] keysPerServer() {
        int[] counts = new int[servers];
        for (int o : owner) {
            if (o >= 0) {
                counts[o]++;
            }
        }
        return counts;
    }
}
