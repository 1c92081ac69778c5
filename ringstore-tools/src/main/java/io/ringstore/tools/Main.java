package io.ringstore.tools;

import io.ringstore.internal.format.RingFileDescriptor;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;

/**
 * The {@code ringstore} command. Exit codes: {@value #OK} ok, {@value #FAILED} failed,
 * {@value #USAGE} wrong arguments. Errors are one line on stderr, prefixed with the command.
 */
public final class Main {
    /** Exit code: the command did what it was asked. */
    public static final int OK = 0;
    /** Exit code: bad input file, I/O error. */
    public static final int FAILED = 1;
    /** Exit code: wrong arguments. */
    public static final int USAGE = 2;

    /** The command names, in the order usage lists them. */
    static final List<String> NAMES =
            List.of("build", "lookup", "dump", "verify", "diff", "analyze", "recommend", "state");

    static List<Command> commands() {
        return NAMES.stream().map(Main::command).toList();
    }

    /**
     * The command of that name, null if none. Only that command's class is loaded and initialised (its
     * options): a one-shot run does not pay for the other seven.
     */
    static Command command(String name) {
        return switch (name) {
            case "build" -> new BuildCommand();
            case "lookup" -> new LookupCommand();
            case "dump" -> new DumpCommand();
            case "verify" -> new VerifyCommand();
            case "diff" -> new DiffCommand();
            case "analyze" -> new AnalyzeCommand();
            case "recommend" -> new RecommendCommand();
            case "state" -> new StateCommand();
            default -> null;
        };
    }

    private Main() {}

    /**
     * Keys given as arguments are the bytes the shell passed, whatever the locale: see {@link ArgumentBytes}.
     *
     * @param args the command line
     */
    public static void main(String[] args) {
        // What the library logs (lookup --watch: a refused file, a switch) in one line, as the CLI's own errors.
        if (System.getProperty("java.util.logging.SimpleFormatter.format") == null) {
            System.setProperty("java.util.logging.SimpleFormatter.format", "ringstore: %4$s: %5$s%n");
        }
        int code = run(
                args, ArgumentBytes.ofThisProcess(args), System.in, Stdout.ofProcess(System.out.charset()), System.err);
        // Success returns: System.exit starts the JDK's System.Logger (and java.util.logging) to log the
        // exit, about 7 ms of a one-key lookup's 0.1 s. Every thread the CLI leaves is a daemon; a command's
        // own threads (build's) have ended when run returns.
        if (code != OK) {
            System.exit(code);
        }
    }

    /**
     * Runs one command line; never calls {@code System.exit}, so tests can call it in-process. Key
     * arguments are the UTF-8 bytes of {@code args}.
     *
     * @param args the command line, without the program name
     * @param in   standard input
     * @param out  standard output
     * @param err  standard error
     * @return the exit code: {@value #OK}, {@value #FAILED} or {@value #USAGE}
     */
    public static int run(String[] args, InputStream in, PrintStream out, PrintStream err) {
        return run(args, ArgumentBytes.utf8(args), in, out, err);
    }

    /**
     * Runs one command line whose arguments were passed as {@code rawArgs} (same length as {@code
     * args}): options and file names are read from {@code args}, keys from {@code rawArgs}.
     */
    static int run(String[] args, byte[][] rawArgs, InputStream in, PrintStream out, PrintStream err) {
        if (rawArgs.length != args.length) {
            throw new IllegalArgumentException(
                    "one raw argument per argument: args=" + args.length + " rawArgs=" + rawArgs.length);
        }
        if (args.length == 0 || isHelp(args[0])) {
            // help COMMAND is COMMAND --help; help of help (--help --help, help help) is this text
            if (args.length > 1 && !isHelp(args[1])) {
                return run(new String[] {args[1], "--help"}, in, out, err);
            }
            (args.length == 0 ? err : out).print(usage());
            return args.length == 0 ? USAGE : printed(out, err);
        }
        if (args[0].equals("--version")) {
            out.print(version());
            return printed(out, err);
        }
        Command c = command(args[0]);
        if (c != null) {
            return c.execute(
                    Arrays.copyOfRange(args, 1, args.length),
                    Arrays.copyOfRange(rawArgs, 1, rawArgs.length),
                    in,
                    out,
                    err);
        }
        err.println("ringstore: unknown command '" + args[0] + "' (commands: " + String.join(", ", NAMES)
                + "; see ringstore --help)");
        return USAGE;
    }

    private static boolean isHelp(String arg) {
        return arg.equals("--help") || arg.equals("-h") || arg.equals("help");
    }

    /** OK, or FAILED with one line when the text could not be written (a full disk; a closed pipe is a normal end). */
    private static int printed(PrintStream out, PrintStream err) {
        out.flush();
        if (Stdout.cannotWrite(out)) {
            err.println("ringstore: cannot write the output (stdout closed or disk full?)");
            return FAILED;
        }
        return OK;
    }

    /** The synopsis of every command form, as docs/cli.md's "Synopsis" shows them. */
    static List<String> synopses() {
        List<String> lines = new ArrayList<>();
        for (Command c : commands()) {
            c.synopses().forEach(s -> lines.add("ringstore " + c.name() + " " + s));
        }
        lines.add("ringstore COMMAND --help");
        lines.add("ringstore --version");
        return lines;
    }

    /**
     * One fact a line: this tool's version, the ring-file format versions it reads and writes, and the
     * JDK it runs on, for a bug report or to check an installation.
     */
    static String version() {
        Properties build = new Properties();
        // A resource Maven fills in at build time: unlike the manifest's Implementation-Version it is
        // found on the module path too.
        try (InputStream in = Main.class.getResourceAsStream("version.properties")) {
            if (in == null) {
                throw new IllegalStateException("version.properties is missing from the ringstore-tools jar");
            }
            build.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return "ringstore " + build.getProperty("version") + "\n"
                + "ring file format: reads versions " + RingFileDescriptor.MIN_SUPPORTED_VERSION + " to "
                + RingFileDescriptor.MAX_SUPPORTED_VERSION + "; writes " + RingFileDescriptor.FORMAT_VERSION + ", or "
                + RingFileDescriptor.FORMAT_VERSION_BACKEND_FLAGS + " when a backend is marked down or named, "
                + RingFileDescriptor.FORMAT_VERSION_VIEWS + " when a ring is a view (build --views), "
                + RingFileDescriptor.FORMAT_VERSION_WIDE
                + " when a ring has 64-bit points (envoy, envoy-murmur2, grpc)\n"
                + "java: " + Runtime.version() + " (" + System.getProperty("java.vendor") + ")\n"
                + "java.home: " + System.getProperty("java.home") + "\n";
    }

    static String usage() {
        StringBuilder sb = new StringBuilder("usage: ")
                .append(String.join("\n       ", synopses()))
                .append("\n\ncommands:\n");
        for (Command c : commands()) {
            sb.append(String.format("  %-10s %s%n", c.name(), c.summary()));
        }
        sb.append("\nexit codes: 0 ok, 1 failed (bad input file, I/O error), 2 wrong arguments\n");
        return sb.toString();
    }
}
