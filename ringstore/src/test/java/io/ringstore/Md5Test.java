package io.ringstore;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.family.KeyHash;
import io.ringstore.internal.hash.Md5;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Tag;
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

    /** The lengths around the block boundaries: one block up to 55, two from 56, three from 120. */
    private static final int[] BOUNDARY_LENGTHS = {
        0, 1, 2, 3, 4, 5, 7, 8, 51, 52, 53, 54, 55, 56, 57, 59, 60, 63, 64, 65, 67, 68, 118, 119, 120, 121, 127, 128,
        129, 183, 184, 191, 192, 193, 247, 248, 255, 256
    };
    /** Characters of one, two, three and four UTF-8 bytes (the last a surrogate pair). */
    private static final String[] NON_ASCII = {"é", "ß", "Ω", "ж", "日本", "東京", "€", "\uFFFD", "😀", "𝄞"};

    /**
     * Two million keys against {@link MessageDigest}, as the four words and as the key hash in every
     * shape a key comes in (an array slice at any offset; heap, read-only and direct buffers of either
     * byte order; heap and native segments): every length from 0 to 200, the lengths around each block
     * boundary, URL-like keys of 20 to 60 bytes, keys of up to 4 KB, and the UTF-8 of strings with
     * non-ASCII characters; random bytes, so bytes of 0x80 and more too.
     */
    @Test
    @Tag("slow") // 2 million keys in 8 shapes, seconds: the full lane runs it
    void agreesWithMessageDigestOnMillionsOfKeysInEveryShape() throws Exception {
        agreesWithMessageDigest(2_000_000, 0x1321);
    }

    /** {@link #agreesWithMessageDigestOnMillionsOfKeysInEveryShape} on fewer keys, for the quick lane. */
    @Test
    void agreesWithMessageDigestInEveryShape() throws Exception {
        agreesWithMessageDigest(100_000, 0x5A17);
    }

    private static void agreesWithMessageDigest(int keys, long seed) throws Exception {
        MessageDigest jdk = MessageDigest.getInstance("MD5");
        SplittableRandom random = new SplittableRandom(seed);
        byte[] digest = new byte[16];
        int[] words = new int[5];
        byte[] buffer = new byte[4096 + 16];
        int[] lengths = new int[257];
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment nativeBlock = arena.allocate(buffer.length + 1);
            ByteBuffer direct = ByteBuffer.allocateDirect(buffer.length);
            for (int i = 0; i < keys; i++) {
                int offset = random.nextInt(8);
                int length = key(i, random, buffer, offset);
                lengths[Math.min(length, 256)]++;
                jdk.update(buffer, offset, length);
                jdk.digest(digest, 0, 16);
                int[] expected = le32Words(digest);
                int word0 = expected[0];

                Arrays.fill(words, 0x5A5A5A5A);
                Md5.words(buffer, offset, length, words);
                if (!Arrays.equals(expected, 0, 4, words, 0, 4) || words[4] != 0x5A5A5A5A) {
                    assertArrayEquals(expected, Arrays.copyOf(words, 4), what(i, buffer, offset, length));
                    assertEquals(0x5A5A5A5A, words[4], what(i, buffer, offset, length) + ": only four words written");
                }
                int[] actual = {
                    Md5.le32(buffer, offset, length),
                    KeyHash.MD5.hash(buffer, offset, length),
                    (int) KeyHash.MD5.hash64(buffer, offset, length),
                    KeyHash.MD5.hash(ByteBuffer.wrap(buffer, offset, length)),
                    KeyHash.MD5.hash(ByteBuffer.wrap(buffer, offset, length).asReadOnlyBuffer()),
                    KeyHash.MD5.hash(directKey(direct, buffer, offset, length, i)),
                    KeyHash.MD5.hash(MemorySegment.ofArray(buffer).asSlice(offset, length)),
                    KeyHash.MD5.hash(nativeKey(nativeBlock, buffer, offset, length)),
                };
                for (int shape = 0; shape < actual.length; shape++) {
                    if (actual[shape] != word0) {
                        assertEquals(
                                word0, actual[shape], what(i, buffer, offset, length) + ", shape " + SHAPES[shape]);
                    }
                }
            }
        }
        for (int length = 0; length <= 256; length++) {
            assertTrue(lengths[length] > 0, "no key of " + length + " bytes");
        }
    }

    private static final String[] SHAPES = {
        "Md5.le32",
        "KeyHash array",
        "KeyHash hash64 array",
        "heap buffer",
        "read-only heap buffer",
        "direct buffer",
        "heap segment",
        "native segment"
    };

    /**
     * Writes key {@code i} at {@code offset} of {@code buffer} and returns its length: every length up to
     * 200 in turn, a boundary length, a URL-like key, the UTF-8 of a string with non-ASCII characters, and
     * one key in 64 of up to 4 KB.
     */
    private static int key(int i, SplittableRandom random, byte[] buffer, int offset) {
        if (i % 64 == 63) {
            return randomBytes(random, buffer, offset, random.nextInt(4097));
        }
        return switch (i % 5) {
            case 0 -> randomBytes(random, buffer, offset, (i / 5) % 201);
            case 1 -> randomBytes(random, buffer, offset, BOUNDARY_LENGTHS[(i / 5) % BOUNDARY_LENGTHS.length]);
            case 2 ->
                utf8(
                        buffer,
                        offset,
                        "/static/" + Long.toString(random.nextLong() >>> random.nextInt(1, 64), 36) + "/img-"
                                + random.nextInt(1_000_000) + ".png?v=" + random.nextInt(100));
            case 3 -> {
                StringBuilder s = new StringBuilder();
                int characters = random.nextInt(1, 70);
                for (int c = 0; c < characters; c++) {
                    s.append(
                            random.nextInt(3) == 0
                                    ? NON_ASCII[random.nextInt(NON_ASCII.length)]
                                    : String.valueOf((char) (' ' + random.nextInt(95))));
                }
                yield utf8(buffer, offset, s.toString());
            }
            default -> randomBytes(random, buffer, offset, random.nextInt(257));
        };
    }

    private static int randomBytes(SplittableRandom random, byte[] buffer, int offset, int length) {
        for (int j = 0; j < length; j += 8) {
            long r = random.nextLong();
            for (int k = j; k < Math.min(length, j + 8); k++) {
                buffer[offset + k] = (byte) (r >>> (8 * (k - j)));
            }
        }
        return length;
    }

    private static int utf8(byte[] buffer, int offset, String s) {
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        System.arraycopy(bytes, 0, buffer, offset, bytes.length);
        return bytes.length;
    }

    /** The key in {@code direct}, between its position and limit, the byte order changing with {@code i}. */
    private static ByteBuffer directKey(ByteBuffer direct, byte[] buffer, int offset, int length, int i) {
        direct.clear().order(i % 2 == 0 ? ByteOrder.BIG_ENDIAN : ByteOrder.LITTLE_ENDIAN);
        direct.put(offset, buffer, offset, length);
        return direct.position(offset).limit(offset + length);
    }

    /** The key in a native segment, one byte further than {@code offset} (another alignment). */
    private static MemorySegment nativeKey(MemorySegment nativeBlock, byte[] buffer, int offset, int length) {
        MemorySegment key = nativeBlock.asSlice(1 + offset, length);
        MemorySegment.copy(buffer, offset, key, ValueLayout.JAVA_BYTE, 0, length);
        return key;
    }

    private static String what(int i, byte[] buffer, int offset, int length) {
        return "key " + i + " of " + length + " bytes at offset " + offset + ": "
                + HexFormat.of().formatHex(buffer, offset, offset + Math.min(length, 80));
    }

    /** spymemcached's rehash text {@code tries + key}: the decimal of any int, then the key. */
    @Test
    void decimalPrefixIsTheDigestOfTheConcatenation() throws Exception {
        MessageDigest jdk = MessageDigest.getInstance("MD5");
        SplittableRandom random = new SplittableRandom(7);
        int[] special = {
            0, 1, 9, 10, 99, 100, 12345, 999_999_999, 1_000_000_000, Integer.MAX_VALUE, -1, -10, Integer.MIN_VALUE
        };
        for (int i = 0; i < 40_000; i++) {
            int n = i < special.length ? special[i] : (i % 3 == 0 ? random.nextInt() : random.nextInt(1000));
            int length = i % 2 == 0 ? (i / 2) % 201 : random.nextInt(300);
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
