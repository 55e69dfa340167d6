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
run() { "$rh" --db "$db" run "$suite" --dir "$tmp" --label "$1" -q > "$tmp/$1.out" 2>&1 || { cat "$tmp/$1.out"; return 1; }; }
table() {
  "$rh" --db "$db" compare "$1" "$2" --format json > "$tmp/cmp.json"
  python3 - "$tmp/cmp.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
def quiet(side):
    q = side.get("outside_cpu") or {}
    return "median %.1f%%, max %.1f%% of one CPU over %d windows" % (
        q.get("median_pct", float("nan")), q.get("max_pct", float("nan")), q.get("windows", 0))
print("outside CPU per window: base run " + quiet(d["base"]) + "; new run " + quiet(d["news"][0]))
v = d["verdicts"][0]
print("points %d, significant %d, noisy %d, below resolution %d (tests corrected: %d)" % (
    v["points"], v["significant"], v["noisy"], v["below_resolution"], v["tests"]))
print("| workload | point | metric | gain % | 95% CI of ratio | significant | noisy reps (new) |")
print("|---|---|---|---|---|---|---|")
worst = 0.0
for r in d["records"]:
    if r["metric"] not in ("throughput", "cpu_total_per_unit"):
        continue
    p = " ".join("%s=%s" % (k, v) for k, v in sorted(r["params"].items()) if k in ("clients", "phase", "case"))
    g = r["gain_pct"]
    if g is not None and not r["noisy_window"]:
        worst = max(worst, abs(g))
    ci = "-" if r["ci_lo"] is None else "%.3f-%.3f" % (r["ci_lo"], r["ci_hi"])
    gs = "below res" if r["below_resolution"] else ("-" if g is None else "%+.1f" % g)
    print("| %s | %s | %s | %s | %s | %s | %s |" % (
        r["workload"], p, r["metric"], gs, ci, r["significant"], r["new_noisy_reps"]))
print("largest |gain| over points not noisy: %.1f%%" % worst)
PY
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
