#!/usr/bin/env bash
# A fleet's load, simulated (issue 44, docs/fleet.md §8): HOSTS exports of CELLS cells each
# (made from one real run of WORKLOAD, as scripts/bench-load.sh makes them), loaded into one
# throw-away PostgreSQL by LOADERS `racehorse load` processes at once, each taking its share of
# the hosts' files, as a fleet's collecting hosts would. Measures the wall time, the cells per
# second, the loaders' CPU (user + system, summed), PostgreSQL's CPU (every server process,
# from /proc), and the bytes in PostgreSQL, then gives the per-cell costs that project the
# load onto a real database server. Checks that the database holds exactly HOSTS x CELLS cells.
# Usage: bash scripts/bench-fleet-load.sh [HOSTS] [CELLS] [WORKLOAD] [LOADERS]
#   (default 1000 1000 null 8: a million small cells, about 2 GB of exports; release build)
set -euo pipefail
cd "$(dirname "$0")/.."
hosts="${1:-1000}"
cells="${2:-1000}"
workload="${3:-null}"
loaders="${4:-8}"
bin="$(realpath "${RACEHORSE_BIN:-${CARGO_TARGET_DIR:-target}/release/racehorse}")"
[ -x "$bin" ] || { echo "no racehorse at $bin: cargo build --release, or set RACEHORSE_BIN" >&2; exit 2; }
# shellcheck source=scripts/lib/pg-throwaway.sh
. scripts/lib/pg-throwaway.sh

"$bin" --db "$tmp/tpl.db" run "$workload" --clients 1,2 --runtime 2s --warmup 0s --reps 1 --no-warm-up \
  --no-drop-caches --quiet --label tpl --dir "$tmp" >/dev/null
"$bin" --db "$tmp/tpl.db" export tpl --format json -o "$tmp/tpl.json"
mkdir "$tmp/exports"
python3 - "$tmp/tpl.json" "$tmp/exports" "$hosts" "$cells" <<'PY'
import json, os, sys, uuid
tpl = json.load(open(sys.argv[1]))
out, hosts, cells = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
src = [json.dumps(c) for c in tpl["cells"]]
for h in range(hosts):
    run = dict(tpl["run"], uuid=str(uuid.uuid4()), inventory_name=f"host-{h:04}", campaign="sim")
    parts = []
    for k in range(cells):
        c = json.loads(src[k % len(src)])
        c["rep"] = k // len(src) + 1
        parts.append(json.dumps(c))
    with open(os.path.join(out, f"host-{h:04}.json"), "w") as f:
        f.write('{"format": %s, "version": %s, "run": %s, "cells": [%s], "change_points": []}'
                % (json.dumps(tpl["format"]), json.dumps(tpl["version"]), json.dumps(run), ",".join(parts)))
PY
bytes="$(du -sb "$tmp/exports" | cut -f1)"
total=$((hosts * cells))
echo "workload $workload: $hosts exports x $cells cells = $total cells, $((bytes / total)) bytes of export per cell, $loaders loaders"
"$bin" --db "$url" -q load "$tmp/exports/host-0000.json" >/dev/null   # migrates; its cells count below

server_ticks() {  # CPU ticks (user + system) of the PostgreSQL server: every live server
  # process, and the connections that ended, which the postmaster reaped (its children's time)
  local t=0 pid
  for pid in $(pgrep -f "postgres" || true); do
    [ "$(ps -o comm= -p "$pid" 2>/dev/null)" = postgres ] || continue
    t=$((t + $(awk '{print $14 + $15 + $16 + $17}' "/proc/$pid/stat" 2>/dev/null || echo 0)))
  done
  echo "$t"
}
hz="$(getconf CLK_TCK)"
s0="$(server_ticks)"
start="$(date +%s.%N)"
ls "$tmp"/exports/*.json | tail -n +2 | xargs -P "$loaders" -n "$(( (hosts + loaders - 1) / loaders ))" \
  /usr/bin/time -f '%U %S' -a -o "$tmp/client-cpu.txt" "$bin" --db "$url" -q load >/dev/null
end="$(date +%s.%N)"
s1="$(server_ticks)"
stored="$("${psql_rh[@]}" -c "SELECT count(*) FROM racehorse.cells")"
runs_stored="$("${psql_rh[@]}" -c "SELECT count(*) FROM racehorse.runs")"
size="$("${psql_rh[@]}" -c "SELECT pg_total_relation_size('racehorse.cells')")"
[ "$stored" = "$total" ] && [ "$runs_stored" = "$hosts" ] || {
  echo "FAILED: the database holds $stored cells of $runs_stored runs, the exports $total of $hosts" >&2; exit 1; }
python3 - "$start" "$end" "$tmp/client-cpu.txt" "$s0" "$s1" "$hz" "$total" "$hosts" "$cells" "$size" "$bytes" <<'PY'
import sys
start, end = float(sys.argv[1]), float(sys.argv[2])
client = sum(float(x) for line in open(sys.argv[3]) for x in line.split()[:2])
server = (int(sys.argv[5]) - int(sys.argv[4])) / int(sys.argv[6])
total, hosts, cells, size, exported = map(int, sys.argv[7:12])
n = total - cells  # the first host was loaded before the clock started
wall = end - start
print(f"loaded {n} cells in {wall:.1f} s: {n / wall:,.0f} cells/s; every cell stored once ({total} in all)")
print(f"per cell: client CPU {client / n * 1e6:.0f} us, server CPU {server / n * 1e6:.0f} us, "
      f"{exported // total} bytes of export, {size // total} bytes in PostgreSQL")
print(f"machine: {client + server:.1f} CPU s over {wall:.1f} s wall")
for cores in (8, 32):
    print(f"projected: a database server with {cores} cores given to the load takes its "
          f"{server / n * 1e6:.0f} s of server CPU for 1,000 hosts x 1,000 cells in about "
          f"{server / n * 1e6 / cores:.0f} s of wall time ({1e6 * size / total / 1e9:.1f} GB), "
          f"if the loaders (on their own machines) and the disk keep up")
PY
