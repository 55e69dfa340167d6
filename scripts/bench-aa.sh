#!/usr/bin/env bash
# A/A test: the same configuration run twice on this machine, compared. First on the quiet
# machine (how large is |Δ| between two runs of the same thing, and how quiet was it), then
# again with a one-CPU burner started a few seconds into the second run (which cells are
# flagged noisy, and whether any verdict comes out). Prints the tables BENCHMARKS.md quotes.
# Usage: bash scripts/bench-aa.sh [REPS]   (default 3; about 6 minutes on 2 vCPUs)
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-3}
cargo build --release --quiet
rh=target/release/racehorse
tmp=$(mktemp -d /var/tmp/rh-aa.XXXXXX)
burner=""
cleanup() {
  [ -n "$burner" ] && kill "$burner" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
db=$tmp/aa.db
suite=$tmp/aa.toml
cat > "$suite" <<EOF
runtime = "4s"
warmup = "1s"
reps = $reps
[[workload]]
engine = "fileserver"
clients = [1, 4]
[[workload]]
engine = "diskio"
phase = ["randread"]
size = "256m"
bs = "4k"
direct = true
timed = true
[[workload]]
engine = "compute"
case = ["int"]
EOF
run() { "$rh" --db "$db" run "$suite" --dir "$tmp" --label "$1" -q > "$tmp/$1.out" 2>&1; }
table() {
  "$rh" --db "$db" compare "$1" "$2" --format json | python3 -c '
import json, sys
d = json.load(sys.stdin)
side = d["news"][0]
q = side.get("outside_cpu") or {}
print(f"outside CPU per window, new run: median {q.get(\"median_pct\", float(\"nan\")):.1f}% max {q.get(\"max_pct\", float(\"nan\")):.1f}% of one CPU over {q.get(\"windows\", 0)} windows")
b = d["base"].get("outside_cpu") or {}
print(f"outside CPU per window, base run: median {b.get(\"median_pct\", float(\"nan\")):.1f}% max {b.get(\"max_pct\", float(\"nan\")):.1f}%")
v = d["verdicts"][0]
print(f"points {v[\"points\"]}, significant {v[\"significant\"]}, noisy {v[\"noisy\"]}, below resolution {v[\"below_resolution\"]}, tests {v[\"tests\"]}")
print("| workload | point | metric | gain % | 95% CI of ratio | significant | noisy reps (new) |")
print("|---|---|---|---|---|---|---|")
worst = 0.0
for r in d["records"]:
    if r["metric"] not in ("throughput", "cpu_total_per_unit"):
        continue
    p = " ".join(f"{k}={v}" for k, v in sorted(r["params"].items()) if k in ("clients", "phase", "case"))
    g = r["gain_pct"]
    if g is not None and not r["noisy_window"]:
        worst = max(worst, abs(g))
    ci = "—" if r["ci_lo"] is None else f"{r[\"ci_lo\"]:.3f}–{r[\"ci_hi\"]:.3f}"
    gs = "below res" if r["below_resolution"] else ("—" if g is None else f"{g:+.1f}")
    print(f"| {r[\"workload\"]} | {p} | {r[\"metric\"]} | {gs} | {ci} | {r[\"significant\"]} | {r[\"new_noisy_reps\"]} |")
print(f"largest |gain| over quiet points: {worst:.1f}%")
'
}
echo "== quiet A/A ($reps reps) =="
run aa1
run aa2
table aa1 aa2
echo
echo "== A/A with a one-CPU burner started 8 s into the second run =="
( sleep 8; exec sh -c 'while :; do :; done' ) &
burner=$!
run aa3
kill "$burner" 2>/dev/null || true
pkill -P "$burner" 2>/dev/null || true
burner=""
table aa1 aa3
echo
"$rh" --db "$db" compare aa1 aa3 | grep -E "points significant|Overall|noisy" | head -8
