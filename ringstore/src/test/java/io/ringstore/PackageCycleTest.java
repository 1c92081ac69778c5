package io.ringstore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.net.URI;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The library's packages point one way, in layers ({@link #LAYERS}): {@code internal} and
 * {@code internal.hash} at the bottom, the ring families ({@code family}) on them, the file format
 * ({@code internal.format}, which calls the families' rules) on those, {@code io.ringstore} above,
 * {@code builder}, {@code migration}, {@code balance}, {@code state} above that, {@code live} at the
 * top. Read from the compiled classes of the main module (each class file's
 * constant pool: the classes it names, and every type in its descriptors and signatures), so an
 * import, a fully qualified name or a type used only in a method signature all count, and javadoc does
 * not. A constant inlined by the compiler leaves no trace, which is harmless: it creates no dependency.
 *
 * <p>The one exception is {@link #BRIDGE}: {@code internal.BackendAccess} is the shared-secrets bridge
 * through which {@code Backend}, {@code Ring} and {@code RingStore} grant the module what their public
 * API does not offer (making a {@code Backend}, a ring's cursor walk, a watcher's mapping), so it names
 * those public types by design; its edges are left out of the graph, and nothing else's.
 */
class PackageCycleTest {
    /** The bridge: its outgoing edges are not dependencies of its package (see the class comment). */
    static final String BRIDGE = "io.ringstore.internal.BackendAccess";

    /**
     * The layers, bottom first: a package names types of its own layer (without a cycle) and of the
     * layers below it, never of one above. Every package of the module is in one.
     */
    static final List<List<String>> LAYERS = List.of(
            List.of("io.ringstore.internal", "io.ringstore.internal.hash"),
            List.of("io.ringstore.family"),
            List.of("io.ringstore.internal.format"),
            List.of("io.ringstore"),
            List.of("io.ringstore.builder", "io.ringstore.migration", "io.ringstore.balance", "io.ringstore.state"),
            List.of("io.ringstore.live"));

    private static final String ROOT = "io/ringstore/";
    private static final Pattern TYPE_IN_DESCRIPTOR = Pattern.compile("L(io/ringstore/[A-Za-z0-9_/$]+)[;<]");

    @Test
    void noPackageCycle() throws Exception {
        Graph graph = Graph.of(mainClasses());
        assertTrue(graph.edges.size() >= 7, "the main module's packages were not found: " + graph.edges.keySet());
        List<String> cycles = graph.cycles();
        assertEquals(List.of(), cycles, () -> "package cycles in module io.ringstore:\n" + String.join("\n", cycles));
    }

    /**
     * The ground floor (the internal packages, and the families their format calls) names no class of
     * the packages above it, but through the bridge: stricter than no cycle (an upward edge nobody points
     * back along yet is one too).
     */
    @Test
    void theGroundFloorNamesNoPublicTypeButThroughTheBridge() throws Exception {
        List<String> upward = new ArrayList<>();
        for (Map.Entry<String, byte[]> c : mainClasses().entrySet()) {
            String from = c.getKey();
            if (!isGroundFloor(packageOf(from)) || from.equals(BRIDGE) || from.startsWith(BRIDGE + "$")) {
                continue;
            }
            for (String to : referencedClasses(c.getValue())) {
                if (!isGroundFloor(packageOf(to))) {
                    upward.add(from + " -> " + to);
                }
            }
        }
        assertEquals(List.of(), upward, () -> "the ground floor names types above it:\n" + String.join("\n", upward));
    }

    private static boolean isGroundFloor(String pkg) {
        return pkg.equals("io.ringstore.internal")
                || pkg.startsWith("io.ringstore.internal.")
                || pkg.equals("io.ringstore.family");
    }

    /** Every package is in a layer of {@link #LAYERS}, and every edge points to its own layer or one below. */
    @Test
    void everyEdgePointsDownTheLayers() throws Exception {
        Graph graph = Graph.of(mainClasses());
        Map<String, Integer> layer = new HashMap<>();
        for (int i = 0; i < LAYERS.size(); i++) {
            for (String p : LAYERS.get(i)) {
                layer.put(p, i);
            }
        }
        List<String> unplaced =
                graph.edges.keySet().stream().filter(p -> !layer.containsKey(p)).toList();
        assertEquals(List.of(), unplaced, "packages in no layer of LAYERS");
        List<String> upward = new ArrayList<>();
        graph.edges.forEach((from, targets) -> targets.forEach((to, why) -> {
            if (layer.get(to) > layer.get(from)) {
                upward.add(from + " -> " + to + ": " + why.iterator().next());
            }
        }));
        assertEquals(List.of(), upward, () -> "edges pointing up the layers:\n" + String.join("\n", upward));
    }

    /** A planted cycle is found and named with the classes that make it: the test can fail. */
    @Test
    void aPlantedCycleIsNamed() {
        Graph graph = new Graph();
        graph.add("io.ringstore.Ring", "io.ringstore.internal.format.PointRing");
        graph.add("io.ringstore.internal.format.PointRing", "io.ringstore.internal.Crc32");
        graph.add("io.ringstore.internal.Crc32", "io.ringstore.RingStore");
        graph.add(BRIDGE, "io.ringstore.Backend"); // the bridge: no edge
        graph.add("io.ringstore.live.RingRouter", "io.ringstore.Ring");
        List<String> cycles = graph.cycles();
        assertEquals(1, cycles.size(), () -> String.join("\n", cycles));
        assertTrue(
                cycles.getFirst()
                        .startsWith(
                                "io.ringstore -> io.ringstore.internal.format -> io.ringstore.internal -> io.ringstore"
                                        + " (io.ringstore.Ring -> io.ringstore.internal.format.PointRing;"
                                        + " io.ringstore.internal.format.PointRing -> io.ringstore.internal.Crc32;"
                                        + " io.ringstore.internal.Crc32 -> io.ringstore.RingStore)\n"
                                        + "  packages in the cycle: [io.ringstore, io.ringstore.internal, io.ringstore.internal.format]"),
                cycles.getFirst());
        assertTrue(
                cycles.getFirst()
                        .contains(
                                "io.ringstore.internal -> io.ringstore: 1 reference, io.ringstore.internal.Crc32 -> io.ringstore.RingStore"),
                cycles.getFirst());
        assertTrue(!cycles.getFirst().contains("Backend"), "the bridge's edge is not one: " + cycles.getFirst());
    }

    /** Every class file of the main module (not the tests), by binary name. */
    private static Map<String, byte[]> mainClasses() throws Exception {
        URI location = RingStore.class
                .getProtectionDomain()
                .getCodeSource()
                .getLocation()
                .toURI();
        Path root = Path.of(location);
        Map<String, byte[]> classes = new TreeMap<>();
        if (Files.isDirectory(root)) {
            read(root, classes);
        } else {
            try (FileSystem jar = FileSystems.newFileSystem(root)) {
                read(jar.getPath("/"), classes);
            }
        }
        return classes;
    }

    private static void read(Path root, Map<String, byte[]> classes) throws IOException {
        Path dir = root.resolve(ROOT);
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path f : (Iterable<Path>) files.filter(p -> p.toString().endsWith(".class"))::iterator) {
                String name = root.relativize(f).toString().replace('\\', '/');
                name = name.substring(0, name.length() - ".class".length()).replace('/', '.');
                classes.put(name, Files.readAllBytes(f));
            }
        }
    }

    /** The packages and, for each edge, the first class that makes it. */
    static final class Graph {
        /** package -> package it depends on -> every "class -> class" reference making that edge. */
        final Map<String, Map<String, Set<String>>> edges = new TreeMap<>();

        static Graph of(Map<String, byte[]> classes) throws IOException {
            Graph g = new Graph();
            for (Map.Entry<String, byte[]> c : classes.entrySet()) {
                g.edges.computeIfAbsent(packageOf(c.getKey()), p -> new TreeMap<>());
                for (String referenced : referencedClasses(c.getValue())) {
                    g.add(c.getKey(), referenced);
                }
            }
            return g;
        }

        void add(String from, String to) {
            String fromPackage = packageOf(from);
            String toPackage = packageOf(to);
            edges.computeIfAbsent(fromPackage, p -> new TreeMap<>());
            edges.computeIfAbsent(toPackage, p -> new TreeMap<>());
            boolean bridge = from.equals(BRIDGE) || from.startsWith(BRIDGE + "$");
            if (!bridge && !fromPackage.equals(toPackage)) {
                edges.get(fromPackage)
                        .computeIfAbsent(toPackage, p -> new TreeSet<>())
                        .add(from + " -> " + to);
            }
        }

        /**
         * One entry per strongly connected set of packages: a shortest cycle through it with the first
         * class reference making each edge, then every reference between the set's packages.
         */
        List<String> cycles() {
            List<String> out = new ArrayList<>();
            for (Set<String> component : components()) {
                if (component.size() < 2) {
                    continue;
                }
                List<String> cycle = cycleIn(component);
                List<String> why = new ArrayList<>();
                for (int i = 0; i + 1 < cycle.size(); i++) {
                    why.add(edges.get(cycle.get(i))
                            .get(cycle.get(i + 1))
                            .iterator()
                            .next());
                }
                StringBuilder entry =
                        new StringBuilder(String.join(" -> ", cycle) + " (" + String.join("; ", why) + ")");
                entry.append("\n  packages in the cycle: ").append(component).append("; the edges between them:");
                for (String p : component) {
                    for (Map.Entry<String, Set<String>> e : edges.get(p).entrySet()) {
                        if (component.contains(e.getKey())) {
                            List<String> refs = List.copyOf(e.getValue());
                            entry.append("\n    ")
                                    .append(p)
                                    .append(" -> ")
                                    .append(e.getKey())
                                    .append(": ")
                                    .append(refs.size())
                                    .append(refs.size() == 1 ? " reference, " : " references, e.g. ")
                                    .append(String.join(", ", refs.subList(0, Math.min(3, refs.size()))));
                        }
                    }
                }
                out.add(entry.toString());
            }
            return out;
        }

        /** Tarjan's strongly connected components. */
        private List<Set<String>> components() {
            Map<String, Integer> index = new HashMap<>();
            Map<String, Integer> low = new HashMap<>();
            Deque<String> stack = new ArrayDeque<>();
            Set<String> onStack = new TreeSet<>();
            List<Set<String>> found = new ArrayList<>();
            int[] counter = {0};
            for (String p : edges.keySet()) {
                if (!index.containsKey(p)) {
                    connect(p, index, low, stack, onStack, found, counter);
                }
            }
            return found;
        }

        private void connect(
                String p,
                Map<String, Integer> index,
                Map<String, Integer> low,
                Deque<String> stack,
                Set<String> onStack,
                List<Set<String>> found,
                int[] counter) {
            index.put(p, counter[0]);
            low.put(p, counter[0]++);
            stack.push(p);
            onStack.add(p);
            for (String q : edges.get(p).keySet()) {
                if (!index.containsKey(q)) {
                    connect(q, index, low, stack, onStack, found, counter);
                    low.put(p, Math.min(low.get(p), low.get(q)));
                } else if (onStack.contains(q)) {
                    low.put(p, Math.min(low.get(p), index.get(q)));
                }
            }
            if (low.get(p).equals(index.get(p))) {
                Set<String> component = new TreeSet<>();
                String q;
                do {
                    q = stack.pop();
                    onStack.remove(q);
                    component.add(q);
                } while (!q.equals(p));
                found.add(component);
            }
        }

        /** A shortest cycle from the component's first package back to it, inside the component (breadth first). */
        private List<String> cycleIn(Set<String> component) {
            String start = component.iterator().next();
            Map<String, String> parent = new HashMap<>();
            Deque<String> queue = new ArrayDeque<>(List.of(start));
            while (!queue.isEmpty()) {
                String p = queue.poll();
                for (String q : edges.get(p).keySet()) {
                    if (q.equals(start)) {
                        List<String> cycle = new ArrayList<>();
                        for (String at = p; at != null; at = parent.get(at)) {
                            cycle.addFirst(at); // back along the parents to start, which has none
                        }
                        cycle.add(start);
                        return cycle;
                    }
                    if (component.contains(q) && !parent.containsKey(q)) {
                        parent.put(q, p);
                        queue.add(q);
                    }
                }
            }
            throw new AssertionError("no cycle in a strongly connected component " + component);
        }
    }

    private static String packageOf(String className) {
        return className.substring(0, className.lastIndexOf('.'));
    }

    /**
     * The io.ringstore classes a class file names: its constant pool's class entries, and the types in
     * every UTF-8 entry that is a descriptor or signature (a type used only in a field or method
     * signature has no class entry of its own).
     */
    static Set<String> referencedClasses(byte[] classFile) throws IOException {
        Set<String> out = new TreeSet<>();
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(classFile));
        if (in.readInt() != 0xCAFEBABE) {
            throw new IOException("not a class file");
        }
        in.readUnsignedShort(); // minor
        in.readUnsignedShort(); // major
        int count = in.readUnsignedShort();
        String[] utf8 = new String[count];
        int[] classNameIndex = new int[count];
        for (int i = 1; i < count; i++) {
            int tag = in.readUnsignedByte();
            switch (tag) {
                case 1 -> utf8[i] = in.readUTF();
                case 7 -> classNameIndex[i] = in.readUnsignedShort();
                case 8, 16, 19, 20 -> in.readUnsignedShort(); // String, MethodType, Module, Package
                case 3, 4 -> in.readInt();
                case 5, 6 -> {
                    in.readLong();
                    i++; // a long or double takes two entries
                }
                case 9, 10, 11, 12, 17, 18 -> in.readInt(); // refs, NameAndType, (Invoke)Dynamic
                case 15 -> {
                    in.readUnsignedByte();
                    in.readUnsignedShort();
                }
                default -> throw new IOException("constant pool tag " + tag + " at entry " + i);
            }
        }
        for (int i = 1; i < count; i++) {
            if (classNameIndex[i] != 0) {
                String name = utf8[classNameIndex[i]];
                if (name.startsWith("[")) {
                    addTypes(name, out);
                } else if (name.startsWith(ROOT)) {
                    out.add(name.replace('/', '.'));
                }
            } else if (utf8[i] != null) {
                addTypes(utf8[i], out);
            }
        }
        out.removeIf(c -> c.endsWith("module-info") || c.endsWith("package-info"));
        return out;
    }

    private static void addTypes(String descriptor, Set<String> out) {
        Matcher m = TYPE_IN_DESCRIPTOR.matcher(descriptor);
        while (m.find()) {
            out.add(m.group(1).replace('/', '.'));
        }
    }
}
