package io.ringstore.tools;

import io.ringstore.internal.TextLines;


import java.io.BufferedOutputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.Charset;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One subcommand: a name, a description, its options (declared once: the parser, the synopsis and
 * {@code --help} come from them), and a run method that never exits the JVM.
 */
abstract class Command {
    /** Wrong arguments: printed with the usage line, exit 2. */
    static final class UsageException extends Exception {
        private static final long serialVersionUID = 1L;

        UsageException(String message) {
            super(message);
        }
    }

    /** A data or I/O failure: printed as one line, exit 1. */
    static final class FailedException extends Exception {
        private static final long serialVersionUID = 1L;

        FailedException(String message) {
            super(message);
        }
    }

    abstract String name();

    abstract String description();

    /**
     * The description's first sentence, whole, as the top-level {@code --help} lists it beside the
     * name: wrapped at {@value #SUMMARY_WIDTH} columns, later lines indented under the first.
     */
    final String summary() {
        String text = String.join(" ", description().lines().toList());
        Matcher end = SENTENCE_END.matcher(text);
        String sentence = end.find() ? text.substring(0, end.start() + 1) : text;
        StringBuilder sb = new StringBuilder();
        int lineStart = 0;
        for (String word : sentence.split(" ")) {
            if (sb.length() > lineStart && sb.length() - lineStart + 1 + word.length() > SUMMARY_WIDTH - SUMMARY_COLUMN) {
                sb.append('\n').append(" ".repeat(SUMMARY_COLUMN));
                lineStart = sb.length();
            } else if (sb.length() > lineStart) {
                sb.append(' ');
            }
            sb.append(word);
        }
        return sb.toString();
    }

    /** Where the top-level {@code --help} starts a command's summary ({@code "  %-10s "}), and its right margin. */
    private static final int SUMMARY_COLUMN = 13;
    private static final int SUMMARY_WIDTH = 100;
    /** A full stop that ends a sentence: followed by a blank or the end, not inside {@code v1.2} or {@code ...}. */
    private static final Pattern SENTENCE_END = Pattern.compile("(?<!\\.)\\.(?=\\s|$)");

    /** The options, declared once each, in the order {@code --help} lists them. */
    abstract List<Option> options();

    /**
     * The synopsis after "ringstore NAME", one entry per form of the command: text with {@code {--name}}
     * where an option of {@link #options()} goes, written as {@link Option#synopsis()} writes it.
     */
    abstract List<String> forms();

    abstract int run(Args args, InputStream in, PrintStream out, PrintStream err) throws UsageException, FailedException;

    /** Every command's {@code -h, --help}; the parser knows it by name. */
    private static final Option HELP = Option.flag("--help", "this text").alias("-h");

    private static final Pattern OPTION_REFERENCE = Pattern.compile("\\{([^}]+)}");

    /** The synopsis lines after "ringstore NAME": {@link #forms()} with every option written out. */
    final List<String> synopses() {
        List<String> lines = new ArrayList<>();
        for (String form : forms()) {
            lines.add(OPTION_REFERENCE.matcher(form).replaceAll(m -> Matcher.quoteReplacement(option(m.group(1)).synopsis())));
        }
        return lines;
    }

    private Option option(String name) {
        for (Option o : options()) {
            if (o.names().contains(name)) {
                return o;
            }
        }
        throw new IllegalStateException("the synopsis of " + name() + " names " + name + ", which is not one of its options");
    }

    /**
     * Runs the command with a buffered stdout (one write per 64 KiB instead of one per printed piece),
     * flushed before any error line so the two streams keep their order.
     */
    final int execute(String[] argv, byte[][] rawArgv, InputStream in, PrintStream stdout, PrintStream err) {
        BufferedStdout out = new BufferedStdout(stdout);
        String error = null;
        int code;
        try {
            Args args = Args.parse(argv, rawArgv, options());
            if (args.has("--help")) {
                out.print(help());
                code = Main.OK;
            } else {
                code = run(args, in, out, err);
            }
            if (code == Main.OK && cannotWrite(out)) {
                error = "cannot write the output (stdout closed or disk full?)";
                code = Main.FAILED;
            }
        } catch (UsageException e) {
            out.flush();
            err.println(prefix() + e.getMessage());
            err.println("usage: ringstore " + name() + " " + String.join("; or ringstore " + name() + " ", synopses())
                    + "  (ringstore " + name() + " --help)");
            return Main.USAGE;
        } catch (FailedException e) {
            error = e.getMessage();
            code = Main.FAILED;
        } catch (UncheckedIOException e) {
            error = "I/O error: " + e.getCause().getMessage();
            code = Main.FAILED;
        } catch (InternalError e) { // SIGBUS, as the JVM reports it: a page of a mapped file is gone
            error = "a mapped ring file shrank while in use (rewritten in place? publish new files by rename only)";
            code = Main.FAILED;
        } catch (RuntimeException e) { // a defect of ours: still one line, never a trace
            error = "internal error, please report: " + e;
            code = Main.FAILED;
        } catch (OutOfMemoryError e) {
            error = "out of heap memory (" + e.getMessage() + ") with -Xmx" + heapGiB(Runtime.getRuntime().maxMemory())
                    + "g; give the JVM more, for example RINGSTORE_JAVA_OPTS=-Xmx" + 2 * heapGiB(Runtime.getRuntime().maxMemory()) + "g";
            code = Main.FAILED;
        }
        out.flush();
        if (error != null) {
            err.println(prefix() + (error.length() > MAX_ERROR_LENGTH // a path or value quoted whole, 100 KB long
                    ? error.substring(0, MAX_ERROR_LENGTH) + "... (cut: " + error.length() + " characters in all)" : error));
        }
        return code;
    }

    /** What starts every error line of this command: {@code ringstore NAME: }. */
    final String prefix() {
        return "ringstore " + name() + ": ";
    }

    /**
     * The process's stdout behind a 64 KiB buffer. A write failure of the stream underneath (a closed
     * pipe, a full disk) shows in {@link #checkError()} like one of this stream's own.
     */
    static final class BufferedStdout extends PrintStream {
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
     * The process's own stdout ({@link Main#main}), which remembers when a write failed with EPIPE: a
     * {@link PrintStream} keeps only "an error happened", and a closed pipe must be told from ENOSPC.
     * The JVM ignores SIGPIPE, so EPIPE reaches Java as an {@link IOException} whose message is the
     * C library's text for it; that text is the only thing that tells the two apart.
     */
    static final class PipeStdout extends PrintStream {
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

    /**
     * Whether writing {@code out} failed for a reason worth an error line and exit 1: a full disk, yes;
     * the reader closing the pipe ({@code ringstore dump f | head}), no: that is a normal end of the
     * output, silent and exit 0, as for {@code cat}.
     */
    static boolean cannotWrite(PrintStream out) {
        return out.checkError() && !(out instanceof BufferedStdout b && b.target instanceof PipeStdout p && p.watch.readerLeft);
    }

    /** {@code n} and the noun that goes with it: {@code 1 segment}, {@code 2 segments}, {@code 0 segments}. */
    static String count(long n, String one, String many) {
        return n + " " + (n == 1 ? one : many);
    }

    /** The longest error line printed whole; input quoted in a message is cut before this, this is the net. */
    private static final int MAX_ERROR_LENGTH = 1000;

    /** A heap size in whole GiB, rounded up. */
    private static long heapGiB(long bytes) {
        return Math.max(1, (bytes + (1L << 30) - 1) >> 30);
    }

    /** An output file that can be created: not a directory, in a directory that exists. */
    static Path writableTarget(String name) throws FailedException {
        if (name.isEmpty()) {
            throw new FailedException("the output path is empty");
        }
        Path p;
        try {
            p = Path.of(name);
        } catch (InvalidPathException e) {
            throw new FailedException(TextLines.quote(name) + ": not a valid path (" + e.getReason() + ")");
        }
        if (Files.isDirectory(p)) {
            throw new FailedException(name + ": is a directory, not a file");
        }
        Path dir = p.toAbsolutePath().getParent();
        if (dir == null || !Files.isDirectory(dir)) {
            throw new FailedException(name + ": directory " + dir + " does not exist");
        }
        return p;
    }

    final String help() {
        StringBuilder sb = new StringBuilder();
        for (String synopsis : synopses()) {
            sb.append(sb.isEmpty() ? "usage: " : "       ").append("ringstore ").append(name()).append(' ').append(synopsis).append('\n');
        }
        sb.append('\n').append(description()).append("\n\n");
        options().forEach(o -> sb.append(o.helpLines()));
        return sb.append(HELP.helpLines())
                .append("\nexit codes: 0 ok, 1 failed, 2 wrong arguments\n").toString();
    }

    /**
     * Parsed command line: options (last value wins unless repeated is rejected) and positional
     * arguments, each also as the bytes it was passed as ({@link ArgumentBytes}).
     */
    static final class Args {
        final Map<String, String> options = new LinkedHashMap<>();
        final List<String> positional = new ArrayList<>();
        /** {@link #positional}'s bytes, same index: what keys are hashed as. */
        final List<byte[]> positionalBytes = new ArrayList<>();

        /** Parses arguments given as strings only (their bytes: UTF-8). */
        static Args parse(String[] argv, List<Option> declared) throws UsageException {
            return parse(argv, ArgumentBytes.utf8(argv), declared);
        }

        /** Values are stored under the option's last name; two spellings of one option are an error, as is a value option given twice. */
        static Args parse(String[] argv, byte[][] rawArgv, List<Option> declared) throws UsageException {
            Map<String, Option> byName = new HashMap<>();
            for (Option o : declared) {
                o.names().forEach(n -> byName.put(n, o));
            }
            Map<String, String> spelledAs = new HashMap<>();
            Args a = new Args();
            boolean onlyPositional = false;
            for (int i = 0; i < argv.length; i++) {
                String s = argv[i];
                if (onlyPositional || !s.startsWith("-") || s.equals("-")) {
                    a.positional.add(s);
                    a.positionalBytes.add(rawArgv[i]);
                    continue;
                }
                if (s.equals("--")) {
                    onlyPositional = true;
                    continue;
                }
                String name = s;
                String value = null;
                int eq = s.indexOf('=');
                if (s.startsWith("--") && eq > 0) {
                    name = s.substring(0, eq);
                    value = s.substring(eq + 1);
                }
                Option o = byName.get(name);
                if (name.equals("-h") || name.equals("--help")) {
                    a.options.put("--help", "");
                } else if (o != null && o.takesValue()) {
                    if (value == null) {
                        if (i + 1 >= argv.length) {
                            throw new UsageException("option " + name + " needs a value");
                        }
                        value = argv[++i];
                    }
                    String earlier = spelledAs.put(o.name(), name);
                    if (earlier != null) {
                        throw new UsageException(earlier.equals(name) ? "option " + name + " given twice"
                                : "give " + String.join(" or ", o.names()) + ", not both");
                    }
                    a.options.put(o.name(), value);
                } else if (o != null && value == null) {
                    a.options.put(o.name(), "");
                } else {
                    throw new UsageException("unknown option '" + s + "'");
                }
            }
            return a;
        }

        boolean has(String option) {
            return options.containsKey(option);
        }

        String get(String option) {
            return options.get(option);
        }

        long getLong(String option, long min, long max, long dflt) throws UsageException {
            String v = options.get(option);
            if (v == null) {
                return dflt;
            }
            try {
                long n = Long.parseLong(v);
                if (n < min || n > max) {
                    throw new UsageException(option + " must be from " + min + " to " + max + ": " + option + "=" + TextLines.quote(v));
                }
                return n;
            } catch (NumberFormatException e) {
                throw new UsageException(option + " must be a whole number: " + option + "=" + TextLines.quote(v));
            }
        }
    }
}
