package com.example.dubbo;

import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;

/**
 * The bytes Dubbo's {@code ConsistentHashLoadBalance} hashes for a call, made in a buffer of the calling
 * thread: its {@code toKey} (the arguments at {@code hash.arguments}, each appended by
 * {@code StringBuilder.append(Object)}, no separator, indexes outside the arguments skipped), then
 * {@code String.getBytes()} in the platform charset. With UTF-8, the platform's charset since JDK 18,
 * the text is encoded here as {@code getBytes} does (an unpaired surrogate as {@code ?}) without a
 * {@code String} or an array per call; with another charset by {@code getBytes} itself.
 *
 * <p>One per thread ({@link #ofThisThread()}); not thread-safe.
 */
final class KeyBytes {
    private static final ThreadLocal<KeyBytes> OF_THREAD = ThreadLocal.withInitial(KeyBytes::new);
    private static final boolean UTF8 = Charset.defaultCharset().equals(StandardCharsets.UTF_8);
    /** Buffers grown past this are dropped after the call, so one long key does not stay in memory. */
    private static final int KEPT = 1 << 16;

    private final StringBuilder text = new StringBuilder(64);
    private byte[] bytes = new byte[256];
    private int length;

    static KeyBytes ofThisThread() {
        return OF_THREAD.get();
    }

    /**
     * Makes the key of a call.
     *
     * @param indexes   {@code hash.arguments} parsed
     * @param arguments the call's arguments ({@code RpcUtils.getArguments}), or null
     * @return this, holding the key's bytes
     */
    KeyBytes of(int[] indexes, Object[] arguments) {
        StringBuilder t = text;
        t.setLength(0);
        for (int i : indexes) {
            if (i >= 0 && arguments != null && i < arguments.length) {
                t.append(arguments[i]); // append(Object): String.valueOf, as Dubbo's toKey
            }
        }
        if (UTF8) {
            encodeUtf8(t);
        } else {
            bytes = t.toString().getBytes();
            length = bytes.length;
        }
        return this;
    }

    byte[] bytes() {
        return bytes;
    }

    int length() {
        return length;
    }

    /** Forgets a buffer grown large by one call. */
    void trim() {
        if (bytes.length > KEPT) {
            bytes = new byte[256];
        }
        if (text.capacity() > KEPT) {
            text.setLength(0);
            text.trimToSize();
        }
    }

    /** {@code String.getBytes(UTF_8)} of {@code s} into {@link #bytes}: surrogate pairs as 4 bytes, an unpaired surrogate as {@code ?}. */
    private void encodeUtf8(CharSequence s) {
        int n = s.length();
        if (bytes.length < 3 * n) {
            bytes = new byte[Math.max(3 * n, 2 * bytes.length)];
        }
        byte[] out = bytes;
        int o = 0;
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                out[o++] = (byte) c;
            } else if (c < 0x800) {
                out[o++] = (byte) (0xC0 | c >> 6);
                out[o++] = (byte) (0x80 | c & 0x3F);
            } else if (Character.isSurrogate(c)) {
                char d = i + 1 < n ? s.charAt(i + 1) : 0;
                if (Character.isHighSurrogate(c) && Character.isLowSurrogate(d)) {
                    int cp = Character.toCodePoint(c, d);
                    i++;
                    out[o++] = (byte) (0xF0 | cp >> 18);
                    out[o++] = (byte) (0x80 | cp >> 12 & 0x3F);
                    out[o++] = (byte) (0x80 | cp >> 6 & 0x3F);
                    out[o++] = (byte) (0x80 | cp & 0x3F);
                } else {
                    out[o++] = '?';
                }
            } else {
                out[o++] = (byte) (0xE0 | c >> 12);
                out[o++] = (byte) (0x80 | c >> 6 & 0x3F);
                out[o++] = (byte) (0x80 | c & 0x3F);
            }
        }
        length = o;
    }
}
