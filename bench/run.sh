#!/usr/bin/env bash
# Runs the whole benchmark suite: bench/run.sh quick|full
#
# Builds the benchmark jar, waits for a quiet machine (1-minute load average below BENCH_MAX_LOAD,
# default 1.0, checked every minute for at most BENCH_WAIT_MINUTES, default 15; after that it runs
# anyway and says so), then runs every measurement into bench-results/<mode>/ (gitignored): JMH JSON
# (lookup-*.json, search-*.json), the measuring programs' TSV and logs, env.txt (machine, JDK, load
# at start and end, duration), and report.md + lookup-ns.svg from ReportWriter. The full mode also
# writes the chart to bench/results/lookup-ns.svg (the one BENCHMARKS.md shows).
#
#   quick  (about 1.5 minutes measuring when idle, 3 on a loaded machine; bench/README.md): rings of 16,000 and 3.3 M points only (the 204.8 M ring takes 8–13 s to
#          build and its heap baselines several seconds to fill per JMH fork); JMH 1 fork, 2 warm-up and
#          4 measurement iterations of 0.5 s; one build and one sort round; sharing measured on the
#          3.3 M ring and the example; a 100,000-lookup cache model.
#   full   (about 12 minutes here for lookups, builds, heap, sharing and the cache model; views,
#          build phases, verify and the pointer chase add more, each into its own log): all three sizes; JMH 2 forks, 3 warm-up and 5 measurement iterations of
#          1 s; key and hash variants; TreeMap skipped at 204.8 M points (it would need 13 GB of heap);
#          4,194,304 keys at 204.8 M points so that lookups go to memory; 5 build rounds (3 for the
#          204.8 M ring), sharing on the 1.2 GB ring, the 3.3 M ring and the example.
#
# Environment: RINGSTORE_TARGET (Maven output folder name, default target), JAVA_HOME (else
# bin/jdk.sh finds a JDK 22+), BENCH_MAX_LOAD, BENCH_WAIT_MINUTES, BENCH_SKIP_PACKAGE=1 (use the
# jar as built). Ring files are cached in java.io.tmpdir/ringstore-bench-data (see bench/README.md).
set -euo pipefail
mode="${1:-}"
case "$mode" in
  quick|full) ;;
  *) echo "usage: bench/run.sh quick|full" >&2; exit 2 ;;
esac
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
. bin/jdk.sh
ringstore_find_jdk || exit 1
export JAVA_HOME="$RINGSTORE_JAVA_HOME"
export MAVEN_OPTS="${MAVEN_OPTS:---sun-misc-unsafe-memory-access=allow}"
java="$JAVA_HOME/bin/java"
target="${RINGSTORE_TARGET:-target}"
jar="bench/$target/benchmarks.jar"
out="bench-results/$mode"
started=$(date +%s)

if [ "${BENCH_SKIP_PACKAGE:-0}" != 1 ]; then
  echo "run.sh: building $jar" >&2
  mvn -B -q -o -Dringstore.targetName="$target" -pl bench -am -DskipTests package \
    || mvn -B -q -Dringstore.targetName="$target" -pl bench -am -DskipTests package
fi
rm -rf "$out"
mkdir -p "$out"

load1() { cut -d' ' -f1 /proc/loadavg; }
quiet() { awk -v l="$(load1)" -v m="${BENCH_MAX_LOAD:-1.0}" 'BEGIN { exit !(l < m) }'; }
waited=0
until quiet; do
  if [ "$waited" -ge "${BENCH_WAIT_MINUTES:-15}" ]; then
    echo "run.sh: load average still $(load1) after $waited minutes; measuring anyway (results are noisier)" >&2
    break
  fi
  echo "run.sh: load average $(load1), waiting for it to fall below ${BENCH_MAX_LOAD:-1.0} ($waited min so far)" >&2
  sleep 60
  waited=$((waited + 1))
done

measuring=$(date +%s)
{
  echo "mode:        $mode"
  echo "date:        $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "cpu:         $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)$(lscpu 2>/dev/null | awk -F: '/^L3 cache/ { gsub(/^ +/, "", $2); printf ", L3 %s", $2 }')"
  echo "memory:      $(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
  echo "kernel:      $(uname -r), transparent huge pages $(sed 's/.*\[\(.*\)\].*/\1/' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)"
  echo "jdk:         $("$java" -version 2>&1 | sed -n '1p;2p' | paste -sd ';' -)"
  echo "load start:  $(cut -d' ' -f1-3 /proc/loadavg) (waited $waited min)"
} > "$out/env.txt"
cat "$out/env.txt" >&2

run() { # run LOG COMMAND...: prints and logs the command's output
  local log="$1"; shift
  echo "run.sh: $*" >&2
  "$@" 2>&1 | tee "$out/$log"
}

cp="-cp $jar"
if [ "$mode" = quick ]; then
  sizes=100x160,2048x10x160
  jmh=(-f 1 -wi 2 -w 500ms -i 4 -r 500ms)
  run build.log "$java" -Xmx4g $cp io.ringstore.bench.BuildMeasure --builds 1 --sorts 1 --tsv "$out/build.tsv" examples/backends.conf 2048x10x160
  run heap.log "$java" -Xmx4g $cp io.ringstore.bench.HeapMeasure --tsv "$out/heap.tsv" 100x160 2048x10x160 examples/backends.conf
  run share.log "$java" $cp io.ringstore.bench.ShareMeasure --lookups 200000 --tsv "$out/share.tsv" 2048x10x160 examples/backends.conf
  run cache.log "$java" -Xmx4g $cp io.ringstore.bench.SearchCacheModel --lookups 100000 --tsv "$out/cache.tsv" 100x160 2048x10x160
  run state.log "$java" $cp io.ringstore.bench.StateMeasure --seconds 0.5
  run shared-load.log "$java" -jar "$jar" 'StateBenchmark|StrictBoundBenchmark' "${jmh[@]}"
  run lookup.log "$java" -jar "$jar" '\.LookupBenchmark\.' -p size=$sizes "${jmh[@]}" -rf json -rff "$out/lookup-1.json"
  run search.log "$java" -jar "$jar" SearchBenchmark -p size=$sizes "${jmh[@]}" -rf json -rff "$out/search-1.json"
else
  sizes=100x160,2048x10x160
  jmh=(-f 2 -wi 3 -w 1s -i 5 -r 1s)
  big=(-p size=2048x100000 -p keyCount=4194304)
  run build.log "$java" -Xmx4g $cp io.ringstore.bench.BuildMeasure --tsv "$out/build.tsv" examples/backends.conf 2048x10x160 2048x100000
  run heap.log "$java" -Xmx4g $cp io.ringstore.bench.HeapMeasure --tsv "$out/heap.tsv" 100x160 2048x10x160 2048x100000 examples/backends.conf
  run share.log "$java" $cp io.ringstore.bench.ShareMeasure --tsv "$out/share.tsv" 2048x100000 2048x10x160 examples/backends.conf
  run cache.log "$java" -Xmx4g $cp io.ringstore.bench.SearchCacheModel --tsv "$out/cache.tsv" 100x160 2048x10x160 2048x100000
  run state.log "$java" $cp io.ringstore.bench.StateMeasure --seconds 3
  for t in 1 2; do
    run shared-load-t$t.log "$java" -jar "$jar" 'StateBenchmark|StrictBoundBenchmark' "${jmh[@]}" -t $t
  done
  run shared-load-over.log "$java" -jar "$jar" 'StrictBoundBenchmark.(choose|request)Bounded' -p overBound=10 "${jmh[@]}"
  # Views, build phases, verify, the pointer chase: each into its own log (BENCHMARKS.md quotes them).
  run views.log "$java" -Xmx4g $cp io.ringstore.bench.ViewMeasure
  run view-lookups.log "$java" -jar "$jar" ViewLookupBenchmark -f 1 -wi 2 -w 1s -i 5 -r 1s
  run build-phases.log "$java" -Xmx4g $cp io.ringstore.bench.BuildPhases
  run verify.log "$java" -jar "$jar" VerifyBenchmark
  run pointer-chase.log "$java" -jar "$jar" PointerChaseBenchmark
  run lookup-1.log "$java" -jar "$jar" '\.LookupBenchmark\.' -p size=$sizes "${jmh[@]}" -rf json -rff "$out/lookup-1.json"
  # TreeMap skipped at 204.8 M points: about 13 GB of heap (Baselines.TREEMAP_MAX_POINTS).
  run lookup-2.log "$java" -jar "$jar" 'LookupBenchmark.(ringstore|heapArrays|longPoints)' "${big[@]}" "${jmh[@]}" -rf json -rff "$out/lookup-2.json"
  run search-1.log "$java" -jar "$jar" SearchBenchmark -p size=$sizes "${jmh[@]}" -rf json -rff "$out/search-1.json"
  run search-2.log "$java" -jar "$jar" SearchBenchmark "${big[@]}" "${jmh[@]}" -rf json -rff "$out/search-2.json"
fi

{
  echo "load end:    $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "duration:    $(( $(date +%s) - measuring )) s measuring; $(( $(date +%s) - started )) s with the jar build and the wait for a quiet machine"
} >> "$out/env.txt"
svg=()
[ "$mode" = full ] && svg=(--svg bench/results/lookup-ns.svg)
"$java" $cp io.ringstore.bench.ReportWriter "$out" "${svg[@]}" > /dev/null
echo "run.sh: results in $out (report.md, lookup-ns.svg)$([ "$mode" = full ] && echo '; chart also in bench/results/lookup-ns.svg')" >&2
