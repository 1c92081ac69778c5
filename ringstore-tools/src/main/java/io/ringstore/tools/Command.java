package io.ringstore.tools;

import io.ringstore.RingFileException;
import io.ringstore.builder.BackendsFileException;
import io.ringstore.state.StateFileException;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One subcommand: a name, a description, its options (declared once: the parser, the synopsis and
 * {@code --help} come from them), and a run method that never exits the JVM. The base does what every
 * command shares: parsing ({@link Args}), {@code --help}, the buffered stdout ({@link Stdout}), the
 * error line and exit code of every failure ({@link Failures}), and {@code --json} ({@link #print}).
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
        Matcher end = Patterns.SENTENCE_END.matcher(text);
        String sentence = end.find() ? text.substring(0, end.start() + 1) : text;
        StringBuilder sb = new StringBuilder();
        int lineStart = 0;
        for (String word : sentence.split(" ")) {
            if (sb.length() > lineStart
                    && sb.length() - lineStart + 1 + word.length() > SUMMARY_WIDTH - SUMMARY_COLUMN) {
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
    /** The options, declared once each, in the order {@code --help} lists them. */
    abstract List<Option> options();

    /**
     * The synopsis after "ringstore NAME", one entry per form of the command: text with {@code {--name}}
     * where an option of {@link #options()} goes, written as {@link Option#synopsis()} writes it.
     */
    abstract List<String> forms();

    /**
     * Does the command's work, printing to {@code out}; returns an exit code. What it throws is turned
     * into one line on {@code err} by {@link #execute}: a bad input file's exception as it is.
     */
    abstract int run(Args args, InputStream in, PrintStream out, PrintStream err)
            throws UsageException, FailedException, RingFileException, BackendsFileException, StateFileException,
                    IOException;

    /** The name of {@code --json}: the commands that take it declare it with their help ({@link #json}). */
    private static final String JSON = "--json";

    /** Every command's {@code -h, --help}; the parser knows it by name. */
    private static final Option HELP = Option.flag("--help", "this text").alias("-h");

    /**
     * The patterns of help and synopsis texts, compiled when one is printed: a lookup of one key does
     * not pay for compiling them (about 1 ms of a fresh JVM's 50).
     */
    private static final class Patterns {
        /** A full stop that ends a sentence: followed by a blank or the end, not inside {@code v1.2} or {@code ...}. */
        static final Pattern SENTENCE_END = Pattern.compile("(?<!\\.)\\.(?=\\s|$)");

        static final Pattern OPTION_REFERENCE = Pattern.compile("\\{([^}]+)}");
    }

    /** The synopsis lines after "ringstore NAME": {@link #forms()} with every option written out. */
    final List<String> synopses() {
        List<String> lines = new ArrayList<>();
        for (String form : forms()) {
            lines.add(Patterns.OPTION_REFERENCE
                    .matcher(form)
                    .replaceAll(m -> Matcher.quoteReplacement(option(m.group(1)).synopsis())));
        }
        return lines;
    }

    private Option option(String name) {
        for (Option o : options()) {
            if (o.names().contains(name)) {
                return o;
            }
        }
        throw new IllegalStateException(
                "the synopsis of " + name() + " names " + name + ", which is not one of its options");
    }

    /**
     * Runs the command with a buffered stdout, flushed before any error line so the two streams keep
     * their order. Wrong arguments print the message and the usage (exit {@value Main#USAGE}); any
     * failure prints one line, {@link Failures#message} (exit {@value Main#FAILED}).
     */
    final int execute(String[] argv, byte[][] rawArgv, InputStream in, PrintStream stdout, PrintStream err) {
        PrintStream out = Stdout.buffered(stdout);
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
            if (code == Main.OK && Stdout.cannotWrite(out)) {
                error = "cannot write the output (stdout closed or disk full?)";
                code = Main.FAILED;
            }
        } catch (UsageException e) {
            out.flush();
            err.println(prefix() + e.getMessage());
            err.println("usage: ringstore " + name() + " " + String.join("; or ringstore " + name() + " ", synopses())
                    + "  (ringstore " + name() + " --help)");
            return Main.USAGE;
        } catch (Exception | InternalError | OutOfMemoryError e) {
            error = Failures.message(e);
            code = Main.FAILED;
        }
        out.flush();
        if (error != null) {
            err.println(prefix() + error);
        }
        return code;
    }

    /** What starts every error line of this command: {@code ringstore NAME: }. */
    final String prefix() {
        return "ringstore " + name() + ": ";
    }

    /** {@code --json}, with the help of the command whose {@link Result} it prints as JSON: which keys. */
    static Option json(String help) {
        return Option.flag(JSON, help);
    }

    /** Prints {@code result}: with {@code --json} as one JSON object on one line, as text otherwise. */
    static void print(Result result, Args args, PrintStream out) {
        if (args.has(JSON)) {
            Json object = new Json(out).begin();
            result.json(object);
            object.end();
            out.println();
        } else {
            result.text(out);
        }
    }

    /** {@code n} and the noun that goes with it: {@code 1 segment}, {@code 2 segments}, {@code 0 segments}. */
    static String count(long n, String one, String many) {
        return n + " " + (n == 1 ? one : many);
    }

    final String help() {
        StringBuilder sb = new StringBuilder();
        for (String synopsis : synopses()) {
            sb.append(sb.isEmpty() ? "usage: " : "       ")
                    .append("ringstore ")
                    .append(name())
                    .append(' ')
                    .append(synopsis)
                    .append('\n');
        }
        sb.append('\n').append(description()).append("\n\n");
        options().forEach(o -> sb.append(o.helpLines()));
        return sb.append(HELP.helpLines())
                .append("\nexit codes: 0 ok, 1 failed, 2 wrong arguments\n")
                .toString();
    }
}
