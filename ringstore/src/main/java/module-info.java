/**
 * ringstore: consistent-hash rings built offline into one file and memory-mapped by routers.
 *
 * <ul>
 *   <li>{@code io.ringstore.family}: the ring families, each a row of small parts ({@code Families},
 *       {@code RingFamily}), a family with its parameters ({@code RingVersion}), key hashes
 *       ({@code KeyHash}).</li>
 *   <li>{@code io.ringstore}: a ring file and its rings, the offline handle for tools ({@code RingStore},
 *       {@code Ring}), and its backends ({@code Backend}).</li>
 *   <li>{@code io.ringstore.builder}: parsing a backends file and building a ring file.</li>
 *   <li>{@code io.ringstore.migration}: moving between ring versions, as values: rollout policy and
 *       its file format, exact diff between rings.</li>
 *   <li>{@code io.ringstore.balance}: consistent hashing with bounded loads.</li>
 *   <li>{@code io.ringstore.state}: the live state the router processes of a host share through a
 *       mapped file beside the ring file: drain, health, requests in flight ({@code HostState}).</li>
 *   <li>{@code io.ringstore.live}: the one serving handle, {@code RingRouter} (and its
 *       {@code Route}): it follows a published file, or serves a fixed one, and answers
 *       {@code Backend}s; its listener, JFR events and MBean; the policy-file watcher.</li>
 * </ul>
 * Packages point one way, in layers: {@code internal} (and {@code internal.hash}) at the bottom, the
 * families ({@code family}) on it, the file format ({@code internal.format}, which calls the
 * families' rules) on them, {@code io.ringstore} above, {@code builder}, {@code migration},
 * {@code balance} and {@code state} above that, and {@code live} at the top. The floor (the
 * internal packages and the families) names no public type above it but through the one bridge,
 * {@code internal.BackendAccess}; {@code PackageCycleTest} fails the build on a cycle or an edge
 * pointing up.
 * {@code io.ringstore.internal} is exported to the command-line tool only.
 */
module io.ringstore {
    requires jdk.jfr;
    requires java.management;

    exports io.ringstore;
    exports io.ringstore.family;
    exports io.ringstore.builder;
    exports io.ringstore.migration;
    exports io.ringstore.balance;
    exports io.ringstore.state;
    exports io.ringstore.live;
    exports io.ringstore.internal to
            io.ringstore.tools;
    exports io.ringstore.internal.format to
            io.ringstore.tools;
}
