package io.ringstore.tools;

import java.io.PrintStream;

/**
 * What a command found, as one value: printed as text, or with {@code --json} as one JSON object on
 * one line. The command builds it; {@link Command#print} chooses the form, so no command branches on
 * {@code --json} itself.
 */
interface Result {
    /** The text form: lines on stdout. */
    void text(PrintStream out);

    /** The JSON form: this result's fields, in their order, written into the open top-level object. */
    void json(Json object);
}
