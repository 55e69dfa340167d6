#!/usr/bin/env bash
# The jmh adapter against JMH run directly, side by side: the same jar (tests/fixtures/jmh-bench,
# built by scripts/build-jmh-bench.sh), the same benchmark and options, alternating direct and
# through racehorse for ROUNDS rounds. Prints per round JMH's score ± error both ways, the ratio
# racehorse / direct, racehorse's window (s; nominally I x ITER) and CPU per operation (system-wide
# total and the JVMs' own); the load average before and after.
# Usage: bash scripts/bench-jmh.sh [ROUNDS] [BENCHMARK] [MODE]   (defaults: 3 Mix.xorshift thrpt)
# ITER=1s WI=3 I=5 set JMH's iteration time and counts (see BENCHMARKS.md); RACEHORSE=PATH
# uses that binary instead of building the release one.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-3}"
bench="${2:-Mix.xorshift}"
mode="${3:-thrpt}"
iter="${ITER:-1s}"
wi="${WI:-3}"
n="${I:-5}"
jar="$(bash scripts/build-jmh-bench.sh)"
if [ -z "${RACEHORSE:-}" ]; then
  cargo build --release --quiet
fi
rh="${RACEHORSE:-${CARGO_TARGET_DIR:-target}/release/racehorse}"
work="$(mktemp -d /var/tmp/rh-bench-jmh.XXXXXX)"
trap 'rm -rf "$work"' EXIT INT TERM
iter_ms=$(python3 -c "import re,sys; m=re.fullmatch(r'(\d+)(ms|s)', sys.argv[1]); print(int(m[1])*(1 if m[2]=='ms' else 1000))" "$iter")
full="racehorse.bench.${bench}"
pattern="^$(sed 's/\./\\./g' <<<"$full")\$"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "jar: $jar; benchmark $full, mode $mode, 1 fork, $wi x $iter warm-up, $n x $iter measured"
printf '%-5s  %-28s  %-28s  %-7s  %-8s  %s\n' round "direct (score ± error)" "racehorse (score ± error)" ratio window "racehorse CPU/op (total, JVMs)"
for r in $(seq 1 "$rounds"); do
  java -jar "$jar" "$pattern" -bm "$mode" -f 1 -wi "$wi" -w "${iter_ms}ms" -i "$n" -r "${iter_ms}ms" -t 1 \
    -foe true -rf json -rff "$work/direct-$r.json" >"$work/direct-$r.log" 2>&1
  "$rh" --db "$work/rh.db" run jmh --label "r$r" -o "jar=$jar" -o "benchmark=$bench" -o "mode=$mode" \
    -o forks=1 -o "warmup_iterations=$wi" -o "iterations=$n" -o "iteration_time=$iter" \
    --no-warm-up --quiet --no-drop-caches --dir "$work/cells" >"$work/rh-$r.log" 2>&1
  "$rh" --db "$work/rh.db" export "r$r" --format json >"$work/rh-$r.json"
  python3 - "$work/direct-$r.json" "$work/rh-$r.json" "$r" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))[0]["primaryMetric"]
c = json.load(open(sys.argv[2]))["cells"][0]
x = c["extra"]
unit = c["settings"]["jmh_unit"]
per = c["cpu_per_unit"] or {}
total = per.get("total_s")
fmt = lambda s, e: f"{s:.4g} ± {e:.2g} {unit}"
print(f"{sys.argv[3]:<5}  {fmt(d['score'], float(d['scoreError'])):<28}  {fmt(x['jmh_score'], x.get('jmh_score_error', float('nan'))):<28}  "
      f"{x['jmh_score'] / d['score']:<7.4f}  {c['window_s']:<8.3f}  {total * 1e9 if total else float('nan'):.3g} ns, {x['cpu_us_per_op'] * 1e3:.3g} ns"
      f"{'  (noisy)' if c['quality']['noisy'] else ''}")
PY
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
