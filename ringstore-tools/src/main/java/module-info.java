/**
 * The {@code ringstore} command-line tool: build, lookup, dump, verify, diff, analyze, recommend, state.
 * It uses the library's public API, and its internals only where the library exports them to this
 * module by name (point generation and file-layout constants, for {@code analyze} and {@code dump}).
 */
module io.ringstore.tools {
    requires io.ringstore;

    exports io.ringstore.tools;
}
