package io.ringstore.tools;

import java.io.BufferedOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.Charset;

/**
 * Standard output as the commands write it: the process's stdout, which tells a reader that left
 * ({@code ringstore dump f | head}) from a write that failed (a full disk), and a 64 KiB buffer in
 * front of it for each command.
 */
final class Stdout {
    private Stdout() {}

    /** The process's own stdout ({@link Main#main}). */
    static PrintStream ofProcess(Charset charset) {
        return new PipeStdout(new FileOutputStream(FileDescriptor.out), charset);
    }

    /**
     * {@code target} behind a 64 KiB buffer (one write per 64 KiB instead of one per printed piece);
     * the command's runner flushes it before any error line so the two streams keep their order.
     */
    static PrintStream buffered(PrintStream target) {
        return new BufferedStdout(target);
    }

    /**
     * Whether writing {@code out} failed for a reason worth an error line and exit 1: a full disk, yes;
     * the reader closing the pipe ({@code ringstore dump f | head}), no: that is a normal end of the
     * output, silent and exit 0, as for {@code cat}.
     */
    static boolean cannotWrite(PrintStream out) {
        return out.checkError()
                && !(out instanceof BufferedStdout b && b.target instanceof PipeStdout p && p.watch.readerLeft);
    }

    /**
     * A stdout behind a 64 KiB buffer. A write failure of the stream underneath (a closed pipe, a full
     * disk) shows in {@link #checkError()} like one of this stream's own.
     */
    private static final class BufferedStdout extends PrintStream {
        private final PrintStream target;

        BufferedStdout(PrintStream target) {
            super(new BufferedOutputStream(target, 1 << 16), false, target.charset());
            this.target = target;
        }

        @Override
        public boolean checkError() {
            return super.checkError() || target.checkError();
        }
    }

    /**
     * The process's own stdout, which remembers when a write failed with EPIPE: a {@link PrintStream}
     * keeps only "an error happened", and a closed pipe must be told from ENOSPC. The JVM ignores
     * SIGPIPE, so EPIPE reaches Java as an {@link IOException} whose message is the C library's text for
     * it; that text is the only thing that tells the two apart.
     */
    private static final class PipeStdout extends PrintStream {
        private final EpipeWatch watch;

        PipeStdout(OutputStream fd, Charset charset) {
            this(new EpipeWatch(fd), charset);
        }

        private PipeStdout(EpipeWatch watch, Charset charset) {
            super(watch, false, charset);
            this.watch = watch;
        }

        /** The stream under {@link PipeStdout}: every write passes through, an EPIPE is remembered. */
        private static final class EpipeWatch extends FilterOutputStream {
            private volatile boolean readerLeft;

            EpipeWatch(OutputStream fd) {
                super(fd);
            }

            @Override
            public void write(int b) throws IOException {
                write(new byte[] {(byte) b}, 0, 1);
            }

            @Override
            public void write(byte[] b, int off, int len) throws IOException {
                try {
                    out.write(b, off, len);
                } catch (IOException e) {
                    readerLeft |= "Broken pipe".equals(e.getMessage());
                    throw e;
                }
            }
        }
    }
}
