package io.ringstore;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ringstore.family.Families;
import io.ringstore.family.RingVersion;
import org.junit.jupiter.api.Test;

/** The version grammar the CLI's {@code --algorithm} reads: every spelling, its default and its messages. */
class RingVersionTest {
    @Test
    void everySpellingReads() {
        assertEquals(RingVersion.V1, RingVersion.parse("v1"));
        assertEquals(RingVersion.v2(160), RingVersion.parse("v2"), "a bare v2 has 160 points per weight unit");
        assertEquals(RingVersion.v2(16), RingVersion.parse("v2:16"));
        assertEquals(RingVersion.v2(16), RingVersion.parse("v2:016"), "leading zeros, as nginx's numbers");
        assertEquals(RingVersion.v2(Integer.MAX_VALUE), RingVersion.parse("v2:2147483647"));
        assertEquals("v1", RingVersion.V1.name());
        assertEquals("v2:16", RingVersion.v2(16).toString());
        assertArrayEquals(new int[] {160}, RingVersion.V1.parameters());
        assertEquals(Families.NGINX, RingVersion.V1.family());
    }

    /** nginx and pingora are the families' names, v1 and v2 the names their versions are written with: both read. */
    @Test
    void theFamilysNameReadsAsItsVersionsName() {
        assertEquals("nginx", Families.NGINX.name());
        assertEquals("pingora", Families.PINGORA.name());
        assertSame(Families.NGINX, Families.forName("v1"));
        assertSame(Families.PINGORA, Families.forName("v2"));
        assertEquals(RingVersion.V1, RingVersion.parse("nginx"));
        assertEquals(RingVersion.v2(160), RingVersion.parse("pingora"));
        assertEquals(RingVersion.v2(16), RingVersion.parse("pingora:16"));
        assertEquals("v2:16", RingVersion.parse("pingora:16").name(), "a version prints as it always did");
        assertArrayEquals(
                RingVersion.V1.digestEncoding(), RingVersion.parse("nginx").digestEncoding());
        assertTrue(RingVersion.Name.parse("pingora").matches(RingVersion.v2(7)));
        assertTrue(RingVersion.Name.parse("pingora:7").matches(RingVersion.v2(7)));
        assertEquals(
                "bad version 'nginx:160' (expected nginx)",
                assertThrows(IllegalArgumentException.class, () -> RingVersion.parse("nginx:160"))
                        .getMessage());
        assertEquals(
                "bad version 'pingora:x' (expected pingora or pingora:K with K from 1 to 2147483647)",
                assertThrows(IllegalArgumentException.class, () -> RingVersion.parse("pingora:x"))
                        .getMessage());
    }

    @Test
    void badNamesSayWhatIsExpected() {
        String families =
                "v1, v2, libketama, libmemcached, libmemcached-spy, twemproxy, spymemcached, spymemcached-weighted, xmemcached,"
                        + " xmemcached-nginx, dubbo, couchbase, envoy, envoy-murmur2, grpc, libmemcached-consistent,"
                        + " libmemcached-spy-unweighted, haproxy or grpc-java";
        assertEquals(
                "unknown algorithm 'v3' (expected " + families + ")",
                assertThrows(IllegalArgumentException.class, () -> RingVersion.parse("v3"))
                        .getMessage());
        assertEquals(
                "unknown algorithm '' (expected " + families + ")",
                assertThrows(IllegalArgumentException.class, () -> RingVersion.parse(":5"))
                        .getMessage());
        assertEquals(
                "bad version 'v1:160' (expected v1)",
                assertThrows(IllegalArgumentException.class, () -> RingVersion.parse("v1:160"))
                        .getMessage());
        for (String bad : new String[] {"v2:0", "v2:", "v2:x", "v2:1:2", "v2:2147483648", "v2:-1"}) {
            assertEquals(
                    "bad version '" + bad + "' (expected v2 or v2:K with K from 1 to 2147483647)",
                    assertThrows(IllegalArgumentException.class, () -> RingVersion.parse(bad))
                            .getMessage(),
                    bad);
        }
        for (String bad : new String[] {
            "twemproxy:md6",
            "twemproxy:",
            "twemproxy:md5:1",
            "envoy:0",
            "envoy:10:5",
            "envoy:1:2:3",
            "spymemcached:0",
            "couchbase:160"
        }) {
            assertThrows(IllegalArgumentException.class, () -> RingVersion.parse(bad), bad);
        }
        assertEquals("twemproxy:md5", RingVersion.parse("twemproxy:md5").name());
        assertEquals("twemproxy:fnv1a_64", RingVersion.parse("twemproxy").name());
        assertEquals("envoy:1024:8388608", RingVersion.parse("envoy").name());
        assertEquals("envoy:2048:8388608", RingVersion.parse("envoy:2048").name());
        assertEquals("grpc:1024:4096", RingVersion.parse("grpc").name());
        assertEquals("grpc:8192:8192", RingVersion.parse("grpc:8192:8192").name());
        // A MIN above MAX's default (gRPC's cap) is refused, not read as MIN:MIN (issue 31, item 8).
        assertEquals(
                "bad version 'grpc:4097': MIN 4097 is above MAX's default, 4096: write MAX too (grpc:4097:MAX with"
                        + " MAX from 4097 to 8388608)",
                assertThrows(IllegalArgumentException.class, () -> RingVersion.parse("grpc:4097"))
                        .getMessage());
        assertEquals("spymemcached:40", RingVersion.parse("spymemcached:40").name());
        assertEquals("dubbo:160", RingVersion.parse("dubbo").name());
        assertEquals(
                "v1 always has 160 points per weight unit (nginx): pointMultiple=16",
                assertThrows(IllegalArgumentException.class, () -> new RingVersion(Families.NGINX, 16))
                        .getMessage());
        assertEquals(
                "point multiple must be at least 1: pointMultiple=0",
                assertThrows(IllegalArgumentException.class, () -> RingVersion.v2(0))
                        .getMessage());
    }

    @Test
    void aNameSelectsTheVersionsItNames() {
        RingVersion.Name bare = RingVersion.Name.parse("v2");
        assertTrue(bare.leavesOutParameters());
        assertTrue(bare.matches(RingVersion.v2(1)) && bare.matches(RingVersion.v2(160)));
        assertFalse(bare.matches(RingVersion.V1));
        assertEquals(RingVersion.v2(7), bare.version(7));
        RingVersion.Name k = RingVersion.Name.parse("v2:16");
        assertFalse(k.leavesOutParameters());
        assertTrue(k.matches(RingVersion.v2(16)));
        assertFalse(k.matches(RingVersion.v2(160)));
        assertFalse(RingVersion.Name.parse("v1").leavesOutParameters());
        assertTrue(RingVersion.Name.parse("v1").matches(RingVersion.V1));
    }
}
