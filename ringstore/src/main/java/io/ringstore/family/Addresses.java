package io.ringstore.family;

import io.ringstore.internal.BackendRecord;
import io.ringstore.internal.TextLines;

/**
 * How a family takes a backend's address: the address rule (a backend it cannot place), the port of
 * a backend written without one, and the answer text (the chosen backend as the original prints it).
 *
 * <p>Module-internal in what it takes (the module's backend records). Immutable and thread-safe.
 */
@SuppressWarnings("exports") // takes the module's BackendRecord: its callers are the module's builder and Backend
public final class Addresses {
    /** Why a family cannot place a backend, in its words; null when it can. */
    @FunctionalInterface
    interface Rule {
        String problem(String family, BackendRecord backend);
    }

    /** A backend as the family's original prints the one it chose. */
    @FunctionalInterface
    interface Answer {
        String text(BackendRecord backend, int defaultPort);
    }

    /** Every address (pingora hashes the socket address without its scope, Envoy its text). */
    static final Rule ANY = (family, b) -> null;
    /** No scope id: nginx refuses one. */
    static final Rule NGINX = (family, b) -> b.address().hasScope()
            ? "address " + TextLines.quote(b.address().text())
                    + " has a scope id, which nginx refuses (and v1 would not tell two scopes apart): remove it, or build v2 only"
            : null;
    /** No scope id: the memcached clients hash the address without one. */
    static final Rule NO_SCOPE = (family, b) -> b.address().hasScope()
            ? "address " + TextLines.quote(b.address().text()) + " has a scope id, which " + family
                    + " cannot take (it hashes the address without one): remove it"
            : null;

    /** {@code SRV_UWGHT_MAX}: HAProxy's largest server weight. */
    private static final int MAX_HAPROXY_WEIGHT = 256;

    /**
     * HAProxy's servers: a name is the server's {@code id} ({@code # ringstore: id=N}), 1 to
     * 2,147,483,647; a weight is at most 256 ({@code SRV_UWGHT_MAX}), as HAProxy's configuration takes.
     */
    static final Rule HAPROXY_SERVER = (family, b) -> {
        if (b.name() != null && HaproxyIds.problem(b.name()) != null) {
            return family + ": " + HaproxyIds.problem(b.name());
        }
        return b.weight() > MAX_HAPROXY_WEIGHT
                ? family + " takes weights of at most " + MAX_HAPROXY_WEIGHT + " (HAProxy's SRV_UWGHT_MAX): weight="
                        + b.weight()
                : null;
    };

    /** nginx's {@code $upstream_addr}. */
    static final Answer UPSTREAM_ADDRESS = (b, port) -> b.address().upstreamAddress();
    /** Rust's {@code SocketAddr} (pingora-ketama). */
    static final Answer SOCKET_ADDRESS = (b, port) -> b.address().socketAddress();
    /** {@code ip:port}, {@code [ip]:port}, the default port for a backend written without one. */
    static final Answer ENDPOINT = (b, port) -> b.address().endpointText(port);

    private final String family;
    private final Rule rule;
    private final Answer answer;
    private final int defaultPort;

    Addresses(String family, Rule rule, Answer answer, int defaultPort) {
        this.family = family;
        this.rule = rule;
        this.answer = answer;
        this.defaultPort = defaultPort;
    }

    /** libketama's: {@link #NO_SCOPE}, and at most {@code max} characters of a server ({@code char addr[22]}). */
    static Rule noScopeAndAtMost(int max) {
        return (family, b) -> {
            String problem = NO_SCOPE.problem(family, b);
            String server = PointText.asWritten(b, 0);
            if (problem == null && server.length() > max) {
                return family + " keeps at most " + max + " characters of a server (char addr[" + (max + 1) + "]): "
                        + TextLines.quote(server) + " has " + server.length();
            }
            return problem;
        };
    }

    /**
     * {@return why {@code backend} cannot be in a ring of the family, or null when it can}
     *
     * @param backend a backend
     */
    public String problem(BackendRecord backend) {
        return rule.problem(family, backend);
    }

    /**
     * {@return {@code backend} as the original client prints the backend it chose}
     *
     * @param backend the backend a lookup chose
     */
    public String answer(BackendRecord backend) {
        return answer.text(backend, defaultPort);
    }

    /** {@return the port of a backend written without one: 80 (nginx) unless the family says (11211 for the memcached clients)} */
    public int defaultPort() {
        return defaultPort;
    }
}
