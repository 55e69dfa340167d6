#!/usr/bin/env bash
# Two builds of racehorse against each other on the same workloads, alternating round by round
# (issue 46 §5: the latency counting before and after the flat bucket arrays): for each
# workload, the median over ROUNDS of each build's throughput, CPU per unit of work, and the
# harness's own CPU as a share of one CPU over the window, with the per-round ratios
# (new / old). Both builds write into one throw-away store.
# Usage: bash scripts/bench-harness-share.sh OLD_BIN NEW_BIN [ROUNDS]      (default 5 rounds)
#   WINDOW=5s WARMUP=1s; RUNS="fileserver --clients 2|net -o mode=rr -o request=1 -o response=1 -o connections=1" (one racehorse run line per workload)
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: bash scripts/bench-harness-share.sh OLD_BIN NEW_BIN [ROUNDS]" >&2; exit 2; }
old=$(realpath "$1"); new=$(realpath "$2"); rounds=${3:-5}
window=${WINDOW:-5s}; warmup=${WARMUP:-1s}
IFS='|' read -r -a runs <<< "${RUNS:-fileserver --clients 2|net -o mode=rr -o request=1 -o response=1 -o connections=1}"
work=$(mktemp -d "${DIR:-/var/tmp}/rh-harness.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
: > "$work/rows.tsv"
for r in $(seq 1 "$rounds"); do
  for w in "${runs[@]}"; do
    for side in old new; do
      bin=$old; [ "$side" = new ] && bin=$new
      label="$side-$r-${w%% *}"
      # shellcheck disable=SC2086
      "$bin" --db "$work/runs.db" -q run $w --runtime "$window" --warmup "$warmup" --reps 1 --no-warm-up \
        --no-drop-caches --label "$label" --dir "$work" >/dev/null
      "$new" --db "$work/runs.db" export "$label" --format json | python3 -c '
import json, sys
c = json.load(sys.stdin)["cells"][0]
side, r, w = sys.argv[1:4]
cpu = (c.get("cpu_per_unit") or {}).get("total_s")
print("\t".join(map(str, [w, side, r, c["throughput_per_s"], cpu, c["harness_cpu_s"] / c["window_s"] * 100,
                          c["quality"].get("noisy")])))' "$side" "$r" "${w%% *}" >> "$work/rows.tsv"
    done
  done
done
python3 - "$work/rows.tsv" <<'EOF'
import statistics, sys
from collections import defaultdict
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
by = defaultdict(dict)
for w, side, r, tput, cpu, harness, noisy in rows:
    by[(w, r)][side] = (float(tput), float(cpu) if cpu != "None" else None, float(harness), noisy == "True")
print("| workload | figure | old (median) | new (median) | new / old per round: median (range) |")
print("|---|---|---|---|---|")
for w in dict.fromkeys(k[0] for k in by):
    pairs = [v for (ww, _), v in by.items() if ww == w and "old" in v and "new" in v]
    noisy = sum(v["old"][3] + v["new"][3] for v in pairs)
    for i, name in enumerate(["throughput per s", "CPU s per unit", "harness % of one CPU"]):
        olds = [p["old"][i] for p in pairs if p["old"][i] is not None]
        news = [p["new"][i] for p in pairs if p["new"][i] is not None]
        ratios = [p["new"][i] / p["old"][i] for p in pairs if p["old"][i] and p["new"][i] is not None]
        if not ratios:
            continue
        print(f"| {w} | {name} | {statistics.median(olds):.4g} | {statistics.median(news):.4g} | "
              f"{statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f}) |")
    print(f"| {w} | noisy windows | {noisy} of {2 * len(pairs)} | | |")
EOF
