package io.ringstore.bench;

import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/** Each benchmark thread's position in the pre-generated keys, which it cycles through in order. */
@State(Scope.Thread)
public class KeyCursor {
    private int position;

    /** The next position; {@code mask} is the key count minus one (a power of two). */
    int next(int mask) {
        return position = (position + 1) & mask;
    }
}
