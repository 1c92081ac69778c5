package io.ringstore;

import static io.ringstore.internal.format.RingFileDescriptor.BACKEND_ADDRESS_LENGTH_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.BACKEND_FEATURES_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.BACKEND_FIXED_LENGTH;
import static io.ringstore.internal.format.RingFileDescriptor.BACKEND_FLAG_HEALTH;
import static io.ringstore.internal.format.RingFileDescriptor.BACKEND_HEALTH_LENGTH;
import static io.ringstore.internal.format.RingFileDescriptor.BACKEND_TABLE_LENGTH_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.FORMAT_VERSION_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.HEADER_LENGTH;
import static io.ringstore.internal.format.RingFileDescriptor.HEALTH_FAIL_TIMEOUT_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.HEALTH_MAX_CONNS_OFFSET;
import static io.ringstore.internal.format.RingFileDescriptor.HEALTH_MAX_FAILS_OFFSET;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.family.RingVersion;
import io.ringstore.internal.format.RingFileDescriptor;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The backend flag health (FORMAT.md, "Backend"): a backend's max_fails, fail_timeout and max_conns
 * stored when they are not nginx's defaults, read back into its {@link Backend}, and refused when
 * the record is malformed; files without such settings keep their bytes.
 */
class BackendHealthFormatTest {
    private static final String FLEET = """
            server 10.0.0.1:80 max_fails=2 fail_timeout=1s
            server 10.0.0.2:80 max_conns=7 down features=eu
            server 10.0.0.3:80 weight=3
            server 10.0.0.4:80 max_fails=0 fail_timeout=1m30s max_conns=2147483647 # ringstore: name=four
            server 10.0.0.5:80 fail_timeout=0
            """;

    @TempDir
    Path dir;

    @Test
    void theSettingsRoundTripAndOnlyNonDefaultBackendsCarryThem() throws Exception {
        Path file = dir.resolve("health.ring");
        TestRings.build(file, FLEET);
        try (RingStore store = RingStore.open(file)) {
            List<Backend> b = store.backends();
            assertSettings(b.get(0), 2, 1, 0);
            assertSettings(b.get(1), 1, 10, 7);
            assertTrue(b.get(1).down());
            assertSettings(b.get(2), 1, 10, 0);
            assertSettings(b.get(3), 0, 90, Integer.MAX_VALUE);
            assertEquals("four", b.get(3).name());
            assertSettings(b.get(4), 1, 0, 0);
            assertEquals(2, store.layout().formatVersion(), "a flag makes the file version 2");
        }
        ByteBuffer bytes = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
        long table = bytes.getLong(BACKEND_TABLE_LENGTH_OFFSET);
        long addresses = 0;
        int flagged = 0;
        int p = HEADER_LENGTH;
        for (int i = 0; i < 5; i++) {
            int len = Short.toUnsignedInt(bytes.getShort(p + BACKEND_ADDRESS_LENGTH_OFFSET));
            boolean health = (bytes.getInt(p + BACKEND_FEATURES_OFFSET) & BACKEND_FLAG_HEALTH) != 0;
            assertEquals(i != 2, health, "backend " + i + " has the flag exactly when a setting is not the default");
            addresses += BACKEND_FIXED_LENGTH + len;
            p += BACKEND_FIXED_LENGTH + len + (health ? BACKEND_HEALTH_LENGTH : 0);
            flagged += health ? 1 : 0;
        }
        assertEquals(addresses + (long) flagged * BACKEND_HEALTH_LENGTH, table, "12 bytes for each flagged backend");
        int first = HEADER_LENGTH + BACKEND_FIXED_LENGTH + "10.0.0.1:80".length();
        assertEquals(2, bytes.getInt(first + HEALTH_MAX_FAILS_OFFSET));
        assertEquals(1, bytes.getInt(first + HEALTH_FAIL_TIMEOUT_OFFSET));
        assertEquals(0, bytes.getInt(first + HEALTH_MAX_CONNS_OFFSET));
    }

    /** Defaults written out give the bytes of a file without them; health settings change no ring. */
    @Test
    void defaultsLeaveTheBytesAsTheyWereAndSettingsChangeNoPoint() throws Exception {
        String plain = "server 10.0.0.1:80\nserver 10.0.0.2:80 weight=2 features=eu\nserver 10.0.0.3:80\n";
        String explicit =
                "server 10.0.0.1:80 max_fails=1 fail_timeout=10s max_conns=0\nserver 10.0.0.2:80 weight=2 features=eu fail_timeout=10\n"
                        + "server 10.0.0.3:80 max_fails=1\n";
        String tuned =
                "server 10.0.0.1:80 max_fails=3\nserver 10.0.0.2:80 weight=2 features=eu\nserver 10.0.0.3:80 fail_timeout=2s\n";
        Path a = dir.resolve("plain.ring");
        Path b = dir.resolve("explicit.ring");
        Path c = dir.resolve("tuned.ring");
        for (RingVersion v : List.of(RingVersion.V1, RingVersion.parse("v2:16"), RingVersion.parse("twemproxy:md5"))) {
            TestRings.build(a, plain, v);
            TestRings.build(b, explicit, v);
            TestRings.build(c, tuned, v);
            assertArrayEquals(
                    Files.readAllBytes(a), Files.readAllBytes(b), v + ": the defaults written out store nothing");
            try (RingStore pa = RingStore.open(a);
                    RingStore pc = RingStore.open(c)) {
                assertEquals(1, pa.layout().formatVersion(), v + ": no flag, version 1");
                assertFalse(Arrays.equals(pa.inputDigest(), pc.inputDigest()), "the digest covers the settings");
                for (int r = 0; r < pa.rings().size(); r++) {
                    Ring ra = pa.rings().get(r);
                    Ring rc = pc.rings().get(r);
                    assertEquals(ra.pointCount(), rc.pointCount(), v + " ring " + ra);
                    for (int i = 0; i < ra.pointCount(); i++) {
                        assertEquals(ra.pointHash(i), rc.pointHash(i), v + " ring " + ra + " point " + i);
                        assertEquals(ra.pointBackend(i), rc.pointBackend(i), v + " ring " + ra + " point " + i);
                    }
                }
                assertSettings(pc.backend(0), 3, 10, 0);
                assertSettings(pc.backend(2), 1, 2, 0);
            }
        }
    }

    @Test
    void aValueBeyondTheRangeIsRefusedAtItsField() throws Exception {
        byte[] bytes = built();
        int field = HEADER_LENGTH + BACKEND_FIXED_LENGTH + "10.0.0.1:80".length() + HEALTH_FAIL_TIMEOUT_OFFSET;
        ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).putInt(field, 0x80000000);
        TestRings.fixMetadataChecksum(bytes);
        RingFileException e = refused(bytes);
        assertEquals(field, e.offset());
        assertEquals("backend 0 fail_timeout 2147483648 is more than 2147483647", e.reason());
    }

    @Test
    void aFlagWhoseBytesRunPastTheTableIsRefused() throws Exception {
        byte[] bytes = built();
        // Backend 4 (the last) flagged health but its 12 bytes removed from the table's length: they run past it.
        ByteBuffer buf = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        long table = buf.getLong(BACKEND_TABLE_LENGTH_OFFSET);
        long end = HEADER_LENGTH + table;
        long last = end - BACKEND_HEALTH_LENGTH;
        // Move the table's end back over the last backend's health bytes; the feature table follows at once.
        byte[] shifted = new byte[bytes.length - BACKEND_HEALTH_LENGTH];
        System.arraycopy(bytes, 0, shifted, 0, (int) last);
        System.arraycopy(bytes, (int) end, shifted, (int) last, bytes.length - (int) end);
        ByteBuffer s = ByteBuffer.wrap(shifted).order(ByteOrder.LITTLE_ENDIAN);
        s.putLong(BACKEND_TABLE_LENGTH_OFFSET, table - BACKEND_HEALTH_LENGTH);
        for (int field :
                new int[] {RingFileDescriptor.FEATURE_TABLE_OFFSET_OFFSET, RingFileDescriptor.RING_INDEX_OFFSET_OFFSET
                }) {
            s.putLong(field, s.getLong(field) - BACKEND_HEALTH_LENGTH);
        }
        s.putLong(RingFileDescriptor.FILE_LENGTH_OFFSET, shifted.length);
        long index = s.getLong(RingFileDescriptor.RING_INDEX_OFFSET_OFFSET);
        int rings = s.getInt(RingFileDescriptor.RING_COUNT_OFFSET);
        for (int r = 0; r < rings; r++) { // the segments moved 12 bytes closer to the start
            long at =
                    index + (long) r * RingFileDescriptor.ENTRY_LENGTH + RingFileDescriptor.ENTRY_SEGMENT_OFFSET_OFFSET;
            long offset = s.getLong((int) at);
            if (offset != 0) {
                s.putLong((int) at, offset - BACKEND_HEALTH_LENGTH);
            }
        }
        TestRings.fixMetadataChecksum(shifted);
        RingFileException e = refused(shifted);
        assertEquals(last, e.offset());
        assertEquals(
                "backend 4 is flagged health but its 12 health bytes run past the backend table at " + last,
                e.reason());
    }

    /** A reader of version 1 knows no flag: the health bit there is a feature bit, refused as one. */
    @Test
    void theFlagInAVersion1FileIsAFeatureBitAndRefused() throws Exception {
        byte[] bytes = built();
        ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).putShort(FORMAT_VERSION_OFFSET, (short) 1);
        TestRings.fixMetadataChecksum(bytes);
        RingFileException e = refused(bytes);
        assertEquals(HEADER_LENGTH + BACKEND_FEATURES_OFFSET, e.offset());
        assertEquals("backend 0 feature mask 0x00040000 names features beyond the 1 declared", e.reason());
    }

    /** FLEET built; its bytes. */
    private byte[] built() throws Exception {
        Path file = dir.resolve("crafted.ring");
        TestRings.build(file, FLEET);
        byte[] bytes = Files.readAllBytes(file);
        Files.delete(file);
        return bytes;
    }

    private RingFileException refused(byte[] bytes) throws Exception {
        Path file = dir.resolve("bad.ring");
        Files.write(file, bytes);
        RingFileException e =
                assertThrows(RingFileException.class, () -> RingStore.open(file).close());
        assertTrue(e.getMessage().startsWith(file.toString()), e.getMessage());
        return e;
    }

    private static void assertSettings(Backend b, int maxFails, long failTimeoutSeconds, int maxConns) {
        assertEquals(
                List.of(maxFails, failTimeoutSeconds, maxConns),
                List.of(b.maxFails(), b.failTimeoutSeconds(), b.maxConns()),
                b.toString());
    }
}
