package io.ringstore.state;

/**
 * The state file's layout (FORMAT.md, "The state file"), constants only. Every field is a naturally
 * aligned integer in the host's native byte order: the file never leaves the host, and the atomic
 * access modes need aligned, native words.
 *
 * <pre>
 *  0          H                 H + 64 × leaseCount                           fileLength
 *  +----------+-----------------+----------------+----------------+-----+----------------+
 *  | Header   | Lease 0 .. L-1  | Record 0       | Record 1       | ... | Record B-1     |
 *  | H B      | 64 B each       | recordLength B | recordLength B |     |                |
 *  +----------+-----------------+----------------+----------------+-----+----------------+
 *
 *  H = headerLength(leaseCount): 256 up to 32 leases (version 1), 128 + 4 × leaseCount rounded up to
 *  a line above (version 2).
 *
 *  Record (recordLength = 128 + 4 × leaseCount rounded up to a line):
 *  +---- line 0: hot, read by every availability check -----------------------------+
 *  | state u64 | drained u64 | fails u64 | checked i64 | accessed i64 | named i64 | reserved 16 |
 *  +---- lines 1..: in-flight cells, one u32 per lease (written only by that lease) --+
 *  | inFlight[0] u32 | inFlight[1] u32 | ...                     | inFlight[L-1] u32   |
 *  +---- last line: cold, the endpoint ------------------------------------------------+
 *  | endpointLength u16 | endpoint u8 × 62                                            |
 *  +-----------------------------------------------------------------------------------+
 * </pre>
 */
final class StateFileLayout {
    private StateFileLayout() {}

    /** ASCII {@code RINGSTAT}, stored as bytes (not as a native long). */
    static final byte[] MAGIC = {'R', 'I', 'N', 'G', 'S', 'T', 'A', 'T'};
    /** Files of 1 to 32 leases: a 256-byte header, what every earlier release writes and reads. */
    static final int VERSION_SMALL = 1;
    /** Files of more leases: a header that grows with the lease totals (33 to 1,024 leases). */
    static final int VERSION = 2;

    static final int CACHE_LINE = 64;

    // Header. Fields before HEADER_CHECKSUM_OFFSET are written once, at creation, and checked by the CRC.
    static final int MAGIC_OFFSET = 0;
    static final int MAGIC_LENGTH = 8;
    static final int VERSION_OFFSET = MAGIC_OFFSET + MAGIC_LENGTH;
    static final int HEADER_LENGTH_OFFSET = VERSION_OFFSET + 4;
    static final int LEASE_COUNT_OFFSET = HEADER_LENGTH_OFFSET + 4;
    static final int SLOT_COUNT_OFFSET = LEASE_COUNT_OFFSET + 4;
    static final int RECORD_LENGTH_OFFSET = SLOT_COUNT_OFFSET + 4;
    static final int LEASE_LENGTH_OFFSET = RECORD_LENGTH_OFFSET + 4;
    static final int FILE_LENGTH_OFFSET = LEASE_LENGTH_OFFSET + 4;
    static final int HEADER_CHECKSUM_OFFSET = FILE_LENGTH_OFFSET + 8;
    /** The bytes the header checksum (CRC-32C) covers: [0, CHECKED_LENGTH). */
    static final int CHECKED_LENGTH = HEADER_CHECKSUM_OFFSET;
    // Mutable header words, each on its own cache line so that directory changes do not disturb counts.
    static final int DIRECTORY_LOCK_OFFSET = 64;
    static final int DIRECTORY_GENERATION_OFFSET = DIRECTORY_LOCK_OFFSET + 8;
    /** Version 2: u32, one more than the highest lease ever claimed; cells of leases above it are zero and not summed. */
    static final int LEASE_HIGH_WATER_OFFSET = DIRECTORY_GENERATION_OFFSET + 8;
    /**
     * 16 bytes: the kernel's boot id ({@code /proc/sys/kernel/random/boot_id}) of the boot whose clock the
     * file's times are on; all zero in a file no process of this release has opened yet.
     */
    static final int BOOT_ID_OFFSET = 96;
    /** Per lease, the requests it holds in flight over all backends: u32 × leaseCount from here. */
    static final int LEASE_TOTALS_OFFSET = 128;
    /** The header of a version 1 file, and the least of any. */
    static final int HEADER_LENGTH = 256;
    /** The most leases of a version 1 file: their totals fill its header. */
    static final int MAX_SMALL_LEASES = (HEADER_LENGTH - LEASE_TOTALS_OFFSET) / 4;

    static final int MAX_LEASES = 1024;
    /** The leases of a new file by default: as many router processes as a host runs. */
    static final int DEFAULT_LEASES = 256;

    // Lease (one per process holding the file open as a router).
    static final int LEASE_LENGTH = CACHE_LINE;
    static final int LEASE_OWNER_OFFSET = 0;
    static final int LEASE_HEARTBEAT_OFFSET = LEASE_OWNER_OFFSET + 8;
    static final int LEASE_PID_OFFSET = LEASE_HEARTBEAT_OFFSET + 8;
    static final int LEASE_START_OFFSET = LEASE_PID_OFFSET + 8;

    // Record line 0: hot.
    static final int STATE_OFFSET = 0;
    static final int DRAINED_OFFSET = STATE_OFFSET + 8;
    static final int FAILS_OFFSET = DRAINED_OFFSET + 8;
    static final int CHECKED_OFFSET = FAILS_OFFSET + 8;
    static final int ACCESSED_OFFSET = CHECKED_OFFSET + 8;
    static final int NAMED_OFFSET = ACCESSED_OFFSET + 8;
    static final int IN_FLIGHT_OFFSET = CACHE_LINE;
    /** The endpoint line: after the in-flight cells, the record's last 64 bytes. */
    static final int ENDPOINT_LINE_LENGTH = CACHE_LINE;

    static final int ENDPOINT_MAX_LENGTH = ENDPOINT_LINE_LENGTH - 2;

    static final long SLOT_FREE = 0;
    static final long SLOT_USED = 1;

    static final int MAX_SLOTS = 1 << 16;

    /** 128 + 4 × leases rounded up to a whole line: the hot line, the cells, the endpoint line. */
    static int recordLength(int leases) {
        int cells = (leases * 4 + CACHE_LINE - 1) / CACHE_LINE * CACHE_LINE;
        return CACHE_LINE + cells + ENDPOINT_LINE_LENGTH;
    }

    /** {@return the version a file of {@code leases} leases is written in} */
    static int version(int leases) {
        return leases <= MAX_SMALL_LEASES ? VERSION_SMALL : VERSION;
    }

    /** 256 up to 32 leases; else 128 + 4 × leases rounded up to a whole line (the lease totals end the header). */
    static int headerLength(int leases) {
        int totals = (leases * 4 + CACHE_LINE - 1) / CACHE_LINE * CACHE_LINE;
        return Math.max(HEADER_LENGTH, LEASE_TOTALS_OFFSET + totals);
    }

    static long leaseOffset(int leases, int lease) {
        return headerLength(leases) + (long) lease * LEASE_LENGTH;
    }

    static long recordsOffset(int leases) {
        return headerLength(leases) + (long) leases * LEASE_LENGTH;
    }

    static long fileLength(int leases, int slots) {
        return recordsOffset(leases) + (long) slots * recordLength(leases);
    }
}
