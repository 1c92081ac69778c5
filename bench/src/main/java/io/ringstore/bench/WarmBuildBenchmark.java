package io.ringstore.bench;

import io.ringstore.builder.BackendList;
import io.ringstore.builder.BuildResult;
import io.ringstore.builder.RingBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The warm side of "a fresh JVM against a warm one" (BENCHMARKS.md, one-shot commands): what
 * {@code ringstore build BACKENDS -o OUT} does, in a JVM that has done it before: parse the backends
 * file, build every feature ring, publish (write, fsync, the check of the written file, rename), ms
 * per build. The fresh side is the command itself, timed as a whole process.
 *
 * <pre>
 * java -jar bench/target/benchmarks.jar WarmBuildBenchmark -p backends=BACKENDS
 * </pre>
 * {@code backends} is a path from the working directory; the file is built into a temporary directory,
 * removed afterwards, a new generation each time.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = "-Xmx4g")
@State(Scope.Benchmark)
public class WarmBuildBenchmark {
    @Param("examples/backends.conf")
    public String backends;

    private Path backendsFile;
    private Path dir;
    private Path out;

    @Setup(Level.Trial)
    public void start() throws Exception {
        backendsFile = Path.of(backends);
        if (!Files.isRegularFile(backendsFile)) {
            throw new IllegalArgumentException(
                    "no backends file at " + backendsFile.toAbsolutePath() + " (-p backends=PATH)");
        }
        dir = Files.createTempDirectory("ringstore-warm-build");
        out = dir.resolve("out.ring");
    }

    @TearDown(Level.Trial)
    public void close() throws Exception {
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    @Benchmark
    public BuildResult build() throws Exception {
        return RingBuilder.of(BackendList.parse(backendsFile)).build(out);
    }
}
