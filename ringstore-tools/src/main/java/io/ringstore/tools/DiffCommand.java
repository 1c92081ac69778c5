package io.ringstore.tools;

import io.ringstore.Ring;
import io.ringstore.RingFileException;
import io.ringstore.RingStore;
import io.ringstore.family.RingVersion;
import io.ringstore.internal.TextLines;
import io.ringstore.migration.RingDiff;
import java.io.InputStream;
import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

final class DiffCommand extends Command {
    /** Rollout steps shown by default. */
    private static final List<Double> STEPS = List.of(1.0, 10.0, 50.0, 100.0);

    @Override
    String name() {
        return "diff";
    }

    @Override
    String description() {
        return "The exact fraction of the 32-bit hash line (so of keys) whose backend differs between two rings:\n"
                + "two ring files, or one file's two versions. Backends are matched by address and port, so two\n"
                + "generations of a backend list compare too. Also each backend's share moved out and in, and what\n"
                + "a rollout of p % moves (p × the fraction), shown only when A and B have the same backends (two versions\n"
                + "of one fleet); backends only in A or only in B are marked removed or added. Exact: a sweep over both\n"
                + "sorted point lists. For two rings whose families hash keys differently (v1 and libketama), the\n"
                + "expected fraction of keys, a key's two hashes taken as independent (1 - sum of share_a x share_b).";
    }

    private static final Option FEATURES =
            Option.valued("--features", "a,b", "compare the rings of this feature set (default: all backends)");
    private static final Option ALGORITHM_A =
            Option.valued("--algorithm-a", "V", "version of A: v1, v2 or v2:K (default: A's first)");
    private static final Option ALGORITHM_B = Option.valued("--algorithm-b", "V", "version of B (default: B's first)");
    private static final Option ROLLOUT =
            Option.valued("--rollout", "P", "also show what a rollout of P % moves (default steps: 1, 10, 50, 100)");
    private static final Option JSON = json("""
            one JSON object: moved_fraction (the exact fraction in [0, 1]), same_backends,
            a, b, rollout (meaningful only when same_backends), backends (each with
            change: kept, added or removed)""");

    @Override
    List<Option> options() {
        return List.of(FEATURES, ALGORITHM_A, ALGORITHM_B, ROLLOUT, JSON);
    }

    @Override
    List<String> forms() {
        return List.of("A B [{--features}] [{--algorithm-a}] [{--algorithm-b}] [{--rollout}] [{--json}]");
    }

    /** Two rings compared: the files they came from as named on the command line, and the rollout steps to show. */
    private record Report(String fileA, Ring a, String fileB, Ring b, RingDiff diff, List<Double> steps)
            implements Result {
        @Override
        public void text(PrintStream out) {
            RingDiff d = diff;
            out.printf(Locale.ROOT, "a: %s ring %s, %s%n", fileA, a, count(a.pointCount(), "point", "points"));
            out.printf(Locale.ROOT, "b: %s ring %s, %s%n", fileB, b, count(b.pointCount(), "point", "points"));
            out.printf(
                    Locale.ROOT,
                    "moved_fraction: %.9f (%.4f %% of keys change backend)%n",
                    d.movedFraction(),
                    d.movedFraction() * 100);
            Set<String> all = endpoints(d);
            long added = all.stream().filter(e -> change(d, e).equals("added")).count();
            long removed =
                    all.stream().filter(e -> change(d, e).equals("removed")).count();
            long kept = all.size() - added - removed;
            if (kept == 0 && !all.isEmpty()) {
                out.printf(
                        "backends: none in common (%d in a, %d in b): different fleets, so every key moves; no rollout lines%n",
                        removed, added);
            } else if (!sameBackends(d)) {
                out.printf(
                        "backends: %d in both, %d added, %d removed; rollout lines are for two rings of the same backends only%n",
                        kept, added, removed);
            } else {
                for (double p : steps) {
                    out.printf(Locale.ROOT, "rollout %6.2f %%: moves %.4f %% of keys%n", p, d.movedAtRollout(p) * 100);
                }
            }
            out.printf(
                    "%n  %-46s %10s %10s %10s %10s  %s%n",
                    "backend", "share_a", "share_b", "moved_out", "moved_in", "change");
            for (String e : all) {
                String change = change(d, e);
                out.printf(
                        Locale.ROOT,
                        "  %-46s %10.6f %10.6f %10.6f %10.6f  %s%n",
                        e,
                        get(d.before(), e),
                        get(d.after(), e),
                        get(d.movedOut(), e),
                        get(d.movedIn(), e),
                        change.equals("kept") ? "" : change);
            }
        }

        @Override
        public void json(Json j) {
            RingDiff d = diff;
            j.field("moved_fraction", d.movedFraction()).field("same_backends", sameBackends(d));
            j.beginObject("a")
                    .field("file", fileA)
                    .field("version", a.version().toString())
                    .field("points", a.pointCount())
                    .end();
            j.beginObject("b")
                    .field("file", fileB)
                    .field("version", b.version().toString())
                    .field("points", b.pointCount())
                    .end();
            j.beginArray("rollout");
            for (double p : steps) {
                j.begin()
                        .field("percent", p)
                        .field("moved_fraction", d.movedAtRollout(p))
                        .end();
            }
            j.endArray().beginArray("backends");
            for (String e : endpoints(d)) {
                j.begin()
                        .field("address", e)
                        .field("share_a", get(d.before(), e))
                        .field("share_b", get(d.after(), e))
                        .field("moved_out", get(d.movedOut(), e))
                        .field("moved_in", get(d.movedIn(), e))
                        .field("change", change(d, e))
                        .end();
            }
            j.endArray();
        }
    }

    @Override
    int run(Args args, InputStream in, PrintStream out, PrintStream err)
            throws UsageException, FailedException, RingFileException {
        if (args.positional.size() != 2) {
            throw new UsageException("expected two ring files A and B (the same file twice to compare its versions)");
        }
        List<Double> steps = STEPS;
        if (args.has(ROLLOUT.name())) {
            double p = TextLines.percent(args.get(ROLLOUT.name()), 1); // 25 and 25% alike, as everywhere
            if (!(p >= 0 && p <= 100)) {
                throw new UsageException("--rollout must be a percentage from 0 to 100: --rollout="
                        + TextLines.quote(args.get(ROLLOUT.name())));
            }
            steps = List.of(p);
        }
        Set<String> features = LookupCommand.features(args);
        try (RingStore a = RingStore.open(args.file(0));
                RingStore b = RingStore.open(args.file(1))) {
            RingVersion va = AlgorithmOption.select(args.get(ALGORITHM_A.name()), a);
            RingVersion vb = AlgorithmOption.select(args.get(ALGORITHM_B.name()), b);
            Ring ra;
            Ring rb;
            try {
                ra = a.ring(features, va);
                rb = b.ring(features, vb);
            } catch (IllegalArgumentException e) {
                throw new UsageException(e.getMessage());
            }
            print(
                    new Report(args.positional.get(0), ra, args.positional.get(1), rb, RingDiff.between(ra, rb), steps),
                    args,
                    out);
            return Main.OK;
        }
    }

    private static Set<String> endpoints(RingDiff d) {
        Set<String> all = new TreeSet<>(d.before().keySet());
        all.addAll(d.after().keySet());
        return all;
    }

    private static double get(Map<String, Double> m, String k) {
        return m.getOrDefault(k, 0.0);
    }

    /** A backend's place in the comparison: in both rings, only in B, or only in A. */
    private static String change(RingDiff d, String endpoint) {
        return !d.before().containsKey(endpoint) ? "added" : !d.after().containsKey(endpoint) ? "removed" : "kept";
    }

    /**
     * Whether A and B have the same backends, so that they are two versions of one fleet and a rollout
     * between them means something (a rollout moves keys from one ring of a fleet to another).
     */
    private static boolean sameBackends(RingDiff d) {
        return d.before().keySet().equals(d.after().keySet());
    }
}
