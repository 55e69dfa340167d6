#!/usr/bin/env bash
# Queries against a central store of a million cells (issue 44): a throw-away PostgreSQL
# cluster, one real run of WORKLOAD as the template, one export of CELLS cells made from it
# (each cell a different point: clients = 1 … CELLS) loaded with `racehorse load`, then RUNS - 1
# copies of that run made inside PostgreSQL (generated, not measured: new uuids, labels
# n0001 …, one night apart, a tag commit=cNNNN and throughputs moved by up to ±2%). Then each
# query a user runs is timed REPEAT times (median and range of the wall time):
#   list, list --label, list --tag, list --since, show, compare, history of one point.
# Prints the table for docs/central-store.md and the size on disk.
# Usage: bash scripts/bench-central-queries.sh [RUNS] [CELLS] [WORKLOAD]
#   (default 1000 1000 null: a million small cells, about 2 GB; needs a release build)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-1000}"
cells="${2:-1000}"
workload="${3:-null}"
repeat="${REPEAT:-5}"
bin="$(realpath "${RACEHORSE_BIN:-${CARGO_TARGET_DIR:-target}/release/racehorse}")"
[ -x "$bin" ] || { echo "no racehorse at $bin: cargo build --release, or set RACEHORSE_BIN" >&2; exit 2; }
# shellcheck source=scripts/lib/pg-throwaway.sh
. scripts/lib/pg-throwaway.sh

"$bin" --db "$tmp/tpl.db" run "$workload" --clients 1 --runtime 1s --warmup 0s --reps 1 --no-warm-up \
  --no-drop-caches --quiet --label tpl --dir "$tmp" >/dev/null
"$bin" --db "$tmp/tpl.db" export tpl --format json -o "$tmp/tpl.json"
python3 - "$tmp/tpl.json" "$tmp/n0000.json" "$cells" <<'PY'
import copy, json, sys
doc = json.load(open(sys.argv[1]))
cells = int(sys.argv[3])
tpl = doc["cells"][0]
doc["run"]["inventory_name"] = "night"
doc["run"]["label"] = "n0000"
doc["run"]["tags"] = {"commit": "c0000"}
doc["cells"] = []
for k in range(1, cells + 1):
    c = copy.deepcopy(tpl)
    c["params"]["clients"] = k
    c["match_key"] = "|".join([c["workload"], c["variant"]] +
                              [f"{n}={json.dumps(v) if isinstance(v, str) else v}".replace('"', '')
                               for n, v in sorted(c["params"].items())])
    doc["cells"].append(c)
json.dump(doc, open(sys.argv[2], "w"))
PY
"$bin" --db "$url" -q load "$tmp/n0000.json" >/dev/null

# The copies, made by PostgreSQL from the loaded run: every column of runs and cells carried,
# except those that make a copy a different run.
cols() {
  "${psql_rh[@]}" -c "SELECT string_agg(column_name, ',' ORDER BY ordinal_position) FROM information_schema.columns \
    WHERE table_schema = 'racehorse' AND table_name = '$1'"
}
run_cols="$(cols runs)"
cell_cols="$(cols cells)"
run_select="$(echo "$run_cols" | tr ',' '\n' | sed \
  -e 's/^uuid$/m.new_uuid/' -e 's/^source_id$/r.source_id + m.i/' -e "s/^label\$/'n' || lpad(m.i::text, 4, '0')/" \
  -e 's/^started_at_unix_s$/r.started_at_unix_s + m.i * 86400/' -e 's/^finished_at_unix_s$/r.finished_at_unix_s + m.i * 86400/' \
  -e 's/^\([a-z_]*\)$/r.\1/' -e 's/^r\.m\./m./' | paste -sd,)"
cell_select="$(echo "$cell_cols" | tr ',' '\n' | sed \
  -e 's/^run_uuid$/m.new_uuid/' \
  -e "s/^cell\$/jsonb_set(c.cell, '{throughput_per_s}', to_jsonb((c.cell->>'throughput_per_s')::float8 * (0.98 + random() * 0.04)))/" \
  -e 's/^\([a-z_]*\)$/c.\1/' -e 's/^c\.m\./m./' | paste -sd,)"
start="$(date +%s.%N)"
"${psql_rh[@]}" <<SQL
CREATE TEMP TABLE m AS SELECT i, gen_random_uuid() AS new_uuid FROM generate_series(1, $runs - 1) AS i;
INSERT INTO racehorse.runs ($run_cols) SELECT $run_select FROM racehorse.runs r CROSS JOIN m;
INSERT INTO racehorse.cells ($cell_cols) SELECT $cell_select FROM racehorse.cells c CROSS JOIN m;
INSERT INTO racehorse.run_tags SELECT m.new_uuid, 'commit', 'c' || lpad(m.i::text, 4, '0') FROM m;
ANALYZE;
SQL
end="$(date +%s.%N)"
total="$("${psql_rh[@]}" -c "SELECT count(*) FROM racehorse.cells")"
echo "generated $runs runs x $cells cells of $workload = $total cells in $(python3 -c "print(f'{$end - $start:.0f}')") s"
"${psql_rh[@]}" -c "SELECT 'cells: ' || pg_size_pretty(pg_total_relation_size('racehorse.cells')) || ', ' || \
  pg_total_relation_size('racehorse.cells') / count(*) || ' bytes per cell (table, TOAST, indexes); database: ' || \
  pg_size_pretty(pg_database_size('postgres')) FROM racehorse.cells"

mid=$(printf 'n%04d' $((runs / 2)))
prev=$(printf 'n%04d' $((runs / 2 - 1)))
since="$("${psql_rh[@]}" -c "SELECT started_at_unix_s FROM racehorse.runs WHERE label = '$mid'")"
point=$((cells / 2))
queries=(
  "list|list"
  "list --label $mid|list --label $mid"
  "list --tag commit=c$(printf '%04d' $((runs / 2)))|list --tag commit=c$(printf '%04d' $((runs / 2)))"
  "list --since (half the runs)|list --since $since"
  "show night:$mid|show night:$mid"
  "compare night:$prev night:$mid|compare night:$prev night:$mid"
  "history of one point over $runs runs|history $workload -p clients=$point --no-ledger"
)
echo
echo "| query | median s | range s | output lines |"
echo "|---|---|---|---|"
for q in "${queries[@]}"; do
  name="${q%%|*}"; args="${q#*|}"
  times=()
  for _ in $(seq 1 "$repeat"); do
    t0="$(date +%s.%N)"
    # shellcheck disable=SC2086
    "$bin" --db "$url" -q $args > "$tmp/out.txt" 2> "$tmp/err.txt" || { echo "failed: $args" >&2; cat "$tmp/err.txt" >&2; exit 1; }
    t1="$(date +%s.%N)"
    times+=("$(python3 -c "print($t1 - $t0)")")
  done
  python3 - "$name" "$(wc -l < "$tmp/out.txt")" "${times[@]}" <<'PY'
import statistics, sys
t = [float(x) for x in sys.argv[3:]]
print(f"| `{sys.argv[1]}` | {statistics.median(t):.3f} | {min(t):.3f}-{max(t):.3f} | {sys.argv[2]} |")
PY
done
