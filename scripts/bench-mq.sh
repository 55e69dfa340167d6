#!/usr/bin/env bash
# fileserver's two message-queue forms side by side (seed 003's modified dbench): ipc = mq
# (threads) against ipc = mq_procs (two processes per client), at 2 and 8 clients,
# alternating in each repetition. Prints median MB/s and workload CPU per MB of each form,
# the ratios mq_procs / mq, and how many windows were noisy.
# Usage: bash scripts/bench-mq.sh [REPS]   (default 5; needs a release build)
set -euo pipefail
cd "$(dirname "$0")/.."
reps="${1:-5}"
bin="${RACEHORSE_BIN:-${CARGO_TARGET_DIR:-target}/release/racehorse}"
[ -x "$bin" ] || { echo "no racehorse at $bin: cargo build --release, or set RACEHORSE_BIN" >&2; exit 2; }
tmp="$(mktemp -d "${DIR:-/var/tmp}/rh-mq.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT INT TERM
"$bin" --db "$tmp/rh.db" run fileserver -o ipc=mq,mq_procs --clients 2,8 --runtime 5s --warmup 1s \
  --reps "$reps" --no-drop-caches --quiet --label mq --dir "$tmp" >/dev/null
"$bin" --db "$tmp/rh.db" export mq --format json >"$tmp/mq.json"
python3 - "$tmp/mq.json" <<'PY'
import json, statistics, sys
cells = [c for c in json.load(open(sys.argv[1]))["cells"] if c["status"] == "ok"]
rows = {}
for c in cells:
    rows.setdefault((c["params"]["clients"], c["params"]["ipc"]), []).append(c)
med = lambda xs: statistics.median(xs)
print("| clients | ipc | n | MB/s (median) | workload CPU ms/MB (median) | system CPU ms/MB (median) | noisy |")
print("|---|---|---|---|---|---|---|")
for (clients, ipc), cs in sorted(rows.items()):
    mbs = med([c["throughput_per_s"] / 1e6 for c in cs])
    wl = med([c["workload_cpu"]["total_s"] * 1e3 / (c["units"] / 1e6) for c in cs])
    sys_cpu = med([c["cpu"]["total_s"] * 1e3 / (c["units"] / 1e6) for c in cs])
    noisy = sum(1 for c in cs if c["quality"]["noisy"])
    print(f"| {clients} | {ipc} | {len(cs)} | {mbs:.1f} | {wl:.2f} | {sys_cpu:.2f} | {noisy} |")
for clients in sorted({k[0] for k in rows}):
    a, b = rows.get((clients, "mq"), []), rows.get((clients, "mq_procs"), [])
    if a and b:
        t = med([c["throughput_per_s"] for c in b]) / med([c["throughput_per_s"] for c in a])
        w = med([c["workload_cpu"]["total_s"] / c["units"] for c in b]) / med([c["workload_cpu"]["total_s"] / c["units"] for c in a])
        print(f"\nclients={clients}: mq_procs/mq MB/s {t:.3f}, workload CPU per MB {w:.3f}")
PY
