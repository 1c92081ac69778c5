package io.ringstore.bench;

import io.ringstore.Ring;
import io.ringstore.RingStore;
import io.ringstore.builder.BackendList;
import io.ringstore.builder.RingBuilder;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * What N processes mapping the same ring file pay for it, from Linux's own accounting. For N = 1, 2,
 * 4, 8 it starts N child JVMs (this JVM's {@code java}, this class path, {@code -Xmx64m}); each opens
 * the ring file, reads a point on every page of every ring, looks up random hashes over the whole
 * line in its rings, prints {@code ready} and waits. When all N are ready, this process reads each
 * child's {@code /proc/PID/smaps} entry for the file's mapping and its {@code /proc/PID/smaps_rollup}
 * (the whole process) and {@code /proc/PID/status}, then closes the children's stdin, which ends them.
 *
 * <p>Reported per process, for the mapping and for the whole process: Rss, Pss (each shared page
 * divided by the number of processes mapping it), Shared_Clean, Private (Private_Clean +
 * Private_Dirty) and Private_Dirty; for the process also its page tables (VmPTE of /proc/PID/status:
 * kernel memory, outside Rss, about 8 bytes per mapped 4 KiB page). Linux calls a page private when
 * one process maps it, so with N = 1 the ring's pages are Private_Clean: still clean page cache, which
 * a second process maps at no cost.
 *
 * <pre>
 * java -cp bench/target/benchmarks.jar io.ringstore.bench.ShareMeasure [--procs 1,2,4,8] [--lookups N] [--tsv FILE] [SIZE|BACKENDS_FILE...]
 * </pre>
 * Rings default to {@code 2048x100000} (the 1.2 GB benchmark ring) and {@code examples/backends.conf}
 * (built, v1 with every feature ring, into the benchmarks' ring directory). Linux only.
 */
public final class ShareMeasure {
    private static final String READY = "ready";
    private static final String[] FIELDS = {
        "Rss", "Pss", "Shared_Clean", "Shared_Dirty", "Private_Clean", "Private_Dirty", "VmPTE"
    };
    private static final long PAGE = 4096;
    /** Where a child's reads go, so they are not optimised away. */
    private static volatile long sink;

    private ShareMeasure() {}

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("--child")) {
            child(Path.of(args[1]), Integer.parseInt(args[2]));
            return;
        }
        int[] procs = {1, 2, 4, 8};
        int lookups = 2_000_000;
        String tsvPath = null;
        List<String> subjects = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--procs" ->
                    procs = java.util.Arrays.stream(args[++i].split(","))
                            .mapToInt(Integer::parseInt)
                            .toArray();
                case "--lookups" -> lookups = Integer.parseInt(args[++i]);
                case "--tsv" -> tsvPath = args[++i];
                default -> subjects.add(args[i]);
            }
        }
        if (subjects.isEmpty()) {
            subjects = List.of(BenchRings.LARGE, "examples/backends.conf");
        }
        try (Tsv tsv = Tsv.create(
                tsvPath,
                "ring",
                "fileBytes",
                "procs",
                "pid",
                "scope",
                "rssKiB",
                "pssKiB",
                "sharedCleanKiB",
                "privateKiB",
                "privateDirtyKiB",
                "pageTablesKiB")) {
            for (String subject : subjects) {
                Path file = ringFile(subject);
                for (int n : procs) {
                    measure(subject, file, n, lookups, tsv);
                }
            }
        }
    }

    private static Path ringFile(String subject) throws Exception {
        if (Files.isRegularFile(Path.of(subject))) {
            Path file = BenchRings.dataDir().resolve(Path.of(subject).getFileName() + ".ring");
            Files.createDirectories(file.toAbsolutePath().getParent());
            RingBuilder.of(BackendList.parse(Path.of(subject))).generation(1).build(file);
            return file.toRealPath();
        }
        BenchRings.open(subject).close(); // builds the file if it is not cached yet
        return BenchRings.ringFile(BenchRings.Shape.of(subject)).toRealPath();
    }

    private static void measure(String subject, Path file, int n, int lookups, Tsv tsv) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<Process> children = new ArrayList<>();
        try {
            for (int i = 0; i < n; i++) {
                children.add(new ProcessBuilder(
                                java,
                                "-Xmx64m",
                                "-cp",
                                System.getProperty("java.class.path"),
                                ShareMeasure.class.getName(),
                                "--child",
                                file.toString(),
                                Integer.toString(lookups))
                        .redirectError(ProcessBuilder.Redirect.INHERIT)
                        .start());
            }
            for (Process child : children) { // the barrier: every child holds the mapping from here on
                BufferedReader out =
                        new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.US_ASCII));
                String line = out.readLine();
                if (!READY.equals(line)) {
                    throw new IllegalStateException("child " + child.pid() + " said " + line + " instead of " + READY);
                }
            }
            long fileBytes = Files.size(file);
            System.out.printf("%n%s: %s, %,d bytes, %d process%s%n", subject, file, fileBytes, n, n == 1 ? "" : "es");
            System.out.printf("%8s | %-47s | %-55s%n", "", "ring file mapping (MiB)", "whole process (MiB)");
            System.out.printf(
                    "%8s | %9s %9s %9s %9s %7s | %9s %9s %9s %9s %7s %7s%n",
                    "pid",
                    "Rss",
                    "Pss",
                    "Sh_Clean",
                    "Private",
                    "Pr_Dirt",
                    "Rss",
                    "Pss",
                    "Sh_Clean",
                    "Private",
                    "Pr_Dirt",
                    "VmPTE");
            long pssSum = 0;
            for (Process child : children) {
                long pid = child.pid();
                Map<String, Long> mapping = smapsOfMapping(pid, file);
                Map<String, Long> process = fields(Files.readAllLines(Path.of("/proc/" + pid + "/smaps_rollup")));
                long pageTables = fields(Files.readAllLines(Path.of("/proc/" + pid + "/status")))
                        .get("VmPTE");
                pssSum += mapping.get("Pss");
                System.out.printf("%8d | %s | %s %7.1f%n", pid, row(mapping), row(process), pageTables / 1024.0);
                tsv.row(
                        subject,
                        fileBytes,
                        n,
                        pid,
                        "mapping",
                        mapping.get("Rss"),
                        mapping.get("Pss"),
                        mapping.get("Shared_Clean"),
                        privateKiB(mapping),
                        mapping.get("Private_Dirty"),
                        "");
                tsv.row(
                        subject,
                        fileBytes,
                        n,
                        pid,
                        "process",
                        process.get("Rss"),
                        process.get("Pss"),
                        process.get("Shared_Clean"),
                        privateKiB(process),
                        process.get("Private_Dirty"),
                        pageTables);
            }
            System.out.printf(
                    "sum of the mapping's Pss over the %d process%s: %,.1f MiB (file %,.1f MiB)%n",
                    n, n == 1 ? "" : "es", pssSum / 1024.0, fileBytes / 1048576.0);
        } finally {
            for (Process child : children) {
                child.getOutputStream().close(); // end of input: the child exits
            }
            for (Process child : children) {
                if (child.waitFor() != 0) {
                    throw new IllegalStateException("child " + child.pid() + " exited with " + child.exitValue());
                }
            }
        }
    }

    private static String row(Map<String, Long> f) {
        return String.format(
                "%9.1f %9.1f %9.1f %9.1f %7.1f",
                f.get("Rss") / 1024.0,
                f.get("Pss") / 1024.0,
                f.get("Shared_Clean") / 1024.0,
                privateKiB(f) / 1024.0,
                f.get("Private_Dirty") / 1024.0);
    }

    private static long privateKiB(Map<String, Long> f) {
        return f.get("Private_Clean") + f.get("Private_Dirty");
    }

    /** The fields of every /proc/PID/smaps entry mapping {@code file}, summed (KiB). */
    static Map<String, Long> smapsOfMapping(long pid, Path file) throws IOException {
        List<String> lines = Files.readAllLines(Path.of("/proc/" + pid + "/smaps"));
        List<String> mine = new ArrayList<>();
        boolean inside = false;
        int entries = 0;
        for (String line : lines) {
            if (line.matches("^[0-9a-f]+-[0-9a-f]+ .*")) {
                inside = line.endsWith(" " + file);
                entries += inside ? 1 : 0;
            } else if (inside) {
                mine.add(line);
            }
        }
        if (entries == 0) {
            throw new IllegalStateException("process " + pid + " does not map " + file);
        }
        return fields(mine);
    }

    /** Sums the "Name:   N kB" lines of {@link #FIELDS} (smaps and status lines have that form). */
    private static Map<String, Long> fields(List<String> lines) {
        Map<String, Long> sums = new LinkedHashMap<>();
        for (String f : FIELDS) {
            sums.put(f, 0L);
        }
        for (String line : lines) {
            int colon = line.indexOf(':');
            if (colon > 0 && sums.containsKey(line.substring(0, colon))) {
                sums.merge(
                        line.substring(0, colon),
                        Long.parseLong(line.substring(colon + 1).trim().split("\\s+")[0]),
                        Long::sum);
            }
        }
        return sums;
    }

    /** A router: maps the file, reads every page of every ring, looks up random hashes, then holds the mapping. */
    private static void child(Path file, int lookups) throws Exception {
        try (RingStore store = RingStore.open(file)) {
            List<Ring> rings = store.rings().stream().filter(r -> !r.isEmpty()).toList();
            long sum = 0;
            int stride = (int) (PAGE / io.ringstore.internal.format.RingFileDescriptor.POINT_LENGTH);
            for (Ring ring : rings) {
                for (int i = 0; i < ring.pointCount(); i += stride) {
                    sum += ring.pointHash(i);
                }
                sum += ring.pointHash(ring.pointCount() - 1);
            }
            SplittableRandom random =
                    new SplittableRandom(ProcessHandle.current().pid());
            for (int i = 0; i < lookups; i++) {
                sum += rings.get(i % rings.size()).lookupHash(random.nextInt());
            }
            sink = sum;
            System.out.println(READY);
            System.out.flush();
            while (System.in.read() >= 0) {
                // hold the mapping until the parent closes our stdin
            }
        }
    }
}
