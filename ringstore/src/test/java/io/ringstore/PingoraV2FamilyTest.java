package io.ringstore;

import io.ringstore.family.Families;
import io.ringstore.family.RingFamily;
import io.ringstore.family.RingVersion;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** pingora-ketama V2 ({@code v2:K}) against the family contract. */
class PingoraV2FamilyTest extends RingFamilyContract {
    @Override
    RingFamily family() {
        return Families.PINGORA;
    }

    @Override
    String expectedName() {
        return "pingora";
    }

    @Override
    String expectedWrittenName() {
        return "v2";
    }

    @Override
    int expectedCode() {
        return 2;
    }

    /** Recorded by {@link SeededFleets#checksum} on commit cc7d7f8, before {@code RingFamily}. */
    @Override
    Map<RingVersion, String> goldenChecksums() {
        Map<RingVersion, String> m = new LinkedHashMap<>();
        m.put(RingVersion.v2(1), "852ae50e59235f5a9bca0ff63df1ec7243fe8cf1c7a276798695de398e6ecd11");
        m.put(RingVersion.v2(16), "0d20d9746309e5ffd01c36030e4ab2cbbdec84e17d3a79376e2b2589596c5775");
        m.put(RingVersion.v2(160), "7b6cf7eb53d2bf4ffccdfe9b61a524f70d49fde8769d5ee287098c5b92866c04");
        return m;
    }

    /** A backend's points are its own CRC-32 chain, 160 (K) a weight unit: they do not depend on the others. */
    @Override
    boolean monotone() {
        return true;
    }

    /**
     * pingora: the smallest socket address keeps the point, as Rust orders {@code SocketAddr}: every
     * IPv4 before every IPv6, then the address bytes, the port, the scope id. Restated from the printed
     * address, without the library's parser.
     */
    @Override
    Comparator<Backend> tieOrder() {
        return Comparator.comparing(
                (Backend b) -> socketKey(b.socketAddress()), (x, y) -> Arrays.compareUnsigned(x, y));
    }

    /** Family (0 IPv4, 1 IPv6), address bytes, port and scope as one byte string that sorts as Rust does. */
    private static byte[] socketKey(String text) {
        try {
            boolean v6 = text.startsWith("[");
            int colon = text.lastIndexOf(':');
            String host = v6 ? text.substring(1, colon - 1) : text.substring(0, colon);
            long scope = 0;
            if (host.contains("%")) {
                scope = Long.parseLong(host.substring(host.indexOf('%') + 1));
                host = host.substring(0, host.indexOf('%'));
            }
            InetAddress a = InetAddress.getByName(host);
            byte[] ip = a.getAddress();
            if (v6 && a instanceof Inet4Address) { // Java reads ::ffff:a.b.c.d as IPv4; Rust keeps it IPv6
                ip = new byte[16];
                ip[10] = (byte) 0xff;
                ip[11] = (byte) 0xff;
                System.arraycopy(a.getAddress(), 0, ip, 12, 4);
            }
            int port = Integer.parseInt(text.substring(colon + 1));
            byte[] key = new byte[1 + ip.length + 2 + 4];
            key[0] = (byte) (v6 ? 1 : 0);
            System.arraycopy(ip, 0, key, 1, ip.length);
            key[1 + ip.length] = (byte) (port >>> 8);
            key[2 + ip.length] = (byte) port;
            for (int i = 0; i < 4; i++) {
                key[3 + ip.length + i] = (byte) (scope >>> (24 - 8 * i));
            }
            return key;
        } catch (java.net.UnknownHostException e) {
            throw new IllegalStateException(text, e);
        }
    }

    @Override
    List<Vector> ringVectors() {
        return List.of(
                new Vector("a", RingVersion.v2(1)),
                new Vector("a", RingVersion.v2(160)),
                new Vector("b", RingVersion.v2(16)),
                new Vector("e", RingVersion.v2(1)),
                new Vector("e", RingVersion.v2(160)));
    }

    @Override
    List<Vector> lookupVectors() {
        return List.of(
                new Vector("c", RingVersion.v2(16)),
                new Vector("d", RingVersion.v2(160)),
                new Vector("e", RingVersion.v2(16)));
    }

    @Override
    boolean vectorSurvivorsAreExact() {
        return true;
    }

    /** v2 hashes no scope id: two scopes of one address share every hash; set c shares some by chance. */
    @Override
    List<String> fleetsWithTies() throws Exception {
        Path vectors = VectorFiles.directory("pingora");
        return List.of(
                "server [fe80::1%4]:80;\nserver 10.0.0.1:80;\nserver [fe80::1%3]:80 weight=2;\n",
                VectorFiles.backendsText(vectors.resolve("buckets_b.txt")));
    }
}
