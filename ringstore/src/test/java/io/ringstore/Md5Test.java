package io.ringstore;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.ringstore.family.KeyHash;
import io.ringstore.internal.hash.Md5;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * {@link Md5}: the RFC's own test suite, the ketama projects' published MD5 values, and
 * {@link MessageDigest} (the JDK's MD5, used here only as the oracle) on random inputs in every key
 * shape and across every padding case.
 */
class Md5Test {
    /** RFC 1321, appendix A.5 ("Test suite"): MD5 of each string, hex. */
    private static final String[][] RFC_1321_SUITE = {
        {"", "d41d8cd98f00b204e9800998ecf8427e"},
        {"a", "0cc175b9c0f1b6a831c399e269772661"},
        {"abc", "900150983cd24fb0d6963f7d28e17f72"},
        {"message digest", "f96b697d7cb7938d525a2f31aaf161d0"},
        {"abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"},
        {"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", "d174ab98d277d9f5a5611c2c9f419d9f"},
        {
            "12345678901234567890123456789012345678901234567890123456789012345678901234567890",
            "57edf4a22be3c955ac49da2e2107b67a"
        },
    };

    @Test
    void rfc1321TestSuite() {
        for (String[] c : RFC_1321_SUITE) {
            byte[] in = ascii(c[0]);
            int[] words = new int[4];
            Md5.words(in, 0, in.length, words);
            assertEquals(c[1], hex(words), "MD5 (\"" + c[0] + "\")");
            assertEquals(words[0], Md5.le32(in, 0, in.length), "word 0 of MD5 (\"" + c[0] + "\")");
        }
    }

    /**
     * The ketama projects' MD5 values: key hashes ({@code LE32(md5(key), 0)}) and point words
     * ({@code LE32(md5(text), j)}).
     */
    @Test
    void ketamaProjectsVectors() {
        // RJ/ketama 18cf9a7717dad0d8106a5205900a17617043fe2c, python_ketama/tests.py test_hashi
        assertEquals(3446378249L, Integer.toUnsignedLong(KeyHash.MD5.hash(ascii("test"))));
        // twitter/twemproxy 60aaf855ba2e15e20d0efbe440c8ff071b719580 (= 0.5.0 here), src/test_all.c:
        // hash_md5("apple"), ketama_hash("server1-8", 0) and ketama_hash("server1-8", 3)
        assertEquals(3195025439L, Integer.toUnsignedLong(KeyHash.MD5.hash(ascii("apple"))));
        int[] words = new int[4];
        byte[] server = ascii("server1-8");
        Md5.words(server, 0, server.length, words);
        assertEquals(3853726576L, Integer.toUnsignedLong(words[0]));
        assertEquals(2667054752L, Integer.toUnsignedLong(words[3]));
        // awesomized/libmemcached 374774dffe5f1560225648d023a121cb03dd2831, test/tests/memcached/ketama.cpp:
        // "VDEAAAAA hashes to fffcd1b5"
        assertEquals(0xfffcd1b5, KeyHash.MD5.hash(ascii("VDEAAAAA")));
        // same commit, test/fixtures/ketama.hpp ketama_test_cases: {key, hash1} (hash1 the MD5 key hash)
        Object[][] fixture = {
            {"SVa_]_V41)", 443691461L}, {"*/Z;?V(.\\8", 1422915503L}, {"30C1*Z*S/_", 1473165754L},
            {"ERR:EC58G>", 2148406511L}, {"1I=cTMNTKF", 2882686667L}, {"]VG<`I*Z8)", 1103544263L},
            {"UUTC`-V159", 3716288206L}, {"@7RU6C6T+Z", 3862737685L}, {"/XLN0@+36;", 1623269830L},
        };
        for (Object[] f : fixture) {
            assertEquals((long) f[1], Integer.toUnsignedLong(KeyHash.MD5.hash(ascii((String) f[0]))), (String) f[0]);
        }
    }

    /**
     * 10,000 random inputs of 0..300 bytes (every padding case: one or two final blocks, the length
     * word in either) against {@link MessageDigest}, as words and as key hashes in every shape.
     */
    @Test
    void agreesWithMessageDigestOnRandomInputsInEveryShape() throws Exception {
        MessageDigest jdk = MessageDigest.getInstance("MD5");
        SplittableRandom random = new SplittableRandom(0x1321);
        int[] words = new int[5];
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment nativeBlock = arena.allocate(320);
            ByteBuffer direct = ByteBuffer.allocateDirect(320);
            for (int i = 0; i < 10_000; i++) {
                int length = i <= 300 ? i : random.nextInt(301);
                int offset = random.nextInt(8);
                byte[] padded = new byte[offset + length + random.nextInt(4)];
                random.nextBytes(padded);
                byte[] key = Arrays.copyOfRange(padded, offset, offset + length);
                byte[] expected = jdk.digest(key);
                int[] expectedWords = le32Words(expected);
                String what = "length " + length + " offset " + offset;

                Arrays.fill(words, 0x5A5A5A5A);
                Md5.words(padded, offset, length, words);
                assertArrayEquals(expectedWords, Arrays.copyOf(words, 4), what);
                assertEquals(0x5A5A5A5A, words[4], what + ": only four words written");

                int word0 = expectedWords[0];
                assertEquals(word0, Md5.le32(padded, offset, length), what + " array");
                assertEquals(word0, KeyHash.MD5.hash(padded, offset, length), what + " KeyHash array");
                assertEquals(
                        Integer.toUnsignedLong(word0),
                        KeyHash.MD5.hash64(padded, offset, length),
                        what + " KeyHash hash64");
                ByteBuffer heap = ByteBuffer.wrap(padded, offset, length);
                assertEquals(word0, KeyHash.MD5.hash(heap), what + " heap buffer");
                assertEquals(word0, KeyHash.MD5.hash(heap.asReadOnlyBuffer()), what + " read-only heap buffer");
                assertEquals(offset, heap.position(), what + " position kept");
                direct.clear().order(i % 2 == 0 ? ByteOrder.BIG_ENDIAN : ByteOrder.LITTLE_ENDIAN);
                direct.put(padded).position(offset).limit(offset + length);
                assertEquals(word0, KeyHash.MD5.hash(direct), what + " direct buffer " + direct.order());
                assertEquals(offset, direct.position(), what + " direct position kept");
                assertEquals(
                        word0,
                        KeyHash.MD5.hash(MemorySegment.ofArray(padded).asSlice(offset, length)),
                        what + " heap segment");
                MemorySegment nativeKey = nativeBlock.asSlice(1 + offset, length);
                MemorySegment.copy(key, 0, nativeKey, java.lang.foreign.ValueLayout.JAVA_BYTE, 0, length);
                assertEquals(word0, KeyHash.MD5.hash(nativeKey), what + " native segment");
            }
        }
    }

    /** spymemcached's rehash text {@code tries + key}: the decimal of any int, then the key. */
    @Test
    void decimalPrefixIsTheDigestOfTheConcatenation() throws Exception {
        MessageDigest jdk = MessageDigest.getInstance("MD5");
        SplittableRandom random = new SplittableRandom(7);
        int[] special = {
            0, 1, 9, 10, 99, 100, 12345, 999_999_999, 1_000_000_000, Integer.MAX_VALUE, -1, -10, Integer.MIN_VALUE
        };
        for (int i = 0; i < 3_000; i++) {
            int n = i < special.length ? special[i] : (i % 3 == 0 ? random.nextInt() : random.nextInt(1000));
            int length = random.nextInt(140);
            byte[] padded = new byte[length + 4];
            random.nextBytes(padded);
            byte[] key = Arrays.copyOfRange(padded, 2, 2 + length);
            byte[] text = concat(ascii(Integer.toString(n)), key);
            int expected = le32Words(jdk.digest(text))[0];
            assertEquals(expected, Md5.le32WithDecimalPrefix(n, padded, 2, length), "n " + n + " length " + length);
        }
        // "0dustin" through "6dustin", spymemcached's seven tries at key "dustin", spelled out
        for (int tries = 0; tries < 7; tries++) {
            assertEquals(
                    Md5.le32(ascii(tries + "dustin"), 0, 7), Md5.le32WithDecimalPrefix(tries, ascii("dustin"), 0, 6));
        }
    }

    @Test
    void slicesOutOfTheArrayAreRefused() {
        byte[] key = new byte[10];
        assertThrows(IndexOutOfBoundsException.class, () -> Md5.le32(key, 5, 6));
        assertThrows(IndexOutOfBoundsException.class, () -> Md5.le32(key, -1, 2));
        assertThrows(IndexOutOfBoundsException.class, () -> Md5.words(key, 0, 10, new int[3]));
        assertThrows(IndexOutOfBoundsException.class, () -> Md5.le32WithDecimalPrefix(3, key, 0, 11));
    }

    static int[] le32Words(byte[] digest) {
        ByteBuffer b = ByteBuffer.wrap(digest).order(ByteOrder.LITTLE_ENDIAN);
        return new int[] {b.getInt(0), b.getInt(4), b.getInt(8), b.getInt(12)};
    }

    private static String hex(int[] words) {
        ByteBuffer b = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN);
        for (int w : words) {
            b.putInt(w);
        }
        return HexFormat.of().formatHex(b.array());
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.ISO_8859_1);
    }
}
