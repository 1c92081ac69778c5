package io.ringstore.tools;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The training runs of the CLI's ahead-of-time caches (JDK 25: JEP 483 class loading and linking, JEP 515
 * method profiles), run by the build under {@code -XX:AOTCacheOutput}, each in one JVM on the bundled
 * example fleet:
 * <ul>
 * <li>{@code commands}: a build and verify of a 3.3 M-point fleet, then the commands a user runs first (build, lookup,
 *     verify, dump, {@code --version}, {@code --help}), into {@code ringstore.aot}, the cache of every command but
 *     one;</li>
 * <li>{@code lookup}: lookups of KEY arguments in the file the first run built, into
 *     {@code ringstore-lookup.aot}, the cache {@code bin/ringstore} gives such a one-shot lookup: it holds
 *     only the classes a lookup loads (fewer to map and link at start-up) and is made without method
 *     profiles ({@code -XX:-AOTRecordTraining}: replaying them makes the JIT compile for a run that
 *     ends in milliseconds).</li>
 * </ul>
 * The last run then writes the caches' JDK stamp ({@link #stamp}), which {@code bin/ringstore} compares
 * with the running JDK's before it passes {@code -XX:AOTCache}.
 *
 * <pre>
 * java -XX:AOTCacheOutput=target/ringstore.aot -cp target/ringstore.jar:target/ringstore-tools.jar \
 *      io.ringstore.tools.AotTraining commands EXAMPLES_DIR WORK_DIR
 * java -XX:AOTCacheOutput=target/ringstore-lookup.aot ... \
 *      io.ringstore.tools.AotTraining lookup EXAMPLES_DIR WORK_DIR target/ringstore.aot.jdk
 * </pre>
 *
 * Exit 0 when every command answered as it should; else 1, and no stamp (so no launcher uses the cache).
 */
public final class AotTraining {
    /** The lines of a JDK's {@code release} file that the stamp holds, in the file's order. */
    static final List<String> STAMP_KEYS = List.of("IMPLEMENTOR", "JAVA_RUNTIME_VERSION", "OS_ARCH");

    private AotTraining() {}

    /**
     * Runs the training commands of a mode, then writes the stamp when one is named.
     *
     * @param args {@code commands} or {@code lookup}, the examples directory (backends.conf, keys.txt), a
     *             scratch directory (the {@code lookup} run reads the ring file the {@code commands} run
     *             wrote there), and optionally the stamp file to write
     * @throws IOException if the scratch directory or the stamp cannot be written
     */
    public static void main(String[] args) throws IOException {
        if (args.length < 3 || args.length > 4 || !MODES.contains(args[0])) {
            System.err.println("usage: AotTraining commands|lookup EXAMPLES_DIR WORK_DIR [STAMP_FILE]");
            System.exit(Main.USAGE);
        }
        Path examples = Path.of(args[1]);
        Path work = Files.createDirectories(Path.of(args[2]));
        Path ring = work.resolve("example.ring");
        String conf = examples.resolve("backends.conf").toString();
        byte[] keys = Files.readAllBytes(examples.resolve("keys.txt"));
        Path fleet = work.resolve("fleet.conf");
        Path fleetRing = work.resolve("fleet.ring");
        if (args[0].equals("commands")) {
            Files.writeString(fleet, fleet(FLEET_BACKENDS, FLEET_WEIGHT));
        }
        List<List<String>> runs = args[0].equals("commands")
                ? List.of(
                        // A build as large as a fleet's (3.3 M points) first: the profiles kept are those of its
                        // loops run long enough to be compiled, which the example's 59,000 points are not.
                        List.of("build", fleet.toString(), "-o", fleetRing.toString(), "--quiet"),
                        List.of("verify", fleetRing.toString()),
                        List.of("build", conf, "-o", ring.toString()),
                        List.of("build", conf, "-o", ring.toString(), "--json"),
                        List.of("lookup", ring.toString(), "/index.html", "/video/42.mp4"),
                        List.of("lookup", ring.toString(), "--features", "eu,ssd"),
                        List.of("lookup", ring.toString(), "--no-failover", "/images/logo.png"),
                        List.of("verify", ring.toString()),
                        List.of("dump", ring.toString()),
                        List.of("--version"),
                        List.of("--help"))
                : List.of( // the forms bin/ringstore gives ringstore-lookup.aot: KEY arguments
                        List.of("lookup", ring.toString(), "/index.html", "/video/42.mp4"),
                        List.of("lookup", ring.toString(), "--features", "eu,ssd", "/images/logo.png"),
                        List.of("lookup", ring.toString(), "--no-failover", "/api/v1/users?id=42"));
        PrintStream discard = new PrintStream(OutputStream.nullOutputStream(), false, StandardCharsets.UTF_8);
        for (List<String> run : runs) {
            InputStream in = new ByteArrayInputStream(keys);
            int code = Main.run(run.toArray(String[]::new), in, discard, System.err);
            if (code != Main.OK) {
                System.err.println("AotTraining: ringstore " + String.join(" ", run) + " exited " + code);
                System.exit(Main.FAILED);
            }
        }
        Files.deleteIfExists(fleetRing); // 19.7 MB, needed by no later run
        Files.deleteIfExists(fleet);
        if (args.length == 4) {
            Files.writeString(Path.of(args[3]), stamp(Path.of(System.getProperty("java.home"))));
        }
    }

    /** The large fleet of the {@code commands} run: 2,048 backends of weight 10, 3,276,800 v1 points. */
    static final int FLEET_BACKENDS = 2048;

    static final int FLEET_WEIGHT = 10;

    /**
     * A backends file of {@code backends} servers 127.1.x.y:8080 (loopback; nothing is contacted), each of
     * {@code weight}.
     */
    static String fleet(int backends, int weight) {
        StringBuilder sb = new StringBuilder("upstream training {\n");
        for (int i = 0; i < backends; i++) {
            sb.append("    server 127.1.")
                    .append(i >> 8)
                    .append('.')
                    .append(i & 0xFF)
                    .append(":8080 weight=")
                    .append(weight)
                    .append(";\n");
        }
        return sb.append("}\n").toString();
    }

    /** The training modes: every command's cache, and the one-shot lookup's. */
    static final List<String> MODES = List.of("commands", "lookup");

    /**
     * {@return the lines of {@link #STAMP_KEYS} in the JDK's {@code release} file, each with its line
     * end: what {@code bin/ringstore} reads with grep from the running JDK's, to use the cache only on
     * the very build of the JDK that made it}
     *
     * @param javaHome the JDK
     * @throws IOException if its release file cannot be read
     */
    static String stamp(Path javaHome) throws IOException {
        return Files.readAllLines(javaHome.resolve("release"), StandardCharsets.UTF_8).stream()
                .filter(line -> STAMP_KEYS.stream().anyMatch(k -> line.startsWith(k + "=")))
                .map(line -> line + "\n")
                .collect(Collectors.joining());
    }
}
