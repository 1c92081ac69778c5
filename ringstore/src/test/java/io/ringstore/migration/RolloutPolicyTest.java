package io.ringstore.migration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.ringstore.family.KeyHash;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The rollout policy over a million seeded keys: each key's choice is a function of its bytes and the
 * policy alone, it flips from old to new at exactly one rollout step (so raising the fraction never
 * moves a key back), the migrated share matches the fraction at every 0.01 % step, and a data centre
 * outside the scope always stays on the old version.
 */
class RolloutPolicyTest {
    static final int KEY_COUNT = 1_000_000;
    private static Keys keys;
    private static int[] buckets;

    @BeforeAll
    static void generateKeys() {
        keys = Keys.generate(0x5EED_0001L, KEY_COUNT);
        buckets = keys.buckets();
    }

    // ---- fraction: basis points ----

    @Test
    void everyHundredthOfAPercentIsItsOwnStep() {
        RolloutPolicy scoped = RolloutPolicy.in(0, Set.of("ams"), "ams");
        for (int bp = 0; bp <= RolloutPolicy.FULL; bp++) {
            double percent = bp / 100.0;
            assertEquals(bp, RolloutPolicy.everywhere(percent).basisPoints(), () -> "everywhere(" + percent + ")");
            assertEquals(bp, scoped.withPercent(percent).basisPoints(), () -> "withPercent(" + percent + ")");
            assertEquals(percent, new RolloutPolicy(bp, Set.of(), "").percent());
        }
        assertEquals(0, RolloutPolicy.NONE.basisPoints());
        assertEquals(Set.of("ams"), scoped.withPercent(12.34).scope(), "withPercent keeps the scope");
        assertEquals("ams", scoped.withPercent(12.34).localDataCentre(), "withPercent keeps the local data centre");
    }

    @Test
    void fractionsOutsideZeroToHundredAreRefused() {
        for (double bad :
                new double[] {-0.01, 100.01, -1, 1e9, Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY}) {
            IllegalArgumentException e = assertThrows(
                    IllegalArgumentException.class, () -> RolloutPolicy.everywhere(bad), () -> "percent " + bad);
            assertTrue(e.getMessage().contains("0 to 100"), e::getMessage);
            assertThrows(
                    IllegalArgumentException.class,
                    () -> RolloutPolicy.NONE.withPercent(bad),
                    () -> "withPercent " + bad);
        }
        for (int bad : new int[] {-1, RolloutPolicy.FULL + 1, Integer.MIN_VALUE, Integer.MAX_VALUE}) {
            IllegalArgumentException e =
                    assertThrows(IllegalArgumentException.class, () -> new RolloutPolicy(bad, Set.of(), ""));
            assertTrue(e.getMessage().contains("basisPoints=" + bad), e::getMessage);
        }
    }

    @Test
    void scopeNamesAndLocalDataCentreAreChecked() {
        for (String bad : new String[] {"", "a b", "ams,fra", "x".repeat(65), "é"}) {
            IllegalArgumentException e = assertThrows(
                    IllegalArgumentException.class,
                    () -> RolloutPolicy.in(10, Set.of(bad), "ams"),
                    () -> "name '" + bad + "'");
            assertTrue(e.getMessage().contains("'" + bad + "'"), e::getMessage);
        }
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> RolloutPolicy.in(10, Set.of("ams"), ""));
        assertTrue(e.getMessage().contains("local data centre"), e::getMessage);
        assertTrue(RolloutPolicy.everywhere(10).inScope(), "no scope: everywhere");
        assertTrue(RolloutPolicy.in(10, Set.of(), "fra").inScope(), "empty scope: everywhere");
        assertTrue(RolloutPolicy.in(10, Set.of("ams", "fra"), "fra").inScope());
        assertFalse(RolloutPolicy.in(10, Set.of("ams", "fra"), "lhr").inScope());
        assertFalse(RolloutPolicy.in(10, Set.of("ams"), "AMS").inScope(), "names are compared exactly");
    }

    // ---- the per-key choice ----

    @Test
    void bucketIsAFunctionOfTheKeyBytesAlone() {
        SplittableRandom r = new SplittableRandom(7);
        byte[] scratch = new byte[256];
        for (int i = 0; i < KEY_COUNT; i += 7) {
            int b = buckets[i];
            assertTrue(b >= 0 && b < RolloutPolicy.FULL, () -> "bucket out of range: " + b);
            // The same bytes at another place, surrounded by other bytes, and as an array of their own.
            int at = r.nextInt(scratch.length - keys.length(i) + 1);
            for (int k = 0; k < scratch.length; k++) {
                scratch[k] = (byte) r.nextInt();
            }
            System.arraycopy(keys.bytes, keys.offset(i), scratch, at, keys.length(i));
            byte[] own = keys.copy(i);
            int key = i;
            assertEquals(b, RolloutPolicy.bucket(scratch, at, keys.length(i)), () -> "key " + key + " moved in memory");
            assertEquals(b, RolloutPolicy.bucket(own, 0, own.length), () -> "key " + key + " copied");
        }
    }

    /**
     * A key is migrated exactly when its bucket is below the rollout: it is old at the rollout equal to
     * its bucket and new from one step above. Checked at those two steps for every key, at 16 random
     * steps per key, and in a sweep of 40 ascending fractions along which no key may go back to old.
     * Every fraction here goes through {@link RolloutPolicy#everywhere(double)}, as an operator sets it.
     */
    @Tag("slow") // an exhaustive sweep of several seconds: the full lane runs it
    @Test
    void eachKeyFlipsToNewAtOneStepAndNeverBack() {
        RolloutPolicy[] at = new RolloutPolicy[RolloutPolicy.FULL + 1];
        for (int bp = 0; bp <= RolloutPolicy.FULL; bp++) {
            at[bp] = RolloutPolicy.everywhere(bp / 100.0);
        }
        SplittableRandom r = new SplittableRandom(11);
        int[] sweep = r.ints(38, 0, RolloutPolicy.FULL + 1).toArray();
        sweep = Arrays.copyOf(sweep, 40);
        sweep[38] = 0;
        sweep[39] = RolloutPolicy.FULL;
        Arrays.sort(sweep);
        for (int i = 0; i < KEY_COUNT; i++) {
            int b = buckets[i];
            int key = i;
            if (at[b].migrates(b) || !at[b + 1].migrates(b)) {
                fail("key " + i + " (bucket " + b + ") must flip to new between " + at[b] + " and " + at[b + 1]);
            }
            for (int k = 0; k < 16; k++) {
                int bp = r.nextInt(RolloutPolicy.FULL + 1);
                if (at[bp].migrates(b) != (b < bp)) {
                    fail("key " + i + " (bucket " + b + ") at " + at[bp] + ": migrates=" + at[bp].migrates(b));
                }
            }
            boolean migrated = false;
            for (int bp : sweep) {
                boolean now = at[bp].migrates(keys.bucket(key));
                if (migrated && !now) {
                    fail("key " + i + " went back to the old version when the rollout rose to " + at[bp]);
                }
                migrated = now;
            }
            assertTrue(migrated, "everything is migrated at 100 %");
        }
    }

    /**
     * The migrated share equals the fraction at every one of the 10,001 steps: the buckets of a million
     * keys pass a chi-square test of uniformity over the 10,000 steps, no step is empty (each 0.01 %
     * moves about 100 keys of a million), and the cumulative share stays in a Kolmogorov-Smirnov band.
     */
    @Test
    void migratedShareFollowsTheFractionInSteps() {
        long[] perStep = new long[RolloutPolicy.FULL];
        for (int b : buckets) {
            perStep[b]++;
        }
        double expected = (double) KEY_COUNT / RolloutPolicy.FULL;
        double chi = 0;
        for (long c : perStep) {
            chi += (c - expected) * (c - expected) / expected;
        }
        double critical = chiSquareCritical(RolloutPolicy.FULL - 1, Z_1E4);
        assertTrue(
                chi < critical,
                "buckets not uniform: chi-square " + chi + " >= " + critical + " (df 9999, alpha 1e-4)");
        long min = Arrays.stream(perStep).min().orElseThrow();
        long max = Arrays.stream(perStep).max().orElseThrow();
        // Poisson(100): P(count < 45 or > 165) < 1e-8 per step, so < 1e-4 over all 10,000 steps.
        assertTrue(
                min >= 45 && max <= 165,
                "keys per 0.01 % step from " + min + " to " + max + " (about 100 each expected)");

        // KS band at alpha 0.001: 1.95 / sqrt(n).
        double band = 1.95 / Math.sqrt(KEY_COUNT);
        long migrated = 0;
        for (int bp = 0; bp <= RolloutPolicy.FULL; bp++) {
            double share = (double) migrated / KEY_COUNT;
            double fraction = bp / (double) RolloutPolicy.FULL;
            int step = bp;
            assertTrue(Math.abs(share - fraction) <= band, () -> "at " + step + " bp the migrated share is " + share);
            if (bp < RolloutPolicy.FULL) {
                migrated += perStep[bp];
            }
        }
        assertEquals(KEY_COUNT, migrated);
    }

    /** Each kind of key on its own (sequential paths, random ids, random bytes) is spread as well. */
    @Test
    void everyKindOfKeyIsSpread() {
        for (int kind = 0; kind < Keys.KINDS; kind++) {
            int n = 0;
            int below10 = 0;
            int below001 = 0;
            for (int i = kind; i < KEY_COUNT; i += Keys.KINDS) {
                n++;
                below10 += buckets[i] < 1000 ? 1 : 0;
                below001 += buckets[i] < 1 ? 1 : 0;
            }
            assertWithinBinomial(below10, n, 0.10, "kind " + kind + " at 10 %");
            assertWithinBinomial(below001, n, 0.0001, "kind " + kind + " at 0.01 %");
        }
    }

    @Test
    void outsideTheScopeEveryKeyStaysOld() {
        RolloutPolicy elsewhere = RolloutPolicy.in(100, Set.of("ams", "fra"), "lhr");
        RolloutPolicy here = RolloutPolicy.in(100, Set.of("ams", "fra"), "fra");
        RolloutPolicy hereNone = here.withPercent(0);
        for (int i = 0; i < KEY_COUNT; i++) {
            int b = buckets[i];
            if (elsewhere.migrates(b) || !here.migrates(b) || hereNone.migrates(b)) {
                fail("key " + i + " (bucket " + b + "): out of scope " + elsewhere.migrates(b) + ", in scope at 100 % "
                        + here.migrates(b) + ", in scope at 0 % " + hereNone.migrates(b));
            }
        }
    }

    // ---- shared by the other migration tests ----

    /** z for an upper-tail probability of 1e-4 of the standard normal distribution. */
    static final double Z_1E4 = 3.719;

    /**
     * The upper quantile of the chi-square distribution with {@code df} degrees of freedom at the normal
     * quantile {@code z}, by the Wilson-Hilferty approximation (relative error well under 1 % for df ≥ 10).
     */
    static double chiSquareCritical(int df, double z) {
        double a = 2.0 / (9.0 * df);
        return df * Math.pow(1 - a + z * Math.sqrt(a), 3);
    }

    /** Asserts {@code hits} of {@code n} trials lie within 5 binomial standard deviations of {@code p n} (alpha ≈ 6e-7). */
    static void assertWithinBinomial(long hits, long n, double p, String what) {
        double sd = Math.sqrt(n * p * (1 - p));
        double dev = Math.abs(hits - n * p);
        assertTrue(dev <= 5 * sd + 1, () -> what + ": " + hits + " of " + n + ", expected " + n * p + " ± " + 5 * sd);
    }

    /**
     * A seeded corpus of keys packed in one array, in three kinds by index modulo 3: sequential paths
     * ({@code /item/123}, the case where both CRCs are most regular), random text ids, and random bytes
     * (8 to 40 of them). Practically no key repeats, so the statistical tests see a million distinct keys.
     */
    static final class Keys {
        static final int KINDS = 3;
        final byte[] bytes;
        private final int[] start; // key i is bytes[start[i], start[i + 1])

        private Keys(byte[] bytes, int[] start) {
            this.bytes = bytes;
            this.start = start;
        }

        static Keys generate(long seed, int count) {
            SplittableRandom r = new SplittableRandom(seed);
            byte[] out = new byte[count * 24];
            int[] start = new int[count + 1];
            int at = 0;
            for (int i = 0; i < count; i++) {
                byte[] key = switch (i % KINDS) {
                    case 0 -> ("/item/" + i).getBytes(StandardCharsets.US_ASCII);
                    case 1 -> ("session:" + Long.toHexString(r.nextLong())).getBytes(StandardCharsets.US_ASCII);
                    default -> {
                        byte[] b = new byte[8 + r.nextInt(33)]; // 8 bytes or more: duplicates are negligible
                        r.nextBytes(b);
                        yield b;
                    }
                };
                if (at + key.length > out.length) {
                    out = Arrays.copyOf(out, out.length * 2);
                }
                System.arraycopy(key, 0, out, at, key.length);
                start[i] = at;
                at += key.length;
            }
            start[count] = at;
            return new Keys(Arrays.copyOf(out, at), start);
        }

        int size() {
            return start.length - 1;
        }

        int offset(int i) {
            return start[i];
        }

        int length(int i) {
            return start[i + 1] - start[i];
        }

        byte[] copy(int i) {
            return Arrays.copyOfRange(bytes, start[i], start[i + 1]);
        }

        int bucket(int i) {
            return RolloutPolicy.bucket(bytes, offset(i), length(i));
        }

        int[] buckets() {
            int[] b = new int[size()];
            Arrays.setAll(b, this::bucket);
            return b;
        }

        /** The CRC-32 the rings look the key up by. */
        int ringHash(int i) {
            return KeyHash.CRC32.hash(bytes, offset(i), length(i));
        }
    }
}
