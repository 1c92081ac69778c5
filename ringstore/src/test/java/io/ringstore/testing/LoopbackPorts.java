package io.ringstore.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;

/** Free TCP ports on 127.0.0.1, and waiting for a port to accept connections. */
final class LoopbackPorts {
    private LoopbackPorts() {}

    /**
     * {@code count} distinct ports that were free a moment ago. Another process may take one before
     * the caller binds it, so starters retry with fresh ports on "Address already in use".
     */
    static int[] free(int count) throws IOException {
        ServerSocket[] sockets = new ServerSocket[count]; // held together so that the ports differ
        try {
            int[] ports = new int[count];
            for (int i = 0; i < count; i++) {
                sockets[i] = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                ports[i] = sockets[i].getLocalPort();
            }
            return ports;
        } finally {
            for (ServerSocket s : sockets) {
                if (s != null) {
                    s.close();
                }
            }
        }
    }

    /** Whether 127.0.0.1:{@code port} accepts a connection within 200 ms. */
    static boolean accepts(int port) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 200);
            return true;
        } catch (IOException notYet) {
            return false;
        }
    }
}
