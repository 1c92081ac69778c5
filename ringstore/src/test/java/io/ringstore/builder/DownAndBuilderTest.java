package io.ringstore.builder;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.Backend;
import io.ringstore.Ring;
import io.ringstore.RingFileException;
import io.ringstore.RingStore;
import io.ringstore.TestRings;
import io.ringstore.family.RingVersion;
import io.ringstore.internal.format.RingFileDescriptor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** nginx's {@code down} and the other server parameters, stored and read back; the builder in code against the parser. */
class DownAndBuilderTest {
    @TempDir
    Path dir;

    private static final String FLEET = """
            upstream app {
                hash $request_uri consistent;
                server 10.0.0.1:8080 weight=5 features=eu,ssd;
                server 10.0.0.2:80 down;
                server [::1]:9000 features=ssd max_fails=3 fail_timeout=1m30s max_conns=100;
                server 10.0.0.4 weight=2 features=eu down;
            }
            """;
    /** The health settings of FLEET's third server: stored (flag health), so a file with them is version 2 too. */
    private static final String HEALTH = " max_fails=3 fail_timeout=1m30s max_conns=100";

    private Path build(String name, BackendList list) throws Exception {
        Path file = dir.resolve(name);
        RingBuilder.of(list)
                .views(Views.NONE)
                .version(RingVersion.V1)
                .version(RingVersion.v2(160))
                .generation(7)
                .build(file);
        return file;
    }

    @Test
    void downIsStoredAndReadBackAndKeepsItsPoints() throws Exception {
        Path file = build("down.ring", TestRings.parse(FLEET));
        Path same =
                build("up.ring", TestRings.parse(FLEET.replace(" down;", ";").replace(HEALTH, "")));
        try (RingStore store = RingStore.open(file);
                RingStore up = RingStore.open(same)) {
            assertEquals(
                    RingFileDescriptor.FORMAT_VERSION_BACKEND_FLAGS,
                    store.layout().formatVersion());
            assertEquals(
                    RingFileDescriptor.FORMAT_VERSION, up.layout().formatVersion(), "no flag: version 1, as before");
            assertEquals(
                    List.of(false, true, false, true),
                    store.backends().stream().map(Backend::down).toList());
            assertEquals(
                    List.of(Set.of("eu", "ssd"), Set.of(), Set.of("ssd"), Set.of("eu")),
                    store.backends().stream().map(Backend::features).toList(),
                    "the flag is not read as a feature");
            store.verify();
            // nginx builds its points from every server, down or not: the rings are the same as without 'down'.
            for (int r = 0; r < store.rings().size(); r++) {
                Ring a = store.rings().get(r);
                Ring b = up.rings().get(r);
                assertEquals(b.pointCount(), a.pointCount());
                for (int i = 0; i < a.pointCount(); i++) {
                    assertEquals(b.pointHash(i), a.pointHash(i));
                    assertEquals(b.pointBackend(i), a.pointBackend(i));
                }
            }
        }
    }

    @Test
    void aVersionOneReaderWouldNotMisreadTheFlag() throws Exception {
        byte[] bytes = Files.readAllBytes(build("down.ring", TestRings.parse(FLEET)));
        // Labelled version 1, the flag bit is a feature bit beyond the declared ones: check 22 refuses it,
        // as a version-1 reader does; and a version-1 reader refuses the real label 2 at check 4.
        bytes[RingFileDescriptor.FORMAT_VERSION_OFFSET] = 1;
        TestRings.fixMetadataChecksum(bytes);
        Path relabelled = dir.resolve("relabelled.ring");
        Files.write(relabelled, bytes);
        RingFileException e = assertThrows(RingFileException.class, () -> RingStore.open(relabelled));
        assertTrue(
                e.reason().contains("backend 1 feature mask 0x00010000 names features beyond the 2 declared"),
                e.reason());
    }

    @Test
    void unknownFlagBitsAreRefused() throws Exception {
        byte[] bytes = Files.readAllBytes(build("down.ring", TestRings.parse(FLEET)));
        int field = RingFileDescriptor.HEADER_LENGTH
                + RingFileDescriptor.BACKEND_FEATURES_OFFSET
                + 2; // backend 0, bits 16-23
        bytes[field] = 0x08; // bit 19 (bit 17 is named, 18 health)
        TestRings.fixMetadataChecksum(bytes);
        Path bad = dir.resolve("bad.ring");
        Files.write(bad, bytes);
        RingFileException e = assertThrows(RingFileException.class, () -> RingStore.open(bad));
        assertEquals(RingFileDescriptor.HEADER_LENGTH + RingFileDescriptor.BACKEND_FEATURES_OFFSET, e.offset());
        assertTrue(e.reason().contains("backend 0 flags 0x00080000"), e.reason());
    }

    @Test
    void serverParametersAsNginxReadsThem() throws Exception {
        BackendList list = TestRings.parse(FLEET);
        Backend b = list.backend(2);
        assertEquals(3, b.maxFails());
        assertEquals(90, b.failTimeoutSeconds());
        assertEquals(100, b.maxConns());
        Backend defaults = list.backend(0);
        assertEquals(1, defaults.maxFails());
        assertEquals(10, defaults.failTimeoutSeconds());
        assertEquals(0, defaults.maxConns());
        assertFalse(defaults.down());
        assertTrue(list.backend(1).down());
        assertEquals(
                0, TestRings.parse("server 10.0.0.1 max_fails=0").backend(0).maxFails(), "0: failures are not counted");

        assertEquals(10, NginxBackendsParser.nginxSeconds("10"));
        assertEquals(10, NginxBackendsParser.nginxSeconds("10s"));
        assertEquals(3600 + 1800 + 5, NginxBackendsParser.nginxSeconds("1h30m5"));
        assertEquals(86400 * 7 + 86400, NginxBackendsParser.nginxSeconds("1w1d"));
        assertEquals(
                15,
                NginxBackendsParser.nginxSeconds(
                        "10s5")); // nginx 1.22's ngx_parse_time adds a last bare number as seconds
        for (String bad : new String[] {"", "s", "10ms", "1m1h", "1s1s", "1x", "-1", "99999999999"}) {
            assertEquals(-1, NginxBackendsParser.nginxSeconds(bad), bad);
        }
    }

    @Test
    void parameterErrorsNameTheLine() {
        for (String[] c : new String[][] {
            {"server 10.0.0.1 max_fails=x", "max_fails= 'x' is not a whole number"},
            {"server 10.0.0.1 max_conns=-1", "max_conns= '-1'"},
            {"server 10.0.0.1 fail_timeout=10ms", "fail_timeout '10ms' is not a time nginx reads"},
            {"server 10.0.0.1 down down", "'down' given twice"},
            {"server 10.0.0.1 down=1", "unknown parameter 'down='"},
            {"server 10.0.0.1 backup", "balancing method does not support parameter \"backup\""},
        }) {
            BackendsFileException e =
                    assertThrows(BackendsFileException.class, () -> TestRings.parse("server 10.0.0.9\n" + c[0]), c[0]);
            assertEquals(2, e.line(), c[0]);
            assertTrue(e.reason().contains(c[1]), e.reason());
        }
    }

    @Test
    void aListBuiltInCodeBuildsTheSameFileAsTheText() throws Exception {
        BackendList built = BackendList.builder()
                .add("10.0.0.1:8080", 5, List.of("eu", "ssd"))
                .down("10.0.0.2:80")
                .add("[::1]:9000", 1, Set.of("ssd"))
                .down("10.0.0.4", 2, List.of("eu"))
                .build();
        assertEquals(BackendList.Builder.SOURCE, built.source());
        assertEquals(List.of("eu", "ssd"), built.features());
        // The builder sets no health settings: the text without them.
        assertArrayEquals(
                Files.readAllBytes(build("text.ring", TestRings.parse(FLEET.replace(HEALTH, "")))),
                Files.readAllBytes(build("code.ring", built)));

        BackendList plain =
                BackendList.builder().add("127.0.0.1").add("127.0.0.2:81", 3).build();
        assertArrayEquals(
                Files.readAllBytes(
                        build("t.ring", TestRings.parse("server 127.0.0.1;\nserver 127.0.0.2:81 weight=3;\n"))),
                Files.readAllBytes(build("c.ring", plain)));
    }

    @Test
    void randomFleetsBuiltInCodeMatchTheirText() throws Exception {
        java.util.SplittableRandom random = new java.util.SplittableRandom(13);
        String[] names = {"eu", "us", "ssd", "gpu"};
        for (int round = 0; round < 25; round++) {
            StringBuilder text = new StringBuilder();
            BackendList.Builder code = BackendList.builder();
            int n = 1 + random.nextInt(20);
            for (int b = 0; b < n; b++) {
                String address = random.nextBoolean()
                        ? "10." + round + ".0." + (b + 1) + (random.nextBoolean() ? ":" + (8000 + b) : "")
                        : "[fd00::" + Integer.toHexString(round * 64 + b + 1) + "]:80";
                long weight = 1 + random.nextInt(4);
                List<String> features = new java.util.ArrayList<>();
                for (String f : names) {
                    if (random.nextInt(3) == 0) {
                        features.add(f);
                    }
                }
                boolean down = random.nextInt(4) == 0;
                text.append("server ")
                        .append(address)
                        .append(" weight=")
                        .append(weight)
                        .append(features.isEmpty() ? "" : " features=" + String.join(",", features))
                        .append(down ? " down" : "")
                        .append(";\n");
                if (down) {
                    code.down(address, weight, features);
                } else {
                    code.add(address, weight, features);
                }
            }
            assertArrayEquals(
                    Files.readAllBytes(build("t" + round + ".ring", TestRings.parse(text.toString()))),
                    Files.readAllBytes(build("c" + round + ".ring", code.build())),
                    text.toString());
        }
    }

    @Test
    void builderRefusesWhatTheParserRefusesNamingTheEntry() {
        BackendList.Builder b = BackendList.builder().add("10.0.0.1:80");
        for (Object[] c : new Object[][] {
            {
                "10.0.0.1:80",
                1L,
                List.of(),
                "server 2 '10.0.0.1:80': duplicate backend '10.0.0.1:80': same address and port as server 1"
            },
            {"10.0.0.300", 1L, List.of(), "server 2 '10.0.0.300': "},
            {"10.0.0.2", 0L, List.of(), "server 2 '10.0.0.2': weight 0 must be at least 1"},
            {"10.0.0.2", BackendList.MAX_WEIGHT + 1, List.of(), "is too large"},
            {"10.0.0.2", 1L, List.of("bad name"), "bad feature name 'bad name'"},
            {"10.0.0.2", 1L, List.of("a", "a"), "feature 'a' listed twice"},
        }) {
            @SuppressWarnings("unchecked")
            List<String> features = (List<String>) c[2];
            IllegalArgumentException e =
                    assertThrows(IllegalArgumentException.class, () -> b.add((String) c[0], (Long) c[1], features));
            // named as the parser names it (server N 'text': ...), then the reason
            assertTrue(e.getMessage().startsWith("server 2 '" + c[0] + "': "), e.getMessage());
            assertTrue(e.getMessage().contains((String) c[3]), e.getMessage());
        }
        assertEquals(1, b.build().size(), "a refused entry is not added");
        assertThrows(IllegalStateException.class, () -> BackendList.builder().build());
    }
}
