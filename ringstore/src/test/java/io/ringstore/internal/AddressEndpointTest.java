package io.ringstore.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The examples of FORMAT.md's "Addresses" section: grammar, endpoint identity, what each version hashes. */
class AddressEndpointTest {
    private static final List<List<String>> SAME_ENDPOINT = List.of(
            List.of("10.0.0.1", "10.0.0.1:80", "10.0.0.1:080", "010.0.0.01:80"),
            List.of("[::1]", "[0:0::1]:80", "[::0001]"),
            List.of("[fe80::1]", "[fe80::1%0]"));

    @Test
    void spellingsOfOneEndpointAreTheSameEndpoint() {
        for (List<String> group : SAME_ENDPOINT) {
            ServerAddress first = ServerAddress.parse(group.getFirst());
            for (String other : group) {
                assertTrue(first.sameEndpoint(ServerAddress.parse(other)), group.getFirst() + " vs " + other);
                assertArrayEquals(
                        first.pingoraHashInput(),
                        ServerAddress.parse(other).pingoraHashInput(),
                        "v2 hashes the endpoint: " + other);
            }
        }
        assertFalse(
                Arrays.equals(
                        ServerAddress.parse("10.0.0.1:80").nginxHashInput(),
                        ServerAddress.parse("10.0.0.1:080").nginxHashInput()),
                "v1 hashes the text as written");
    }

    @Test
    void anIpv4MappedAddressIsNotItsIpv4Address() {
        ServerAddress mapped = ServerAddress.parse("[::ffff:10.0.0.1]");
        ServerAddress v4 = ServerAddress.parse("10.0.0.1");
        assertFalse(mapped.sameEndpoint(v4));
        assertFalse(Arrays.equals(mapped.pingoraHashInput(), v4.pingoraHashInput()));
        assertFalse(Arrays.equals(mapped.nginxHashInput(), v4.nginxHashInput()));
    }

    @Test
    void v2DoesNotHashTheScope() {
        ServerAddress three = ServerAddress.parse("[fe80::1%3]");
        ServerAddress four = ServerAddress.parse("[fe80::1%4]");
        assertFalse(three.sameEndpoint(four));
        assertArrayEquals(three.pingoraHashInput(), four.pingoraHashInput());
        assertTrue(three.compareTo(four) < 0, "the smaller socket address keeps a tie");
    }

    @Test
    void whatTheGrammarLeavesOutIsRefused() {
        for (String bad : List.of(
                "10.0.0.1:",
                "host.example:80",
                "[1.2.3.4]",
                "[::1::2]",
                "[1:2:3:4:5:6:7:8:9]",
                "[::12345]",
                "10.0.0.256",
                "[::1]80",
                "10.0.0.1:65536",
                "[fe80::1%]",
                "[fe80::1%4294967296]",
                " 10.0.0.1")) {
            assertThrows(IllegalArgumentException.class, () -> ServerAddress.parse(bad), bad);
        }
        for (String good : List.of(
                "[1:2:3:4:5:6:7::]", "[::1.2.3.4]", "[1:2:3:4:5:6:1.2.3.4]", "[ABCD::ef]", "0.0.0.0:0", "[::]")) {
            ServerAddress.parse(good);
        }
    }
}
