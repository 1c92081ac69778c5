package io.ringstore.tools;

import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** One subcommand: a name, a description, its option syntax, and a run method that never exits the JVM. */
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

    /** The synopsis after "ringstore NAME". */
    abstract String synopsis();

    /** Option lines for --help. */
    abstract String options();

    /** Options that take a value (e.g. "-o", "--features"); others are flags. */
    abstract Set<String> valueOptions();

    abstract Set<String> flagOptions();

    abstract int run(Args args, InputStream in, PrintStream out, PrintStream err) throws UsageException, FailedException;

    final int execute(String[] argv, InputStream in, PrintStream out, PrintStream err) {
        String prefix = "ringstore " + name() + ": ";
        try {
            Args args = Args.parse(argv, valueOptions(), flagOptions());
            if (args.has("--help")) {
                out.print(help());
                return Main.OK;
            }
            int code = run(args, in, out, err);
            if (code == Main.OK && out.checkError()) {
                err.println(prefix + "cannot write the output (stdout closed or disk full?)");
                return Main.FAILED;
            }
            return code;
        } catch (UsageException e) {
            err.println(prefix + e.getMessage());
            err.println("usage: ringstore " + name() + " " + synopsis() + "  (ringstore " + name() + " --help)");
            return Main.USAGE;
        } catch (FailedException e) {
            err.println(prefix + e.getMessage());
            return Main.FAILED;
        } catch (UncheckedIOException e) {
            err.println(prefix + "I/O error: " + e.getCause().getMessage());
            return Main.FAILED;
        } catch (OutOfMemoryError e) {
            err.println(prefix + "out of heap memory (" + e.getMessage() + "); give the JVM more with RINGSTORE_JAVA_OPTS=-Xmx8g");
            return Main.FAILED;
        }
    }

    /** An output file that can be created: not a directory, in a directory that exists. */
    static Path writableTarget(String name) throws FailedException {
        Path p = Path.of(name);
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
        return "usage: ringstore " + name() + " " + synopsis() + "\n\n" + description() + "\n\n" + options()
                + "  -h, --help            this text\n\nexit codes: 0 ok, 1 failed, 2 wrong arguments\n";
    }

    /** Parsed command line: options (last value wins unless repeated is rejected) and positional arguments. */
    static final class Args {
        final Map<String, String> options = new LinkedHashMap<>();
        final List<String> positional = new ArrayList<>();

        static Args parse(String[] argv, Set<String> valueOptions, Set<String> flagOptions) throws UsageException {
            Args a = new Args();
            boolean onlyPositional = false;
            for (int i = 0; i < argv.length; i++) {
                String s = argv[i];
                if (onlyPositional || !s.startsWith("-") || s.equals("-")) {
                    a.positional.add(s);
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
                if (name.equals("-h") || name.equals("--help")) {
                    a.options.put("--help", "");
                } else if (valueOptions.contains(name)) {
                    if (value == null) {
                        if (i + 1 >= argv.length) {
                            throw new UsageException("option " + name + " needs a value");
                        }
                        value = argv[++i];
                    }
                    if (a.options.put(name, value) != null) {
                        throw new UsageException("option " + name + " given twice");
                    }
                } else if (flagOptions.contains(name) && value == null) {
                    a.options.put(name, "");
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
                    throw new UsageException(option + " must be from " + min + " to " + max + ": " + option + "=" + v);
                }
                return n;
            } catch (NumberFormatException e) {
                throw new UsageException(option + " must be a whole number: " + option + "=" + v);
            }
        }
    }
}
