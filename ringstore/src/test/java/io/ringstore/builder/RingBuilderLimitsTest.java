package io.ringstore.builder;

import static io.ringstore.TestRings.build;
import static io.ringstore.TestRings.builder;
import static io.ringstore.TestRings.tempFiles;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.Backend;
import io.ringstore.RingFileException;
import io.ringstore.RingStore;
import io.ringstore.family.RingVersion;
import io.ringstore.internal.BackendAccess;
import io.ringstore.internal.BackendRecord;
import io.ringstore.internal.ServerAddress;
import io.ringstore.internal.ServerParameters;
import io.ringstore.internal.format.RingFileDescriptor;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The builder checks every limit of the format on its input, naming the line, before it writes; and
 * a written file that fails its check is never renamed over the target.
 */
class RingBuilderLimitsTest {
    private static final String GOOD = "server 10.0.0.1:80\nserver 10.0.0.2:80\n";

    /** A good ring at {@code dir/f.ring}; returns its bytes. */
    private static byte[] goodRing(Path ring) throws Exception {
        build(ring, GOOD);
        return Files.readAllBytes(ring);
    }

    @Test
    void anAddressLongerThanItsU16LengthIsRefusedWithItsLineBeforeAnythingIsWritten(@TempDir Path dir)
            throws Exception {
        Path ring = dir.resolve("f.ring");
        byte[] before = goodRing(ring);
        // Leading zeros are valid in an IPv4 part, so the address parses; its length does not fit the record.
        String address = "0".repeat(RingFileDescriptor.MAX_ADDRESS_LENGTH) + "10.0.0.1:80";
        Backend b = BackendAccess.create(
                0, new BackendRecord(ServerAddress.parse(address), 1, 0, ServerParameters.DEFAULTS), Set.of(), 7);
        BackendList list = BackendList.of("lz.conf", List.of(b), List.of());
        BackendsFileException e = assertThrows(
                BackendsFileException.class, () -> RingBuilder.of(list).build(ring));
        assertTrue(
                e.getMessage().startsWith("lz.conf:7: address of " + address.length() + " characters"), e.getMessage());
        assertTrue(
                e.getMessage().length() < 400,
                "the address is quoted cut: " + e.getMessage().length());
        assertArrayEquals(before, Files.readAllBytes(ring));
        assertEquals(List.of(), tempFiles(dir));
    }

    @Test
    void theLongestAddressTheFormatHoldsBuildsAndReadsBack(@TempDir Path dir) throws Exception {
        String address = "0".repeat(RingFileDescriptor.MAX_ADDRESS_LENGTH - "10.0.0.1:80".length()) + "10.0.0.1:80";
        Backend b = BackendAccess.create(
                0, new BackendRecord(ServerAddress.parse(address), 1, 0, ServerParameters.DEFAULTS), Set.of(), 1);
        Path ring = dir.resolve("f.ring");
        RingBuilder.of(BackendList.of("long.conf", List.of(b), List.of())).build(ring);
        try (RingStore store = RingStore.open(ring)) {
            store.verify();
            assertEquals(address, store.backend(0).address());
        }
    }

    @Test
    void aScopeIdIsRefusedForV1WithItsLineAndKeptForV2(@TempDir Path dir) throws Exception {
        Path ring = dir.resolve("f.ring");
        byte[] before = goodRing(ring);
        String text = "server 10.0.0.1\nserver [fe80::1%3]:80\n";
        for (RingVersion[] versions :
                List.of(new RingVersion[] {RingVersion.V1}, new RingVersion[] {RingVersion.v2(160), RingVersion.V1})) {
            BackendsFileException e = assertThrows(BackendsFileException.class, () -> build(ring, text, versions));
            assertEquals(2, e.line(), e.getMessage());
            assertTrue(e.reason().contains("'[fe80::1%3]:80' has a scope id"), e.reason());
        }
        // %0 is a scope to nginx too: it refuses the '%' whatever follows.
        assertThrows(BackendsFileException.class, () -> build(ring, "server [fe80::1%0]:80\n"));
        assertArrayEquals(before, Files.readAllBytes(ring));
        build(ring, text, RingVersion.v2(160));
        try (RingStore store = RingStore.open(ring)) {
            assertEquals("[fe80::1%3]:80", store.backend(1).socketAddress());
        }
    }

    @Test
    void aWrittenFileThatFailsItsCheckLeavesTheOldTargetAndNoTemporaryFile(@TempDir Path dir) throws Exception {
        Path ring = dir.resolve("f.ring");
        byte[] before = goodRing(ring);
        RingBuilder b = builder(GOOD).afterWrite(RingBuilderLimitsTest::damage);
        RingFileException e = assertThrows(RingFileException.class, () -> b.build(ring));
        assertTrue(
                e.reason().contains("the file just written fails its check, so " + ring + " was left as it was"),
                e.reason());
        assertArrayEquals(before, Files.readAllBytes(ring));
        assertEquals(List.of(), tempFiles(dir));
        build(ring, GOOD); // and the next build goes on from the old file
        try (RingStore store = RingStore.open(ring)) {
            assertEquals(2, store.generation());
        }
    }

    /** Flips a byte of the first point's hash: the file opens, but its segment CRC no longer matches. */
    private static void damage(Path tmp) throws IOException {
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            long last = ch.size() - 1;
            ByteBuffer b = ByteBuffer.allocate(1);
            ch.read(b, last);
            b.put(0, (byte) ~b.get(0)).rewind();
            ch.write(b, last);
        }
    }

    @Test
    void aTargetThatIsNotARegularFileIsRefusedAndLeftAlone(@TempDir Path dir) throws Exception {
        Path sub = Files.createDirectory(dir.resolve("sub.ring"));
        IOException e = assertThrows(IOException.class, () -> build(sub, GOOD));
        assertTrue(e.getMessage().contains("not a regular file"), e.getMessage());
        assertTrue(Files.isDirectory(sub));
        assertEquals(List.of(), tempFiles(dir));
    }

    @Test
    void leftoversOfDeadBuildsOfTheTargetAreRemovedAndNoOtherFiles(@TempDir Path dir) throws Exception {
        Path ring = dir.resolve("f.ring");
        List<String> leftovers = List.of(".f.ring.123.tmp", ".f.ring.18446744073709551615.tmp");
        List<String> others =
                List.of(".f.123.tmp", ".f.ring.x.tmp", ".g.ring.123.tmp", "f.ring.123.tmp", ".f.ring.123.tmp.keep");
        for (String name : leftovers) {
            Files.write(dir.resolve(name), new byte[4096]);
        }
        for (String name : others) {
            Files.write(dir.resolve(name), new byte[1]);
        }
        BuildResult r = build(ring, GOOD);
        assertEquals(Set.copyOf(leftovers), Set.copyOf(r.leftoversRemoved()));
        for (String name : others) {
            assertTrue(Files.exists(dir.resolve(name)), name);
        }
        assertEquals(List.of(), build(ring, GOOD).leftoversRemoved());
    }

    @Test
    void heapNeededFollowsTheLargestRing() throws Exception {
        RingBuilder small = builder("server 10.0.0.1 weight=1\n");
        RingBuilder big = builder(
                "server 10.0.0.1 weight=100000\nserver 10.0.0.2 weight=100000\n", RingVersion.V1, RingVersion.v2(1000));
        long bigPoints = 200_000L * 1000;
        assertTrue(small.heapBytesNeeded() < 300L << 20, "small: " + small.heapBytesNeeded());
        assertTrue(big.heapBytesNeeded() >= bigPoints * 8, "8 bytes a point at least: " + big.heapBytesNeeded());
        assertTrue(
                big.heapBytesNeeded() <= bigPoints * 8 * 2 + (256L << 20), "not wildly more: " + big.heapBytesNeeded());
    }
}
