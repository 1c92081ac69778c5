package io.ringstore.testing;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * Seeded, distinct memcached keys: mostly printable ASCII ({@code !}..{@code ~}) of 1..40 bytes, and a
 * share of UTF-8 text (Latin-1, Greek, Cyrillic, CJK, emoji: bytes {@code >= 0x80}, which C hashes
 * reading a signed {@code char} sign-extend) such as {@code ключ-123}.
 */
public final class MemcachedKeys {
    private static final String[] WORDS = {"ключ", "κλειδί", "键", "clé", "Schlüssel", "🔑", "ñ", "日本語", "ÿ"};
    /** Code point ranges for random non-ASCII text: Latin-1 letters, Greek, Cyrillic, CJK, emoji. */
    private static final int[][] RANGES = {
        {0xC0, 0xFF}, {0x391, 0x3C9}, {0x410, 0x44F}, {0x4E00, 0x9FFF}, {0x1F300, 0x1F5FF}
    };

    private MemcachedKeys() {}

    /** {@code count} distinct keys, a fifth of them non-ASCII; the same for the same seed. */
    public static List<byte[]> random(long seed, int count) {
        SplittableRandom random = new SplittableRandom(seed);
        Set<String> keys = new LinkedHashSet<>();
        while (keys.size() < count) {
            keys.add(random.nextInt(5) == 0 ? nonAscii(random) : ascii(random));
        }
        List<byte[]> bytes = new ArrayList<>(count);
        for (String k : keys) {
            byte[] b = k.getBytes(StandardCharsets.UTF_8);
            MemcachedClient.checkKey(b);
            bytes.add(b);
        }
        return bytes;
    }

    /** Whether every byte of {@code key} is below 0x80. */
    public static boolean isAscii(byte[] key) {
        for (byte b : key) {
            if (b < 0) {
                return false;
            }
        }
        return true;
    }

    private static String ascii(SplittableRandom random) {
        StringBuilder s = new StringBuilder();
        int length = 1 + random.nextInt(40);
        for (int i = 0; i < length; i++) {
            s.append((char) random.nextInt('!', '~' + 1));
        }
        return s.toString();
    }

    private static String nonAscii(SplittableRandom random) {
        StringBuilder s = new StringBuilder();
        if (random.nextBoolean()) {
            s.append(WORDS[random.nextInt(WORDS.length)]).append('-').append(random.nextInt(100_000));
        } else {
            int length = 1 + random.nextInt(20);
            for (int i = 0; i < length; i++) {
                int[] range = RANGES[random.nextInt(RANGES.length)];
                s.appendCodePoint(random.nextInt(range[0], range[1] + 1));
                if (random.nextInt(4) == 0) {
                    s.append((char) random.nextInt('!', '~' + 1));
                }
            }
        }
        return s.toString();
    }
}
