package io.ringstore.migration;

import io.ringstore.family.KeyHash;
import io.ringstore.internal.KeyCrcs;
import io.ringstore.internal.TextLines;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Which requests the new ring version answers during a migration: a rollout fraction in steps of
 * 0.01 % (basis points, 0–10,000), a scope (every data centre, or a named set) and the name of the
 * local data centre. Immutable.
 *
 * <p>A key is migrated when the policy is in scope here and the key's selector bucket (0–9,999,
 * from {@link #bucket(byte[], int, int)}) is below the rollout in basis points. The bucket depends
 * only on the key, so the choice is stable per key and monotone: raising the fraction only moves
 * keys from the old version to the new one. The bucket hash (CRC-32C, then a 32-bit finaliser) is
 * independent of the ring hash (CRC-32), so migrated keys spread over every backend instead of one
 * arc of the hash line.
 *
 * @param basisPoints     rollout in hundredths of a percent: 0 = everything on the old version
 *                        (the rollback), 10,000 = everything on the new one
 * @param scope           data centres the rollout applies to; empty = all
 * @param localDataCentre this process's data centre (may be empty when the scope is all)
 */
public record RolloutPolicy(int basisPoints, Set<String> scope, String localDataCentre) {
    public static final int FULL = 10_000;
    /** Nothing migrated: the old version answers everything. */
    public static final RolloutPolicy NONE = new RolloutPolicy(0, Set.of(), "");

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_.-]{1,64}");

    /**
     * Checks the policy and copies the scope.
     *
     * @throws IllegalArgumentException for basis points outside 0 to {@value #FULL} or a data-centre name that is not a
     *     plain word
     */
    public RolloutPolicy {
        if (basisPoints < 0 || basisPoints > FULL) {
            throw new IllegalArgumentException(
                    "rollout must be 0 to 10000 basis points (0-100 %): basisPoints=" + basisPoints);
        }
        scope = Set.copyOf(Objects.requireNonNull(scope, "scope"));
        for (String dc : scope) {
            if (!NAME.matcher(dc).matches()) {
                throw new IllegalArgumentException("bad data centre name " + TextLines.quote(TextLines.oneLine(dc))
                        + " (1-64 of A-Z a-z 0-9 _ . -)");
            }
        }
        localDataCentre = Objects.requireNonNull(localDataCentre, "localDataCentre");
        if (!localDataCentre.isEmpty() && !NAME.matcher(localDataCentre).matches()) {
            throw new IllegalArgumentException("bad local data centre name "
                    + TextLines.quote(TextLines.oneLine(localDataCentre)) + " (1-64 of A-Z a-z 0-9 _ . -)");
        }
        if (!scope.isEmpty() && localDataCentre.isEmpty()) {
            throw new IllegalArgumentException("a scoped rollout needs the local data centre's name: scope=" + scope);
        }
    }

    /**
     * {@return a rollout of {@code percent} (0–100, rounded to 0.01 %) everywhere}
     *
     * @param percent the share of keys the new version answers, 0 to 100 (rounded to 0.01 %)
     */
    public static RolloutPolicy everywhere(double percent) {
        return new RolloutPolicy(toBasisPoints(percent), Set.of(), "");
    }

    /**
     * {@return a rollout of {@code percent} in the data centres of {@code scope}, seen from {@code local}}
     *
     * @param percent the share of keys the new version answers, 0 to 100 (rounded to 0.01 %)
     * @param scope the data centres the rollout applies in (empty: all)
     * @param local this process's data centre
     */
    public static RolloutPolicy in(double percent, Set<String> scope, String local) {
        return new RolloutPolicy(toBasisPoints(percent), scope, local);
    }

    static int toBasisPoints(double percent) {
        if (!(percent >= 0 && percent <= 100)) {
            throw new IllegalArgumentException("rollout percent must be from 0 to 100: percent=" + percent);
        }
        return (int) Math.round(percent * 100);
    }

    /**
     * {@return the same policy with another rollout fraction}
     *
     * @param percent the share of keys the new version answers, 0 to 100 (rounded to 0.01 %)
     */
    public RolloutPolicy withPercent(double percent) {
        return new RolloutPolicy(toBasisPoints(percent), scope, localDataCentre);
    }

    /** {@return whether the rollout applies in this data centre at all} */
    public boolean inScope() {
        return scope.isEmpty() || scope.contains(localDataCentre);
    }

    /** {@return the rollout as a percentage} */
    public double percent() {
        return basisPoints / 100.0;
    }

    /**
     * {@return whether the new version answers the key whose selector bucket is {@code bucket}}
     *
     * @param bucket a selector bucket, 0 to 9,999 ({@link #bucket(byte[], int, int)})
     */
    public boolean migrates(int bucket) {
        return bucket < basisPoints && inScope();
    }

    /**
     * {@return whether the new version answers {@code key[offset, offset+length)} under this policy} Out of
     * scope, at 0 % (a rollback) and at 100 % the key's bucket is not even computed.
     *
     * @param key the key
     * @param offset where the key starts in {@code key}
     * @param length the key's length in bytes
     */
    public boolean migrates(byte[] key, int offset, int length) {
        return inScope() && (basisPoints == FULL || basisPoints > 0 && bucket(key, offset, length) < basisPoints);
    }

    /**
     * {@return {@link #migrates(byte[], int, int)} for the key's bytes between the buffer's position and limit}
     *
     * @param key the key
     */
    public boolean migrates(ByteBuffer key) {
        return inScope() && (basisPoints == FULL || basisPoints > 0 && bucket(key) < basisPoints);
    }

    /**
     * {@return {@link #migrates(byte[], int, int)} for the key in all of {@code key}}
     *
     * @param key the key
     */
    public boolean migrates(MemorySegment key) {
        return inScope() && (basisPoints == FULL || basisPoints > 0 && bucket(key) < basisPoints);
    }

    /**
     * {@return the key's selector bucket, 0–9,999: a function of the key's bytes alone, independent of its ring
     * hash} Allocates nothing.
     *
     * @param key the key
     * @param offset where the key starts in {@code key}
     * @param length the key's length in bytes
     */
    public static int bucket(byte[] key, int offset, int length) {
        return spread(KeyHash.CRC32C.hash(key, offset, length));
    }

    /**
     * {@return {@link #bucket(byte[], int, int)} of the bytes between the buffer's position and limit, heap or
     * direct; the buffer's position is left alone} Allocates nothing.
     *
     * @param key the key
     */
    public static int bucket(ByteBuffer key) {
        return spread(KeyHash.CRC32C.hash(key));
    }

    /**
     * {@return {@link #bucket(byte[], int, int)} of all of {@code key}'s bytes (heap or native)} Allocates nothing.
     *
     * @param key the key
     */
    public static int bucket(MemorySegment key) {
        return spread(KeyHash.CRC32C.hash(key));
    }

    /** The bucket of a key's CRC-32C ({@code KeyCrcs.bucket}, which a route computing both CRCs at once calls). */
    private static int spread(int h) {
        return KeyCrcs.bucket(h);
    }

    @Override
    public String toString() {
        return String.format(
                Locale.ROOT,
                "%.2f %% in %s (here: %s)",
                percent(),
                scope.isEmpty()
                        ? "all data centres"
                        : String.join(",", scope.stream().sorted().toList()),
                localDataCentre.isEmpty() ? "-" : localDataCentre);
    }
}
