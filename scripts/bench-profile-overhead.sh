#!/usr/bin/env bash
# What `run --profile` with call chains and counters costs: the same cells of a few engines
# run with and without it, interleaved (each pair runs both ways, the order alternating from
# pair to pair), then per workload the median throughput each way and their ratio
# profiled / plain, with the ratio of every pair. Needs perf and root.
# Usage: bash scripts/bench-profile-overhead.sh [PAIRS] [RUNTIME] [SETTINGS]
#   PAIRS     pairs of runs (default 5)
#   RUNTIME   measured window per cell (default 5s; 1s for a quick check)
#   SETTINGS  --profile settings (default callgraph=fp, i.e. frame pointers at 999 Hz)
#   RACEHORSE the binary (default target/release/racehorse if built, else target/debug/racehorse;
#             a debug build runs the engines slower, so its ratios overstate the cost less
#             reliably: use a release build for BENCHMARKS.md)
set -euo pipefail
cd "$(dirname "$0")/.."
pairs="${1:-5}"
runtime="${2:-5s}"
settings="${3:-callgraph=fp}"
bin="${RACEHORSE:-}"
if [ -z "$bin" ]; then
  bin=target/release/racehorse
  [ -x "$bin" ] || bin=target/debug/racehorse
fi
[ -x "$bin" ] || { echo "no racehorse binary at $bin: build it (cargo build --bins) or set RACEHORSE" >&2; exit 2; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT INT TERM
cat >"$tmp/suite.toml" <<TOML
name = "profile-overhead"
runtime = "$runtime"
warmup = "1s"
reps = 1

[[workload]]
engine = "smallread"
direct = false

[[workload]]
engine = "fileserver"
clients = 2

[[workload]]
engine = "compute"
case = "sieve"
TOML
rh() { "$bin" --db "$tmp/p.db" "$@"; }
one() { # MODE PAIR
  local flag=()
  [ "$1" = profiled ] && flag=("--profile=$settings")
  rh run "$tmp/suite.toml" --label "$1-$2" "${flag[@]}" --quiet --no-warm-up --dir "$tmp" >/dev/null 2>"$tmp/$1-$2.err" \
    || { echo "the $1 run of pair $2 failed:" >&2; cat "$tmp/$1-$2.err" >&2; exit 1; }
}
echo "$pairs pairs, ${runtime} windows, --profile=$settings, binary $bin" >&2
for i in $(seq "$pairs"); do
  if [ $((i % 2)) -eq 1 ]; then one plain "$i"; one profiled "$i"; else one profiled "$i"; one plain "$i"; fi
  echo "pair $i done" >&2
done
for i in $(seq "$pairs"); do
  for mode in plain profiled; do
    rh export "$mode-$i" --format json
    echo
  done
done | python3 -c '
import json, statistics as st, sys
dec = json.JSONDecoder(); text = sys.stdin.read(); i = 0; runs = []
while True:
    rest = text[i:].lstrip()
    if not rest:
        break
    doc, n = dec.raw_decode(rest); runs.append(doc); i = len(text) - len(rest) + n
tp = {}
for r in runs:
    mode, pair = r["run"]["label"].split("-")
    for c in r["cells"]:
        if c.get("throughput_per_s"):
            tp.setdefault(c["workload"], {}).setdefault(int(pair), {})[mode] = c["throughput_per_s"]
print("%-12s %12s %12s %7s  per pair" % ("workload", "plain /s", "profiled /s", "ratio"))
for w in sorted(tp):
    pairs = [p for p in tp[w].values() if len(p) == 2]
    plain = st.median(p["plain"] for p in pairs)
    prof = st.median(p["profiled"] for p in pairs)
    each = " ".join("%.3f" % (p["profiled"] / p["plain"]) for p in pairs)
    print("%-12s %12.4g %12.4g %7.3f  %s" % (w, plain, prof, prof / plain, each))
'
