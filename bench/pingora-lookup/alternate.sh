#!/bin/bash
# ringstore against pingora-ketama's Rust, the two processes alternating: ROUNDS rounds, each one Rust
# process then one JVM, each timing PASSES passes over the same 1,048,576 keys (the first pass of each
# process is warm-up and not counted; a process's figure is the median of the rest). Prints every
# line, then per side the per-round ratio pingora ns / ringstore ns and its median. BEFORE_JAR=JAR2
# adds a third process each round, another build's benchmark jar (printed as "before"), and the ratio
# before ns / ringstore ns.
#
#   bench/pingora-lookup/alternate.sh JAR PINGORA_LOOKUP_BINARY [ROUNDS [PASSES]]
set -eu
JAR=$1
RUST=$2
ROUNDS=${3:-7}
PASSES=${4:-5}
JAVA=${JAVA:-java}
KEYS=${TMPDIR:-/tmp}/ringstore-pingora-keys.bin
[ -f "$KEYS" ] || "$JAVA" -cp "$JAR" io.ringstore.bench.PingoraLookupMeasure --write-keys "$KEYS"
OUT=$(mktemp)
for r in $(seq 1 "$ROUNDS"); do
    echo "load $r $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT"
    "$RUST" "$KEYS" "$PASSES" | sed "s/^/$r /" | tee -a "$OUT"
    "$JAVA" -Xmx4g -cp "$JAR" io.ringstore.bench.PingoraLookupMeasure "$PASSES" | sed "s/^/$r /" | tee -a "$OUT"
    if [ -n "${BEFORE_JAR:-}" ]; then
        "$JAVA" -Xmx4g -cp "$BEFORE_JAR" io.ringstore.bench.PingoraLookupMeasure "$PASSES" \
            | sed "s/^java /before /; s/^/$r /" | tee -a "$OUT"
    fi
done
# round side impl pass ns checksum
awk '
    $1 == "load" { next }
    ($2 == "rust" || $2 == "java" || $2 == "before") && $4 > 1 { key = $1 " " $3 " " $2; n[key]++; v[key, n[key]] = $5; sides[$3] = 1; rounds[$1] = 1 }
    function median(arr, k, m,    i, j, t, a) {
        for (i = 1; i <= m; i++) a[i] = arr[k, i]
        for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
        return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
    }
    END {
        print "\nside  round  pingora-ns  before-ns  ringstore-ns  pingora/ringstore  before/ringstore"
        for (s in sides) {
            m = 0
            for (r in rounds) {
                jk = r " " s " java"; rk = r " " s " rust"; bk = r " " s " before"
                if (!(jk in n) || !(rk in n)) continue
                j = median(v, jk, n[jk]); p = median(v, rk, n[rk])
                b = (bk in n) ? median(v, bk, n[bk]) : 0
                printf "%s  %s  %.2f  %s  %.2f  %.2f  %s\n", s, r, p, b ? sprintf("%.2f", b) : "-", j, p / j, b ? sprintf("%.2f", b / j) : "-"
                ratio[s, ++m] = p / j
                if (b) before[s, m] = b / j
            }
            med[s] = median(ratio, s, m)
            medb[s] = ((s, 1) in before) ? sprintf("%.2f", median(before, s, m)) : "-"
        }
        print ""
        for (s in sides) printf "median %s: pingora/ringstore %.2f, before/ringstore %s\n", s, med[s], medb[s]
    }' "$OUT"
rm -f "$OUT"
