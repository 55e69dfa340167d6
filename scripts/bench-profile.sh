#!/usr/bin/env bash
# What `run --profile` costs: the same cells run with and without it, alternating PAIRS
# times (one run each way per pair), then the ratio profiled / plain of the median
# throughput per workload. Needs perf (Debian: linux-perf) and root.
# Usage: bash scripts/bench-profile.sh [PAIRS]   (see BENCHMARKS.md)
set -euo pipefail
cd "$(dirname "$0")/.."
pairs="${1:-5}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT INT TERM
cat >"$tmp/suite.toml" <<'TOML'
name = "profile-cost"
runtime = "5s"
warmup = "1s"
reps = 1

[[workload]]
engine = "smallread"
direct = false

[[workload]]
engine = "fileserver"
clients = 2
TOML
cargo build --release --quiet
for i in $(seq "$pairs"); do
  for mode in plain profiled; do
    flag=""; [ "$mode" = profiled ] && flag="--profile"
    ./target/release/racehorse --db "$tmp/p.db" run "$tmp/suite.toml" --label "$mode" $flag --quiet \
      --dir "$tmp" >/dev/null
  done
done
for mode in plain profiled; do
  for id in $(./target/release/racehorse --db "$tmp/p.db" list | awk -v m="$mode" '$2 == m {print $1}'); do
    ./target/release/racehorse --db "$tmp/p.db" export "$id" --format json
  done
done | python3 -c '
import json, statistics as st, sys
dec = json.JSONDecoder(); text = sys.stdin.read(); i = 0; runs = []
while i < len(text):
    text_i = text[i:].lstrip()
    if not text_i: break
    doc, n = dec.raw_decode(text_i); runs.append(doc); i = len(text) - len(text_i) + n
tp = {}
for r in runs:
    for c in r["cells"]:
        tp.setdefault((r["run"]["label"], c["workload"]), []).append(c["throughput_per_s"])
for w in sorted({w for _, w in tp}):
    p, q = tp[("plain", w)], tp[("profiled", w)]
    print(f"{w}: plain median {st.median(p):.4g}/s n={len(p)}, profiled median {st.median(q):.4g}/s n={len(q)}, "
          f"ratio {st.median(q) / st.median(p):.3f}")
'
