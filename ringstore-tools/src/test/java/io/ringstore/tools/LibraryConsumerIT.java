package io.ringstore.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The library as a dependency, run after {@code package}: {@code examples/consumer} (the program
 * README's "Use it from Maven" describes) compiled with {@code javac} against the built library jar
 * and run with {@code java}, once on the class path and once on the module path ({@code requires
 * io.ringstore}), without {@code --enable-native-access} and without a warning: the library only
 * maps memory, it calls no native code.
 */
@Tag("process")
class LibraryConsumerIT {
    private static final String EXPECTED = "/index.html -> 10.0.0.1:8080";

    private static Path sources() {
        return Path.of(System.getProperty("ringstore.repo"), "examples", "consumer", "src", "main", "java");
    }

    private static Path library() {
        return Programs.target().resolve("ringstore.jar");
    }

    @Test
    void onTheClassPath(@TempDir Path classes) throws Exception {
        Path consumer = sources().resolve("com/example/consumer/Consumer.java");
        compile(List.of("-cp", library().toString(), "-d", classes.toString(), consumer.toString()));
        Programs run = Programs.run(
                        classes,
                        Map.of(),
                        List.of(
                                Programs.jdk("java").toString(),
                                "-cp",
                                classes + ":" + library(),
                                "com.example.consumer.Consumer"))
                .assertOk("the consumer on the class path");
        assertEquals(EXPECTED, run.out().strip());
        assertEquals("", run.err());
    }

    @Test
    void onTheModulePath(@TempDir Path classes) throws Exception {
        List<String> args = new ArrayList<>(List.of("-p", library().toString(), "-d", classes.toString()));
        try (var files = Files.walk(sources())) {
            files.filter(f -> f.toString().endsWith(".java")).forEach(f -> args.add(f.toString()));
        }
        compile(args);
        Programs run = Programs.run(
                        classes,
                        Map.of(),
                        List.of(
                                Programs.jdk("java").toString(),
                                "-p",
                                classes + ":" + library(),
                                "-m",
                                "com.example.consumer/com.example.consumer.Consumer"))
                .assertOk("the consumer on the module path");
        assertEquals(EXPECTED, run.out().strip());
        assertEquals("", run.err());
    }

    private static void compile(List<String> args) throws Exception {
        List<String> command = new ArrayList<>(List.of(Programs.jdk("javac").toString(), "-Xlint:all", "-Werror"));
        command.addAll(args);
        Programs.run(Path.of("."), Map.of(), command).assertOk(command);
    }
}
