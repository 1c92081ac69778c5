package com.example.consumer;

import io.ringstore.Ring;
import io.ringstore.RingStore;
import io.ringstore.builder.BackendList;
import io.ringstore.builder.RingBuilder;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

/**
 * Builds a ring file for three backends, maps it and looks one key up: the smallest program using
 * ringstore as a dependency. It compiles and runs on the class path and, with module-info.java, on the
 * module path.
 */
public final class Consumer {
    private Consumer() {
    }

    public static void main(String[] args) throws Exception {
        Path dir = Files.createTempDirectory("ringstore-consumer");
        Path file = dir.resolve("fleet.ring");
        BackendList fleet = BackendList.builder()
                .add("10.0.0.1:8080", 1, List.of("eu"))
                .add("10.0.0.2:8080", 2, List.of("eu"))
                .add("10.0.0.3:8080")
                .build();
        RingBuilder.of(fleet).build(file);
        try (RingStore store = RingStore.open(file)) {
            Ring ring = store.ring(Set.of("eu")); // the backends having feature "eu"
            int b = ring.lookup("/index.html".getBytes(StandardCharsets.UTF_8));
            System.out.println("/index.html -> " + store.backend(b).upstreamAddress());
        } finally {
            Files.delete(file);
            Files.delete(dir);
        }
    }
}
