package io.ringstore.bench;

import io.ringstore.family.KeyHash;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * ringstore's MD5 against the JDK's and against the floor MD5's chain allows on this machine, over
 * {@value FamilyRings#KEY_COUNT} URL-like keys of 20 to 60 bytes, one thread:
 *
 * <ul>
 *   <li>{@code ringstore}: {@link KeyHash#MD5}'s hash of the key, word 0 of its digest, as the MD5
 *       families look a key up;
 *   <li>{@code messageDigest}: a reused {@link MessageDigest} ({@code update}, then {@code digest} into
 *       a reused array), word 0 read from it: the JDK's MD5, whose block function is an assembly
 *       intrinsic on x86-64;
 *   <li>{@code floor}: the 64 steps of one MD5 block with nothing else, in dependency order (what is known
 *       early added first, the newest value last, the shortest F of each round; {@link Md5Floor}),
 *       started from a value that changes each call: the chain of dependent operations every MD5 of a
 *       key of up to 55 bytes waits for;
 *   <li>{@code floorPerKey}: that chain once for each block of the key's MD5, the second started from
 *       the first's result, as an MD5's blocks are: a key of 56 to 60 bytes takes two blocks, so over
 *       these keys the floor is about 1.12 chains. ringstore's MD5 is measured against this one.
 * </ul>
 * The setup checks that {@code ringstore} and {@code messageDigest} answer every key alike.
 *
 * <pre>
 * java -jar bench/target/benchmarks.jar Md5Benchmark -f 1 -wi 3 -i 5 -w 1s -r 1s
 * </pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class Md5Benchmark {
    /** The keys and a reused {@link MessageDigest}. */
    @State(Scope.Thread)
    public static class Data {
        byte[][] keys;
        int mask;
        MessageDigest md5;
        final byte[] digest = new byte[16];

        @Setup(Level.Trial)
        public void setUp() throws NoSuchAlgorithmException {
            keys = FamilyRings.keys();
            mask = keys.length - 1;
            md5 = MessageDigest.getInstance("MD5");
            for (byte[] key : keys) {
                if (KeyHash.MD5.hash(key) != jdk(this, key)) {
                    throw new IllegalStateException(
                            "ringstore's MD5 and the JDK's differ on a key of " + key.length + " bytes");
                }
            }
        }
    }

    @Benchmark
    public int ringstore(Data data, KeyCursor cursor) {
        return KeyHash.MD5.hash(data.keys[cursor.next(data.mask)]);
    }

    @Benchmark
    public int messageDigest(Data data, KeyCursor cursor) {
        return jdk(data, data.keys[cursor.next(data.mask)]);
    }

    @Benchmark
    public int floor(KeyCursor cursor) {
        return Md5Floor.chain(cursor.next(0xFFFF));
    }

    @Benchmark
    public int floorPerKey(Data data, KeyCursor cursor) {
        int at = cursor.next(data.mask);
        int h = Md5Floor.chain(at);
        // A message of 56 bytes or more, with 0x80 and the 8-byte length, needs a second block.
        return data.keys[at].length < 56 ? h : Md5Floor.chain(h);
    }

    private static int jdk(Data data, byte[] key) {
        MessageDigest md5 = data.md5;
        md5.update(key);
        try {
            md5.digest(data.digest, 0, 16);
        } catch (java.security.DigestException e) {
            throw new IllegalStateException(e);
        }
        byte[] d = data.digest;
        return (d[0] & 0xFF) | (d[1] & 0xFF) << 8 | (d[2] & 0xFF) << 16 | (d[3] & 0xFF) << 24;
    }
}
