package io.ringstore.testing;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A twemproxy ({@code nutcracker}) process in front of memcached servers on 127.0.0.1: one pool with
 * {@code distribution: ketama} and the hash given, listening on a free loopback port, its stats on
 * another ({@code -s PORT -a 127.0.0.1}), in the foreground, with its config ({@code nutcracker.yml}),
 * log and pid file under the directory given, so nothing under /etc, /var or /run is touched.
 * {@code auto_eject_hosts: false}: the ring never changes while it runs.
 *
 * <p>Ready once the pool answers a {@code get} (which reaches one of the servers, so they must be up).
 */
public final class Twemproxy implements AutoCloseable {
    /** Debian's nutcracker, or the binary {@code -Dringstore.nutcracker=PATH} names. */
    public static final Path BINARY = Path.of(System.getProperty("ringstore.nutcracker", "/usr/sbin/nutcracker"));

    /** Every key hash nutcracker's {@code hash:} accepts (nc_conf.h {@code HASH_CODEC}), in its order. */
    public static final List<String> HASHES = List.of(
            "one_at_a_time",
            "md5",
            "crc16",
            "crc32",
            "crc32a",
            "fnv1_64",
            "fnv1a_64",
            "fnv1_32",
            "fnv1a_32",
            "hsieh",
            "murmur",
            "jenkins");

    /**
     * For {@code @EnabledIf(value = TESTS_RUN, disabledReason = MISSING)} on a test class that starts
     * memcached and twemproxy: without them surefire counts its tests as skipped.
     */
    public static final String TESTS_RUN = "io.ringstore.testing.Twemproxy#testsRun";

    public static final String MISSING =
            "no memcached or nutcracker (-Dringstore.memcached, default /usr/bin/memcached;"
                    + " -Dringstore.nutcracker, default /usr/sbin/nutcracker; Debian: apt-get install memcached nutcracker)";

    /** The name of the one pool in the config {@link #start} writes. */
    public static final String POOL = "ringstore";

    private static final long START_TIMEOUT_MILLIS = 15_000;
    private static final int START_ATTEMPTS = 3;
    private static final int TIMEOUT_MILLIS = 5_000;
    private static final Pattern STATS_SERVER = Pattern.compile("\"([^\"]*)\": \\{\"server_eof\"");

    /**
     * A line of the pool's {@code servers:}: {@code 127.0.0.1:PORT:WEIGHT [NAME]}. Without a name
     * nutcracker names the server {@code host} when the port is 11211, else {@code host:port}
     * (nc_conf.c {@code conf_add_server}), and that name is what its ketama ring hashes.
     */
    public record Server(int port, int weight, String name) {
        /** Checks what nutcracker would otherwise reject or misread: weight > 0, a name without spaces. */
        public Server {
            if (weight <= 0) {
                throw new IllegalArgumentException("twemproxy weights are > 0: weight=" + weight);
            }
            if (name != null && (name.isEmpty() || !name.matches("[!-~]+") || name.startsWith("#"))) {
                throw new IllegalArgumentException(
                        "server name must be printable ASCII without spaces: name='" + name + "'");
            }
        }

        /** An unnamed server: nutcracker names it {@code 127.0.0.1:PORT} (the port is never 11211 here). */
        public Server(int port, int weight) {
            this(port, weight, null);
        }

        String line() {
            return "127.0.0.1:" + port + ":" + weight + (name == null ? "" : " " + name);
        }
    }

    private final Process process;
    private final Path dir;
    private final int port;
    private final int statsPort;
    private final String commandLine;

    private Twemproxy(Process process, Path dir, int port, int statsPort, String commandLine) {
        this.process = process;
        this.dir = dir;
        this.port = port;
        this.statsPort = statsPort;
        this.commandLine = commandLine;
    }

    /** Whether {@link #BINARY} is there. */
    public static boolean installed() {
        return Files.isExecutable(BINARY);
    }

    /**
     * Whether the test classes that need memcached and twemproxy run: when both are installed, and with
     * {@code -Dringstore.requireMemcached=true} (CI) also when they are not, so that {@link #requireInstalled} fails them.
     */
    public static boolean testsRun() {
        return Memcached.installed() && installed() || Boolean.getBoolean("ringstore.requireMemcached");
    }

    /** Fails the calling test class unless both are installed (only reached when {@link #testsRun} says so). */
    public static void requireInstalled(String test) {
        if (!Memcached.installed() || !installed()) {
            fail((Memcached.installed() ? "" : Memcached.BINARY + " is missing; ")
                    + (installed() ? "" : BINARY + " is missing; ")
                    + "install Debian's memcached and nutcracker, as ringstore.requireMemcached=true requires " + test
                    + " to run");
        }
    }

    /**
     * Writes the config for one pool with {@code hash} and {@code servers} (in that order) under
     * {@code dir}, starts nutcracker and waits until the pool answers; a port taken by someone else
     * between choosing and binding it makes another attempt with fresh ports.
     */
    public static Twemproxy start(Path dir, String hash, List<Server> servers)
            throws IOException, InterruptedException {
        if (!HASHES.contains(hash)) {
            throw new IllegalArgumentException("nutcracker has no hash '" + hash + "': " + HASHES);
        }
        if (servers.isEmpty()) {
            throw new IllegalArgumentException("a pool needs servers");
        }
        Files.createDirectories(dir);
        for (int attempt = 1; ; attempt++) {
            int[] ports = LoopbackPorts.free(2);
            Path config = dir.resolve("nutcracker.yml");
            Files.writeString(config, config(ports[0], hash, servers));
            Path log = dir.resolve("nutcracker.log");
            Files.deleteIfExists(log);
            List<String> command = List.of(
                    BINARY.toString(),
                    "-c",
                    config.toString(),
                    "-s",
                    Integer.toString(ports[1]),
                    "-a",
                    "127.0.0.1",
                    "-o",
                    log.toString(),
                    "-p",
                    dir.resolve("nutcracker.pid").toString());
            Process p = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(dir.resolve("nutcracker.out").toFile())
                    .start();
            Twemproxy proxy = new Twemproxy(p, dir, ports[0], ports[1], String.join(" ", command));
            try {
                proxy.awaitReady();
                return proxy;
            } catch (IOException | RuntimeException | Error e) {
                proxy.close();
                if (attempt < START_ATTEMPTS && proxy.diagnostics().contains("Address already in use")) {
                    continue;
                }
                throw e;
            }
        }
    }

    /**
     * Runs {@code nutcracker -t} on {@code config} (it checks the configuration and exits, binding nothing;
     * its log goes beside the file): whether nutcracker accepts the file.
     */
    public static boolean acceptsConfig(Path config) throws IOException {
        Path log = config.resolveSibling(config.getFileName() + ".log");
        Process p = new ProcessBuilder(BINARY.toString(), "-t", "-c", config.toString(), "-o", log.toString())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        if (!Processes.awaitExit(p)) {
            p.destroyForcibly();
            Processes.awaitExit(p);
            throw new IOException("nutcracker -t -c " + config + " did not exit");
        }
        return p.exitValue() == 0;
    }

    private static String config(int port, String hash, List<Server> servers) {
        StringBuilder c = new StringBuilder()
                .append(POOL)
                .append(":\n")
                .append("  listen: 127.0.0.1:")
                .append(port)
                .append('\n')
                .append("  hash: ")
                .append(hash)
                .append('\n')
                .append("  distribution: ketama\n")
                .append("  auto_eject_hosts: false\n")
                .append("  timeout: ")
                .append(TIMEOUT_MILLIS)
                .append('\n')
                .append("  servers:\n");
        for (Server s : servers) {
            c.append("    - ").append(s.line()).append('\n');
        }
        return c.toString();
    }

    private void awaitReady() throws IOException, InterruptedException {
        long deadline = System.currentTimeMillis() + START_TIMEOUT_MILLIS;
        IOException last = null;
        while (true) {
            if (!process.isAlive()) {
                throw new IOException("nutcracker exited with status " + process.exitValue()
                        + " before its pool answered on 127.0.0.1:" + port + "\n" + diagnostics());
            }
            if (LoopbackPorts.accepts(port) && LoopbackPorts.accepts(statsPort)) {
                try (MemcachedClient c = client()) {
                    c.getAll(List.of("ringstore-probe".getBytes(StandardCharsets.US_ASCII)));
                    return;
                } catch (IOException notYet) {
                    last = notYet; // e.g. SERVER_ERROR while a memcached behind it is not up
                }
            }
            if (System.currentTimeMillis() > deadline) {
                throw new IOException("nutcracker's pool did not answer on 127.0.0.1:" + port + " within "
                        + START_TIMEOUT_MILLIS + " ms" + (last == null ? "" : " (last: " + last.getMessage() + ")")
                        + "\n" + diagnostics());
            }
            Thread.sleep(10);
        }
    }

    /** The config nutcracker runs with: the file {@link #start} wrote, one pool named {@value #POOL}. */
    public Path config() {
        return dir.resolve("nutcracker.yml");
    }

    /** The pool's port on 127.0.0.1. */
    public int port() {
        return port;
    }

    /** The stats port on 127.0.0.1 (a connection gets one JSON document). */
    public int statsPort() {
        return statsPort;
    }

    /** A new connection to the pool (the caller closes it). */
    public MemcachedClient client() throws IOException {
        return MemcachedClient.connect("twemproxy 127.0.0.1:" + port, port);
    }

    /** The stats port's JSON document. */
    public String stats() throws IOException {
        try (Socket s = new Socket()) {
            s.setSoTimeout(TIMEOUT_MILLIS);
            s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), statsPort), TIMEOUT_MILLIS);
            try (InputStream in = s.getInputStream()) {
                return new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
        }
    }

    /** The pool's server names as nutcracker reports them in its stats (the names its ring hashes). */
    public Set<String> serverNames() throws IOException {
        String stats = stats();
        Set<String> names = new LinkedHashSet<>();
        Matcher m = STATS_SERVER.matcher(stats);
        while (m.find()) {
            names.add(m.group(1));
        }
        if (names.isEmpty()) {
            throw new IOException("no server in nutcracker's stats on 127.0.0.1:" + statsPort + ": " + stats);
        }
        return names;
    }

    /** nutcracker's log, its standard output and the config, for failure messages. */
    public String diagnostics() {
        return "--- " + dir.resolve("nutcracker.log") + " (" + commandLine + ")\n" + read("nutcracker.log")
                + "--- nutcracker stdout/stderr\n" + read("nutcracker.out")
                + "--- " + dir.resolve("nutcracker.yml") + "\n" + read("nutcracker.yml");
    }

    private String read(String name) {
        try {
            Path f = dir.resolve(name);
            return Files.exists(f) ? Files.readString(f, StandardCharsets.ISO_8859_1) : "(none)\n";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Stops nutcracker (SIGTERM; SIGKILL if it has not gone after 5 s). */
    @Override
    public void close() {
        process.destroy();
        if (!Processes.awaitExit(process)) {
            process.destroyForcibly();
            Processes.awaitExit(process);
        }
    }
}
