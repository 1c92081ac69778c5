package io.ringstore.tools;

import io.ringstore.RingFileException;
import io.ringstore.builder.BackendsFileException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.util.List;
import java.util.function.Consumer;

/**
 * {@code ringstore analyze}: the load formula against rings built with the real point generation. Two
 * commands behind one name and one set of flags, told apart by {@code --backends}: {@link
 * AnalyzeSweepCommand} simulates N random backends over a range of point multiples, {@link
 * AnalyzeFileCommand} builds the rings of a backends file. Each refuses the other's options with the
 * reason; {@code --algorithm} has a default of its own in each (v2 for a sweep, v1 for a file, as build).
 */
final class AnalyzeCommand extends Command {
    /** The options both take. */
    static final AlgorithmOption ALGORITHM = AlgorithmOption.ANALYZE;

    static final Option CSV = Option.valued("--csv", "FILE", "write the table as CSV (header row first)");
    private static final Option QUIET =
            Option.flag("--quiet", "print nothing but errors (no table, no progress): for --csv and --svg");

    /** One of analyze's two commands: its synopsis form and its work. */
    sealed interface Mode permits AnalyzeSweepCommand, AnalyzeFileCommand {
        /** The synopsis after "ringstore analyze", as {@link Command#forms()} writes one. */
        String form();

        /**
         * Checks the arguments it was given and does the work: the table to {@code out}, progress lines to
         * {@code progress}.
         */
        void run(Args args, PrintStream out, Consumer<String> progress)
                throws UsageException, FailedException, BackendsFileException, RingFileException;
    }

    private static final Mode SWEEP = new AnalyzeSweepCommand();
    private static final Mode FILE = new AnalyzeFileCommand();

    @Override
    String name() {
        return "analyze";
    }

    @Override
    String description() {
        return "The load imbalance of consistent-hash rings, predicted and measured. The CV is the standard deviation\n"
                + "of the backends' shares of the hash line over the mean share; on a continuous ring with k points per\n"
                + "backend it is sqrt((N-1)/(N*k+1)) (docs/math.md); 32-bit point hashes collide and add a bias.\n\n"
                + "With --backends N: simulates rings of N random backends with k points each for every k in --points,\n"
                + "one ring per seed, built as the ring builder builds them (CRC-32 points, equal hashes dropped), and\n"
                + "prints formula against simulation as the rows are done (progress on stderr), then where the two part.\n"
                + "With a BACKENDS_FILE: builds its rings in a temporary file and shows every feature ring's predicted and\n"
                + "measured CV and its bytes.";
    }

    @Override
    List<Option> options() {
        return List.of(
                AnalyzeSweepCommand.BACKENDS,
                AnalyzeSweepCommand.POINTS,
                AnalyzeSweepCommand.STEPS,
                AnalyzeSweepCommand.SEEDS,
                InputFormat.FROM,
                InputFormat.POOL,
                InputFormat.BACKEND,
                ALGORITHM.algorithm,
                ALGORITHM.pointMultiple,
                BuildCommand.VIEWS,
                AnalyzeSweepCommand.SVG,
                CSV,
                QUIET);
    }

    @Override
    List<String> forms() {
        return List.of(SWEEP.form(), FILE.form());
    }

    @Override
    int run(Args args, InputStream in, PrintStream stdout, PrintStream err)
            throws UsageException, FailedException, BackendsFileException, RingFileException {
        boolean quiet = args.has(QUIET.name());
        Consumer<String> progress = quiet ? s -> {} : new ThrottledProgress(err, "ringstore analyze: ");
        PrintStream out = quiet ? new PrintStream(OutputStream.nullOutputStream()) : stdout;
        (args.has(AnalyzeSweepCommand.BACKENDS.name()) ? SWEEP : FILE).run(args, out, progress);
        return Main.OK;
    }
}
