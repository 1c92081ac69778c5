package io.ringstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.ringstore.family.KeyHash;
import io.ringstore.internal.hash.Murmur2x64;
import io.ringstore.internal.hash.Xxh64;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeSet;
import java.util.zip.CRC32;
import org.junit.jupiter.api.Test;

/**
 * The key hashes of the new ring families against the projects' own published values: twemproxy's
 * twelve (its {@code test_all.c}, libmemcached's table of the same functions, and values of
 * twemproxy's C compiled on x86-64 for keys with bytes of 0x80 and more), XXH64 (xxHash's sanity
 * vectors, Envoy's rings) and Envoy's MurmurHash2; then every hash in every key shape, and the
 * registry of names. {@link Md5Test} covers MD5 itself.
 */
class KeyHashFamiliesTest {
    /** Every key hash the library has. */
    static List<KeyHash> allHashes() {
        List<KeyHash> all =
                new ArrayList<>(List.of(KeyHash.CRC32, KeyHash.CRC32C, KeyHash.MD5, KeyHash.XXH64, KeyHash.MURMUR2_64));
        for (String name : KeyHash.TWEMPROXY_HASHES) {
            if (!all.contains(KeyHash.twemproxy(name))) {
                all.add(KeyHash.twemproxy(name));
            }
        }
        for (String name : KeyHash.LIBMEMCACHED_HASHES) {
            if (!all.contains(KeyHash.libmemcached(name))) {
                all.add(KeyHash.libmemcached(name));
            }
        }
        return all;
    }

    // ---- twemproxy ----------------------------------------------------------------------------

    /** twitter/twemproxy 60aaf855ba2e15e20d0efbe440c8ff071b719580, src/test_all.c test_hash_algorithms (unchanged since tag 0.5.0). */
    @Test
    void twemproxyTestAllApple() {
        Map<String, Long> apple = Map.ofEntries(
                Map.entry("one_at_a_time", 2297466611L),
                Map.entry("md5", 3195025439L),
                Map.entry("crc16", 3662830516L),
                Map.entry("crc32", 10542L),
                Map.entry("crc32a", 2838417488L),
                Map.entry("fnv1_32", 67176023L),
                Map.entry("fnv1a_32", 280767167L),
                Map.entry("fnv1_64", 473199127L),
                Map.entry("fnv1a_64", 1488911807L),
                Map.entry("hsieh", 3738850110L),
                Map.entry("jenkins", 1442444624L),
                Map.entry("murmur", 4142305122L));
        assertEquals(Set.copyOf(KeyHash.TWEMPROXY_HASHES), apple.keySet());
        for (String name : KeyHash.TWEMPROXY_HASHES) {
            assertEquals(apple.get(name), KeyHash.twemproxy(name).hash64(ascii("apple"), 0, 5), name + "(\"apple\")");
        }
    }

    /**
     * awesomized/libmemcached 374774dffe5f1560225648d023a121cb03dd2831, test/fixtures/hashes.hpp: libhashkit's
     * values for 26 keys. twemproxy's test_all.c says its functions give "exactly the same result";
     * for all 26 keys that was checked against twemproxy's own C compiled on x86-64.
     */
    @Test
    void libmemcachedHashResults() {
        for (Object[] row : LIBMEMCACHED_OUTPUT) {
            KeyHash hash = KeyHash.twemproxy((String) row[0]);
            long[] expected = (long[]) row[1];
            for (int i = 0; i < LIBMEMCACHED_INPUT.length; i++) {
                byte[] key = ascii(LIBMEMCACHED_INPUT[i]);
                assertEquals(
                        expected[i], hash.hash64(key, 0, key.length), row[0] + "(\"" + LIBMEMCACHED_INPUT[i] + "\")");
            }
        }
    }

    private static final String[] LIBMEMCACHED_INPUT = {
        "apple", "beat", "carrot", "daikon", "eggplant", "flower",
        "green", "hide", "ick", "jack", "kick", "lime",
        "mushrooms", "nectarine", "orange", "peach", "quant", "ripen",
        "strawberry", "tang", "up", "volumne", "when", "yellow",
        "zip", "The quick brown fox jumps over the lazy dog",
    };
    /** {twemproxy name, libmemcached's 26 values}; libmemcached's "crc" is twemproxy's crc32. */
    private static final Object[][] LIBMEMCACHED_OUTPUT = {
        {
            "one_at_a_time",
            new long[] {
                2297466611L, 3902465932L, 469785835L, 1937308741L, 261917617L, 3785641677L, 1439605128L,
                1649152283L, 1493851484L, 1246520657L, 2221159044L, 1973511823L, 384136800L, 214358653L,
                2379473940L, 4269788650L, 2864377005L, 2638630052L, 427683330L, 990491717L, 1747111141L,
                792127364L, 2599214128L, 2553037199L, 2509838425L, 1369346549L
            }
        },
        {
            "md5",
            new long[] {
                3195025439L, 2556848621L, 3724893440L, 3332385401L, 245758794L, 2550894432L, 121710495L,
                3053817768L, 1250994555L, 1862072655L, 2631955953L, 2951528551L, 1451250070L, 2820856945L,
                2060845566L, 3646985608L, 2138080750L, 217675895L, 2230934345L, 1234361223L, 3968582726L,
                2455685270L, 1293568479L, 199067604L, 2042482093L, 2642219166L
            }
        },
        {
            "crc32",
            new long[] {
                10542L, 22009L, 14526L, 19510L, 19432L, 10199L, 20634L,
                9369L, 11511L, 10362L, 7893L, 31289L, 11313L, 9354L,
                7621L, 30628L, 15218L, 25967L, 2695L, 9380L, 17300L,
                28156L, 9192L, 20484L, 16925L, 16719L
            }
        },
        {
            "fnv1_64",
            new long[] {
                473199127L, 4148981457L, 3971873300L, 3257986707L, 1722477987L, 2991193800L, 4147007314L,
                3633179701L, 1805162104L, 3503289120L, 3395702895L, 3325073042L, 2345265314L, 3340346032L,
                2722964135L, 1173398992L, 2815549194L, 2562818319L, 224996066L, 2680194749L, 3035305390L,
                246890365L, 2395624193L, 4145193337L, 1801941682L, 2112060110L
            }
        },
        {
            "fnv1a_64",
            new long[] {
                1488911807L, 2500855813L, 1510099634L, 1390325195L, 3647689787L, 3241528582L, 1669328060L,
                2604311949L, 734810122L, 1516407546L, 560948863L, 1767346780L, 561034892L, 4156330026L,
                3716417003L, 3475297030L, 1518272172L, 227211583L, 3938128828L, 126112909L, 3043416448L,
                3131561933L, 1328739897L, 2455664041L, 2272238452L, 3890508048L
            }
        },
        {
            "fnv1_32",
            new long[] {
                67176023L, 1190179409L, 2043204404L, 3221866419L, 2567703427L, 3787535528L, 4147287986L,
                3500475733L, 344481048L, 3865235296L, 2181839183L, 119581266L, 510234242L, 4248244304L,
                1362796839L, 103389328L, 1449620010L, 182962511L, 3554262370L, 3206747549L, 1551306158L,
                4127558461L, 1889140833L, 2774173721L, 1180552018L, 3922226286L
            }
        },
        {
            "fnv1a_32",
            new long[] {
                280767167L, 2421315013L, 3072375666L, 855001899L, 459261019L, 3521085446L, 18738364L,
                1625305005L, 2162232970L, 777243802L, 3323728671L, 132336572L, 3654473228L, 260679466L,
                1169454059L, 2698319462L, 1062177260L, 235516991L, 2218399068L, 405302637L, 1128467232L,
                3579622413L, 2138539289L, 96429129L, 2877453236L, 76545936L
            }
        },
        {
            "hsieh",
            new long[] {
                3738850110L, 3636226060L, 3821074029L, 3489929160L, 3485772682L, 80540287L, 1805464076L,
                1895033657L, 409795758L, 979934958L, 3634096985L, 1284445480L, 2265380744L, 707972988L,
                353823508L, 1549198350L, 1327930172L, 9304163L, 4220749037L, 2493964934L, 2777873870L,
                2057831732L, 1510213931L, 2027828987L, 3395453351L, 471461527L
            }
        },
        {
            "murmur",
            new long[] {
                4142305122L, 734504955L, 3802834688L, 4076891445L, 387802650L, 560515427L, 3274673488L,
                3150339524L, 1527441970L, 2728642900L, 3613992239L, 2938419259L, 2321988328L, 1145154116L,
                4038540960L, 2224541613L, 264013145L, 3995512858L, 2400956718L, 2346666219L, 926327338L,
                442757446L, 1770805201L, 560483147L, 3902279934L, 818385189L
            }
        },
        {
            "jenkins",
            new long[] {
                1442444624L, 4253821186L, 1885058256L, 2120131735L, 3261968576L, 3515188778L, 4232909173L,
                4288625128L, 1812047395L, 3689182164L, 2502979932L, 1214050606L, 2415988847L, 1494268927L,
                1025545760L, 3920481083L, 4153263658L, 3824871822L, 3072759809L, 798622255L, 3065432577L,
                1453328165L, 2691550971L, 3408888387L, 2629893356L, 314054204L
            }
        },
    };

    /** crc32a is the whole CRC-32 (IEEE); crc32 is libmemcached's 15 bits of it. */
    @Test
    void twemproxyCrc32aIsTheCrc32AndCrc32ItsBits16To30() {
        SplittableRandom random = new SplittableRandom(32);
        for (int i = 0; i < 2_000; i++) {
            byte[] key = new byte[random.nextInt(80)];
            random.nextBytes(key);
            CRC32 jdk = new CRC32();
            jdk.update(key);
            assertEquals((int) jdk.getValue(), KeyHash.twemproxy("crc32a").hash(key));
            assertEquals(
                    (jdk.getValue() >>> 16) & 0x7fff, KeyHash.twemproxy("crc32").hash64(key, 0, key.length));
        }
    }

    /**
     * twemproxy's crc16 never masks its register, so only its low 16 bits are a CRC: CRC-16/XMODEM,
     * whose check value (of "123456789") is 0x31C3 (CRC RevEng catalogue, CRC-16/XMODEM "check").
     */
    @Test
    void twemproxyCrc16LowHalfIsXmodem() {
        int crc16 = KeyHash.twemproxy("crc16").hash(ascii("123456789"));
        assertEquals(0x31C3, crc16 & 0xFFFF);
        assertNotEquals(0, crc16 >>> 16, "the register's high half is kept, as twemproxy keeps it");
    }

    /**
     * Keys with bytes of 0x80 and more, as twemproxy 0.5.0's src/hashkit (60aaf855ba2e) computes them:
     * built here from that source with gcc 12.2 on x86-64 Linux, where {@code char} is signed
     * ({@code SIGNED}), and again with {@code -funsigned-char}, as on arm64 Linux ({@code UNSIGNED}). In
     * HASH_CODEC order. The two differ for the hashes that read a byte through {@code char}:
     * one_at_a_time, the four FNVs, and hsieh when the third byte of a 3-byte tail is one of them.
     */
    @Test
    void bytesFrom0x80AreSignExtendedWhereTwemproxyReadsThemAsChar() {
        byte[][] keys = {
            {(byte) 0xff},
            "café".getBytes(StandardCharsets.UTF_8),
            {(byte) 0xff, (byte) 0x80, (byte) 0xfe, 'a', 'b', 'c', (byte) 0xc0},
            "日本語".getBytes(StandardCharsets.UTF_8)
        };
        long[][] signed = {
            {
                2925896852L,
                3561969920L,
                7920L,
                32512L,
                4278190080L,
                2046707744L,
                2046707310L,
                4210270944L,
                4193493326L,
                44489640L,
                3679652508L,
                3784723880L
            },
            {
                3650908318L,
                3833532679L,
                4129724007L,
                6317L,
                2561491637L,
                2315714289L,
                3472276361L,
                3598905713L,
                1970454601L,
                3728705621L,
                3658586143L,
                3412207021L
            },
            {
                3660854215L,
                255329539L,
                198630647L,
                31635L,
                4220721750L,
                41252814L,
                721645020L,
                814982222L,
                3637544508L,
                1881327032L,
                3574654558L,
                601464884L
            },
            {
                1387473336L,
                4161409280L,
                1022177780L,
                10251L,
                2819314405L,
                172901459L,
                1734255239L,
                882654707L,
                308035559L,
                103147075L,
                3016819523L,
                3284577748L
            },
        };
        long[][] unsigned = {
            {
                3350335261L,
                3561969920L,
                7920L,
                32512L,
                4278190080L,
                2248259360L,
                2248338286L,
                84696544L,
                2047574606L,
                44489640L,
                3679652508L,
                3784723880L
            },
            {
                2425794034L,
                3833532679L,
                4129724007L,
                6317L,
                2561491637L,
                2315665649L,
                3483635081L,
                1719915377L,
                2821410889L,
                3728705621L,
                3658586143L,
                3412207021L
            },
            {
                1527660868L,
                255329539L,
                198630647L,
                31635L,
                4220721750L,
                1061742030L,
                1947247068L,
                2726375502L,
                3094686268L,
                3740138673L,
                3574654558L,
                601464884L
            },
            {
                2474214859L,
                4161409280L,
                1022177780L,
                10251L,
                2819314405L,
                357890387L,
                3361009543L,
                3447108339L,
                2153733351L,
                103147075L,
                3016819523L,
                3284577748L
            },
        };
        Set<String> readThroughChar = Set.of("one_at_a_time", "fnv1_64", "fnv1a_64", "fnv1_32", "fnv1a_32");
        for (int k = 0; k < keys.length; k++) {
            for (int h = 0; h < KeyHash.TWEMPROXY_HASHES.size(); h++) {
                String name = KeyHash.TWEMPROXY_HASHES.get(h);
                String what = name + " of " + HexFormat.of().formatHex(keys[k]);
                assertEquals(signed[k][h], KeyHash.twemproxy(name).hash64(keys[k], 0, keys[k].length), what);
                boolean differs = readThroughChar.contains(name)
                        || (name.equals("hsieh") && keys[k].length % 4 == 3 && keys[k][keys[k].length - 1] < 0);
                assertEquals(
                        differs,
                        signed[k][h] != unsigned[k][h],
                        what + ": signed and unsigned char differ exactly where the C reads a char");
            }
        }
        // The same rule from the other side: FNV-1a-32 reading bytes unsigned (as the FNV reference does)
        // equals twemproxy's on ASCII keys and differs as soon as a byte is 0x80 or more.
        assertEquals(
                fnv1a32Unsigned(ascii("apple")), KeyHash.twemproxy("fnv1a_32").hash(ascii("apple")));
        byte[] high = {(byte) 0xff, 'a'};
        assertNotEquals(fnv1a32Unsigned(high), KeyHash.twemproxy("fnv1a_32").hash(high));
    }

    private static int fnv1a32Unsigned(byte[] key) {
        int h = 0x811C9DC5;
        for (byte b : key) {
            h = (h ^ (b & 0xFF)) * 0x01000193;
        }
        return h;
    }

    // ---- XXH64 --------------------------------------------------------------------------------

    /**
     * Cyan4973/xxHash b2e9dbb05fb7f45ad662e67969e92c48b9b32247, cli/xsum_sanity_check.c: XSUM_XXH64_testdata
     * ({length, seed, XXH64}) over the buffer of XSUM_fillTestBuffer.
     */
    @Test
    void xxh64SanityVectors() {
        final long prime32 = 2654435761L;
        byte[] buffer = new byte[222];
        long gen = prime32;
        for (int i = 0; i < buffer.length; i++) {
            buffer[i] = (byte) (gen >>> 56);
            gen *= 0x9E3779B185EBCA8DL; // the file's PRIME64, 11400714785074694797 (not XXH64's PRIME64_1)
        }
        long[][] vectors = {
            {0, 0, 0xEF46DB3751D8E999L},
            {0, prime32, 0xAC75FDA2929B17EFL},
            {1, 0, 0xE934A84ADB052768L},
            {1, prime32, 0x5014607643A9B4C3L},
            {4, 0, 0x9136A0DCA57457EEL},
            {14, 0, 0x8282DCC4994E35C8L},
            {14, prime32, 0xC3BD6BF63DEB6DF0L},
            {222, 0, 0xB641AE8CB691C174L},
            {222, prime32, 0x20CB8AB7AE10C14AL},
        };
        for (long[] v : vectors) {
            int length = (int) v[0];
            assertEquals(v[2], Xxh64.hash(buffer, 0, length, v[1]), "XXH64 length " + length + " seed " + v[1]);
            if (v[1] == 0) {
                assertEquals(v[2], KeyHash.XXH64.hash64(buffer, 0, length), "KeyHash.XXH64 length " + length);
            }
        }
    }

    /**
     * envoyproxy/envoy 13e9fdb2d4db3480ff278565a596324951e8dccd,
     * test/extensions/load_balancing_policies/ring_hash/ring_hash_lb_test.cc: the rings printed in
     * {@code Basic}, {@code BasicWithHostname} and {@code UnevenHosts} (XXH64, seed 0), per host. A host
     * with key {@code k} has points XXH64 of {@code k_0}, {@code k_1}, ... (ring_hash_lb.cc).
     */
    @Test
    void envoyXxh64Rings() {
        // Basic: hosts 127.0.0.1:90..95, two points each
        assertPoints(
                KeyHash.XXH64,
                Map.of(
                        "127.0.0.1:94", Set.of(833437586790550860L, Long.parseUnsignedLong("15516499411664133160")),
                        "127.0.0.1:92", Set.of(928266305478181108L, Long.parseUnsignedLong("13444792449719432967")),
                        "127.0.0.1:90", Set.of(1033482794131418490L, Long.parseUnsignedLong("16117243373044804889")),
                        "127.0.0.1:95", Set.of(3551244743356806947L, Long.parseUnsignedLong("13144177310400110813")),
                        "127.0.0.1:93", Set.of(3851675632748031481L, 7700377290971790572L),
                        "127.0.0.1:91", Set.of(5583722120771150861L, 6311230543546372928L)),
                2);
        // BasicWithHostname (and BasicWithMetadataHashKey): hash keys "90".."95"
        assertPoints(
                KeyHash.XXH64,
                Map.of(
                        "95", Set.of(1975508444536362413L, 2376063919839173711L),
                        "93", Set.of(2386806903309390596L, 6803900775736438537L),
                        "94", Set.of(6749904478991551885L, Long.parseUnsignedLong("15364271037087512980")),
                        "92", Set.of(7225015537174310577L, Long.parseUnsignedLong("11282020843382717940")),
                        "90", Set.of(8787465352164086522L, Long.parseUnsignedLong("13776502110861797421")),
                        "91",
                                Set.of(
                                        Long.parseUnsignedLong("13723418369486627818"),
                                        Long.parseUnsignedLong("14338313586354474791"))),
                2);
        // UnevenHosts: :80, :81, then :81, :82
        assertPoints(
                KeyHash.XXH64,
                Map.of(
                        "127.0.0.1:80", Set.of(5454692015285649509L, Long.parseUnsignedLong("13838424394637650569")),
                        "127.0.0.1:81", Set.of(7859399908942313493L, Long.parseUnsignedLong("16064866803292627174")),
                        "127.0.0.1:82", Set.of(8241336090459785962L, Long.parseUnsignedLong("12882406409176325258"))),
                2);
        // HostWeightedTinyRing: weights 1, 2, 3 in a ring of 6; its expected map lists the six points
        // ({hash, host index}), each choosing its own host.
        assertPoints(
                KeyHash.XXH64,
                Map.of(
                        "127.0.0.1:90", Set.of(Long.parseUnsignedLong("16117243373044804889")),
                        "127.0.0.1:91", Set.of(5583722120771150861L, 6311230543546372928L),
                        "127.0.0.1:92",
                                Set.of(
                                        928266305478181108L,
                                        4443673547860492590L,
                                        Long.parseUnsignedLong("13444792449719432967"))),
                0);
        // The text of Basic's first point, which the families' notes quote
        assertEquals(833437586790550860L, KeyHash.XXH64.hash64(ascii("127.0.0.1:94_1"), 0, 14));
    }

    /**
     * envoyproxy/envoy 13e9fdb2d4db3480ff278565a596324951e8dccd, same file, {@code BasicWithMurmur2}:
     * hosts 127.0.0.1:80..85, MurmurHash::murmurHash2 with STD_HASH_SEED.
     */
    @Test
    void envoyMurmur2Ring() {
        assertPoints(
                KeyHash.MURMUR2_64,
                Map.of(
                        "127.0.0.1:85", Set.of(1358027074129602068L, Long.parseUnsignedLong("16375050414328759093")),
                        "127.0.0.1:83", Set.of(4361834613929391114L, Long.parseUnsignedLong("15168472011420622455")),
                        "127.0.0.1:84", Set.of(7224494972555149682L, 8739448859063030639L),
                        "127.0.0.1:81", Set.of(7701421856454313576L, Long.parseUnsignedLong("9887544217113020895")),
                        "127.0.0.1:82", Set.of(8649315368077433379L, Long.parseUnsignedLong("10150910876324007731")),
                        "127.0.0.1:80",
                                Set.of(
                                        Long.parseUnsignedLong("15427156902705414897"),
                                        Long.parseUnsignedLong("17613279263364193813"))),
                2);
        assertEquals(
                1358027074129602068L,
                KeyHash.MURMUR2_64.hash64(ascii("127.0.0.1:85_0"), 0, 14),
                "the first point is :85's text _0");
        assertEquals(1358027074129602068L, Murmur2x64.hash(ascii("127.0.0.1:85_0"), 0, 14, 0xc70f6907L));
    }

    /** Each host's points are the hash of {@code host_i} for i below {@code count} (or as many as listed when 0). */
    private static void assertPoints(KeyHash hash, Map<String, Set<Long>> ring, int count) {
        for (Map.Entry<String, Set<Long>> host : ring.entrySet()) {
            int n = count == 0 ? host.getValue().size() : count;
            Set<Long> points = new TreeSet<>();
            for (int i = 0; i < n; i++) {
                byte[] text = ascii(host.getKey() + "_" + i);
                points.add(hash.hash64(text, 0, text.length));
            }
            assertEquals(new TreeSet<>(host.getValue()), points, hash + " points of " + host.getKey());
        }
    }

    // ---- every hash, every shape ----------------------------------------------------------------

    /**
     * Every hash gives the same value for the same bytes as an array slice, a heap buffer (plain and
     * read-only), a direct buffer (either byte order), a heap segment and a native segment, leaves a
     * buffer's position and limit alone, and its 32- and 64-bit forms agree.
     */
    @Test
    void everyShapeGivesTheSameHash() {
        SplittableRandom random = new SplittableRandom(0x5A);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment nativeBlock = arena.allocate(200);
            for (KeyHash hash : allHashes()) {
                for (int i = 0; i < 400; i++) {
                    int length = i < 120 ? i : random.nextInt(150);
                    int offset = random.nextInt(5);
                    byte[] padded = new byte[offset + length + random.nextInt(3)];
                    random.nextBytes(padded);
                    byte[] exact = Arrays.copyOfRange(padded, offset, offset + length);
                    String what = hash + " length " + length;
                    long expected = hash.hash64(padded, offset, length);
                    int expected32 = hash.hash(padded, offset, length);
                    assertEquals(
                            hash.bits() == 64 ? (int) (expected >>> 32) : (int) expected,
                            expected32,
                            what + ": hash is hash64's " + (hash.bits() == 64 ? "high word" : "value"));
                    if (hash.bits() == 32) {
                        assertEquals(0, expected >>> 32, what + ": a 32-bit hash64 is unsigned");
                    }
                    assertEquals(expected, hash.hash64(exact, 0, length), what + " whole array");
                    assertEquals(expected32, hash.hash(exact), what + " hash(byte[])");
                    ByteBuffer heap = ByteBuffer.wrap(padded, offset, length);
                    assertEquals(expected, hash.hash64(heap), what + " heap buffer");
                    assertEquals(expected32, hash.hash(heap), what + " heap buffer hash");
                    assertEquals(expected, hash.hash64(heap.asReadOnlyBuffer()), what + " read-only heap buffer");
                    assertEquals(expected, hash.hash64(heap.slice()), what + " sliced heap buffer");
                    assertEquals(offset, heap.position(), what + " position kept");
                    assertEquals(offset + length, heap.limit(), what + " limit kept");
                    for (ByteOrder order : new ByteOrder[] {ByteOrder.BIG_ENDIAN, ByteOrder.LITTLE_ENDIAN}) {
                        ByteBuffer direct =
                                ByteBuffer.allocateDirect(padded.length).order(order);
                        direct.put(padded).position(offset).limit(offset + length);
                        assertEquals(expected, hash.hash64(direct), what + " direct buffer " + order);
                        assertEquals(expected32, hash.hash(direct), what + " direct buffer hash " + order);
                        assertEquals(
                                expected,
                                hash.hash64(direct.asReadOnlyBuffer()),
                                what + " read-only direct buffer " + order);
                        assertEquals(offset, direct.position(), what + " position kept");
                        assertEquals(offset + length, direct.limit(), what + " limit kept");
                    }
                    assertEquals(
                            expected,
                            hash.hash64(MemorySegment.ofArray(padded).asSlice(offset, length)),
                            what + " heap segment");
                    assertEquals(
                            expected32,
                            hash.hash(MemorySegment.ofArray(padded).asSlice(offset, length)),
                            what + " heap segment hash");
                    assertEquals(
                            expected,
                            hash.hash64(MemorySegment.ofArray(exact).asReadOnly()),
                            what + " read-only heap segment");
                    MemorySegment nativeKey = nativeBlock.asSlice(1 + offset, length);
                    MemorySegment.copy(exact, 0, nativeKey, ValueLayout.JAVA_BYTE, 0, length);
                    assertEquals(expected, hash.hash64(nativeKey), what + " native segment");
                    assertEquals(expected32, hash.hash(nativeKey), what + " native segment hash");
                }
            }
        }
    }

    @Test
    void slicesOutOfTheArrayAreRefused() {
        for (KeyHash hash : allHashes()) {
            assertThrows(IndexOutOfBoundsException.class, () -> hash.hash(new byte[4], 2, 3), hash.name());
            assertThrows(IndexOutOfBoundsException.class, () -> hash.hash64(new byte[4], -1, 1), hash.name());
        }
    }

    // ---- names ----------------------------------------------------------------------------------

    @Test
    void namesBitsAndTheTwemproxyRegistry() {
        // twemproxy's HASH_CODEC order, src/hashkit/nc_hashkit.h (60aaf855ba2e)
        assertEquals(
                List.of(
                        "one_at_a_time",
                        "md5",
                        "crc16",
                        "crc32",
                        "crc32a",
                        "fnv1_64",
                        "fnv1a_64",
                        "fnv1_32",
                        "fnv1a_32",
                        "hsieh",
                        "murmur",
                        "jenkins"),
                KeyHash.TWEMPROXY_HASHES);
        assertThrows(UnsupportedOperationException.class, () -> KeyHash.TWEMPROXY_HASHES.add("x"));
        assertSame(KeyHash.MD5, KeyHash.twemproxy("md5"));
        assertSame(KeyHash.twemproxy("fnv1a_64"), KeyHash.twemproxy("fnv1a_64"));
        assertEquals("md5", KeyHash.MD5.name());
        assertEquals("xxh64", KeyHash.XXH64.name());
        assertEquals("murmur2", KeyHash.MURMUR2_64.name());
        assertEquals("twemproxy:crc32", KeyHash.twemproxy("crc32").name());
        for (KeyHash hash : allHashes()) {
            boolean wide = hash == KeyHash.XXH64 || hash == KeyHash.MURMUR2_64;
            assertEquals(wide ? 64 : 32, hash.bits(), hash.name());
            assertEquals(hash.name(), hash.toString());
        }
        assertEquals(
                16 + 10,
                allHashes().size(),
                "crc32, crc32c, md5, xxh64, murmur2, twemproxy's 11 others, libmemcached's 10 others");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> KeyHash.twemproxy("fnv1a"));
        assertEquals(
                "unknown twemproxy hash 'fnv1a' (expected one_at_a_time, md5, crc16, crc32, crc32a, fnv1_64, "
                        + "fnv1a_64, fnv1_32, fnv1a_32, hsieh, murmur, jenkins)",
                e.getMessage());
        assertThrows(
                IllegalArgumentException.class,
                () -> KeyHash.twemproxy("MD5"),
                "names are case-sensitive, as twemproxy's");
    }

    @Test
    void theLibmemcachedRegistry() {
        // memcached_hash_t's order, HASHKIT_HASH_DEFAULT to HASHKIT_HASH_MURMUR3 (libhashkit-1.0/types.h)
        assertEquals(
                List.of(
                        "default",
                        "md5",
                        "crc",
                        "fnv1_64",
                        "fnv1a_64",
                        "fnv1_32",
                        "fnv1a_32",
                        "hsieh",
                        "murmur",
                        "jenkins",
                        "murmur3"),
                KeyHash.LIBMEMCACHED_HASHES);
        assertEquals("libmemcached:default", KeyHash.libmemcached("default").name());
        assertSame(
                KeyHash.MD5, KeyHash.libmemcached("md5"), "one MD5: diff compares a libmemcached ring's keys exactly");
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> KeyHash.libmemcached("one_at_a_time"));
        assertEquals(
                "unknown libmemcached hash 'one_at_a_time' (expected default, md5, crc, fnv1_64, fnv1a_64, fnv1_32, "
                        + "fnv1a_32, hsieh, murmur, jenkins, murmur3)",
                e.getMessage());
    }

    static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.ISO_8859_1);
    }
}
