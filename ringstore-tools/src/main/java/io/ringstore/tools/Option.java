package io.ringstore.tools;

import java.util.ArrayList;
import java.util.List;

/**
 * One command-line option, declared once: its names (a short alias first, the long name last), the
 * name of its value ({@code null} for a flag), and its help text. The parser, the synopsis and
 * {@code --help} are all generated from a command's list of these.
 *
 * @param names         {@code -o}, {@code --output}: every spelling the parser accepts; the last is the
 *                      name {@link Args} stores the value under
 * @param value         the value's name in {@code --help} ({@code FILE}), or {@code null} for a flag
 * @param synopsisValue the value as the synopsis shows it ({@code RINGFILE}, {@code v1|v2[:K]})
 * @param help          the text beside the option in {@code --help}; lines after the first are indented
 *                      under the first
 */
record Option(List<String> names, String value, String synopsisValue, String help) {
    /** The column where help texts start: two spaces, the option padded to 20, two spaces. */
    private static final int HELP_COLUMN = 24;

    static Option flag(String name, String help) {
        return new Option(List.of(name), null, null, help);
    }

    static Option valued(String name, String value, String help) {
        return new Option(List.of(name), value, value, help);
    }

    /** The same option also spelled {@code alias} (listed first in help and synopsis). */
    Option alias(String alias) {
        List<String> spellings =
                new ArrayList<>(names.size() + 1); // not a stream: every command's class init makes one
        spellings.add(alias);
        spellings.addAll(names);
        return new Option(List.copyOf(spellings), value, synopsisValue, help);
    }

    /** The same option, its value shown as {@code shown} in the synopsis. */
    Option shownAs(String shown) {
        return new Option(names, value, shown, help);
    }

    String name() {
        return names.getLast();
    }

    boolean takesValue() {
        return value != null;
    }

    /** As the synopsis writes it: {@code -o RINGFILE}, {@code --json}. */
    String synopsis() {
        return takesValue() ? names.getFirst() + " " + synopsisValue : names.getFirst();
    }

    /** The option's lines in {@code --help}. */
    String helpLines() {
        String head = String.join(", ", names) + (takesValue() ? " " + value : "");
        String indent = " ".repeat(HELP_COLUMN);
        return String.format("  %-20s  %s\n", head, help.replace("\n", "\n" + indent));
    }
}
