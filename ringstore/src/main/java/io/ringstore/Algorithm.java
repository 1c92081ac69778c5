package io.ringstore;

import io.ringstore.internal.TextLines;

/** How a ring's points are generated and how equal hashes are resolved. */
public enum Algorithm {
    /**
     * nginx {@code hash $key consistent}: the {@code server} text as written is hashed, 160 points per
     * weight unit, equal hashes go to the backend listed first.
     */
    V1("v1", 1),
    /**
     * pingora-ketama {@code Version::V2 { point_multiple }}: the parsed socket address is hashed as Rust
     * prints it, point_multiple points per weight unit, equal hashes go to the smallest socket address.
     */
    V2("v2", 2);

    /** nginx's (and pingora v1's) points per weight unit. */
    public static final int NGINX_POINT_MULTIPLE = 160;

    private final String cliName;
    private final int code;

    Algorithm(String cliName, int code) {
        this.cliName = cliName;
        this.code = code;
    }

    /** {@return the name used on the command line and in dumps: {@code v1}, {@code v2}} */
    public String cliName() {
        return cliName;
    }

    /** {@return the byte stored in the ring index (FORMAT.md)} */
    public int code() {
        return code;
    }

    /**
     * {@return the algorithm stored as {@code code}, or null}
     *
     * @param code the byte stored in the ring index
     */
    public static Algorithm ofCode(int code) {
        for (Algorithm a : values()) {
            if (a.code == code) {
                return a;
            }
        }
        return null;
    }

    /**
     * Parses {@code v1} or {@code v2}.
     *
     * @param name {@code v1} or {@code v2}
     * @return the algorithm
     */
    public static Algorithm parse(String name) {
        for (Algorithm a : values()) {
            if (a.cliName.equals(name)) {
                return a;
            }
        }
        throw new IllegalArgumentException("unknown algorithm " + TextLines.quote(name) + " (expected v1 or v2)");
    }
}
