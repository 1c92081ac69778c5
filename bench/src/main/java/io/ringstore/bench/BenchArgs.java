package io.ringstore.bench;

/** Positional count arguments of the measuring programs: a bad one is one line on stderr and exit 2, no stack trace. */
final class BenchArgs {
    private BenchArgs() {}

    /**
     * {@return {@code args[i]} as a positive int, or {@code fallback} when there is no such argument}
     * Exits with status 2 after one line naming the program, the argument and {@code usage} when it
     * is not a positive int.
     */
    static int count(String[] args, int i, int fallback, String program, String usage) {
        if (args.length <= i) {
            return fallback;
        }
        try {
            int n = Integer.parseInt(args[i]);
            if (n > 0) {
                return n;
            }
        } catch (NumberFormatException e) {
            // said below
        }
        System.err.println(program + ": argument " + (i + 1) + " must be a positive integer, got '" + args[i]
                + "' (usage: " + usage + ")");
        System.exit(2);
        throw new AssertionError(); // not reached
    }
}
