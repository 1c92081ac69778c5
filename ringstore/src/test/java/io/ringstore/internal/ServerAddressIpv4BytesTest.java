package io.ringstore.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * {@link ServerAddress#parseIpv4(String, byte[], int, int)}, the ring file reader's fast path, against
 * {@link ServerAddress#parse}: where it answers, every field parse gives; where parse refuses, it answers
 * nothing (so the reader's message stays parse's); and it answers every plain a.b.c.d[:port].
 */
class ServerAddressIpv4BytesTest {

    /** Parses {@code text} both ways from inside a larger array; asserts they agree; true if the fast path answered. */
    private static boolean agree(String text) {
        byte[] own = text.getBytes(StandardCharsets.ISO_8859_1);
        byte[] framed = new byte[own.length + 6];
        framed[0] = '9';
        framed[1] = '.';
        framed[2] = ':';
        System.arraycopy(own, 0, framed, 3, own.length);
        framed[own.length + 3] = '7';
        framed[own.length + 4] = ':';
        framed[own.length + 5] = '1';
        ServerAddress fast = ServerAddress.parseIpv4(text, framed, 3, own.length);
        ServerAddress slow;
        try {
            slow = ServerAddress.parse(text);
        } catch (IllegalArgumentException refused) {
            assertNull(
                    fast,
                    () -> "parse refuses " + text + " (" + refused.getMessage() + ") but the fast path read " + fast);
            return false;
        }
        if (fast == null) {
            return false;
        }
        assertEquals(slow.text(), fast.text(), text);
        assertArrayEquals(slow.ipBytes(), fast.ipBytes(), text);
        assertEquals(slow.port(), fast.port(), text);
        assertEquals(slow.portWritten(), fast.portWritten(), text);
        assertEquals(slow.isIpv6(), fast.isIpv6(), text);
        assertEquals(slow.scopeId(), fast.scopeId(), text);
        assertEquals(slow.hasScope(), fast.hasScope(), text);
        assertEquals(slow.endpointKey(), fast.endpointKey(), text);
        assertEquals(slow.socketAddress(), fast.socketAddress(), text);
        assertEquals(0, slow.compareTo(fast), text);
        return true;
    }

    @Test
    void readsEveryPlainAddressAsParseDoes() {
        for (String text : List.of(
                "127.0.0.1",
                "127.0.0.1:8080",
                "0.0.0.0:0",
                "255.255.255.255:65535",
                "010.000.001.002:08080",
                "1.2.3.4:00000000000080",
                "192.0.2.16",
                "10.0.0.1:1")) {
            if (!agree(text)) {
                fail("the fast path did not read " + text);
            }
        }
    }

    @Test
    void leavesEveryOtherTextToParse() {
        for (String text : List.of(
                "",
                "1.2.3",
                "1.2.3.4.5",
                "1.2.3.256",
                "1.2.3.4:",
                "1.2.3.4:65536",
                "1.2.3.4:99999999999",
                "1.2.3.4:8:8",
                "1..3.4",
                ".1.2.3",
                "1.2.3.4.",
                "1.2.3.4:-1",
                "1.2.3.4:+1",
                "a.b.c.d",
                "unix:/tmp/s",
                "[::1]:80",
                "::1",
                "1.2.3.4 :80",
                " 1.2.3.4",
                "1.2.3.4:8a",
                "1.2.3.4%1",
                "1.2.3.4\u0000x")) {
            ServerAddress fast =
                    ServerAddress.parseIpv4(text, text.getBytes(StandardCharsets.ISO_8859_1), 0, text.length());
            assertNull(fast, () -> "the fast path read " + text);
            agree(text);
        }
    }

    @Test
    void agreesWithParseOnRandomTexts() {
        SplittableRandom random = new SplittableRandom(0x5eed_0021L);
        String alphabet = "0123456789....::[]%ax ";
        int answered = 0;
        for (int n = 0; n < 200_000; n++) {
            StringBuilder text = new StringBuilder();
            if (random.nextInt(2) == 0) { // near a valid address: four parts, maybe a port, then maybe damaged
                text.append(random.nextInt(300))
                        .append('.')
                        .append(random.nextInt(300))
                        .append('.')
                        .append(random.nextInt(300))
                        .append('.')
                        .append(random.nextInt(300));
                if (random.nextBoolean()) {
                    text.append(':').append(random.nextInt(70_000));
                }
                if (random.nextInt(4) == 0) {
                    text.setCharAt(random.nextInt(text.length()), alphabet.charAt(random.nextInt(alphabet.length())));
                }
            } else {
                int length = random.nextInt(22);
                for (int i = 0; i < length; i++) {
                    text.append(alphabet.charAt(random.nextInt(alphabet.length())));
                }
            }
            if (agree(text.toString())) {
                answered++;
            }
        }
        // About a third of the near-valid half has every part <= 255 and a port <= 65535.
        if (answered < 10_000) {
            fail("the fast path answered only " + answered + " of 200,000 texts");
        }
    }
}
