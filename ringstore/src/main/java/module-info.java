/**
 * ringstore: consistent-hash rings built offline into one file and memory-mapped by routers.
 *
 * <ul>
 *   <li>{@code io.ringstore}: reading a ring file and looking keys up ({@code RingStore}, {@code Ring},
 *       {@code WatchedRingStore},
 *       {@code RingRouter}: the live handle a router holds), and what a file is made of ({@code Backend}, {@code RingVersion}).</li>
 *   <li>{@code io.ringstore.build}: parsing a backends file and building a ring file.</li>
 *   <li>{@code io.ringstore.migration}: moving between ring versions: rollout policy, per-key version
 *       choice, exact diff between rings.</li>
 *   <li>{@code io.ringstore.state}: the live state the router processes of a host share through a
 *       mapped file beside the ring file: drain, health, requests in flight ({@code HostState}).</li>
 * </ul>
 * {@code io.ringstore.internal} is exported to the command-line tool only.
 */
module io.ringstore {
    requires jdk.jfr;
    requires java.management;

    exports io.ringstore;
    exports io.ringstore.build;
    exports io.ringstore.migration;
    exports io.ringstore.balance;
    exports io.ringstore.state;

    exports io.ringstore.internal to io.ringstore.tools;
    exports io.ringstore.internal.format to io.ringstore.tools;
}
