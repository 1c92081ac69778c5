package io.ringstore.state;

import static io.ringstore.state.StateFileLayout.*;

import io.ringstore.internal.FollowedFile;
import io.ringstore.internal.IoErrors;
import io.ringstore.internal.TextLines;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.locks.LockSupport;
import java.util.zip.CRC32C;

/**
 * A state file mapped shared, read-write (a router, an operator's drain) or read-only (a view of a
 * file this process may not write: nothing written, no lease reaped), its header checked against the
 * file's size, and every page of it touched once, so that a page the file system cannot provide (a
 * hole on a full tmpfs, a file truncated meanwhile) is a {@link StateFileException} naming the state
 * file at open rather than a fault later: the only
 * place that reads the header, so every offset the state's parts compute ({@link #record}) comes from
 * validated counts. Also creates a new file (built under a temporary name, published by a hard link,
 * which fails when another process published first) and replaces a corrupt one, moved aside
 * ({@link #mapOrRebuild}).
 */
final class StateMapping {
    /** Made when first used, as HostState's: a lookup that finds no state file starts no logging. */
    private static final class Log {
        static final System.Logger LOG = System.getLogger(HostState.class.getName());
    }
    /** How long {@link #lockDirectory} waits before it says so. */
    static final long LOCK_WAIT_SAID_AFTER_NANOS = 1_000_000_000L;
    /** How often, after that, it says it still waits. */
    static final long LOCK_WAIT_SAID_EVERY_NANOS = 30_000_000_000L;

    /** Where {@link #check} leaves the sum of the bytes it touched (see there). */
    @SuppressWarnings("unused")
    private static volatile int touched;

    final Path path;
    final Arena arena;
    final MemorySegment segment;
    final int leases;
    final int slots;
    final int recordLength;
    /** Version 2: the header keeps a lease high-water mark, and counts are summed up to it. */
    final boolean highWater;
    /** Whether the file is mapped read-write; a read-only mapping writes nothing and tests lease locks shared. */
    final boolean writable;
    /** The process's one channel on this file: the lease locks are taken through it. */
    private final StateChannels.Ref channel;

    private StateMapping(
            Path path,
            StateChannels.Ref channel,
            boolean writable,
            Arena arena,
            MemorySegment segment,
            int leases,
            int slots) {
        this.path = path;
        this.writable = writable;
        this.channel = channel;
        this.arena = arena;
        this.segment = segment;
        this.leases = leases;
        this.slots = slots;
        this.recordLength = recordLength(leases);
        this.highWater = version(leases) == VERSION;
    }

    /**
     * Tries to lock lease {@code lease}'s byte range of the file (its owner word's first byte): a POSIX
     * record lock, held by this process until released or until the process ends. Through a read-only
     * mapping, a shared lock (all a read-only descriptor can take): it too is refused while another
     * process holds the lease, which is all a read-only view asks.
     *
     * @return the lock; {@code null} when another process holds it
     * @throws java.nio.channels.OverlappingFileLockException when this process holds it already
     * @throws IOException when the file system cannot lock
     */
    FileLock tryLockLease(int lease) throws IOException {
        Objects.checkIndex(lease, leases);
        return channel.channel.tryLock(lease(lease), 1, !writable || !channel.writable);
    }

    /**
     * Tries to lock the {@code checked} word of {@code slot}'s record (8 bytes: the probe's lock), without
     * waiting; shared through a read-only mapping, as {@link #tryLockLease}. The calling thread's
     * interrupt status is cleared for the call and set again after (a lock call on an interrupted thread
     * closes the channel, and with it every lock of this process on the file).
     *
     * @return the lock; {@code null} when another process holds it
     * @throws java.nio.channels.OverlappingFileLockException when another thread of this process holds it
     * @throws IOException when the file system cannot lock
     */
    FileLock tryLockRecord(int slot) throws IOException {
        long at = record(slot) + CHECKED_OFFSET;
        boolean interrupted = Thread.interrupted();
        try {
            return channel.channel.tryLock(at, 8, !writable || !channel.writable);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Releases {@code lock}; a failure leaves it to the channel's closing, or the process's end. */
    static void release(FileLock lock) {
        try {
            lock.release();
        } catch (IOException e) {
            // the channel stays open: the lock goes with it, or with the process
        }
    }

    /**
     * Takes the directory lock: first among this process's instances, then the POSIX record lock of
     * the directory word's range, waited for (polled) while another process holds it, never broken: the
     * kernel releases it when its holder dies. A caller's interrupt is kept for after. Waiting is said:
     * after {@link #LOCK_WAIT_SAID_AFTER_NANOS} one warning names the holder (the process whose word is in
     * the lock field: a stopped router holds it until it resumes or dies), and every
     * {@link #LOCK_WAIT_SAID_EVERY_NANOS} after that another says how long; waiting goes on.
     *
     * @return the record lock, for {@link #unlockDirectory}
     * @throws IllegalStateException when the file cannot be locked
     */
    FileLock lockDirectory() {
        channel.directory.lock();
        boolean interrupted = Thread.interrupted();
        try {
            long start = System.nanoTime();
            long sayAt = start + LOCK_WAIT_SAID_AFTER_NANOS;
            for (int spins = 0; ; spins++) {
                FileLock lock = channel.channel.tryLock(DIRECTORY_LOCK_OFFSET, 8, false);
                if (lock != null) {
                    if (sayAt - start > LOCK_WAIT_SAID_AFTER_NANOS) {
                        Log.LOG.log(
                                Level.INFO,
                                "{0}: directory lock taken after {1} ms",
                                path,
                                String.valueOf((System.nanoTime() - start) / 1_000_000));
                    }
                    return lock;
                }
                if (System.nanoTime() - sayAt >= 0) {
                    long holder = (long) segment.get(ValueLayout.JAVA_LONG, DIRECTORY_LOCK_OFFSET) >>> 32;
                    Log.LOG.log(
                            Level.WARNING,
                            "{0}: waiting {1} s for the directory lock, held by {2} (a stopped process holds it"
                                    + " until it resumes or dies); still waiting",
                            path,
                            String.valueOf((System.nanoTime() - start) / 1_000_000_000),
                            holder == 0 ? "a process that wrote no word" : "process " + holder);
                    sayAt += LOCK_WAIT_SAID_EVERY_NANOS;
                }
                if (spins < 100) {
                    Thread.onSpinWait();
                } else {
                    LockSupport.parkNanos(spins < 1000 ? 10_000 : 1_000_000);
                }
            }
        } catch (IOException | RuntimeException e) {
            channel.directory.unlock();
            throw new IllegalStateException(
                    path + ": cannot lock the directory (the file system must support POSIX record locks): "
                            + IoErrors.describe(e instanceof IOException io ? io : new IOException(e)),
                    e);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Releases what {@link #lockDirectory} took. */
    void unlockDirectory(FileLock lock) {
        try {
            lock.release();
        } catch (IOException e) {
            // the channel stays open: the lock goes with it, or with the process
        } finally {
            channel.directory.unlock();
        }
    }

    /** {@return whether an instance in this process holds lease {@code lease}} (Java refuses a second lock of it in the process.) */
    boolean heldHere(int lease) {
        return channel.holds(lease);
    }

    /** Records that an instance in this process holds lease {@code lease}, or no longer does. */
    void heldHere(int lease, boolean held) {
        channel.holds(lease, held);
    }

    /** {@return the offset of lease {@code lease}} */
    long lease(int lease) {
        Objects.checkIndex(lease, leases);
        return leaseOffset(leases, lease);
    }

    /** {@return the file's identity (its inode) as it was when opened} */
    Object key() {
        return channel.key;
    }

    /** {@return whether the file is mapped for writing} */
    boolean writable() {
        return writable;
    }

    /** {@return the size of the file now (one fstat), or -1 if it cannot be read} */
    long sizeNow() {
        try {
            return channel.channel.size();
        } catch (IOException e) {
            return -1;
        }
    }

    /** Unmaps the file and drops this mapping's use of the process's channel (the last use closes it). */
    void close() {
        arena.close();
        channel.close();
    }

    /** {@return the offset of record {@code slot}} */
    long record(int slot) {
        Objects.checkIndex(slot, slots);
        return recordsOffset(leases) + (long) slot * recordLength;
    }

    /**
     * Maps the file at {@code path}, creating it (with {@code leases} and {@code slots}) if there is
     * none, and replacing a corrupt one: moved aside to {@code NAME.bad}, with one log line. A file
     * that cannot be rebuilt (another version's, one that cannot be read) is refused.
     */
    static StateMapping mapOrRebuild(Path path, int leases, int slots) throws StateFileException {
        for (int attempt = 0; ; attempt++) {
            Object key = FollowedFile.fileKey(path); // to move aside only the file found bad
            try {
                StateMapping m = map(path, true);
                if (m != null) {
                    return m;
                }
                create(path, leases, slots);
            } catch (StateFileException e) {
                if (!e.rebuildable() || attempt >= 3) {
                    throw e;
                }
                Path bad = moveAside(path, key);
                Log.LOG.log(
                        Level.WARNING,
                        "{0}; {1}",
                        e.getMessage(),
                        bad != null
                                ? "moved aside to " + bad.getFileName() + ", a new state file replaces it"
                                : "another process replaced it");
                create(path, leases, slots);
            }
        }
    }

    /** Maps and checks the file at {@code path}, read-write or read-only; {@code null} when there is none. */
    static StateMapping map(Path path, boolean writable) throws StateFileException {
        // The channel is the process's shared one (StateChannels), and a channel call on an interrupted
        // thread closes it, dropping every lock of the process: the interrupt waits until after.
        boolean interrupted = Thread.interrupted();
        try {
            return mapUninterrupted(path, writable);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static StateMapping mapUninterrupted(Path path, boolean writable) throws StateFileException {
        BasicFileAttributes attributes;
        try {
            attributes = Files.readAttributes(path, BasicFileAttributes.class);
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            throw new StateFileException(path, -1, "cannot read its attributes: " + IoErrors.describe(e), false, e);
        }
        if (!attributes.isRegularFile()) {
            // A FIFO or device would be opened and read as garbage, a directory cannot be: never rebuilt over.
            throw new StateFileException(
                    path,
                    -1,
                    (attributes.isDirectory() ? "is a directory" : "is not a regular file (a FIFO, socket or device?)")
                            + ", not a state file; remove it",
                    false);
        }
        StateChannels.Ref ref;
        try {
            ref = StateChannels.open(path, writable);
        } catch (IOException e) {
            throw new StateFileException(
                    path,
                    -1,
                    "cannot open for reading" + (writable ? " and writing: " : ": ") + IoErrors.describe(e),
                    false,
                    e);
        }
        if (ref == null) {
            return null;
        }
        boolean mapped = false;
        try {
            FileChannel ch = ref.channel;
            long size = ch.size();
            if (size < HEADER_LENGTH) {
                throw new StateFileException(
                        path,
                        0,
                        "file is " + size + " bytes, shorter than the " + HEADER_LENGTH
                                + "-byte header (truncated, or not a state file?)",
                        true);
            }
            if (size > fileLength(MAX_LEASES, MAX_SLOTS)) {
                throw new StateFileException(
                        path,
                        -1,
                        "file is " + size + " bytes, more than the largest state file ("
                                + fileLength(MAX_LEASES, MAX_SLOTS) + "): not a state file?",
                        true);
            }
            Arena arena = Arena.ofShared();
            try {
                MemorySegment segment = ch.map(
                        writable ? FileChannel.MapMode.READ_WRITE : FileChannel.MapMode.READ_ONLY, 0, size, arena);
                StateMapping m = check(path, ref, writable, arena, segment);
                mapped = true;
                return m;
            } catch (InternalError e) { // SIGBUS: a page of the file the file system cannot give (full, or truncated
                // meanwhile)
                arena.close();
                throw unreadable(path, e);
            } catch (StateFileException | RuntimeException | Error e) {
                arena.close();
                throw e;
            } catch (IOException e) {
                arena.close();
                throw new StateFileException(path, -1, "cannot map: " + IoErrors.describe(e), false, e);
            }
        } catch (IOException e) {
            throw new StateFileException(path, -1, "I/O error: " + IoErrors.describe(e), false, e);
        } finally {
            if (!mapped) {
                ref.close();
            }
        }
    }

    /** FORMAT.md, "Checks a router makes": every count bounded, the length the counts give equal to the file's. */
    private static StateMapping check(
            Path path, StateChannels.Ref channel, boolean writable, Arena arena, MemorySegment s)
            throws StateFileException {
        byte[] magic = s.asSlice(MAGIC_OFFSET, MAGIC_LENGTH).toArray(ValueLayout.JAVA_BYTE);
        if (!Arrays.equals(magic, MAGIC)) {
            throw new StateFileException(
                    path,
                    MAGIC_OFFSET,
                    "magic is " + TextLines.printable(magic) + ", expected RINGSTAT: not a state file",
                    true);
        }
        int version = s.get(ValueLayout.JAVA_INT, VERSION_OFFSET);
        if (version != VERSION && version != VERSION_SMALL) {
            boolean swapped =
                    Integer.reverseBytes(version) == VERSION || Integer.reverseBytes(version) == VERSION_SMALL;
            throw new StateFileException(
                    path,
                    VERSION_OFFSET,
                    swapped
                            ? "written on a host of the other byte order (a state file never leaves its host)"
                            : "state file version " + Integer.toUnsignedString(version)
                                    + ", this library reads versions " + VERSION_SMALL + " and " + VERSION
                                    + " (delete the file when no router of that version runs)",
                    swapped);
        }
        CRC32C crc = new CRC32C();
        // From a heap copy: the copy of a page gone raises an InternalError, where the CRC intrinsic reading
        // the mapping itself kills an interpreted JVM (SIGBUS in a stub HotSpot does not guard).
        crc.update(s.asSlice(0, CHECKED_LENGTH).toArray(ValueLayout.JAVA_BYTE));
        int stored = s.get(ValueLayout.JAVA_INT, HEADER_CHECKSUM_OFFSET);
        if (stored != (int) crc.getValue()) {
            throw new StateFileException(
                    path,
                    HEADER_CHECKSUM_OFFSET,
                    String.format(
                            "header CRC-32C is 0x%08x, the header's bytes give 0x%08x (corrupt)",
                            stored, (int) crc.getValue()),
                    true);
        }
        int leases = version == VERSION_SMALL
                ? expect(path, s, LEASE_COUNT_OFFSET, "leaseCount", 1, MAX_SMALL_LEASES)
                : expect(path, s, LEASE_COUNT_OFFSET, "leaseCount", MAX_SMALL_LEASES + 1, MAX_LEASES);
        expect(path, s, HEADER_LENGTH_OFFSET, "headerLength", headerLength(leases), headerLength(leases));
        int slots = expect(path, s, SLOT_COUNT_OFFSET, "slotCount", 1, MAX_SLOTS);
        expect(path, s, RECORD_LENGTH_OFFSET, "recordLength", recordLength(leases), recordLength(leases));
        expect(path, s, LEASE_LENGTH_OFFSET, "leaseLength", LEASE_LENGTH, LEASE_LENGTH);
        long fileLength = s.get(ValueLayout.JAVA_LONG, FILE_LENGTH_OFFSET);
        if (fileLength != fileLength(leases, slots) || fileLength != s.byteSize()) {
            throw new StateFileException(
                    path,
                    FILE_LENGTH_OFFSET,
                    "fileLength " + fileLength + ", the counts give " + fileLength(leases, slots) + ", the file is "
                            + s.byteSize() + " bytes (truncated or extended?)",
                    true);
        }
        // Every page once, now: a page the file system cannot give (a hole on a full tmpfs, written by a
        // release before files were allocated whole; a file truncated meanwhile) faults here, not later.
        // The bytes are summed into a volatile field, so that a compiler cannot drop the loads as unused.
        int sum = 0;
        for (long o = 0; o < s.byteSize(); o += 4096) {
            sum += s.get(ValueLayout.JAVA_BYTE, o);
        }
        touched = sum;
        return new StateMapping(path, channel, writable, arena, s, leases, slots);
    }

    /**
     * {@return the state file's {@link StateFileException} for a fault reading its mapping} (Java turns
     * SIGBUS on a mapped page into an {@link InternalError}.)
     */
    static StateFileException unreadable(Path path, InternalError e) {
        return new StateFileException(
                path,
                -1,
                "a page of the mapped state file cannot be read (the file system is full and cannot "
                        + "allocate it, or the file shrank while in use): " + e.getMessage(),
                false,
                e);
    }

    private static int expect(Path path, MemorySegment s, long offset, String name, int min, int max)
            throws StateFileException {
        int v = s.get(ValueLayout.JAVA_INT, offset);
        if (v < min || v > max) {
            throw new StateFileException(
                    path,
                    offset,
                    name + " is " + Integer.toUnsignedString(v) + ", expected "
                            + (min == max ? String.valueOf(min) : min + " to " + max) + " (corrupt)",
                    true);
        }
        return v;
    }

    /**
     * Publishes a new, empty state file at {@code path} unless one is there: built under a temporary
     * name and hard-linked into place, so a process racing to create it either publishes first or
     * finds the other's complete file. Every block of the temporary file is written (zeros, then the
     * header) and forced before it is linked, so a file system too full for it refuses here, and the
     * temporary file is deleted, rather than publishing a sparse file whose pages fault (SIGBUS) in
     * every process that maps it.
     */
    static void create(Path path, int leases, int slots) throws StateFileException {
        Path dir = path.toAbsolutePath().getParent();
        Path tmp = dir.resolve(
                "." + path.getFileName() + "." + ProcessHandle.current().pid() + "." + System.nanoTime() + ".tmp");
        long length = fileLength(leases, slots);
        ByteBuffer header = ByteBuffer.allocate(HEADER_LENGTH).order(ByteOrder.nativeOrder());
        header.put(MAGIC)
                .putInt(VERSION_OFFSET, version(leases))
                .putInt(HEADER_LENGTH_OFFSET, headerLength(leases))
                .putInt(LEASE_COUNT_OFFSET, leases)
                .putInt(SLOT_COUNT_OFFSET, slots)
                .putInt(RECORD_LENGTH_OFFSET, recordLength(leases))
                .putInt(LEASE_LENGTH_OFFSET, LEASE_LENGTH)
                .putLong(FILE_LENGTH_OFFSET, length);
        CRC32C crc = new CRC32C();
        crc.update(header.array(), 0, CHECKED_LENGTH);
        header.putInt(HEADER_CHECKSUM_OFFSET, (int) crc.getValue());
        try {
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                ByteBuffer zeros = ByteBuffer.allocate(64 * 1024); // every slot and lease free
                for (long at = 0; at < length; ) {
                    zeros.clear().limit((int) Math.min(zeros.capacity(), length - at));
                    at += ch.write(zeros, at);
                }
                header.clear();
                while (header.hasRemaining()) {
                    ch.write(header, header.position());
                }
                ch.force(true);
            }
            try {
                Files.createLink(path, tmp);
            } catch (
                    UnsupportedOperationException
                            e) { // no hard links here: rename, which a racing creator may overwrite
                Files.move(tmp, path);
            }
        } catch (FileAlreadyExistsException e) {
            // another process published first: use its file
        } catch (IOException e) {
            throw new StateFileException(path, -1, "cannot create: " + IoErrors.describe(e), false, e);
        } finally {
            try {
                Files.deleteIfExists(tmp);
            } catch (IOException e) {
                // a temporary name is left behind; nothing reads it
            }
        }
    }

    /** Moves the bad file aside to {@code NAME.bad} if {@code path} still names the file with {@code key}. */
    private static Path moveAside(Path path, Object key) throws StateFileException {
        Path bad = path.resolveSibling(path.getFileName() + ".bad");
        if (key == null || !Objects.equals(key, FollowedFile.fileKey(path))) {
            return null; // another process replaced it already
        }
        try {
            Files.move(path, bad, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            return bad;
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            throw new StateFileException(
                    path,
                    -1,
                    "corrupt, and cannot be moved aside to " + bad.getFileName() + ": " + IoErrors.describe(e),
                    false,
                    e);
        }
    }
}
