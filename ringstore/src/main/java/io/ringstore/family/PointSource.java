package io.ringstore.family;

import io.ringstore.internal.BackendRecord;
import io.ringstore.internal.Crc32;
import io.ringstore.internal.PointGenerator;
import io.ringstore.internal.ServerAddress;
import io.ringstore.internal.hash.HaproxyHash;
import io.ringstore.internal.hash.Md5;
import io.ringstore.internal.hash.Murmur2x64;
import io.ringstore.internal.hash.Xxh64;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Point source: how a family makes a backend's points, in the order its original generates them
 * (which matters to a tie of a backend with itself). One of four kinds:
 *
 * <ul>
 *   <li>a CRC-32 chain from bytes of the address (nginx's {@code server} text, pingora's socket
 *       address): point j + 1 is the CRC-32 of point j fed on from the address's state;</li>
 *   <li>the MD5 of point texts ({@link PointText}), four points a digest (its four little-endian
 *       words): the memcached clients' ketama;</li>
 *   <li>a 64-bit hash of point texts, one point each: Envoy's and gRPC's {@code ring_hash};</li>
 *   <li>the key hash of point texts, one point each: libmemcached's unweighted consistent
 *       distributions.</li>
 *   <li>HAProxy's nodes: {@code full_hash} of a number made from the server's id ({@link HaproxyIds}).</li>
 * </ul>
 *
 * <p>Module-internal in what it takes: the module's backend records, which its clients cannot make.
 * Immutable and thread-safe.
 */
@SuppressWarnings(
        "exports") // takes the module's BackendRecord: its callers are the module's reader, verifier and builder
public abstract class PointSource {
    /** Points per MD5 digest: its four little-endian words. */
    static final int POINTS_PER_DIGEST = 4;
    /** Hashes read at a time by {@link #hashes}: a multiple of 8, as streams take them. */
    private static final int CHUNK = 4096;

    private PointSource() {}

    /** A CRC-32 chain from the bytes {@code input} makes of a backend's address. */
    static PointSource crcChain(Function<ServerAddress, byte[]> input) {
        return new CrcChain(input);
    }

    /** MD5 of each text, four points a digest. */
    static PointSource md5(PointText text) {
        return new HashedTexts(text, null, null, null);
    }

    /** {@link #md5(PointText)}, with the texts of files built before as {@link #legacy}. */
    static PointSource md5(PointText text, PointText legacy) {
        return new HashedTexts(text, null, null, legacy);
    }

    /** XXH64 with seed 0 of each text, one 64-bit point each (Envoy's default, gRPC's). */
    static PointSource xxh64(PointText text) {
        return new HashedTexts(text, (bytes, length) -> Xxh64.hash(bytes, 0, length, 0), null, null);
    }

    /**
     * XXH64 with seed 0 of each text, its sign bit flipped, one 64-bit point each: grpc-java's ring,
     * whose signed order the flip makes the stored unsigned one ({@link KeyHash#XXH64_SIGNED}).
     */
    static PointSource xxh64Signed(PointText text) {
        return new HashedTexts(text, (bytes, length) -> Xxh64.hash(bytes, 0, length, 0) ^ Long.MIN_VALUE, null, null);
    }

    /** libstdc++'s 64-bit MurmurHash2 with {@code seed} of each text, one 64-bit point each. */
    static PointSource murmur2(PointText text, long seed) {
        return new HashedTexts(text, (bytes, length) -> Murmur2x64.hash(bytes, 0, length, seed), null, null);
    }

    /** A 32-bit key hash of each text, one point each (libmemcached's {@code hashkit_digest} of its texts). */
    static PointSource keyHashed(PointText text, KeyHash hash) {
        if (hash.bits() != 32) {
            throw new IllegalArgumentException("a text's key hash is one 32-bit point: bits=" + hash.bits());
        }
        return new HashedTexts(text, null, hash, null);
    }

    /**
     * HAProxy's nodes ({@code chash_init_server_tree}, {@code lb_chash.c}): node j of the server whose id
     * is {@code puid} has the key {@code full_hash(puid * SRV_EWGHT_RANGE + j)}, in C's 32-bit unsigned
     * arithmetic, {@code SRV_EWGHT_RANGE} = 256 × 16 = 4,096; the ids as {@link HaproxyIds} gives them.
     */
    static PointSource haproxyNodes() {
        return new HaproxyNodes();
    }

    /** {@return the width of a point's hash: 32, or 64 for Envoy's and gRPC's rings (FORMAT.md, "64-bit rings")} */
    public abstract int bits();

    /**
     * {@return the points of {@code backends} (backend i for index i) as the point generator reads them}
     *
     * @param backends the ring file's backends, in file order
     */
    public abstract PointGenerator.Source source(List<BackendRecord> backends);

    /**
     * The first {@code count} point hashes of {@code backend}, in the order the original generates them,
     * into {@code out[0..count)}: the unsigned hash of a 32-bit point, all of a 64-bit one. For a backend
     * alone; {@link #hashes(List, int, int, long[])} for one whose points depend on its place in a list
     * (HAProxy's numbering of the servers without an id).
     *
     * @param backend a backend
     * @param count   how many points (its weight rule gives the backend's count)
     * @param out     receives the hashes
     */
    public final void hashes(BackendRecord backend, int count, long[] out) {
        hashes(List.of(backend), 0, count, out);
    }

    /**
     * The first {@code count} point hashes of backend {@code backend} of {@code backends}, in the order
     * the original generates them, into {@code out[0..count)}: the unsigned hash of a 32-bit point, all
     * of a 64-bit one.
     *
     * @param backends the ring file's backends, in file order
     * @param backend  a backend's index there
     * @param count    how many points (its weight rule gives the backend's count)
     * @param out      receives the hashes
     */
    public final void hashes(List<BackendRecord> backends, int backend, int count, long[] out) {
        PointGenerator.Stream stream = source(backends).stream();
        int chunk = Math.clamp((count + 7L) & ~7L, 8, CHUNK);
        int[] high = new int[chunk];
        int[] low = bits() == 64 ? new int[chunk] : null;
        stream.start(backend, count);
        for (int j = 0, k; (k = stream.next(high, low)) > 0; j += k) {
            for (int i = 0; i < k; i++) {
                out[j + i] = low == null
                        ? Integer.toUnsignedLong(high[i])
                        : (long) high[i] << 32 | Integer.toUnsignedLong(low[i]);
            }
        }
    }

    /**
     * {@return the server as the family's point texts name it ({@code cache1}, {@code 10.0.0.1:11212}),
     * for texts made from a backend's identity; null for points from its address bytes (nginx, pingora)}
     * Two backends of one identity have the same points: one of them would get no key.
     *
     * @param backend a backend
     */
    public String identity(BackendRecord backend) {
        return null;
    }

    /**
     * {@return the points files built before made, where they differ from today's for some backends,
     * or null} Dubbo's and Couchbase's IPv6 texts were fixed in issue 30 ({@code [v6]:port}, the
     * JDK's uncompressed text); a ring built before keeps the old points, and {@code verify} takes a
     * ring of either. Lookups read the stored points, so such a file answers as it always did.
     */
    public PointSource legacy() {
        return null;
    }

    /** nginx's and pingora's points: a CRC-32 chain; the builder's fast path ({@link Crc32.PointChain}). */
    static final class CrcChain extends PointSource {
        private final Function<ServerAddress, byte[]> input;

        private CrcChain(Function<ServerAddress, byte[]> input) {
            this.input = input;
        }

        @Override
        public int bits() {
            return 32;
        }

        @Override
        public PointGenerator.Source source(List<BackendRecord> backends) {
            int[] bases = new int[backends.size()];
            for (int b = 0; b < bases.length; b++) {
                bases[b] =
                        Crc32.update(Crc32.INITIAL, input.apply(backends.get(b).address()));
            }
            return new PointGenerator.Source() {
                @Override
                public int backends() {
                    return bases.length;
                }

                @Override
                public int bits() {
                    return 32;
                }

                @Override
                public boolean regenerates() {
                    return true;
                }

                @Override
                public PointGenerator.Stream stream() {
                    Crc32.PointChain chain = new Crc32.PointChain();
                    return new PointGenerator.Stream() {
                        @Override
                        public void start(int backend, int count) {
                            chain.start(bases[backend], count);
                        }

                        @Override
                        public int next(int[] high, int[] low) {
                            return chain.next(high);
                        }
                    };
                }
            };
        }
    }

    /** HAProxy's nodes: cheap to make again, as a CRC-32 chain's are. */
    private static final class HaproxyNodes extends PointSource {
        /** {@code SRV_EWGHT_RANGE}: the node numbers an id owns (256 weight units of 16 nodes). */
        private static final int NODES_PER_ID = 4_096;

        @Override
        public int bits() {
            return 32;
        }

        @Override
        public PointGenerator.Source source(List<BackendRecord> backends) {
            long[] ids = HaproxyIds.of(backends);
            return new PointGenerator.Source() {
                @Override
                public int backends() {
                    return ids.length;
                }

                @Override
                public int bits() {
                    return 32;
                }

                @Override
                public boolean regenerates() {
                    return true;
                }

                @Override
                public PointGenerator.Stream stream() {
                    return new PointGenerator.Stream() {
                        private int base;
                        private int node;
                        private int left;

                        @Override
                        public void start(int backend, int count) {
                            base = (int) ids[backend] * NODES_PER_ID; // C's int product, wrapping
                            node = 0;
                            left = count;
                        }

                        @Override
                        public int next(int[] high, int[] low) {
                            int n = Math.min(left, high.length);
                            for (int i = 0; i < n; i++) {
                                high[i] = HaproxyHash.fullHash(base + node++);
                            }
                            left -= n;
                            return n;
                        }
                    };
                }
            };
        }
    }

    /**
     * The points of hashed point texts: the memcached clients' (MD5, four points a digest), Envoy's and
     * gRPC's (a 64-bit hash, one point a text), libmemcached's unweighted ones (a 32-bit key hash, one
     * point a text).
     */
    private static final class HashedTexts extends PointSource {
        private final PointText text;
        /** The 64-bit hash of a text; null for a 32-bit one. */
        private final Hash64 hash;
        /** The 32-bit key hash of a text; null for MD5, four 32-bit points a digest, or a 64-bit hash. */
        private final KeyHash keyHash;

        /** The texts of files built before, or null ({@link #legacy}). */
        private final PointText legacy;

        private HashedTexts(PointText text, Hash64 hash, KeyHash keyHash, PointText legacy) {
            this.text = text;
            this.hash = hash;
            this.keyHash = keyHash;
            this.legacy = legacy;
        }

        @Override
        public PointSource legacy() {
            return legacy == null ? null : new HashedTexts(legacy, hash, keyHash, null);
        }

        @Override
        public String identity(BackendRecord backend) {
            return text.identity(backend);
        }

        @Override
        public int bits() {
            return hash == null ? 32 : 64;
        }

        @Override
        public PointGenerator.Source source(List<BackendRecord> backends) {
            return new Texts(backends, bits(), () -> {
                if (hash != null) {
                    return new Hash64Stream(backends, text, hash);
                }
                return keyHash != null ? new KeyHashStream(backends, text, keyHash) : new Md5Stream(backends, text);
            });
        }
    }

    /** A 32-bit key hash of each text, one point each. */
    private static final class KeyHashStream extends TextStream {
        private final KeyHash hash;

        KeyHashStream(List<BackendRecord> backends, PointText text, KeyHash hash) {
            super(backends, text);
            this.hash = hash;
        }

        @Override
        int fill(int[] high, int[] low, int n) {
            for (int j = 0; j < n; j++) {
                high[j] = hash.hash(text(), 0, nextText());
            }
            return n;
        }
    }

    /** MD5 of each text, its four little-endian words four points. */
    private static final class Md5Stream extends TextStream {
        private final int[] words = new int[POINTS_PER_DIGEST];

        Md5Stream(List<BackendRecord> backends, PointText text) {
            super(backends, text);
        }

        @Override
        int fill(int[] high, int[] low, int n) {
            for (int j = 0; j < n; ) { // a chunk holds whole digests: its length is a multiple of 4
                int length = nextText();
                Md5.words(text(), 0, length, words);
                for (int w = 0; w < POINTS_PER_DIGEST && j < n; w++) {
                    high[j++] = words[w];
                }
            }
            return n;
        }
    }

    /** A 64-bit hash of each text, one point each: its high word and its low word. */
    private static final class Hash64Stream extends TextStream {
        private final Hash64 hash;

        Hash64Stream(List<BackendRecord> backends, PointText text, Hash64 hash) {
            super(backends, text);
            this.hash = hash;
        }

        @Override
        int fill(int[] high, int[] low, int n) {
            for (int j = 0; j < n; j++) {
                long h = hash.hash(text(), nextText());
                high[j] = (int) (h >>> 32);
                low[j] = (int) h;
            }
            return n;
        }
    }

    /** The points of the texts of some backends: one {@link TextStream} a thread. */
    private record Texts(List<BackendRecord> list, int bits, Supplier<PointGenerator.Stream> streams)
            implements PointGenerator.Source {
        @Override
        public int backends() {
            return list.size();
        }

        @Override
        public PointGenerator.Stream stream() {
            return streams.get();
        }

        @Override
        public boolean regenerates() {
            return false;
        }
    }

    /** A 64-bit hash of the first {@code length} bytes of a text. */
    @FunctionalInterface
    private interface Hash64 {
        long hash(byte[] text, int length);
    }

    /**
     * A backend's texts in order ({@code prefix + i}, i counting the texts), as many as its points need,
     * written into one buffer (the prefix once a backend, then i's digits); {@link #fill} hashes them.
     */
    private abstract static class TextStream implements PointGenerator.Stream {
        /** The digits of an int. */
        private static final int MAX_DIGITS = 10;

        private final List<BackendRecord> backends;
        private final PointText text;
        private byte[] buffer = new byte[64];
        private int prefixLength;
        private int nextText;
        private int left;

        TextStream(List<BackendRecord> backends, PointText text) {
            this.backends = backends;
            this.text = text;
        }

        @Override
        public final void start(int backend, int count) {
            byte[] prefix = text.prefix(backends.get(backend)).getBytes(StandardCharsets.UTF_8);
            if (buffer.length < prefix.length + MAX_DIGITS) {
                buffer = new byte[prefix.length + MAX_DIGITS];
            }
            System.arraycopy(prefix, 0, buffer, 0, prefix.length);
            prefixLength = prefix.length;
            nextText = 0;
            left = count;
        }

        @Override
        public final int next(int[] high, int[] low) {
            int n = Math.min(left, high.length);
            left -= n;
            return n == 0 ? 0 : fill(high, low, n);
        }

        /** Writes the next text ({@code prefix} and its number in decimal) into {@link #text()}; returns its length. */
        final int nextText() {
            int i = nextText++;
            int end = prefixLength + 1;
            for (int rest = i; rest >= 10; rest /= 10) {
                end++;
            }
            for (int at = end - 1; at >= prefixLength; at--, i /= 10) {
                buffer[at] = (byte) ('0' + i % 10);
            }
            return end;
        }

        /** The buffer {@link #nextText()} writes into. */
        final byte[] text() {
            return buffer;
        }

        /** Writes the next {@code n} points' hashes; returns {@code n}. */
        abstract int fill(int[] high, int[] low, int n);
    }
}
