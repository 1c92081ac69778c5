package io.ringstore.tools;

import io.ringstore.builder.BackendList;
import io.ringstore.builder.BackendsFileException;
import io.ringstore.builder.HaproxyConfig;
import io.ringstore.builder.LibketamaServers;
import io.ringstore.builder.TwemproxyConfig;
import io.ringstore.family.RingVersion;
import io.ringstore.internal.TextLines;
import io.ringstore.tools.Command.UsageException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * {@code --from} and {@code --pool}, declared once for build and analyze: which configuration the
 * BACKENDS argument is (an nginx-syntax backends file, a twemproxy {@code nutcracker.yml}, a libketama
 * servers file), read into backends and the ring versions it implies (docs/from-config.md).
 */
enum InputFormat {
    /** A backends file in nginx's syntax; versions {@code v1} by default. */
    NGINX("nginx"),
    /** One pool of a nutcracker configuration; versions: the pool's {@code twemproxy:HASH} first. */
    TWEMPROXY("twemproxy"),
    /** A libketama servers file; versions {@code libketama} by default. */
    LIBKETAMA("libketama"),
    /** One backend of an HAProxy configuration; versions: the backend's {@code haproxy:HASH} first. */
    HAPROXY("haproxy");

    static final Option FROM = Option.valued("--from", "FORMAT", """
            what BACKENDS is: nginx (a backends file, the default); twemproxy
            (nutcracker's YAML config: a pool's servers, and --algorithm starts with
            the pool's twemproxy:HASH, its default); libketama (a libketama servers
            file, ADDRESS<TAB>MEMORY; --algorithm default libketama); haproxy
            (haproxy.cfg: a backend's servers, and --algorithm starts with the
            backend's haproxy:HASH, its default)""").shownAs("nginx|twemproxy|libketama|haproxy");
    static final Option POOL =
            Option.valued("--pool", "NAME", "the pool to build of a twemproxy config with several (--from twemproxy)");
    static final Option BACKEND = Option.valued(
            "--backend", "NAME", "the backend to build of an HAProxy config with several (--from haproxy)");

    private final String word;

    InputFormat(String word) {
        this.word = word;
    }

    /**
     * What was read: the backends, the versions to build, and warnings about what the configuration says that a ring
     * file does not do.
     */
    record Input(BackendList backends, List<RingVersion> versions, List<String> warnings) {}

    /** The format {@code --from} names (default nginx); {@code --pool} only with twemproxy. */
    static InputFormat of(Args args) throws UsageException {
        String from = args.has(FROM.name()) ? args.get(FROM.name()) : NGINX.word;
        InputFormat format = Arrays.stream(values())
                .filter(f -> f.word.equals(from))
                .findFirst()
                .orElseThrow(() -> new UsageException(
                        "--from " + TextLines.quote(from) + ": expected nginx, twemproxy, libketama or haproxy"));
        if (args.has(POOL.name()) && format != TWEMPROXY) {
            throw new UsageException("--pool names a pool of a twemproxy configuration: it goes with --from twemproxy");
        }
        if (args.has(BACKEND.name()) && format != HAPROXY) {
            throw new UsageException(
                    "--backend names a backend of an HAProxy configuration: it goes with --from haproxy");
        }
        return format;
    }

    /**
     * Reads {@code file} in this format, and the versions {@code --algorithm} (and {@code --point-multiple}) give for
     * it.
     */
    Input read(Args args, Path path) throws UsageException, BackendsFileException {
        return switch (this) {
            case NGINX -> {
                List<RingVersion> versions = AlgorithmOption.toBuild(args, AlgorithmOption.DEFAULT_BUILD);
                yield new Input(BackendList.parse(path), versions, List.of());
            }
            case LIBKETAMA -> {
                List<RingVersion> versions = AlgorithmOption.toBuild(args, LIBKETAMA.word);
                yield new Input(LibketamaServers.parse(path), versions, List.of());
            }
            case TWEMPROXY -> {
                TwemproxyConfig config = TwemproxyConfig.parse(path, args.get(POOL.name()));
                List<RingVersion> versions =
                        AlgorithmOption.toBuild(args, config.version().name());
                if (!versions.getFirst().equals(config.version())) {
                    throw new UsageException(AlgorithmOption.ALGORITHM + " "
                            + TextLines.quote(args.get(AlgorithmOption.ALGORITHM)) + " starts with "
                            + versions.getFirst() + ", but pool " + TextLines.quote(config.pool()) + " of "
                            + path + " hashes with "
                            + config.hash() + ": the first version must be the pool's, " + config.version()
                            + " (others may follow it)");
                }
                yield new Input(config.backends(), versions, warnings(config));
            }
            case HAPROXY -> {
                HaproxyConfig config = HaproxyConfig.parse(path, args.get(BACKEND.name()));
                List<RingVersion> versions =
                        AlgorithmOption.toBuild(args, config.version().name());
                if (!versions.getFirst().equals(config.version())) {
                    throw new UsageException(AlgorithmOption.ALGORITHM + " "
                            + TextLines.quote(args.get(AlgorithmOption.ALGORITHM)) + " starts with "
                            + versions.getFirst() + ", but backend " + TextLines.quote(config.backend()) + " of "
                            + path + " hashes with " + config.hash() + ": the first version must be the backend's, "
                            + config.version() + " (others may follow it)");
                }
                List<String> warnings = new ArrayList<>();
                config.notes().forEach(n -> warnings.add("note: " + n));
                warnings.add("note: backend " + TextLines.quote(config.backend()) + " hashes 'balance "
                        + config.balance() + "': look up the bytes HAProxy hashes (balance uri: the request"
                        + " target up to the first '?'; docs/from-config.md)");
                yield new Input(config.backends(), versions, warnings);
            }
        };
    }

    /** What a twemproxy pool does that its ring file will not do by itself. */
    private static List<String> warnings(TwemproxyConfig config) {
        List<String> warnings = new ArrayList<>();
        String pool = "pool " + TextLines.quote(config.pool());
        if (config.hashTag() != null) {
            warnings.add(
                    "warning: " + pool + " has hash_tag " + TextLines.quote(config.hashTag())
                            + ": nutcracker hashes only the part of a key"
                            + " between the two, ringstore the key it is given (cut keys so before a lookup; docs/from-config.md)");
        }
        if (config.autoEjectHosts()) {
            warnings.add("warning: " + pool
                    + " has auto_eject_hosts: true: nutcracker takes a failing server out of its ring by itself,"
                    + " a ring file does not (rebuild without it; docs/from-config.md)");
        }
        return warnings;
    }
}
