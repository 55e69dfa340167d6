#!/usr/bin/env bash
# The paging engine at two memory limits (a quarter and a half of a 512 MiB region), REPS
# repetitions interleaved by racehorse; prints touches/s and moves per touch with their
# run-to-run CV. BACKING=zram (default: a zram swap made for each cell) or file (paged from
# the disk). Root only (memory cgroup, zram).
# Usage: [BACKING=zram|file] bash scripts/bench-paging.sh [REPS]   (see BENCHMARKS.md)
set -euo pipefail
cd "$(dirname "$0")/.."
reps="${1:-5}"
db="$(mktemp -d)/paging.db"
work="$(mktemp -d /var/tmp/rh-bench-paging.XXXXXX)"
trap 'rm -rf "$work" "$(dirname "$db")"' EXIT INT TERM
cargo build --release --quiet
./target/release/racehorse --db "$db" run paging --label paging-bench -o region=512m -o limit=128m,256m -o "backing=${BACKING:-zram}" \
  --reps "$reps" --runtime 20s --warmup 5s --dir "$work" --quiet >/dev/null
./target/release/racehorse --db "$db" export paging-bench --format json | python3 -c '
import json, statistics as st, sys
cells = json.load(sys.stdin)["cells"]
for limit in sorted({c["params"]["limit"] for c in cells}):
    cs = [c for c in cells if c["params"]["limit"] == limit and c["status"] == "ok"]
    t = [c["throughput_per_s"] for c in cs]
    m = [c["extra"]["moves_per_touch"] for c in cs]
    k = [c["extra"]["kernel_us_per_page_moved"] for c in cs]
    cv = lambda v: 100 * st.stdev(v) / st.mean(v)
    print(f"limit {limit >> 20} MiB: touches/s median {st.median(t):.0f} (CV {cv(t):.1f}%), "
          f"moves/touch {st.median(m):.3f} (CV {cv(m):.2f}%), kernel us/page moved {st.median(k):.1f}, n={len(cs)}")
'
