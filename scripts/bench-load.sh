#!/usr/bin/env bash
# Loading speed into PostgreSQL (issue 30): a throw-away cluster (PostgreSQL's own initdb
# and pg_ctl, on 127.0.0.1, removed at exit), HOSTS exports of CELLS cells each made from
# one real run's cells (fresh uuids and inventory names, repetitions renumbered), then
# `racehorse load` of all of them, twice (the second load changes nothing). Prints the
# bytes per cell, cells per second of each load, and the time projected for 100 hosts x
# 1,000 cells at the first load's rate.
# Usage: bash scripts/bench-load.sh [HOSTS] [CELLS] [WORKLOAD]
#   (default 20 1000 fileserver; WORKLOAD null gives small cells; needs a release build)
set -euo pipefail
cd "$(dirname "$0")/.."
hosts="${1:-20}"
cells="${2:-1000}"
workload="${3:-fileserver}"
bin="$(realpath "${RACEHORSE_BIN:-${CARGO_TARGET_DIR:-target}/release/racehorse}")"
[ -x "$bin" ] || { echo "no racehorse at $bin: cargo build --release, or set RACEHORSE_BIN" >&2; exit 2; }
# shellcheck source=scripts/lib/pg-throwaway.sh
. scripts/lib/pg-throwaway.sh

# One real run as the template of every cell.
"$bin" --db "$tmp/tpl.db" run "$workload" --clients 1,2 --runtime 2s --warmup 0s --reps 1 --no-warm-up \
  --no-drop-caches --quiet --label tpl --dir "$tmp" >/dev/null
"$bin" --db "$tmp/tpl.db" export tpl --format json -o "$tmp/tpl.json"
mkdir "$tmp/exports"
python3 - "$tmp/tpl.json" "$tmp/exports" "$hosts" "$cells" <<'PY'
import copy, json, os, sys, uuid
tpl = json.load(open(sys.argv[1]))
out, hosts, cells = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
src = tpl["cells"]
for h in range(hosts):
    doc = copy.deepcopy(tpl)
    doc["run"]["uuid"] = str(uuid.uuid4())
    doc["run"]["inventory_name"] = f"host-{h:04}"
    doc["run"]["campaign"] = "bench"
    doc["cells"] = []
    for k in range(cells):
        c = copy.deepcopy(src[k % len(src)])
        c["rep"] = k // len(src) + 1
        doc["cells"].append(c)
    json.dump(doc, open(os.path.join(out, f"host-{h:04}.json"), "w"))
PY
bytes="$(cat "$tmp"/exports/*.json | wc -c)"
total=$((hosts * cells))
echo "workload $workload: $hosts exports x $cells cells = $total cells, $((bytes / total)) bytes of export per cell"
for pass in first second; do
  start="$(date +%s.%N)"
  line="$("$bin" --db "$url" -q load "$tmp"/exports/*.json | tail -1)"
  end="$(date +%s.%N)"
  echo "$pass load: $line (wall $(python3 -c "print(f'{$end - $start:.2f}')") s)"
  [ "$pass" = first ] && rate="$(python3 -c "print($total / ($end - $start))")"
done
size="$("${psql_rh[@]}" -c "SELECT pg_total_relation_size('racehorse.cells')")"
echo "racehorse.cells: $((size / total)) bytes per cell in PostgreSQL (table, TOAST and indexes)"
python3 -c "r=$rate; print(f'projected: 100 hosts x 1,000 cells = 100,000 cells in {100000 / r:.0f} s at {r:.0f} cells/s')"
